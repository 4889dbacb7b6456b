"""The batched executor: submits KIP-435 steps, waits for them, elects new leaders, keeps throttles narrow,
and cleans up whatever happens.

One thread, one loop, clock and sleep injected (tests run it against the simulated cluster with a fake
clock). Every poll: read requests from the control file, observe the cluster, finish the steps that
completed, start new steps in the free slots, write the journal, report progress. The state of each
partition is read from the cluster, not assumed, so a resumed run never repeats a finished step.

However the loop ends (completed, cancelled, interrupted by a signal, failed), ``finally`` cancels the
steps still moving (unless the plan completed), restores the throttles recorded before the first step,
and writes the outcome to the journal.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError, KreassignError, is_transient
from kreassign.execution.journal import Journal, JournalState, RunStatus
from kreassign.execution.throttles import ThrottleLifecycle
from kreassign.model import PartitionInfo, TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import Limits, Step, next_step, plan_partition, select_steps


@dataclass
class Progress:
    """What a progress display shows."""

    partitions: int
    done: int
    moving: int
    waiting: int
    steps_done: int
    steps_total: int
    bytes_total: int | None
    bytes_moved: int | None
    rate: float | None  # bytes/s
    eta: float | None  # seconds
    elapsed: float
    notes: list[str] = field(default_factory=list)


class Reporter(Protocol):
    def event(self, message: str) -> None: ...

    def progress(self, progress: Progress) -> None: ...


class StalledError(CommandError):
    """The run cannot make progress (a broker it needs is away, the cluster keeps failing) for too long."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} (--stall-timeout-ms); stopped the batched reassignment, reverted its steps in flight and "
            "restored throttles. Run the same command again to resume"
        )


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; the run stops and cleans up. A BaseException, like KeyboardInterrupt, so
    that no ``except Exception`` on the way (the Kafka clients', the adapter's) mistakes it for a failed call."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Signals:
    """What the SIGINT/SIGTERM handler does: raise ``Interrupted`` once, unless clean-up is running."""

    fired: ClassVar[list[int]] = []
    deferring = 0

    @classmethod
    def handler(cls, signum: int, _frame: object) -> None:
        if cls.fired:
            return  # one interruption is enough: let the clean-up finish
        cls.fired.append(signum)
        if not cls.deferring:
            raise Interrupted(signum)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT/SIGTERM raise ``Interrupted`` once; later ones, and any that come during clean-up
    (``signals_deferred``), are only recorded so that the clean-up can finish."""
    _Signals.fired = []
    previous = {s: signal.signal(s, _Signals.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within this block a signal does not interrupt (it is recorded in ``signal_received()``)."""
    _Signals.deferring += 1
    try:
        yield
    finally:
        _Signals.deferring -= 1


def signal_received() -> int | None:
    return _Signals.fired[0] if _Signals.fired else None


@dataclass
class Outcome:
    status: RunStatus  # completed, cancelled, interrupted or failed
    steps_done: int
    partitions_done: int
    partitions: int
    elapsed: float
    bytes_moved: int | None
    failures: dict[TopicPartition, str] = field(default_factory=dict)
    reverted: list[TopicPartition] = field(default_factory=list)
    message: str = ""
    signum: int | None = None  # the signal that interrupted the run


OFFLINE_RECHECKS = 5
"""How many times (a second apart) clean-up asks again before leaving an offline broker's rates for later."""

METADATA_LAG_S = 30.0
"""How long a finished step may still look unfinished in broker metadata before it is planned again."""


@dataclass
class _Moving:
    step: Step
    since: float
    electing: bool = False
    lagging_since: float | None = None


