"""The batched executor: submits KIP-435 steps, waits for them, elects new leaders, keeps throttles narrow,
and cleans up whatever happens.

One thread, one loop, clock and sleep injected (tests run it against the simulated cluster with a fake
clock). Every poll: read requests from the control file, observe the steps in flight (the controller's list of
the reassignments in flight, all of them, so that another client's of a partition of the plan is seen at once:
``others.py``; and the metadata of the steps' partitions only), finish the steps that completed (the
preferred-leader elections due go in one request), choose the steps to start in the free slots from what
the run knows of the idle partitions, read those partitions again and start the ones still as known and
healthy, append what changed to the journal, report progress. What a poll asks the cluster and writes
grows with the reassignments in flight, not with the plan. The state of each partition is read from the cluster
when the run starts, so a resumed run never repeats a finished step.

Waiting steps sit in a priority queue (``priority``: steps that copy nothing, then leader movements, then
the chosen order; with per-broker limits, the least crowded of the steps read start first:
``select_steps``); a step that cannot start because a broker (or L) is full is parked on that broker (in
priority order) and looked at again only while a slot of that broker is free, RELEASE_PER_SLOT per free
slot and poll, best first, so choosing costs what it starts, not what waits.

However the loop ends (completed, cancelled, interrupted by a signal, failed), ``finally`` cancels the
steps still moving (unless the plan completed) and puts their partitions back in their source's exact order,
restores the throttles recorded before the first step, elects the preferred leaders of the partitions the
run touched, and writes the outcome to the journal (``cleanup.py``). What others do meanwhile (a step
cancelled, a throttle removed, a topic deleted) is watched for in ``watch.py``: the first two stop the run
as its own ``--cancel`` does.

Its concerns live next to it: the steps in flight and their slots (``in_flight.py``), the bytes copied and the
time left (``copy_meter.py``), min ISR and the cluster's health (``health.py``), how long the run waited for the
cluster (``stall.py``), what it reports and how it ended (``outcome.py``).
"""

from __future__ import annotations

import heapq
import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TypeVar

from kreassign.cluster.port import ClusterPort
from kreassign.errors import KreassignError, UnknownTopicOrPartitionError, is_transient
from kreassign.execution.auto_throttle import AutoThrottle
from kreassign.execution.cleanup import end_run
from kreassign.execution.copy_meter import CopyMeter
from kreassign.execution.health import ClusterHealth, MinInsyncReplicas
from kreassign.execution.in_flight import InFlight
from kreassign.execution.journal import Journal, JournalState, RunStatus
from kreassign.execution.logdirs import DirPlacement
from kreassign.execution.others import Others, Taken
from kreassign.execution.outcome import Outcome, Progress, Reporter
from kreassign.execution.signals import Interrupted, signals_deferred, whole_request
from kreassign.execution.stall import StallWatch
from kreassign.execution.throttle_claims import claims_for
from kreassign.execution.throttles import ThrottleLifecycle
from kreassign.execution.watch import (
    KEEP_REQUEST,
    Ended,
    ThrottleWatch,
    confirmed_done,
    ended_step,
    waiting_out_metadata_lag,
)
from kreassign.model import PartitionInfo, PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.adaptive import Aimd, Signals
from kreassign.planning.steps import (
    Limits,
    Step,
    next_step,
    plan_partition,
    priority,
    replica_ids,
    select_steps,
    step_brokers,
)

T = TypeVar("T")

QUICK_POLL = 0.1
"""The shortest wait between polls (seconds). The wait is a quarter of the time since the last poll that started
or finished a step (or saw a finished step whose metadata lags), at least QUICK_POLL and at most the poll
interval: a step is noticed at most 25 % (+QUICK_POLL) after it ends, and a long copy is polled at the interval
from 4 intervals on. Measured on the real cluster with 50 ms polls: a window of 200 small steps ends 1 to 3.6 s
after it starts; polling only at the interval (1 s) saw each up to a second late, with the slots idle. An eighth
instead of a quarter was measured and reverted: the windows split into more, smaller submissions (10 to 18
instead of 10 to 12 per 2,000 steps), and in the leader-changing plan Kafka took about twice as long (10 to
23 s instead of 7 to 14 s per run), with no finished window seen sooner there. The wait is shortened when the
next step in flight is expected to end sooner (``BatchedExecutor._until_due``)."""

DUE_SAMPLES = 8
"""How many finished steps of this run the next poll's timing waits for before it expects steps to end after
the median time their predecessors took (see ``BatchedExecutor._until_due``)."""

LAG_REREADS = 3
"""How many times a poll reads again, at once, the metadata of finished steps that lags the controller's
(``BatchedExecutor._finish_steps``). Measured on the real cluster (2,000 one-step partitions, P=200): in 8
of 19 windows the broker asked still showed some of the steps just finished under way; their slots started
a poll (0.1 s) after the others, as a second submission. With the re-reads the wall time of that benchmark
did not change beyond the noise (3 runs each way): the windows that still split end over two polls at the
controller itself."""


