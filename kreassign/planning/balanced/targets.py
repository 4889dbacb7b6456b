"""Stage 2 of the balanced pipeline (driver, from per-broker counts): :func:`counts_targets`, the targets
per broker (replicas, and again leaders in stage 6), and :func:`within_tolerance`, whether the counts
already sit within them (else the chains run). Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kreassign.planning.context import BalanceContext
from kreassign.planning.racklimits import broker_bands


def counts_targets(
    brokers: Sequence[int],
    counts: Mapping[int, int],
    total: int,
    group_of: Mapping[int, str] | None = None,
    fixed: Mapping[str, int] | None = None,
) -> dict[int, int]:
    """Spread ``total`` over ``brokers``: floor or ceil of the mean each, the ceil going to the brokers
    that hold the most now (then the lowest ids), which minimizes what must move.

    With ``group_of`` (racks), first each rack gets its share of ``total`` in proportion to its brokers
    (largest remainders; ties to the rack holding more now), then its brokers split that share the same
    way: a partition cannot put all its replicas on one rack, so rack totals must stay even too. Nested
    rounding keeps every broker within one of the overall mean.
    """
    if group_of is None or len(set(group_of[b] for b in brokers)) <= 1:
        base, extra = divmod(total, len(brokers))
        order = sorted(brokers, key=lambda b: (-counts.get(b, 0), b))
        return {b: base + (1 if i < extra else 0) for i, b in enumerate(order)}
    members: dict[str, list[int]] = {}
    for b in brokers:
        members.setdefault(group_of[b], []).append(b)
    shares = {g: divmod(total * len(m), len(brokers)) for g, m in members.items()}
    held = {g: sum(counts.get(b, 0) for b in m) for g, m in members.items()}
    extra = total - sum(q for q, _ in shares.values())
    order = sorted(members, key=lambda g: (-shares[g][1], -(held[g] - shares[g][0]), g))
    targets: dict[int, int] = {}
    for i, g in enumerate(order):
        targets.update(counts_targets(members[g], counts, shares[g][0] + (1 if i < extra else 0)))
    return targets


def within_tolerance(
    ctx: BalanceContext, counts: Mapping[int, int], total: int, fixed: Mapping[str, int] | None = None
) -> bool:
    """Does every chosen broker hold floor(total/B) or ceil(total/B)? (Then no chain is needed.) With ``fixed``
    (the racks the rack rule holds, :func:`kreassign.planning.racklimits.rack_totals`): the floor or ceil of its
    rack's share for a broker of such a rack, of the other brokers' share for the others."""
    if fixed:
        bands = broker_bands(ctx.brokers, total, ctx.rack_groups(), fixed)
        return all(low <= counts.get(b, 0) <= high for b, (low, high) in bands.items())
    floor, extra = divmod(total, len(ctx.brokers))
    return all(floor <= counts.get(b, 0) <= floor + (1 if extra else 0) for b in ctx.brokers)
