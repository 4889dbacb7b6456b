"""What the rack rule lets each rack hold, and the replica targets per broker that follow from it. Standard
library only.

A partition of replication factor ``rf`` puts at most ``cap = rack_cap(rf)`` replicas on one rack (and at most
one per broker), so rack ``g`` of ``n_g`` chosen brokers takes at most ``u_g = min(cap, n_g)`` of its replicas
and at least ``rf - sum(u_h for the other racks)`` (when that is above 0). Summed over the partitions, each
rack's total is bounded: ``low_g``..``high_g`` (:func:`rack_limits`). With one replication factor these bounds
are exactly what the racks allow (every total of each rack within its bounds, adding up to all replicas, is
reached by some placement); with several, they are what each partition allows on its own.

The targets fill the racks like water (:func:`rack_totals`): every broker at the same level ``L``, each rack
holding ``L * n_g`` clamped to ``low_g``..``high_g``, ``L`` such that the racks add up to all replicas. A
rack clamped at ``low_g`` holds what it must (above the level: its brokers are few, e.g. the only broker
left of a rack); one clamped at ``high_g`` holds all it may (below it). The brokers of the other racks even
out among themselves, within one of ``L``; no rack is clamped in the usual case (racks of equal size), and
the targets are then those of the mean. The brokers of a clamped rack share its total evenly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class RackHold:
    """A rack whose total the rack rule fixes away from the mean: ``total`` replicas over ``brokers``;
    ``must`` True: above the mean, it holds what it must (each partition keeps ``per_partition`` replicas
    there), False: below it, all it may (each partition may put only ``per_partition`` there)."""

    rack: str
    brokers: tuple[int, ...]
    total: int
    must: bool
    per_partition: int
    by_rf: tuple[tuple[int, int], ...] = ()  # (replication factor, per_partition of it), each replication factor


def rack_limits(
    sizes: Mapping[str, int], rf_counts: Mapping[int, int], rack_cap
) -> dict[str, tuple[int, int, int, int, tuple[tuple[int, int, int], ...]]]:
    """Per rack (``sizes``: its chosen brokers), the least and most replicas it can hold over partitions of
    ``rf_counts`` (replication factor -> partitions; ``rack_cap(rf)``: the most replicas of one partition on a
    rack): (low, high, least per partition, most per partition, (replication factor, least, most) of each),
    the third and fourth those of the most common replication factor."""
    limits: dict[str, list] = {g: [0, 0, 0, 0, []] for g in sizes}
    common = max(rf_counts, key=lambda rf: (rf_counts[rf], rf)) if rf_counts else 0
    for rf, partitions in rf_counts.items():
        if rf <= 0 or partitions <= 0:
            continue
        cap = rack_cap(rf)
        takes = {g: min(cap, n, rf) for g, n in sizes.items()}
        room = sum(takes.values())
        for g in sizes:
            least = max(0, rf - (room - takes[g]))
            limits[g][0] += least * partitions
            limits[g][1] += takes[g] * partitions
            limits[g][4].append((rf, least, takes[g]))
            if rf == common:
                limits[g][2], limits[g][3] = least, takes[g]
    return {g: (low, high, least, most, tuple(sorted(each))) for g, (low, high, least, most, each) in limits.items()}


def rack_totals(
    sizes: Mapping[str, int], total: int, limits: Mapping[str, tuple[int, int, int, int, tuple]]
) -> tuple[dict[str, int], list[RackHold]]:
    """The racks the rule holds away from the common level, with their totals: (rack -> total, why), empty
    when none is (the usual case). ``sizes``: brokers per rack; ``total``: replicas to place."""
    if len(sizes) <= 1:
        return {}, []
    low = {g: limits[g][0] for g in sizes}
    high = {g: limits[g][1] for g in sizes}
    if not sum(low.values()) <= total <= sum(high.values()):
        return {}, []  # not placeable anyway: the plain targets
    if all(low[g] * sum(sizes.values()) <= total * n <= high[g] * sum(sizes.values()) for g, n in sizes.items()):
        return {}, []  # the mean fits every rack

    def filled(level: Fraction) -> Fraction:
        return sum((min(max(level * n, low[g]), high[g]) for g, n in sizes.items()), Fraction(0))

    points = sorted({Fraction(low[g], n) for g, n in sizes.items()} | {Fraction(high[g], n) for g, n in sizes.items()})
    below = max((p for p in points if filled(p) <= total), default=Fraction(0))
    above = min((p for p in points if filled(p) > total), default=None)
    fixed: dict[str, int] = {}
    for g, n in sizes.items():
        if Fraction(high[g], n) <= below:
            fixed[g] = high[g]
        elif above is not None and Fraction(low[g], n) >= above:
            fixed[g] = low[g]
    free = sum(n for g, n in sizes.items() if g not in fixed)
    level = Fraction(total - sum(fixed.values()), free) if free else None
    holds = []
    brokers = sum(sizes.values())
    for g in sorted(fixed):
        if level is not None and fixed[g] == level * sizes[g]:
            del fixed[g]  # at the level after all
            continue
        if fixed[g] * brokers == total * sizes[g]:
            continue  # held, but at the mean
        must = fixed[g] * brokers > total * sizes[g]  # above the mean: what it must hold
        per_partition = limits[g][2] if must else limits[g][3]
        by_rf = tuple((rf, least if must else most) for rf, least, most in limits[g][4])
        holds.append(RackHold(g, (), fixed[g], must, per_partition, by_rf))
    return fixed, holds


def broker_bands(
    brokers: Sequence[int], total: int, group_of: Mapping[int, str] | None, fixed: Mapping[str, int]
) -> dict[int, tuple[int, int]]:
    """Per broker, the floor and ceil of its even share: of its rack's total for a rack the rule holds
    (``fixed``), else of what the other racks hold together."""
    members: dict[str, list[int]] = {}
    for b in brokers:
        members.setdefault(group_of[b] if group_of else "", []).append(b)
    bands: dict[int, tuple[int, int]] = {}
    free = [b for g, m in members.items() if g not in fixed for b in m]
    rest = total - sum(fixed.values())
    for share, group in [(rest, free), *((fixed[g], members[g]) for g in sorted(fixed) if g in members)]:
        if group:
            floor, extra = divmod(share, len(group))
            bands.update(dict.fromkeys(group, (floor, floor + (1 if extra else 0))))
    return bands