HEALTH_RECHECK_S = 10.0
"""How often a partition that waits for its health (under-replicated, at or under min ISR) is read again."""

ADAPT_INTERVAL_S = 10.0
"""--adaptive: how often the cluster's health is sampled and the per-broker limit reconsidered."""

ORDERS = ("plan", "small-first", "large-first")

_LEADERS = -1  # the parking place of leader movements waiting for L
_HEALTH = -2  # the parking place of partitions waiting for their health
RELEASE_PER_SLOT = 16
"""Steps parked on a broker looked at again per free slot there, each poll before steps start (best first):
a freed slot costs what it may start, not what waits on the broker."""


class BatchedExecutor(Others):
    def __init__(
        self,
        port: ClusterPort,
        journal: Journal,
        state: JournalState,
        limits: Limits,
        reporter: Reporter,
        *,
        allow_replication_factor_change: bool = True,
        order: str = "plan",
        adaptive: bool = False,
        poll_interval: float = 1.0,
        stall_timeout: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        log_dirs: Mapping[TopicPartitionReplica, str] | None = None,
        auto_throttle: AutoThrottle | None = None,
    ) -> None:
        self.port, self.auto_throttle = port, auto_throttle
        self.dirs = DirPlacement(port, log_dirs or {})  # the plan's log dirs other than "any"
        self.stall_timeout = stall_timeout
        self.journal = journal
        self.state = state
        self.limits = limits
        self.reporter = reporter
        self.allow_rf_change = allow_replication_factor_change
        self.poll_interval = poll_interval
        self.clock = clock
        self.sleep = sleep
        self.throttles = ThrottleLifecycle(
            port,
            state.recorded_throttles,
            clock,
            on_write=lambda change: journal.append(state, [state.note_throttles_written(change)]),
            claims=claims_for(port, journal.path),
            event=reporter.event,
        )
        self.throttle_watch = ThrottleWatch(port, self.throttles, clock, reporter.event)
        self.cancelled_by_others: dict[TopicPartition, Step] = {}  # steps another client cancelled
        # partitions of the plan another client is reassigning (to the plan's target: its progress; elsewhere:
        # failed), throttled by the run while they move
        self.taken: dict[TopicPartition, Taken] = {}
        self._taken_now: list[TopicPartition] = []  # taken to their target since the last poll (said once)
        self._stop: str | None = None  # why the run stops as if cancelled (a change made by another client)
        self.touched: set[TopicPartition] = set()  # partitions this run started (or adopted) a step of
        self.deleted: set[str] = set()  # topics of the plan deleted during the run
        self.order = order
        self.in_flight = InFlight()
        self.moving = self.in_flight.steps
        self.failures: dict[TopicPartition, str] = {}
        self.done: set[TopicPartition] = set()
        self.meter = CopyMeter(port, clock)  # sizes, bytes copied, rate
        # what the run knows of each partition of the plan: replicas and leader, as last read
        self.current: dict[TopicPartition, tuple[int, ...]] = {}
        self.leader: dict[TopicPartition, int | None] = {}
        self.waiting: dict[TopicPartition, Step] = {}  # the next step of each idle partition
        self._rank: dict[TopicPartition, int] = {}
        self._queue: list[tuple[tuple[int, int], TopicPartition]] = []  # heap of waiting partitions to look at
        self._queued: set[TopicPartition] = set()
        # broker (or _LEADERS, _HEALTH) -> heap of (priority, partition) waiting there
        self._parked: dict[int, list[tuple[tuple, TopicPartition]]] = {}
        self._health_checked = float("-inf")
        self.min_isr = MinInsyncReplicas(port)
        self._remaining: dict[TopicPartition, int] = {}  # steps left per partition
        self._remaining_total = 0
        self._steps_failed = 0  # the steps the failed partitions had left (still the plan's, never done)
        self._unfinished_on: Counter[int] = Counter()  # unfinished partitions whose target has the broker
        self._changed: set[TopicPartition] = set()  # partitions whose journal record is out of date
        self._parked_now: set[TopicPartition] = set()
        self._described: dict[str, list[PartitionInfo]] = {}  # topics described during this poll
        self.aimd = Aimd(limits.brokers, state.broker_limit) if adaptive and limits.brokers else None
        self._adapted_at: float | None = None
        self._peak_load = 0  # the most steps one broker was part of since the last adaptation
        self.health = ClusterHealth(port, len(state.target), {tp.topic for tp in state.target}, self.min_isr.read)
        self._known_brokers: set[int] = set()
        self._started = clock()
        self._waiting_notes: dict[TopicPartition, str] = {}
        self._lag_notes: dict[TopicPartition, str] = {}
        self.stall = StallWatch(stall_timeout, reporter.event)
        self._live: set[int] = set()
        self._changed_at = clock()  # the start of the last poll that started or finished a step (QUICK_POLL)
        self._poll_started = self._previous_poll = self._changed_at
        self._took: deque[float] = deque(maxlen=64)  # how long the last steps took, start to end (_until_due)
        self.cleanup_problems: list[str] = []

    # ---------------------------------------------------------------- the run
    def run(self) -> Outcome:
        status, message, signum = RunStatus.FAILED, "", None
        try:
            self._start()
            while True:
                poll_started = self.clock()
                self._previous_poll, self._poll_started = self._poll_started, poll_started
                before = (self._remaining_total, len(self.moving))
                request = self._control()
                if request is not None:
                    status, message = RunStatus.CANCELLED, request
                    break
                try:
                    self._observe_brokers()
                    self._finish_steps()
                    self._place_dirs()
                    self._watch_throttles()
                    if self._stop is not None:
                        status, message = RunStatus.CANCELLED, self._stop
                        self.reporter.event(f"Stopping: {self._stop}")
                        break
                    if len(self.done) + len(self.failures) == len(self.state.target) and not self.moving:
                        status = RunStatus.COMPLETED if not self.failures else RunStatus.FAILED
                        self.meter.settle(self._live)  # what the last steps' new replicas received
                        break
                    self._check_offline(self._live)
                    if self.auto_throttle is not None:  # --throttle auto: the brokers' headroom, re-measured
                        self.state.throttle = self.auto_throttle.tick(self)
                    self._start_steps()
                    self._tell_taken()
                    self._adapt()
                    self._save_changes()
                    self.reporter.progress(self._progress())
                    self.stall.answered()
                except KreassignError as exc:
                    # a topic unknown to the broker asked: deleted, or its metadata lags (the stall timeout
                    # bounds the wait)
                    if not is_transient(exc) and not isinstance(exc, UnknownTopicOrPartitionError):
                        raise
                    if not (isinstance(exc, UnknownTopicOrPartitionError) and self._drop_deleted_topics()):
                        self.stall.failing(exc, self.clock())
                # the next poll (see QUICK_POLL), the time this one took included; a finished step waiting for a
                # broker's metadata counts as a change (the metadata usually catches up within ms)
                if before != (self._remaining_total, len(self.moving)) or self._lag_notes:
                    self._changed_at = poll_started
                wait = min(self.poll_interval, max(QUICK_POLL, (poll_started - self._changed_at) / 4))
                wait = self._until_due(poll_started, wait)
                self.sleep(max(0.0, wait - (self.clock() - poll_started)))
        except Interrupted as exc:
            status, message, signum = RunStatus.INTERRUPTED, f"interrupted by {exc}", exc.signum
        except BaseException as exc:
            status, message = RunStatus.FAILED, str(getattr(exc, "message", None) or exc) or type(exc).__name__
            raise
        finally:
            # one count of bytes copied for the display and the final line: taken before the clean-up forgets
            # what the steps in flight had copied
            copied, partial, total = self.meter.moved(), dict(self.meter.partial), self.meter.total
            with signals_deferred():
                reverted = self._clean_up(status, message)
        return Outcome(
            status,
            sum(self.state.steps_done.values()),
            len(self.done),
            len(self.state.target),
            self.clock() - self._started,
            copied,
            dict(self.failures),
            reverted,
            message,
            signum,
            sum(partial.get(tp, 0) for tp in reverted),
            total,
        )

    def _until_due(self, now: float, wait: float) -> float:
        """The wait before the next poll, shortened so that the poll comes when the next step in flight is
        expected to end: the median time the run's last steps took after their start (once DUE_SAMPLES have
        ended), polled every QUICK_POLL for half that time after it. Small steps started together end
        together (measured on the real cluster: a window of 200 leader steps ended at once 1.5 to 2.5 s after
        it started), so the quarter rule alone saw a window up to a quarter of its time late. Steps of more
        than four poll intervals are left to the quarter rule (at most an interval late)."""
        if len(self._took) < DUE_SAMPLES or not self.moving:
            return wait
        typical = statistics.median(self._took)
        if typical > 4 * self.poll_interval:
            return wait
        due = min(
            (m.since + typical for m in self.moving.values() if m.since + typical >= now - typical / 2), default=None
        )
        return wait if due is None else min(wait, max(QUICK_POLL, due - now))

    def _start(self) -> None:
        self._live = {b.id for b in self.port.describe_brokers()}
        self._known_brokers = set(self._live)
        if self.aimd is not None:
            self.state.broker_limit = self.aimd.limit
            self.reporter.event(
                f"Per-broker limit starts at {self.aimd.limit} (--adaptive, at most {self.aimd.maximum})"
            )
        # a previous run of this plan may have left throttles set: those its journal says it wrote, and the
        # cluster still shows, are this run's to put back; anything else there now is someone else's
        held = self.state.throttles_written or {}
        changed = self._waiting_out_lag(lambda: self.throttles.adopt(self._live, held))
        self.state.throttles_written = self.throttles.held()
        if changed and self.state.throttle >= 0:
            said = ", ".join(
                f"{config} of broker {broker} ({value})" for (broker, config), value in sorted(changed.items())
            )
            self.reporter.event(
                f"Someone else changed {said} since this plan's last run: this run sets its own "
                "throttle there and puts that value back at its end"
            )
        brokers = {b for replicas in self.state.target.values() for b in replicas}
        brokers |= {b for replicas in self.state.original.values() for b in replicas}
        self.throttles.set_rates(brokers & self._live, self.state.throttle, self.state.log_dir_throttle)
        self._measure_sizes()
        self._rank = self._ranks()
        # the only read of every partition of the plan: later polls read what moves or is about to
        described = self._waiting_out_lag(lambda: self.port.read_topics(sorted({tp.topic for tp in self.state.target})))
        for topic, partitions in described.items():
            for p in partitions:
                tp = TopicPartition(topic, p.partition)
                if tp in self.state.target:
                    self.current[tp] = tuple(p.replicas)
                    self.leader[tp] = p.leader
        # steps a previous run left in flight: adopt those the cluster is still doing; a reassignment of a
        # partition of the plan that is not its step is someone else's (to the plan's target: its progress)
        active = {tp: r for tp, r in self.port.list_reassignments().items() if tp in self.state.target}
        now = self.clock()
        for tp, (source, target) in list(self.state.in_flight.items()):
            running = active.get(tp)
            if running is not None and set(running.target) == set(target):
                step = Step(tp, tuple(source), tuple(target))
                self.current[tp] = step.source
                self._add_moving(step, now)
            else:
                self.state.in_flight.pop(tp)
                self._changed.add(tp)
        for tp, final in self.state.target.items():
            self._unfinished_on.update(final)
            if tp not in self.current:
                self._fail(tp, "the partition disappeared (topic deleted?)")
                continue
            if tp in self.moving:
                self._set_remaining(tp, self.moving[tp].step.source)
            elif tp in active:
                self._taken_over(tp, active[tp])
            else:
                self._replan(tp)
        if self.moving:
            self.reporter.event(f"Resumed {len(self.moving)} step(s) left in flight by the previous run")
        self._tell_taken()
        self._throttle_moving()

    def _watch_throttles(self, starting: frozenset[int] | set[int] = frozenset()) -> None:
        """A throttle of the run removed by another client stops the run (watch.ThrottleWatch): those of the
        steps in flight, and the rates of ``starting`` (the brokers of the steps about to start); while a keep
        request covers (a kreassign --verify clearing them as Apache does), all of the run's, put back if gone."""
        keeping = self.throttle_watch.keeping()
        if self._stop is not None or not (self.moving or starting or keeping):
            return
        brokers = {b for m in self.moving.values() for b in m.brokers} | starting
        brokers |= {int(b) for b in self.throttles.rates_set} if keeping else set()
        # an offline broker's configs cannot be read (nor changed): its rates are looked at once it is back
        args = (brokers & self._live, self.state.throttle, self.state.log_dir_throttle)
        read_requests = lambda: setattr(self, "_stop", self._control())  # noqa: E731
        removed = self.throttle_watch.check(*args, starting=bool(starting), read_requests=read_requests)
        if removed is not None and self._stop is None:
            self.reporter.event(f"The {removed}")
            self._stop = str(removed)

    def _waiting_out_lag(self, call: Callable[[], T]) -> T:
        return waiting_out_metadata_lag(call, clock=self.clock, sleep=self.sleep, event=self.reporter.event)

    def _throttle_moving(self) -> None:
        """The topics' throttled-replica lists follow the steps in flight, when this run throttles (a rate set
        now, or lists it wrote before): without a rate the lists limit nothing, and keeping them would cost
        two requests and a controller record per change (Apache sets them only with --throttle too)."""
        if self.state.throttle >= 0 or self.throttles.has_lists():
            # another client's reassignments of the plan's partitions: to the plan's target, throttled as its own
            # steps; elsewhere, left as they were taken over (what held them back then stays while they move)
            taken = [t.step(tp) for tp, t in self.taken.items() if t.to_target]
            kept = {tp for tp, t in self.taken.items() if not t.to_target}
            self.throttles.throttle_moving([*(m.step for m in self.moving.values()), *taken], kept)

    def _ranks(self) -> dict[TopicPartition, int]:
        """Each partition's place in the chosen order (--order: the plan's, or by size)."""
        partitions = list(self.state.target)
        if self.order == "small-first":
            partitions.sort(key=lambda tp: self.meter.sizes.get(tp, 0))
        elif self.order == "large-first":
            partitions.sort(key=lambda tp: -self.meter.sizes.get(tp, 0))
        return {tp: i for i, tp in enumerate(partitions)}

    def _check_offline(self, live: set[int]) -> None:
        in_flight = {b for m in self.moving.values() for b in m.step.target}
        for broker in self.stall.offline(self.clock(), live, self._unfinished_on, in_flight):
            self._release(broker)

    def _measure_sizes(self) -> None:
        try:
            self.meter.measure(self._live, self.state.original, self.state.target, self.limits.replicas, self.clock())
        except Exception as exc:  # sizes only feed the display; the move goes on without them
            self.reporter.event(f"Replica sizes unavailable ({exc}); progress is shown in steps only")

    def _control(self) -> str | None:
        """Applies the requests of the control file; returns why the run stops when one cancels it."""
        control = self.journal.take_control()
        self.throttle_watch.keeper.asked(control.get(KEEP_REQUEST))
        if control.get("cancel"):
            return f"cancelled by {control.get('by') or '--cancel'}"
        throttle = control.get("throttle")
        log_dir = control.get("log_dir_throttle")
        if isinstance(throttle, int) or isinstance(log_dir, int):
            inter = throttle if isinstance(throttle, int) else -1
            dirs = log_dir if isinstance(log_dir, int) else -1
            self.throttles.set_rate_everywhere(inter, dirs)
            if inter >= 0:
                self.state.throttle = inter
            if dirs >= 0:
                self.state.log_dir_throttle = dirs
            self.journal.append(self.state, [self.state.settings_record()])
            self.reporter.event(f"Throttle changed to {self.state.throttle} B/s")
            if inter >= 0 and self.auto_throttle is not None:  # the operator's word wins over the headroom
                self.auto_throttle = self.auto_throttle.handed_over(inter, self.reporter.event)
        return None

    def _observe_brokers(self) -> None:
        self._described = {}  # a new poll: topics are described afresh
        self._live = {b.id for b in self.port.describe_brokers()}

    def _describe(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionInfo]:
        """The metadata of these partitions (one request for their topics, none for the topics this poll
        has already described)."""
        wanted = set(partitions)
        topics = {tp.topic for tp in wanted} - set(self._described)
        if topics:
            self._described.update(self.port.read_topics(sorted(topics)))
        info: dict[TopicPartition, PartitionInfo] = {}
        for topic in {tp.topic for tp in wanted}:
            for p in self._described.get(topic, []):
                tp = TopicPartition(topic, p.partition)
                if tp in wanted:
                    info[tp] = p
        return info

    # ---------------------------------------------------------------- the queue of waiting steps
    def _replan(self, tp: TopicPartition) -> None:
        """The partition is idle at ``self.current[tp]``: queue its next step, or mark it done."""
        self.waiting.pop(tp, None)
        self._waiting_notes.pop(tp, None)
        step = next_step(tp, self.current[tp], self.state.target[tp], self.limits.replicas)
        self._set_remaining(tp, self.current[tp])
        if step is None:
            self._finished(tp)
            return
        self.waiting[tp] = step
        self._enqueue(tp)

    def _finished(self, tp: TopicPartition) -> None:
        """The partition's steps are done: so is the partition, unless a replica must still go to its dir."""
        if tp not in self.done and tp not in self.dirs.pending and self.dirs.steps_done(tp):
            self._done(tp)

    def _done(self, tp: TopicPartition) -> None:
        if tp not in self.done:
            self.done.add(tp)
            self._unfinished_on.subtract(self.state.target[tp])

    def _place_dirs(self) -> None:
        """The partitions whose steps are done and whose replicas must be in named log dirs (logdirs.py)."""
        done, events = self.dirs.poll()
        for event in events:
            self.reporter.event(event)
        for tp in done:
            self._done(tp)

    def _set_remaining(self, tp: TopicPartition, replicas: tuple[int, ...]) -> None:
        steps = plan_partition(tp, replicas, self.state.target[tp], self.limits.replicas)
        self._remaining_total += len(steps) - self._remaining.get(tp, 0)
        self._remaining[tp] = len(steps)
        self.meter.plan(tp, sum(len(s.adding) for s in steps))  # a resumed run copies what is left, not the plan

    def _enqueue(self, tp: TopicPartition) -> None:
        step = self.waiting.get(tp)
        if step is not None and tp not in self._queued:
            heapq.heappush(self._queue, (priority(step, self._rank[tp]), tp))
            self._queued.add(tp)

    def _release(self, place: int, count: int | None = None) -> None:
        """Steps parked on this broker (or on L, or on their health) are looked at again: all of them, or
        the best ``count``."""
        parked = self._parked.get(place)
        if not parked:
            return
        if count is None or count >= len(parked):
            del self._parked[place]
            for _, tp in parked:
                self._enqueue(tp)
            return
        for _ in range(count):
            self._enqueue(heapq.heappop(parked)[1])

    def _park_at(self, place: int, tp: TopicPartition) -> None:
        step = self.waiting.get(tp)
        if step is not None:
            heapq.heappush(self._parked.setdefault(place, []), (priority(step, self._rank[tp]), tp))
        self._parked_now.add(tp)

    def _release_free_slots(self) -> None:
        """Each live broker with free slots and steps parked on it gets RELEASE_PER_SLOT of them per slot
        (without a per-broker limit, steps are parked on a broker only while it is offline: all of them)."""
        limit = self.broker_limit()
        for place in [p for p in self._parked if p >= 0 and p in self._live]:
            free = (limit - self.in_flight.broker_load.get(place, 0)) if limit is not None else 1
            if free > 0:
                self._release(place, None if limit is None else free * RELEASE_PER_SLOT)

    def _queued_steps(self, taken: list[TopicPartition]) -> Iterator[Step]:
        """The waiting steps in priority order, taken off the queue as they are read."""
        while self._queue:
            _, tp = heapq.heappop(self._queue)
            self._queued.discard(tp)
            step = self.waiting.get(tp)
            if step is None:
                continue
            offline = sorted(set(step.target) - self._live)
            if offline:
                self._waiting_notes[tp] = f"{tp} waits for broker {','.join(map(str, offline))} (offline)"
                self._park_at(offline[0], tp)
                continue
            taken.append(tp)
            yield step

    def _park(self, step: Step, broker: int | None) -> None:
        self._park_at(_LEADERS if broker is None else broker, step.partition)

    def broker_limit(self) -> int | None:
        return self.aimd.limit if self.aimd is not None else self.limits.brokers

    # ---------------------------------------------------------------- --adaptive
    def _adapt(self) -> None:
        if self.aimd is None:
            return
        self._peak_load = max(self._peak_load, max(self.in_flight.broker_load.values(), default=0))
        now = self.clock()
        if self._adapted_at is None:
            self._adapted_at = now
        if now - self._adapted_at < ADAPT_INTERVAL_S:
            return
        self._adapted_at = now
        change = self.aimd.observe(self._signals(now))
        self._peak_load = 0
        if change is None:
            return
        self.state.broker_limit = change.after
        self.state.limit_changes.append(
            {"at_s": round(now - self._started, 3), "from": change.before, "to": change.after, "reason": change.reason}
        )
        self.journal.append(self.state, [self.state.settings_record()])
        self.reporter.event(f"Per-broker limit {change.before} -> {change.after}: {change.reason}")
        if change.after > change.before:
            for place in list(self._parked):
                if place >= 0:
                    self._release(place)

    def _signals(self, now: float) -> Signals:
        """The cluster's health (health.ClusterHealth) and the run's own signals."""
        at_min, under, stalled = self.health.sample(now, self.moving, self.meter.partial, self.min_isr.known)
        limit = self.broker_limit() or 0
        return Signals(
            at_min_isr=at_min,
            under_replicated=under,
            offline_brokers=len(self._known_brokers - self._live),
            stalled_copies=stalled,
            rate=self.meter.rate,
            saturated=self._peak_load >= limit,
        )

    # ---------------------------------------------------------------- steps
    def _add_moving(self, step: Step, now: float) -> None:
        self.in_flight.add(step, self.leader.get(step.partition), now)
        self.touched.add(step.partition)

    def _remove_moving(self, tp: TopicPartition) -> None:
        moving = self.in_flight.remove(tp)  # its freed slots: _release_free_slots, before the next steps start
        if moving is not None and moving.step.moves_leader:
            self._release(_LEADERS)

    def _finish_steps(self) -> None:
        self._lag_notes = {}
        # the controller says which steps are still running; the metadata of those that are not says how
        # they ended (a broker's metadata may lag the controller: such a step waits, it is never resubmitted).
        # Every reassignment in flight is listed: another client's of a partition of the plan is seen at once
        active = self.port.list_reassignments()
        self._settle_taken(active)
        if not self.moving:
            self._throttle_moving()
            return
        elect: list[TopicPartition] = []
        lagging = self._settle(
            list(self.moving), active, self._describe(tp for tp in self.moving if tp not in active), elect
        )
        for _ in range(LAG_REREADS):  # read their metadata again now, so that the window's slots start together
            if not lagging:
                break
            for tp in lagging:
                del self._lag_notes[tp]
            for topic in {tp.topic for tp in lagging}:
                self._described.pop(topic, None)
            lagging = self._settle(lagging, active, self._describe(lagging), elect)
        if elect:  # one request for every election due
            with whole_request():
                errors = self.port.elect_preferred_leaders(elect)
            for tp in elect:
                if tp not in errors:  # the controller elected it: the step is done now, not at the next poll
                    self._elected(tp)
                    continue
                if not self.moving[tp].electing:
                    self.reporter.event(f"{tp}: preferred leader election pending ({errors[tp]})")
                self.moving[tp].electing = True
        self._throttle_moving()

    def _settle(
        self,
        partitions: list[TopicPartition],
        active: Mapping[TopicPartition, PartitionReassignment],
        info: Mapping[TopicPartition, PartitionInfo],
        elect: list[TopicPartition],
    ) -> list[TopicPartition]:
        """What became of these steps in flight, from the controller's list of running reassignments and the
        metadata of the partitions it no longer lists: done, due for an election (added to ``elect``), failed,
        re-planned, or still running. Returns the finished steps whose metadata lags the controller."""
        lagging: list[TopicPartition] = []
        for tp in partitions:
            moving = self.moving[tp]
            step = moving.step
            running = active.get(tp)
            if running is not None:
                if set(running.target) != set(step.target):  # replaced by someone else's: not this run's to cancel
                    self._forget(tp)
                    self._taken_over(tp, running)
                continue
            current = info.get(tp)
            if current is None:
                self._fail(tp, "the partition disappeared (topic deleted?)")
                continue
            if not moving.ended:  # it ended between the last poll and this one
                moving.ended = True
                self._took.append(max(0.0, self._previous_poll - moving.since))  # the last poll saw it running
            self.leader[tp] = current.leader
            ended = Ended.DONE
            if tuple(current.replicas) != step.target or not confirmed_done(step, current):
                now = self.clock()
                # the controller has finished the step, and the metadata of the broker we asked may not show it
                # yet; or another client cancelled it (never submitted again: the run stops) or moved it
                ended = ended_step(step, current, 0.0 if moving.lagging_since is None else now - moving.lagging_since)
                if ended is Ended.LAGGING:
                    moving.lagging_since = moving.lagging_since or now
                    self._lag_notes[tp] = f"{tp} waits for the metadata of its finished step"
                    lagging.append(tp)
                    continue
            if ended is not Ended.DONE:
                self._forget(tp)
                self.current[tp] = tuple(current.replicas)
                if ended is Ended.CANCELLED:
                    self.reporter.event(
                        f"{tp}: its step to {replica_ids(step.target)} was cancelled by another client "
                        f"(replicas are {replica_ids(current.replicas)})"
                    )
                    self.cancelled_by_others[tp] = step
                    self._stop = (
                        f"step of {','.join(str(p) for p in sorted(self.cancelled_by_others))} "
                        "cancelled by another client"
                    )
                else:
                    self._fail(
                        tp,
                        f"moved by another client to {replica_ids(current.replicas)} instead of {replica_ids(step.target)}",
                    )
                continue
            if step.moves_leader and current.leader != step.target[0]:
                # the controller ends a reassignment only with every target replica in the ISR: elect now,
                # even when the ISR this broker's metadata shows lags (measured: up to 5 s behind after a
                # window of 200 steps), but for a step that adds replicas and drops none, whose replicas look
                # the same under way (confirmed_done); an election the controller cannot make is tried again
                elect.append(tp)
                continue
            self._complete(tp, step)
        return lagging

    def _elected(self, tp: TopicPartition) -> None:
        """The controller answered that the step's new preferred leader leads: trust it (as for finished
        reassignments) rather than wait a poll for the metadata to say so, so the partition's next step may
        start in this poll, served by the new leader."""
        step = self.moving[tp].step
        self.leader[tp] = step.target[0]
        described = self._described.get(tp.topic, [])
        for i, info in enumerate(described):  # what this poll read before the election
            if info.partition == tp.partition:
                described[i] = replace(info, leader=step.target[0])
        self._complete(tp, step)

    def _complete(self, tp: TopicPartition, step: Step) -> None:
        self.meter.complete(tp, step)
        self._remove_moving(tp)
        self.state.in_flight.pop(tp, None)
        self.state.steps_done[tp] = self.state.steps_done.get(tp, 0) + 1
        self._changed.add(tp)
        self.current[tp] = step.target
        self._replan(tp)

    def _forget(self, tp: TopicPartition) -> None:
        self.meter.forget(tp)
        self._remove_moving(tp)
        if self.state.in_flight.pop(tp, None) is not None:
            self._changed.add(tp)

    def _fail(self, tp: TopicPartition, reason: str, quiet: bool = False) -> None:
        self._forget(tp)
        self.dirs.forget(tp)
        self.waiting.pop(tp, None)
        if tp not in self.failures and tp not in self.done:
            self._unfinished_on.subtract(self.state.target[tp])
        left = self._remaining.pop(tp, 0)
        self._remaining_total -= left
        if tp not in self.failures:
            self._steps_failed += left
        self.meter.plan(tp, 0)  # what it had left to copy will never be copied
        self.failures[tp] = reason
        if not quiet:
            self.reporter.event(f"{tp}: {reason}; leaving it alone")

    def _start_steps(self) -> None:
        now = self.clock()
        if now - self._health_checked >= HEALTH_RECHECK_S:
            self._health_checked = now
            self._release(_HEALTH)
        self._release_free_slots()
        taken: list[TopicPartition] = []
        self._parked_now = set()
        chosen = select_steps(
            self._queued_steps(taken),
            len(self.moving),
            sum(m.step.moves_leader for m in self.moving.values()),
            self.limits,
            self.in_flight.broker_load,
            broker_limit=self.broker_limit(),
            leader_of=lambda step: self.leader.get(step.partition),
            blocked=self._park,
            copies_in=self.in_flight.copies_in,
            copies_out=self.in_flight.copies_out,
        )
        picked = {s.partition for s in chosen}
        for tp in taken:  # read but neither chosen nor parked (the slots ran out): back in the queue
            if tp not in picked and tp not in self._parked_now:
                self._enqueue(tp)
        if not chosen:
            return
        # read the partitions about to start: someone may have moved them, or they may be unhealthy
        about = [s.partition for s in chosen]
        try:
            active = self.port.list_reassignments(about)
            info = self._describe(about)
            self.min_isr.read({tp.topic for tp in about})
        except BaseException:  # a failed read (waited out by the caller): the chosen steps wait in the queue
            for tp in about:
                self._enqueue(tp)
            raise
        starting: list[Step] = []
        for step in chosen:
            tp = step.partition
            if tp in active:
                self._taken_over(tp, active[tp])
                continue
            current = info.get(tp)
            if current is None:
                self._fail(tp, "the partition disappeared (topic deleted?)")
                continue
            counted, self.leader[tp] = self.leader.get(tp), current.leader
            if tuple(current.replicas) != self.current[tp]:
                self.current[tp] = tuple(current.replicas)
                self._replan(tp)  # moved from outside since it was last read: next poll takes its new step
                continue
            if step_brokers(step, counted) != step_brokers(step, current.leader):
                # its leader changed since it was chosen: the slots counted are not the ones it would take
                self._enqueue(tp)
                continue
            reason = self.min_isr.waits(tp, current)
            if reason is not None:
                if self._waiting_notes.get(tp) != reason:
                    self.reporter.event(reason)
                self._waiting_notes[tp] = reason
                self._park_at(_HEALTH, tp)
                continue
            self._waiting_notes.pop(tp, None)
            starting.append(step)
        if not starting:
            return
        # the rates of the brokers about to copy are looked at too (at most once a second): a rate removed while
        # none of its broker's steps was in flight would let the new steps copy unthrottled
        self._watch_throttles({b for s in starting for b in step_brokers(s, self.leader.get(s.partition))})
        if self._stop is not None:
            for step in starting:
                self._enqueue(step.partition)
            return
        try:  # the dirs of the replicas the steps add, named before the steps start (logdirs.py)
            self.dirs.prefer(starting)
        except BaseException:
            for step in starting:
                self._enqueue(step.partition)
            raise
        for step in starting:
            self.waiting.pop(step.partition, None)
            self._add_moving(step, now)
            self.state.in_flight[step.partition] = (step.source, step.target)
            self._changed.add(step.partition)
        self._throttle_moving()
        self._save_changes()  # the journal knows about a step before the cluster does
        with whole_request():  # a signal now would leave the submission on the wire, racing the clean-up's cancel
            errors = self.port.alter_reassignments({s.partition: s.target for s in starting}, self.allow_rf_change)
        for step in starting:
            error = errors.get(step.partition)
            if error is None:
                self.reporter.event(f"Started {step.describe()}")
            elif is_transient(error):
                self._forget(step.partition)
                self.waiting[step.partition] = step
                self._enqueue(step.partition)
                self.reporter.event(f"{step.partition}: step to {replica_ids(step.target)} not accepted yet ({error})")
            else:
                self._fail(step.partition, f"step to {replica_ids(step.target)} was refused: {error}")
        if errors:
            self._throttle_moving()

    # ---------------------------------------------------------------- progress
    def _progress(self) -> Progress:
        now = self.clock()
        rates = self.state.throttle if self.auto_throttle is None else self.auto_throttle.rates()  # auto: each its own
        eta = self.meter.poll(now, self.moving, self._live, rates, self.reporter.event)
        steps_total = sum(self.state.steps_done.values()) + self._remaining_total + self._steps_failed
        notes = [
            f"{tp} waits for broker {','.join(map(str, sorted(set(m.step.target) & set(self.stall.offline_since))))} (offline)"
            for tp, m in self.moving.items()
            if set(m.step.target) & set(self.stall.offline_since)
        ][:3]
        notes += list(self._lag_notes.values())[:3]
        notes += list(self._waiting_notes.values())[:3]
        notes += [f"{tp}: {reason}" for tp, reason in list(self.failures.items())[:3]]
        if self.dirs.pending:
            notes.append(f"{len(self.dirs.pending)} partition(s) wait for replicas to reach their log dirs")
        total = len(self.state.target)
        moving = len(self.moving) + sum(t.to_target for t in self.taken.values())
        return Progress(
            partitions=total,
            done=len(self.done),
            moving=moving,
            waiting=total - len(self.done) - moving - len(self.failures),
            steps_done=sum(self.state.steps_done.values()),
            steps_total=steps_total,
            bytes_total=self.meter.total,
            bytes_moved=self.meter.moved(),
            rate=self.meter.rate,
            eta=eta.seconds,
            eta_bound=eta.bound,
            eta_losing=eta.losing,
            write_rate=self.meter.write_rate,
            elapsed=now - self._started,
            notes=notes,
        )

    # ---------------------------------------------------------------- the end
    def _save_changes(self) -> None:
        """What changed since the last write, appended to the journal's log (nothing when nothing did)."""
        if self._changed:
            records = [self.state.partition_record(tp) for tp in sorted(self._changed)]
            self._changed.clear()
            self.journal.append(self.state, records)

    def _clean_up(self, status: RunStatus, message: str) -> list[TopicPartition]:
        return end_run(self, status, message)

    def save_all(self) -> None:
        """The whole journal, its log folded in."""
        self._changed.clear()
        self.journal.save(self.state)
