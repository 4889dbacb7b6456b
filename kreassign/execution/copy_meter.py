"""The bytes a batched run copies: each partition's size, what the new replicas of its steps received (read each
poll), how fast the partitions being copied are written meanwhile (their leader's log, read every
``WRITES_EVERY_S``), and the copy rate and time left they give.

What a new replica received is what its log grew by, poll to poll, from nothing. A broker may delete segments of a
replica while it is being filled (tiered storage's local retention trims a follower as it trims the leader, and a
follower whose fetch position the leader has trimmed away starts again from the leader's local log): a poll that
sees the log shrink counts nothing for that interval, so the figure is what was seen arriving, never the size the
partition had at the start. The size of a partition being copied follows its leader's log, both ways; the bytes
left to copy are, per new replica in flight, its leader's size less what it holds, and per copy not started yet,
the partition's size."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kreassign.cluster.port import ClusterPort
from kreassign.execution.falling_behind import BehindWatch, FallingBehind
from kreassign.execution.in_flight import Moving
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.eta import (
    PLAN_RATE_WINDOW_S,
    CopyRate,
    Eta,
    estimate_eta,
    plan_throttle,
    rated_copies,
    throttle_shares,
)
from kreassign.planning.steps import Step, plan_partition
from kreassign.planning.traffic import LogSample, WriteWindow

SIZES_TIMEOUT_S = 2.0
"""How long a poll waits for the bytes copied so far (DescribeLogDirs of the brokers receiving replicas).
They only feed the display, so a broker stopped since the last poll costs that poll this long, not the
API timeout; the copies then keep the bytes they last showed, and the next poll sees the broker gone."""

WRITES_EVERY_S = 2.0
"""How often a poll reads the logs of the partitions being copied (their start and end offsets, ListOffsets, and
their leader's size in the poll's DescribeLogDirs) for their write rate: two requests more, at most this often
(a batched run polls every 100 ms while steps end quickly)."""

WRITES_TRUSTED_S = 1.0
"""A write rate is believed once measured over at least this long (the first poll comes a moment after the run
read the plan's logs)."""

SEEDED_UP_TO = 100_000
"""The plan's logs are read at the start (two ListOffsets), so that a partition's writes are known when its step
starts, for plans of up to this many partitions; a larger plan's partitions are measured as they are copied."""

MEASURING_S = 3 * WRITES_EVERY_S
"""While a partition being copied has had no write rate for less than this, the ETA is unknown (measuring): an
ETA that takes its writes for none is too soon (issue 39: ``~0:00:03`` where the run took 14 s more). Past it, a
partition whose log cannot be read counts as not written."""


@dataclass
class _Replica:
    """A new replica of a step: the bytes its log was seen growing by, and its size when last read."""

    received: int = 0
    last: int = 0

    def read(self, size: int) -> None:
        self.received += max(0, size - self.last)  # a log that shrank lost segments: nothing seen arriving
        self.last = size

    def expected(self, size: int) -> int:
        """What it will have received once in sync with a leader of ``size`` bytes."""
        return self.received + max(0, size - self.last)


class CopyMeter:
    def __init__(self, port: ClusterPort, clock: Callable[[], float] | None = None) -> None:
        self.port = port
        self.clock = clock  # when the sizes were read (right after their call); None: the poll's time
        self.sizes: dict[TopicPartition, int] = {}
        self.done = 0  # bytes received by the new replicas of the finished steps (read since they ended)
        self._measured = False  # sizes known (else no bytes are shown)
        self.copies_left: dict[TopicPartition, int] = {}  # new replicas each partition's unfinished steps add
        self._planned = 0  # the copies left, each at its partition's size (kept as they change: a poll's work
        # follows what is in flight, not the size of the plan)
        self.in_flight: dict[TopicPartitionReplica, _Replica] = {}  # new replicas of the steps in flight
        self.ending: dict[TopicPartitionReplica, _Replica] = {}  # of steps finished, not read since
        self.window = CopyRate()  # the bytes copied, sampled each poll: the rate over the last RATE_WINDOW_S
        self._throttle: float | None = None  # the throttle's bound of the last copies in flight
        self.writes = WriteWindow(PLAN_RATE_WINDOW_S)  # the logs of the plan's partitions (from the start)
        self._writes_at = float("-inf")
        self.copying: dict[TopicPartition, int] = {}  # partitions being copied -> their new replicas
        self._copying_since: dict[TopicPartition, float] = {}
        self._now = 0.0
        self.behind = BehindWatch()  # steps falling behind faster than they copy

    # ------------------------------------------------------------------------------------------ the totals
    @property
    def total(self) -> int | None:
        """Bytes the run copies (None: sizes unknown): what the finished steps' new replicas received, what those in
        flight received and still lack (their leader's size less what they hold), and each copy not started yet
        at its partition's size."""
        if not self._measured:
            return None
        total = self.done + self._planned
        for replicas in (self.ending, self.in_flight):
            for replica, copy in replicas.items():
                size = self.sizes.get(TopicPartition(replica.topic, replica.partition), 0)
                total += copy.expected(size) - (size if replicas is self.in_flight else 0)  # counted in _planned
        return total

    def moved(self) -> int | None:
        """Bytes copied: what the new replicas of the finished steps and of those in flight received."""
        if not self._measured:
            return None
        ending = sum(
            copy.expected(self.sizes.get(TopicPartition(r.topic, r.partition), 0)) for r, copy in self.ending.items()
        )
        return self.done + ending + sum(copy.received for copy in self.in_flight.values())

    @property
    def partial(self) -> dict[TopicPartition, int]:
        """Per partition with a step in flight, what its new replicas received so far."""
        partial: dict[TopicPartition, int] = {}
        for replica, copy in self.in_flight.items():
            tp = TopicPartition(replica.topic, replica.partition)
            partial[tp] = partial.get(tp, 0) + copy.received
        return partial

    # ------------------------------------------------------------------------------------------ the run tells
    def measure(
        self,
        live: set[int],
        original: Mapping[TopicPartition, tuple[int, ...]],
        target: Mapping[TopicPartition, tuple[int, ...]],
        replicas_limit: int | None,
        now: float | None = None,
    ) -> None:
        """The size of each partition of the plan, and the copies the plan makes (raises when unavailable); with
        ``now``, the plan's logs too (start and end offsets), the first sample of their write rates."""
        replicas = {b for r in original.values() for b in r}
        sizes = self.port.replica_sizes(sorted(replicas & live))
        for replica, size in sizes.items():
            tp = TopicPartition(replica.topic, replica.partition)
            if tp in target:
                self._resize(tp, max(self.sizes.get(tp, 0), size))
        for tp, final in target.items():
            self.plan(tp, sum(len(s.adding) for s in plan_partition(tp, original[tp], final, replicas_limit)))
        self._measured = True
        if now is not None and 0 < len(self.sizes) <= SEEDED_UP_TO:
            try:  # display only, like the sizes
                partitions = sorted(self.sizes)
                ends = self.port.log_end_offsets(partitions)
                starts = self.port.log_start_offsets(partitions)
            except Exception:
                return
            self.writes.add(
                now,
                {
                    tp: (None, LogSample(starts[tp], ends[tp], size))
                    for tp, size in self.sizes.items()
                    if tp in starts and tp in ends
                },
            )

    def plan(self, tp: TopicPartition, copies: int) -> None:
        """The new replicas the partition's unfinished steps still add (its step in flight included); 0 for a
        partition the run no longer moves (failed, its topic deleted)."""
        self._planned += (copies - self.copies_left.get(tp, 0)) * self.sizes.get(tp, 0)
        self.copies_left[tp] = copies
        if not copies:
            self.writes.forget([tp])

    def _resize(self, tp: TopicPartition, size: int) -> None:
        self._planned += self.copies_left.get(tp, 0) * (size - self.sizes.get(tp, 0))
        self.sizes[tp] = size

    def complete(self, tp: TopicPartition, step: Step) -> None:
        """The step ended: its new replicas are read once more (the next poll, or ``settle``) for what they
        received."""
        for b in step.adding:
            replica = TopicPartitionReplica(tp.topic, tp.partition, b)
            self.ending[replica] = self.in_flight.pop(replica, None) or _Replica()
        self.plan(tp, max(0, self.copies_left.get(tp, 0) - len(step.adding)))

    def forget(self, tp: TopicPartition) -> None:
        """The step in flight will not end (reverted, cancelled): what its new replicas received is not kept."""
        for replica in [r for r in self.in_flight if (r.topic, r.partition) == (tp.topic, tp.partition)]:
            del self.in_flight[replica]

    def settle(self, live: set[int]) -> None:
        """Reads what the new replicas of the steps that ended received (the run's end; polls do it meanwhile)."""
        if self.ending:
            self._read({}, live, {})

    # ------------------------------------------------------------------------------------------ each poll
    def poll(
        self,
        now: float,
        moving: Mapping[TopicPartition, Moving],
        live: set[int],
        throttle: float | Mapping[int, float],
        event: Callable[[str], None],
    ) -> Eta:
        """One poll of a batched run: what the steps in flight copied (``sample``; a step falling behind faster
        than it copies is named through ``event``), and when the plan's copies end under the run's throttle
        (``throttle``: B/s on every broker, or each broker's own; below 0: none)."""
        serving = {tp: m.serving for tp, m in moving.items()}
        throttled = any(r > 0 for r in throttle.values()) if isinstance(throttle, Mapping) else throttle > 0
        for behind in self.sample(now, {tp: m.step for tp, m in moving.items()}, live, serving, throttled):
            event(behind.line())
        copies = {tp: (m.step.adding, m.serving) for tp, m in moving.items() if m.step.adding}
        # the in-sync followers of each partition being copied: the leader's throttle carries their replication
        in_sync = {
            tp: (m.serving, len(set(m.step.source) - {m.serving})) for tp, m in moving.items() if m.serving is not None
        }
        return self.eta(throttle_of_copies(throttle, copies, self.leader_load(in_sync)) if copies else None)

    def sample(
        self,
        now: float,
        moving: Mapping[TopicPartition, Step],
        live: set[int],
        serving: Mapping[TopicPartition, int | None] | None = None,
        throttled: bool = False,
    ) -> list[FallingBehind]:
        """Reads what the new replicas of the steps in flight hold, and updates the rate; every WRITES_EVERY_S,
        the logs of the partitions being copied too (``serving``: the leader serving each step's copies).
        Returns the steps seen falling behind faster than they copy for the first time (under a throttle)."""
        self._now = now
        if not self._measured:
            return []
        self.copying = {tp: len(step.adding) for tp, step in moving.items() if step.adding}
        for tp in self.copying:
            self._copying_since.setdefault(tp, now)
        for tp in [tp for tp in self._copying_since if tp not in self.copying]:
            del self._copying_since[tp]
        adding = {TopicPartitionReplica(tp.topic, tp.partition, b) for tp, step in moving.items() for b in step.adding}
        for replica in [r for r in self.in_flight if r not in adding]:  # a step that is no longer in flight
            del self.in_flight[replica]
        for replica in adding:
            self.in_flight.setdefault(replica, _Replica())
        leaders = {tp: b for tp, b in (serving or {}).items() if tp in self.copying and b is not None and b in live}
        sizes, at = self._read(leaders, live, moving)
        if sizes and self._writes_due(at):
            self._sample_writes(at, leaders, sizes)
        if sizes is not None:  # a poll that could not read the copies adds no sample
            self.window.add(at, self.moved() or 0)
        if not sizes:
            return []
        gaps = {}
        for tp, leader in leaders.items():
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leader))
            held = [sizes.get(TopicPartitionReplica(tp.topic, tp.partition, b), 0) for b in moving[tp].adding]
            if size is not None and held:
                gaps[tp] = (sum(max(0, size - h) for h in held) // len(held), sum(held) // len(held))
        writes = {tp: rate for tp in gaps if (rate := self.writes.rate(tp)) is not None}  # what is in flight only
        return self.behind.observe(now, moving, gaps, writes, throttled)  # type: ignore[arg-type]

    def _read(
        self, leaders: Mapping[TopicPartition, int], live: set[int], moving: Mapping[TopicPartition, Step]
    ) -> tuple[dict[TopicPartitionReplica, int] | None, float]:
        """One DescribeLogDirs of the new replicas in flight and of the steps that ended, and of the leaders of the
        partitions being copied (a partition written meanwhile grows: its copies must copy that too). Returns
        the sizes (None: not read) and when."""
        wanted = set(self.in_flight) | set(self.ending)
        brokers = sorted(
            ({r.broker_id for r in wanted} | set(leaders.values())) & live
        )  # a stopped one would not answer
        partitions = sorted({*moving, *(TopicPartition(r.topic, r.partition) for r in self.ending)})
        sizes: dict[TopicPartitionReplica, int] | None = {}
        if brokers and partitions:
            try:  # display only: a broker stopped since the last poll must not hold the run up
                sizes = self.port.replica_sizes(brokers, partitions, timeout_s=SIZES_TIMEOUT_S)
            except Exception:  # the copies keep the bytes they last showed
                sizes = None
        at = self.clock() if self.clock is not None else self._now
        if not sizes:
            return sizes, at
        for tp, leader in leaders.items():  # the size of a partition being copied is its leader's, now
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leader))
            if size is not None:
                self._resize(tp, size)
        for replica, copy in self.in_flight.items():
            if replica in sizes:
                copy.read(sizes[replica])
        for replica in [r for r in self.ending if r.broker_id in brokers]:
            copy = self.ending.pop(replica)
            if replica in sizes:
                copy.read(sizes[replica])
            self.done += copy.received
        return sizes, at

    def _writes_due(self, now: float) -> bool:
        if now - self._writes_at >= WRITES_EVERY_S:
            return True
        # a partition just started: its rate as soon as it can be believed
        return now - self._writes_at >= WRITES_TRUSTED_S and any(
            self.writes.rate(tp, WRITES_TRUSTED_S) is None for tp in self.copying
        )

    def _sample_writes(
        self, now: float, leaders: Mapping[TopicPartition, int], sizes: Mapping[TopicPartitionReplica, int]
    ) -> None:
        """The log of each partition being copied: start and end offsets, and its leader's size."""
        self._writes_at = now
        partitions = sorted(leaders)
        try:  # display only, like the sizes
            ends = self.port.log_end_offsets(partitions)
            starts = self.port.log_start_offsets(partitions)
        except Exception:
            return
        logs = {}
        for tp, leader in leaders.items():
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leader))
            if tp in ends and tp in starts and size is not None:
                logs[tp] = (leader, LogSample(starts[tp], ends[tp], size))
        self.writes.add(now, logs)

    @property
    def write_rate(self) -> float:
        """Bytes/s by which the copies in flight fall behind their leaders meanwhile: each partition being copied,
        its write rate times its new replicas (each of them must copy those writes too)."""
        rates = {tp: self.writes.rate(tp, WRITES_TRUSTED_S) for tp in self.copying}
        return float(sum((rates[tp] or 0.0) * copies for tp, copies in self.copying.items()))

    @property
    def measuring_writes(self) -> bool:
        """A partition being copied has no write rate yet (for less than MEASURING_S)."""
        return any(
            self.writes.rate(tp, WRITES_TRUSTED_S) is None and self._now - since < MEASURING_S
            for tp, since in self._copying_since.items()
        )

    def leader_load(self, followers: Mapping[TopicPartition, tuple[int, int]]) -> dict[int, float]:
        """Per leader, the bytes/s it sends its in-sync followers of the partitions being copied (``followers``:
        partition -> (its leader, its in-sync followers)): their write rate times those followers."""
        load: dict[int, float] = {}
        for tp, (leader, count) in followers.items():
            rate = self.writes.rate(tp, WRITES_TRUSTED_S) if count > 0 else None
            if rate is not None:
                load[leader] = load.get(leader, 0.0) + rate * count
        return load

    @property
    def rate(self) -> float | None:
        """The bytes copied per second over the last RATE_WINDOW_S (None before two samples)."""
        return self.window.rate

    def eta(self, throttle: float | None) -> Eta:
        """When the plan's copies end (``planning.eta``, as --progress says it): the bytes left / (the rate over
        the window, bounded by ``throttle`` (the throttle's shares of the copies in flight, summed), less the
        write rate of the partitions being copied). Unknown while the writes of a partition being copied are
        being measured."""
        if throttle is not None:
            self._throttle = throttle
        elif not self.in_flight:  # between two steps (or a leader step): the next copies are bound as the last
            throttle = self._throttle
        total, moved = self.total, self.moved()
        left = None if total is None or moved is None else max(0, total - moved)
        if left and self.measuring_writes:
            return Eta(None)
        return estimate_eta(left, self.window.rate, self.window.span_s, throttle=throttle, write_rate=self.write_rate)


def throttle_of_copies(
    rate: float | Mapping[int, float],
    copies: Mapping[TopicPartition, tuple[tuple[int, ...], int | None]],
    leader_load: Mapping[int, float] | None = None,
) -> float | None:
    """The most the copies in flight may copy per second under the run's throttle (``rate``: one rate for every
    broker, or each broker's own under --throttle auto; below 0: none): ``copies``: partition -> (the brokers it
    adds, the leader serving them); ``leader_load``: what each leader sends under its throttle besides
    (``planning.eta.throttle_shares``). None when a copy is not throttled."""
    rated = rated_copies(
        {(tp, b): (b, serving) for tp, (adding, serving) in copies.items() for b in adding},
        rate,
    )
    return plan_throttle(throttle_shares(rated, leader_load), len(rated))
