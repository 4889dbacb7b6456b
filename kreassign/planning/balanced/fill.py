"""Stage 4 of the balanced pipeline: the free slots of the under-target brokers (:class:`SlotPlan`, driver)
and, per topic, its vacancies filled from its window of them (:func:`fill_topic`). Standard library only.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kreassign.planning.context import BalanceContext


@dataclass(frozen=True)
class SlotPlan:
    """The free slots of the under-target brokers as one sequence, round by round: round r lists every
    broker whose deficit exceeds r, by decreasing deficit then spread order. Topic ``t`` (in name order)
    owns the window ``[offsets[t], offsets[t] + vacancies[t])`` of it."""

    order: tuple[int, ...]
    round_starts: tuple[int, ...]
    offsets: tuple[tuple[str, int], ...]

    @classmethod
    def build(cls, ctx: BalanceContext, deficits: Mapping[int, int], vacancies: Mapping[str, int]) -> SlotPlan:
        needy = sorted((b for b, d in deficits.items() if d > 0), key=lambda b: (-deficits[b], ctx.spread_rank(b)))
        starts = [0]
        depth = deficits[needy[0]] if needy else 0
        width = len(needy)
        for r in range(depth):
            while width and deficits[needy[width - 1]] <= r:
                width -= 1
            starts.append(starts[-1] + width)
        offsets, position = [], 0
        for topic in sorted(vacancies):
            offsets.append((topic, position))
            position += vacancies[topic]
        return cls(tuple(needy), tuple(starts), tuple(offsets))

    @property
    def size(self) -> int:
        return self.round_starts[-1]

    def slot(self, index: int) -> int | None:
        if index >= self.size:
            return None
        r = bisect.bisect_right(self.round_starts, index) - 1
        return self.order[index - self.round_starts[r]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_offset_of", dict(self.offsets))

    def window(self, topic: str, count: int) -> list[int]:
        offset = self._offset_of.get(topic, 0) if count else 0  # type: ignore[attr-defined]
        slots = (self.slot(i) for i in range(offset, offset + count))
        return [s for s in slots if s is not None]


def fill_topic(
    ctx: BalanceContext,
    partitions: Iterable[tuple[int, tuple[int, ...], int]],
    shed: Iterable[tuple[int, int]],
    slots: Sequence[int],
) -> list[tuple[int, tuple[int, ...], int, tuple[int, ...]]]:
    """One topic: drop the shed replicas, then give each vacancy a slot its partition accepts.

    ``partitions``: (partition, kept replicas, vacancies); ``shed``: (partition, broker) pairs leaving.
    Vacancies are served by partition number; each takes the first slot of the topic's window that fits,
    else swaps with an earlier vacancy of the topic. Returns per partition (partition, replicas, vacancies
    still open, brokers shed from it); the open ones go to :func:`repair_leftovers`.
    """
    leaving: dict[int, set[int]] = {}
    for partition, broker in shed:
        leaving.setdefault(partition, set()).add(broker)
    remaining = list(slots)
    done: list[tuple[int, list[int], int, int, tuple[int, ...]]] = []  # partition, replicas, open, rf, shed
    placed: list[tuple[int, int]] = []  # (index in done, broker) of each slot used
    for partition, kept, vacancies in sorted(partitions):
        if not vacancies and partition not in leaving:  # the usual case: nothing changes
            done.append((partition, kept, 0, len(kept), ()))  # type: ignore[arg-type]
            continue
        gone = leaving.get(partition, set())
        replicas = [b for b in kept if b not in gone]
        rf = len(kept) + vacancies
        cap = ctx.rack_cap(rf)
        index = len(done)
        while len(replicas) < rf:
            choice = next((i for i, b in enumerate(remaining) if ctx.fits(b, replicas, cap)), None)
            broker = (
                remaining.pop(choice) if choice is not None else _swap_for(ctx, done, placed, replicas, cap, remaining)
            )
            if broker is None:
                break
            replicas.append(broker)
            placed.append((index, broker))
        done.append((partition, replicas, rf - len(replicas), rf, tuple(sorted(gone))))
    return [(p, r if type(r) is tuple else tuple(r), o, g) for p, r, o, _, g in done]


def _swap_for(
    ctx: BalanceContext,
    done: list[tuple[int, list[int], int, int, tuple[int, ...]]],
    placed: list[tuple[int, int]],
    replicas: list[int],
    cap: int,
    remaining: list[int],
) -> int | None:
    """Take a broker given to an earlier partition of the topic, if that one can use a free slot instead."""
    for n, (index, broker) in enumerate(placed):
        if not ctx.fits(broker, replicas, cap):
            continue
        other = done[index][1]
        others = [b for b in other if b != broker]
        other_cap = ctx.rack_cap(done[index][3])
        choice = next((i for i, b in enumerate(remaining) if ctx.fits(b, others, other_cap)), None)
        if choice is None:
            continue
        replacement = remaining.pop(choice)
        other[other.index(broker)] = replacement
        placed[n] = (index, replacement)
        return broker
    return None


def newly_placed(kept: Sequence[int], replicas: Sequence[int]) -> tuple[int, ...]:
    """The brokers a partition was given by :func:`fill_topic` (``kept``: its replicas before)."""
    return tuple(b for b in replicas if b not in kept)
