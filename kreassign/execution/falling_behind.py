"""Steps that fall behind faster than they copy (issue 35): while a batched run goes, a copy whose partition is
written faster than the throttle lets the copy through never ends. Each poll hands the gap of every step in flight
(its leader's size less what its new replicas hold, summed) and what they hold; a step is named once, when its gap
grew over ``FALLING_BEHIND_S`` and ``FALLING_BEHIND_POLLS`` polls at least, its partition written faster than it
was copied meanwhile, under a throttle."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from kreassign.humanize import format_bytes
from kreassign.model import TopicPartition
from kreassign.planning.steps import Step

FALLING_BEHIND_S = 10.0
"""How long the gap of a step must have grown before the step is named: longer than Kafka's first burst (its
quota lets about 10 s of the throttle's rate through at once, a copy then outruns the writes for a while), and
than one throttled fetch (a copy moves in fetches of up to 1 MiB, so over one poll the gap grows in any case)."""

FALLING_BEHIND_POLLS = 3


@dataclass(frozen=True)
class FallingBehind:
    partition: TopicPartition
    target: tuple[int, ...]
    write_bytes_per_s: float
    copy_bytes_per_s: float

    def line(self) -> str:
        return (
            f"{self.partition} falls behind faster than it copies: written at {format_bytes(self.write_bytes_per_s)}/s, "
            f"copied at {format_bytes(self.copy_bytes_per_s)}/s under the throttle; its step to "
            f"{','.join(map(str, self.target))} will not end at this throttle"
        )

    def document(self) -> dict[str, object]:
        return {
            "topic": self.partition.topic,
            "partition": self.partition.partition,
            "target": list(self.target),
            "write_bytes_per_s": round(self.write_bytes_per_s, 1),
            "copy_bytes_per_s": round(self.copy_bytes_per_s, 1),
        }


class BehindWatch:
    def __init__(self) -> None:
        # (at, gap, held) of each step in flight: by partition and target, as the steps named (a partition's next
        # step may start in the poll its previous one ended: its gaps are its own)
        self._gaps: dict[tuple[TopicPartition, tuple[int, ...]], deque[tuple[float, int, int]]] = {}
        self._told: set[tuple[TopicPartition, tuple[int, ...]]] = set()
        self.named: list[FallingBehind] = []  # every step named during the run

    def observe(
        self,
        now: float,
        steps: Mapping[TopicPartition, Step],
        gaps: Mapping[TopicPartition, tuple[int, int]],
        writes: Mapping[TopicPartition, float],
        throttled: bool,
    ) -> list[FallingBehind]:
        """``gaps``: step in flight -> (bytes its new replicas are behind their leader, bytes they hold: each the
        mean over its new replicas); ``writes``: write rates of the partitions. Returns the steps named for the
        first time."""
        in_flight = {(tp, step.target) for tp, step in steps.items()}
        for key in [key for key in self._gaps if key not in in_flight]:
            del self._gaps[key]
        named = []
        for tp, (gap, held) in gaps.items():
            key = (tp, steps[tp].target)
            samples = self._gaps.setdefault(key, deque())  # a throttled copy moves in fetches: the gap saws
            samples.append((now, gap, held))
            while len(samples) > FALLING_BEHIND_POLLS and now - samples[1][0] >= FALLING_BEHIND_S:
                samples.popleft()
            span = now - samples[0][0]
            if not throttled or key in self._told or len(samples) < FALLING_BEHIND_POLLS or span < FALLING_BEHIND_S:
                continue
            copied = (held - samples[0][2]) / span
            written = writes.get(tp, 0.0)
            if gap > samples[0][1] and written > copied:
                self._told.add(key)
                named.append(FallingBehind(tp, steps[tp].target, written, max(0.0, copied)))
        self.named.extend(named)
        return named
