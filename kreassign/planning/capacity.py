"""Disk capacity as a hard rule of the balanced plan (``--max-disk-usage``). Standard library only.

The balanced pipeline (:mod:`kreassign.planning.balanced`) balances replica counts and, best effort, bytes; it
does not know disk sizes. This stage runs after it, on the driver, with the plan either engine produced, so
both engines give the same result: no broker of known capacity may end above ``limit`` of its disk unless it
was above that before and does not grow (the plan never makes a full disk worse).

While a broker is above its bound it gives up replicas, one at a time, each to the broker that takes it at
the least cost, in this order: a broker the partition is on now (the plan wanted it gone: keeping it copies
nothing), then the fewest replicas after the plan (counts stay as even as the disks allow), then the most
free bytes, then the lowest id; the rack rule holds for every choice. Among its replicas the broker gives up
first those the plan placed on it (each one saves a copy), and among those the smallest that covers what is
left of its excess (else the largest). A broker that cannot get under its bound this way is left as it is:
the caller refuses the plan with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kreassign.planning.context import BalanceContext, Row


@dataclass(frozen=True)
class CapacityFit:
    """What the stage changed: replicas moved off brokers past their bound, per broker."""

    moved: Mapping[int, int]

    @property
    def replicas(self) -> int:
        return sum(self.moved.values())


def disk_bounds(
    used_before: Mapping[int, int], capacities: Mapping[int, int | None], brokers: Sequence[int], limit: float
) -> dict[int, float]:
    """Most bytes each chosen broker of known capacity may hold after the plan."""
    bounds = {}
    for b in brokers:
        capacity = capacities.get(b)
        if capacity:
            bounds[b] = max(limit * capacity, used_before.get(b, 0))
    return bounds


def fit_disk_capacity(
    rows: Sequence[Row],
    plan: dict[tuple[str, int], list[int]],
    ctx: BalanceContext,
    capacities: Mapping[int, int | None],
    other_bytes: Mapping[int, int],
    limit: float,
) -> CapacityFit:
    """Moves replicas of ``plan`` (in place) off brokers it would fill past ``limit`` of their capacity."""
    if not any(capacities.get(b) for b in ctx.brokers):
        return CapacityFit({})
    used_before: Counter[int] = Counter(other_bytes)
    used: Counter[int] = Counter(other_bytes)
    for topic, partition, current, size in rows:
        used_before.update(dict.fromkeys(current, size))
        used.update(dict.fromkeys(plan[(topic, partition)], size))
    bounds = disk_bounds(used_before, capacities, ctx.brokers, limit)
    over = sorted(b for b, bound in bounds.items() if used[b] > bound)
    if not over:
        return CapacityFit({})
    counts: Counter[int] = Counter()
    for replicas in plan.values():
        counts.update(replicas)
    held: dict[int, list[tuple[bool, int, tuple[str, int]]]] = {b: [] for b in over}
    currents: dict[tuple[str, int], tuple[int, ...]] = {}
    for topic, partition, current, size in rows:
        key = (topic, partition)
        for b in plan[key]:
            if b in held:
                held[b].append((b in current, size, key))
                currents[key] = tuple(current)
    moved: Counter[int] = Counter()
    pending = {b: sorted(held[b]) for b in over}  # placed by the plan first (False < True), then by size
    progress = True
    while progress:  # again while a move was made: a broker relieved may now take another's replica
        progress = False
        for broker in over:
            candidates, skipped = pending[broker], []
            while used[broker] > bounds[broker] and candidates:
                candidate = candidates.pop(_pick(candidates, used[broker] - bounds[broker]))
                _, size, key = candidate
                replicas = list(plan[key])
                others = [b for b in replicas if b != broker]
                cap = ctx.rack_cap(len(replicas))
                target = _destination(ctx, broker, others, currents[key], size, cap, used, bounds, counts)
                if target is None:
                    skipped.append(candidate)
                    continue
                replicas[replicas.index(broker)] = target
                plan[key] = replicas
                used[broker] -= size
                used[target] += size
                counts[broker] -= 1
                counts[target] += 1
                moved[broker] += 1
                progress = True
            pending[broker] = sorted(candidates + skipped)
    return CapacityFit(dict(moved))


def _pick(candidates: list[tuple[bool, int, tuple[str, int]]], excess: float) -> int:
    """Among the first group (placed by the plan, else kept), the smallest replica covering ``excess``,
    else the largest of the group."""
    group = candidates[0][0]
    end = next((i for i, c in enumerate(candidates) if c[0] != group), len(candidates))
    covering = next((i for i in range(end) if candidates[i][1] >= excess), None)
    return covering if covering is not None else end - 1


def _destination(
    ctx: BalanceContext,
    broker: int,
    others: Sequence[int],
    current: Sequence[int],
    size: int,
    cap: int,
    used: Mapping[int, int],
    bounds: Mapping[int, float],
    counts: Mapping[int, int],
) -> int | None:
    best: tuple | None = None
    target = None
    for b in ctx.brokers:
        if b == broker or not ctx.fits(b, others, cap):
            continue
        if used[b] + size > bounds.get(b, float("inf")):
            continue
        free = bounds.get(b, float("inf")) - used[b]
        key = (b not in current, counts[b], -free, b)
        if best is None or key < best:
            best, target = key, b
    return target
