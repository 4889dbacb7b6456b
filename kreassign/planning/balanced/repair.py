"""Stage 5 of the balanced pipeline (driver): :func:`repair_leftovers`, the vacancies no slot of their topic
could take. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreassign.errors import CommandError
from kreassign.planning.context import BalanceContext


def repair_leftovers(
    ctx: BalanceContext,
    leftovers: Iterable[tuple[str, int, tuple[int, ...], int, tuple[int, ...]]],
    counts: Mapping[int, int],
    targets: Mapping[int, int],
    received: Iterable[tuple[str, int, tuple[int, ...], tuple[int, ...]]] = (),
) -> dict[tuple[str, int], tuple[int, ...]]:
    """Fill the vacancies no slot of their topic could take (topic, partition, replicas, open, shed).

    Each goes, in this order of preference: to a broker below its target that the partition accepts
    (furthest below first, then spread order); to a broker x that an other partition of ``received``
    (topic, partition, replicas, brokers it just got) was given this round, when that partition can take a
    broker below target instead of x (no extra move); back to a broker it was shed from (the next round
    tries again); to the accepting broker furthest below its target. ``counts``: replicas per chosen
    broker now. Returns the replica sets that change (leftovers and swapped partitions)."""
    load = dict(counts)
    fixed: dict[tuple[str, int], tuple[int, ...]] = {}
    given = {(t, p): (list(r), list(new)) for t, p, r, new in sorted(received)}

    def below(b: int) -> bool:
        return load.get(b, 0) < targets.get(b, 0)

    def rank(b: int) -> tuple[int, int]:
        return (load.get(b, 0) - targets.get(b, 0), ctx.spread_rank(b))

    def swap(members: list[int], cap: int) -> int | None:
        takers = [y for y in ctx.brokers if below(y)]
        if not takers:
            return None
        for key, (others, new) in given.items():
            other_cap = ctx.rack_cap(len(others))
            for x in new:
                if not ctx.fits(x, members, cap):
                    continue
                rest = [b for b in others if b != x]
                ys = [y for y in takers if ctx.fits(y, rest, other_cap)]
                if ys:
                    y = min(ys, key=rank)
                    others[others.index(x)] = y
                    new[new.index(x)] = y
                    load[y] = load.get(y, 0) + 1
                    fixed[key] = tuple(others)
                    return x
        return None

    for topic, partition, replicas, missing, shed in sorted(leftovers):
        members = list(replicas)
        cap = ctx.rack_cap(len(members) + missing)
        for _ in range(missing):
            candidates = [b for b in ctx.brokers if ctx.fits(b, members, cap)]
            if not candidates:  # pragma: no cover - rack_cap guarantees room
                raise CommandError(f"No broker can take a replica of {topic}-{partition}")
            best = min(candidates, key=rank)
            if not below(best):
                swapped = swap(members, cap)
                if swapped is not None:
                    members.append(swapped)
                    continue
                back = [b for b in shed if b in candidates]
                if back:
                    best = back[0]
            members.append(best)
            load[best] = load.get(best, 0) + 1
        fixed[(topic, partition)] = tuple(members)
        given[(topic, partition)] = (members, [b for b in members if b not in replicas])
    return fixed
