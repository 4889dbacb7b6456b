"""The bytes a batched run copies: each partition's size, what its finished steps copied, what the new replicas
of the steps in flight hold so far (read each poll), how fast their partitions are written meanwhile (their
leader's log, read every ``WRITES_EVERY_S``), and the copy rate and time left they give."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kreassign.cluster.port import ClusterPort
from kreassign.execution.falling_behind import BehindWatch, FallingBehind
from kreassign.execution.in_flight import Moving
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.eta import PLAN_RATE_WINDOW_S, CopyRate, Eta, estimate_eta, plan_throttle, throttle_shares
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


class CopyMeter:
    def __init__(self, port: ClusterPort) -> None:
        self.port = port
        self.sizes: dict[TopicPartition, int] = {}
        self.done = 0  # bytes copied by the finished steps
        self.total: int | None = None  # bytes the plan copies (None: sizes unknown)
        self.partial: dict[TopicPartition, int] = {}  # bytes copied so far by the steps in flight
        self.window = CopyRate()  # the bytes copied, sampled each poll: the rate over the last RATE_WINDOW_S
        self._throttle: float | None = None  # the throttle's bound of the last copies in flight
        self.writes = WriteWindow(PLAN_RATE_WINDOW_S)  # the logs of the partitions being copied
        self._writes_at = float("-inf")
        self.copying: dict[TopicPartition, int] = {}  # partitions being copied -> their new replicas
        self.copies_left: dict[TopicPartition, int] = {}  # new replicas each partition's unfinished steps add
        self.behind = BehindWatch()  # steps falling behind faster than they copy

    def measure(
        self,
        live: set[int],
        original: Mapping[TopicPartition, tuple[int, ...]],
        target: Mapping[TopicPartition, tuple[int, ...]],
        replicas_limit: int | None,
    ) -> None:
        """The size of each partition of the plan, and the bytes the plan copies (raises when unavailable)."""
        replicas = {b for r in original.values() for b in r}
        sizes = self.port.replica_sizes(sorted(replicas & live))
        for replica, size in sizes.items():
            tp = TopicPartition(replica.topic, replica.partition)
            if tp in target:
                self.sizes[tp] = max(self.sizes.get(tp, 0), size)
        total = 0
        for tp, final in target.items():
            copies = sum(len(s.adding) for s in plan_partition(tp, original[tp], final, replicas_limit))
            self.copies_left[tp] = copies
            total += copies * self.sizes.get(tp, 0)
        self.total = total

    def moved(self) -> int | None:
        """Bytes copied: each finished step's new replicas times its partition's size, plus what the new
        replicas of the steps in flight hold (as last measured)."""
        if self.total is None:
            return None
        return self.done + sum(self.partial.values())

    def complete(self, tp: TopicPartition, step: Step) -> None:
        self.partial.pop(tp, None)
        self.done += len(step.adding) * self.sizes.get(tp, 0)
        self.copies_left[tp] = max(0, self.copies_left.get(tp, 0) - len(step.adding))

    def forget(self, tp: TopicPartition) -> None:
        self.partial.pop(tp, None)

    def poll(
        self,
        now: float,
        moving: Mapping[TopicPartition, Moving],
        live: set[int],
        throttle: int,
        event: Callable[[str], None],
    ) -> Eta:
        """One poll of a batched run: what the steps in flight copied (``sample``; a step falling behind faster
        than it copies is named through ``event``), and when the plan's copies end under a throttle of
        ``throttle`` B/s on every broker (-1: none)."""
        serving = {tp: m.serving for tp, m in moving.items()}
        for behind in self.sample(now, {tp: m.step for tp, m in moving.items()}, live, serving, throttle > 0):
            event(behind.line())
        copies = {tp: (m.step.adding, m.serving) for tp, m in moving.items() if m.step.adding}
        # the in-sync followers of each partition being copied: the leader's throttle carries their replication
        in_sync = {
            tp: (m.serving, len(set(m.step.source) - {m.serving})) for tp, m in moving.items() if m.serving is not None
        }
        return self.eta(throttle_of_copies(throttle, copies, self.leader_load(in_sync)))

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
        if self.total is None:
            return []
        adding = [TopicPartitionReplica(tp.topic, tp.partition, b) for tp, step in moving.items() for b in step.adding]
        self.copying = {tp: len(step.adding) for tp, step in moving.items() if step.adding}
        leaders = {tp: b for tp, b in (serving or {}).items() if tp in self.copying and b is not None and b in live}
        writes_due = bool(leaders) and now - self._writes_at >= WRITES_EVERY_S
        # the leaders too: a partition written meanwhile grows, and its copies must copy that as well
        brokers = sorted(
            ({r.broker_id for r in adding} | set(leaders.values())) & live
        )  # a stopped one would not answer
        sizes: dict[TopicPartitionReplica, int] | None = {}
        if brokers and self.total:  # nothing to copy (empty partitions): nothing to ask
            try:  # display only: a broker stopped since the last poll must not hold the run up
                sizes = self.port.replica_sizes(brokers, list(moving), timeout_s=SIZES_TIMEOUT_S)
            except Exception:  # the copies keep the bytes they last showed
                sizes = None
        if sizes:
            self._grown(leaders, sizes)
        if writes_due and sizes:
            self._sample_writes(now, leaders, sizes)
        if sizes is None:
            self.partial = {tp: copied for tp, copied in self.partial.items() if tp in moving}
        else:
            self.partial = {}
            for replica in adding:
                tp = TopicPartition(replica.topic, replica.partition)
                copied = min(sizes.get(replica, 0), self.sizes.get(tp, 0))
                self.partial[tp] = self.partial.get(tp, 0) + copied
        if sizes is not None:  # a poll that could not read the copies adds no sample
            self.window.add(now, self.done + sum(self.partial.values()))
        if not sizes:
            return []
        gaps = {}
        for tp, leader in leaders.items():
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leader))
            held = [sizes.get(TopicPartitionReplica(tp.topic, tp.partition, b), 0) for b in moving[tp].adding]
            if size is not None and held:
                gaps[tp] = (sum(size - h for h in held) // len(held), sum(held) // len(held))
        return self.behind.observe(now, moving, gaps, self.writes.rates(), throttled)  # type: ignore[arg-type]

    def _grown(self, leaders: Mapping[TopicPartition, int], sizes: Mapping[TopicPartitionReplica, int]) -> None:
        """A partition being copied whose leader grew (writes): its size now, and what its copies left add."""
        for tp, leader in leaders.items():
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leader))
            if size is not None and size > self.sizes.get(tp, 0) and self.total is not None:
                self.total += (size - self.sizes.get(tp, 0)) * self.copies_left.get(tp, 0)
                self.sizes[tp] = size

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
        rates = self.writes.rates()
        return float(sum(rates.get(tp, 0.0) * copies for tp, copies in self.copying.items()))

    def leader_load(self, followers: Mapping[TopicPartition, tuple[int, int]]) -> dict[int, float]:
        """Per leader, the bytes/s it sends its in-sync followers of the partitions being copied (``followers``:
        partition -> (its leader, its in-sync followers)): their write rate times those followers."""
        rates = self.writes.rates()
        load: dict[int, float] = {}
        for tp, (leader, count) in followers.items():
            if tp in rates and count > 0:
                load[leader] = load.get(leader, 0.0) + rates[tp] * count  # type: ignore[operator]
        return load

    @property
    def rate(self) -> float | None:
        """The bytes copied per second over the last RATE_WINDOW_S (None before two samples)."""
        return self.window.rate

    def eta(self, throttle: float | None) -> Eta:
        """When the plan's copies end (``planning.eta``, as --progress says it): the bytes left / (the rate over
        the window, bounded by ``throttle`` (the throttle's shares of the copies in flight, summed), less the
        write rate of the partitions being copied)."""
        if throttle is not None:
            self._throttle = throttle
        elif not self.partial:  # between two steps (or a leader step): the next copies are bound as the last
            throttle = self._throttle
        moved = self.moved()
        left = None if self.total is None or moved is None else max(0, self.total - moved)
        return estimate_eta(left, self.window.rate, self.window.span_s, throttle=throttle, write_rate=self.write_rate)


def throttle_of_copies(
    rate: int,
    copies: Mapping[TopicPartition, tuple[tuple[int, ...], int | None]],
    leader_load: Mapping[int, float] | None = None,
) -> float | None:
    """The most the copies in flight may copy per second under a throttle of ``rate`` B/s on every broker (None
    without one): ``copies``: partition -> (the brokers it adds, the leader serving them); ``leader_load``: what
    each leader sends under its throttle besides (``planning.eta.throttle_shares``)."""
    if rate <= 0:
        return None
    shares = throttle_shares(
        {(tp, b): (b, float(rate), serving, float(rate)) for tp, (adding, serving) in copies.items() for b in adding},
        leader_load,
    )
    return plan_throttle(shares, sum(len(adding) for adding, _ in copies.values()))
