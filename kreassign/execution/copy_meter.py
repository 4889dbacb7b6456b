"""The bytes a batched run copies: each partition's size, what its finished steps copied, what the new replicas
of the steps in flight hold so far (read each poll), and the copy rate and time left they give."""

from __future__ import annotations

from collections.abc import Mapping

from kreassign.cluster.port import ClusterPort
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import Step, plan_partition

SIZES_TIMEOUT_S = 2.0
"""How long a poll waits for the bytes copied so far (DescribeLogDirs of the brokers receiving replicas).
They only feed the display, so a broker stopped since the last poll costs that poll this long, not the
API timeout; the copies then keep the bytes they last showed, and the next poll sees the broker gone."""


class CopyMeter:
    def __init__(self, port: ClusterPort) -> None:
        self.port = port
        self.sizes: dict[TopicPartition, int] = {}
        self.done = 0  # bytes copied by the finished steps
        self.total: int | None = None  # bytes the plan copies (None: sizes unknown)
        self.partial: dict[TopicPartition, int] = {}  # bytes copied so far by the steps in flight
        self.rate: float | None = None
        self._last_sample: tuple[float, int] | None = None

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

    def forget(self, tp: TopicPartition) -> None:
        self.partial.pop(tp, None)

    def sample(self, now: float, moving: Mapping[TopicPartition, Step], live: set[int]) -> None:
        """Reads what the new replicas of the steps in flight hold, and updates the rate."""
        if self.total is None:
            return
        adding = [TopicPartitionReplica(tp.topic, tp.partition, b) for tp, step in moving.items() for b in step.adding]
        brokers = sorted({r.broker_id for r in adding} & live)  # a stopped broker would not answer
        sizes: dict[TopicPartitionReplica, int] | None = {}
        if brokers and self.total:  # nothing to copy (empty partitions): nothing to ask
            try:  # display only: a broker stopped since the last poll must not hold the run up
                sizes = self.port.replica_sizes(brokers, list(moving), timeout_s=SIZES_TIMEOUT_S)
            except Exception:  # the copies keep the bytes they last showed
                sizes = None
        if sizes is None:
            self.partial = {tp: copied for tp, copied in self.partial.items() if tp in moving}
        else:
            self.partial = {}
            for replica in adding:
                tp = TopicPartition(replica.topic, replica.partition)
                copied = min(sizes.get(replica, 0), self.sizes.get(tp, 0))
                self.partial[tp] = self.partial.get(tp, 0) + copied
        moved = self.done + sum(self.partial.values())
        if sizes is not None and self._last_sample is not None and now > self._last_sample[0]:
            instant = max(0.0, (moved - self._last_sample[1]) / (now - self._last_sample[0]))
            self.rate = instant if self.rate is None else 0.7 * self.rate + 0.3 * instant
        self._last_sample = (now, moved)

    def eta(self) -> float | None:
        """Seconds left at the current rate (None without a rate or sizes)."""
        moved = self.moved()
        if not self.rate or self.total is None or moved is None:
            return None
        return max(0.0, (self.total - moved) / self.rate)