class BatchedExecutor:
    def __init__(
        self,
        port: ClusterPort,
        journal: Journal,
        state: JournalState,
        limits: Limits,
        reporter: Reporter,
        *,
        allow_replication_factor_change: bool = True,
        poll_interval: float = 1.0,
        stall_timeout: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.port = port
        self.stall_timeout = stall_timeout
        self.journal = journal
        self.state = state
        self.limits = limits
        self.reporter = reporter
        self.allow_rf_change = allow_replication_factor_change
        self.poll_interval = poll_interval
        self.clock = clock
        self.sleep = sleep
        self.throttles = ThrottleLifecycle(port, state.recorded_throttles)
        self.moving: dict[TopicPartition, _Moving] = {}
        self.failures: dict[TopicPartition, str] = {}
        self.done: set[TopicPartition] = set()
        self.sizes: dict[TopicPartition, int] = {}
        self.bytes_done = 0
        self.bytes_total: int | None = None
        self._rate: float | None = None
        self._last_sample: tuple[float, int] | None = None
        self._started = clock()
        self._waiting_notes: dict[TopicPartition, str] = {}
        self._partial: dict[TopicPartition, int] = {}  # bytes copied so far by the steps in flight
        self._offline_since: dict[int, float] = {}
        self._live: set[int] = set()
        self._failing_since: float | None = None
        self.cleanup_problems: list[str] = []

    # ---------------------------------------------------------------- the run
    def run(self) -> Outcome:
        status, message, signum = RunStatus.FAILED, "", None
        try:
            self._start()
            while True:
                request = self._control()
                if request == "cancel":
                    status, message = RunStatus.CANCELLED, "cancelled by --cancel"
                    break
                try:
                    info, active, live = self._observe()
                    self._finish_steps(info, active)
                    if len(self.done) + len(self.failures) == len(self.state.target) and not self.moving:
                        status = RunStatus.COMPLETED if not self.failures else RunStatus.FAILED
                        break
                    self._check_offline(live)
                    self._start_steps(info, active, live)
                    self._save()
                    self.reporter.progress(self._progress(info))
                    self._failing_since = None
                except KreassignError as exc:
                    if not is_transient(exc):
                        raise
                    self._wait_out(exc)
                self.sleep(self.poll_interval)
        except Interrupted as exc:
            status, message, signum = RunStatus.INTERRUPTED, f"interrupted by {exc}", exc.signum
        except BaseException as exc:
            status, message = RunStatus.FAILED, str(getattr(exc, "message", None) or exc) or type(exc).__name__
            raise
        finally:
            with signals_deferred():
                reverted = self._clean_up(status, message)
        return Outcome(
            status,
            sum(self.state.steps_done.values()),
            len(self.done),
            len(self.state.target),
            self.clock() - self._started,
            self._bytes_moved(),
            dict(self.failures),
            reverted,
            message,
            signum,
        )

    def _start(self) -> None:
        self._live = {b.id for b in self.port.describe_brokers()}
        # a previous run of this plan may have died with its throttles set: restore from what is there now
        self.throttles.adopt_current(self._live)
        brokers = {b for replicas in self.state.target.values() for b in replicas}
        brokers |= {b for replicas in self.state.original.values() for b in replicas}
        self.throttles.set_rates(brokers & self._live, self.state.throttle, self.state.log_dir_throttle)
        self._measure_sizes()
        # steps a previous run left in flight: adopt those the cluster is still doing
        active = self.port.list_reassignments(list(self.state.target))
        for tp, (source, target) in list(self.state.in_flight.items()):
            running = active.get(tp)
            if running is not None and set(running.replicas) - set(running.removing) == set(target):
                self.moving[tp] = _Moving(Step(tp, source, target), self.clock())
            else:
                self.state.in_flight.pop(tp)
        if self.moving:
            self.reporter.event(f"Resumed {len(self.moving)} step(s) left in flight by the previous run")
        self.throttles.throttle_moving(m.step for m in self.moving.values())

    def _wait_out(self, exc: KreassignError) -> None:
        """The cluster failed a call in a way Kafka calls retriable (controller moving, broker down ...)."""
        now = self.clock()
        if self._failing_since is None:
            self._failing_since = now
            self.reporter.event(f"The cluster did not answer ({exc.message}); retrying")
        elif now - self._failing_since > self.stall_timeout:
            raise StalledError(
                f"the cluster has been failing for {now - self._failing_since:.0f} s (last: {exc.message})"
            ) from None

    def _check_offline(self, live: set[int]) -> None:
        """Brokers the unfinished steps need: report those offline, stop when one stays away too long."""
        now = self.clock()
        needed = {b for tp, final in self.state.target.items() if tp not in self.done for b in final}
        needed |= {b for m in self.moving.values() for b in m.step.target}
        for broker in sorted(needed):
            if broker in live:
                if self._offline_since.pop(broker, None) is not None:
                    self.reporter.event(f"Broker {broker} is back")
                continue
            if broker not in self._offline_since:
                self._offline_since[broker] = now
                self.reporter.event(f"Broker {broker} is offline; steps that need it wait")
            elif now - self._offline_since[broker] > self.stall_timeout:
                raise StalledError(f"broker {broker} has been offline for {now - self._offline_since[broker]:.0f} s")

    def _measure_sizes(self) -> None:
        replicas = {b for r in self.state.original.values() for b in r}
        try:
            sizes = self.port.replica_sizes(sorted(replicas & self._live))
        except Exception as exc:  # sizes only feed the display; the move goes on without them
            self.reporter.event(f"Replica sizes unavailable ({exc}); progress is shown in steps only")
            return
        for replica, size in sizes.items():
            tp = TopicPartition(replica.topic, replica.partition)
            if tp in self.state.target:
                self.sizes[tp] = max(self.sizes.get(tp, 0), size)
        total = 0
        for tp, final in self.state.target.items():
            copies = sum(
                len(s.adding) for s in plan_partition(tp, self.state.original[tp], final, self.limits.replicas)
            )
            total += copies * self.sizes.get(tp, 0)
        self.bytes_total = total

    def _control(self) -> str | None:
        control = self.journal.read_control()
        if not control:
            return None
        self.journal.clear_control()
        if control.get("cancel"):
            return "cancel"
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
            self.reporter.event(f"Throttle changed to {self.state.throttle} B/s")
        return None

    def _observe(self):
        described = self.port.describe_topics(sorted({tp.topic for tp in self.state.target}))
        info: dict[TopicPartition, PartitionInfo] = {}
        for topic, partitions in described.items():
            for p in partitions:
                info[TopicPartition(topic, p.partition)] = p
        active = self.port.list_reassignments(list(self.state.target))
        live = {b.id for b in self.port.describe_brokers()}
        self._live = live
        return info, active, live

    # ---------------------------------------------------------------- steps
    def _finish_steps(self, info, active) -> None:
        for tp, moving in list(self.moving.items()):
            step = moving.step
            current = info.get(tp)
            if current is None:
                self._fail(tp, "the partition disappeared (topic deleted?)")
                continue
            running = active.get(tp)
            if running is not None:
                if set(running.replicas) - set(running.removing) != set(step.target):
                    self._fail(tp, f"someone else changed its reassignment (now to {list(running.replicas)})")
                continue
            if tuple(current.replicas) != step.target:
                union = set(step.source) | set(step.target)
                if set(current.replicas) == union and set(current.replicas) != set(step.source):
                    # the controller has finished the step, the metadata of the broker we asked has not yet
                    moving.lagging_since = moving.lagging_since or self.clock()
                    if self.clock() - moving.lagging_since < METADATA_LAG_S:
                        continue
                # cancelled or overridden from outside: plan again from where it is
                self.reporter.event(
                    f"{tp}: step to {list(step.target)} did not complete (replicas are {list(current.replicas)}); re-planning"
                )
                self._forget(tp)
                continue
            if step.moves_leader and current.leader != step.target[0]:
                if step.target[0] in current.isr:
                    errors = self.port.elect_preferred_leaders([tp])
                    if tp in errors and not moving.electing:
                        self.reporter.event(f"{tp}: preferred leader election pending ({errors[tp]})")
                    moving.electing = True
                continue
            self._complete(tp, step)
        for tp, final in self.state.target.items():
            idle = tp not in self.moving and tp not in self.failures and tp not in active
            if idle and tp in info and tuple(info[tp].replicas) == tuple(final):
                self.done.add(tp)
        if self.moving or self.done:
            self.throttles.throttle_moving(m.step for m in self.moving.values())

    def _complete(self, tp: TopicPartition, step: Step) -> None:
        self._partial.pop(tp, None)
        self.moving.pop(tp)
        self.state.in_flight.pop(tp, None)
        self.state.steps_done[tp] = self.state.steps_done.get(tp, 0) + 1
        self.bytes_done += len(step.adding) * self.sizes.get(tp, 0)
        if step.target == self.state.target[tp]:
            self.done.add(tp)

    def _forget(self, tp: TopicPartition) -> None:
        self._partial.pop(tp, None)
        self.moving.pop(tp, None)
        self.state.in_flight.pop(tp, None)

    def _fail(self, tp: TopicPartition, reason: str) -> None:
        self._forget(tp)
        self.failures[tp] = reason
        self.reporter.event(f"{tp}: {reason}; leaving it alone")

    def _start_steps(self, info, active, live) -> None:
        candidates = []
        self._waiting_notes = {}
        for tp, final in self.state.target.items():
            if tp in self.moving or tp in self.done or tp in self.failures or tp not in info:
                continue
            if tp in active:
                self._fail(tp, f"is being reassigned by someone else (to {list(active[tp].replicas)})")
                continue
            step = next_step(tp, info[tp].replicas, final, self.limits.replicas)
            if step is None:
                self.done.add(tp)
                continue
            offline = sorted(set(step.target) - live)
            if offline:
                self._waiting_notes[tp] = f"{tp} waits for broker {','.join(map(str, offline))} (offline)"
                continue
            candidates.append(step)
        leaders = sum(m.step.moves_leader for m in self.moving.values())
        chosen = select_steps(candidates, len(self.moving), leaders, self.limits)
        if not chosen:
            return
        now = self.clock()
        for step in chosen:
            self.moving[step.partition] = _Moving(step, now)
            self.state.in_flight[step.partition] = (step.source, step.target)
        self.throttles.throttle_moving(m.step for m in self.moving.values())
        self._save()  # the journal knows about a step before the cluster does
        errors = self.port.alter_reassignments({s.partition: s.target for s in chosen}, self.allow_rf_change)
        for step in chosen:
            error = errors.get(step.partition)
            if error is None:
                self.reporter.event(f"Started {step.describe()}")
            elif is_transient(error):
                self._forget(step.partition)
                self.reporter.event(f"{step.partition}: step to {list(step.target)} not accepted yet ({error})")
            else:
                self._fail(step.partition, f"step to {list(step.target)} was refused: {error}")
        if errors:
            self.throttles.throttle_moving(m.step for m in self.moving.values())

    # ---------------------------------------------------------------- progress
    def _bytes_moved(self) -> int | None:
        if self.bytes_total is None:
            return None
        return self.bytes_done + sum(self._partial.values())

    def _progress(self, info) -> Progress:
        now = self.clock()
        if self.bytes_total is not None:
            adding = [
                TopicPartitionReplica(tp.topic, tp.partition, b) for tp, m in self.moving.items() for b in m.step.adding
            ]
            self._partial = {}
            brokers = sorted({r.broker_id for r in adding} & self._live)  # a stopped broker would not answer
            if brokers:
                try:
                    sizes = self.port.replica_sizes(brokers)
                except Exception:  # display only
                    sizes = {}
                for replica in adding:
                    tp = TopicPartition(replica.topic, replica.partition)
                    copied = min(sizes.get(replica, 0), self.sizes.get(tp, 0))
                    self._partial[tp] = self._partial.get(tp, 0) + copied
            moved = self.bytes_done + sum(self._partial.values())
            if self._last_sample is not None and now > self._last_sample[0]:
                instant = max(0.0, (moved - self._last_sample[1]) / (now - self._last_sample[0]))
                self._rate = instant if self._rate is None else 0.7 * self._rate + 0.3 * instant
            self._last_sample = (now, moved)
        moved_bytes = self._bytes_moved()
        eta = None
        if self._rate and self.bytes_total is not None and moved_bytes is not None:
            eta = max(0.0, (self.bytes_total - moved_bytes) / self._rate)
        remaining = 0
        for tp, final in self.state.target.items():
            if tp in self.moving:  # metadata lists every replica of a reassigning partition: plan from the step
                remaining += len(plan_partition(tp, self.moving[tp].step.source, final, self.limits.replicas))
            elif tp in info and tp not in self.failures:
                remaining += len(plan_partition(tp, info[tp].replicas, final, self.limits.replicas))
        steps_total = sum(self.state.steps_done.values()) + remaining
        notes = [
            f"{tp} waits for broker {','.join(map(str, sorted(set(m.step.target) & set(self._offline_since))))} (offline)"
            for tp, m in self.moving.items()
            if set(m.step.target) & set(self._offline_since)
        ][:3]
        notes += list(self._waiting_notes.values())[:3]
        notes += [f"{tp}: {reason}" for tp, reason in list(self.failures.items())[:3]]
        total = len(self.state.target)
        return Progress(
            partitions=total,
            done=len(self.done),
            moving=len(self.moving),
            waiting=total - len(self.done) - len(self.moving) - len(self.failures),
            steps_done=sum(self.state.steps_done.values()),
            steps_total=steps_total,
            bytes_total=self.bytes_total,
            bytes_moved=moved_bytes,
            rate=self._rate,
            eta=eta,
            elapsed=now - self._started,
            notes=notes,
        )

    # ---------------------------------------------------------------- the end
    def _save(self) -> None:
        self.journal.save(self.state)

    def _clean_up(self, status: RunStatus, message: str) -> list[TopicPartition]:
        """Runs in ``finally``: revert the steps in flight (unless done), restore throttles, record the end."""
        problems = []
        reverted: list[TopicPartition] = []
        if self.moving and status is not RunStatus.COMPLETED:
            try:
                data_moving = [tp for tp, m in self.moving.items() if not m.electing]
                if data_moving:
                    errors = self.port.alter_reassignments({tp: None for tp in data_moving})
                    # a step that finished since the last poll has nothing left to cancel
                    finished = {
                        tp
                        for tp, e in errors.items()
                        if "NoReassignmentInProgress" in e or "No partition reassignment is in progress" in e
                    }
                    reverted = [tp for tp in data_moving if tp not in errors]
                    for tp in [*reverted, *finished]:
                        self._forget(tp)
                    problems += [
                        f"could not cancel the step of {tp}: {errors[tp]}"
                        for tp in sorted(errors)
                        if tp not in finished
                    ]
            except Exception as exc:
                problems.append(f"could not cancel the steps in flight: {getattr(exc, 'message', exc)}")
        try:
            recorded_brokers = {int(b) for b in self.state.recorded_throttles.get("broker", {})}
            # a loaded cluster can fence a running broker for a few seconds: look again before giving up on it
            for attempt in range(OFFLINE_RECHECKS):
                with contextlib.suppress(Exception):  # else restore with what the last poll saw
                    self._live = {b.id for b in self.port.describe_brokers()}
                if not recorded_brokers - self._live or attempt == OFFLINE_RECHECKS - 1:
                    break
                self.sleep(1.0)
            self.throttles.restore(offline=recorded_brokers - self._live)
            if self.throttles.pending:
                problems.append(
                    "the throttle rates of offline broker(s) "
                    + ",".join(self.throttles.pending)
                    + " stay until a later run of this plan (or --cancel) restores them"
                )
        except Exception as exc:
            problems.append(str(getattr(exc, "message", None) or exc))
        self.state.status = status if not problems else RunStatus.FAILED
        self.state.message = "; ".join([m for m in [message, *problems] if m])
        try:
            self._save()
        except CommandError as exc:
            problems.append(exc.message)
        if problems:
            self.reporter.event("Clean-up incomplete: " + "; ".join(problems))
        self.cleanup_problems = problems
        return reverted
