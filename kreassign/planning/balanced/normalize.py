"""Stage 1 of the balanced pipeline (per partition): :func:`normalize_partition`, the replicas of a partition
that may stay and how many it still needs. Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kreassign.planning.context import BalanceContext


def normalize_partition(ctx: BalanceContext, replicas: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """Replicas that may stay, in their order, and how many replicas the partition still needs.

    A replica leaves if its broker is not chosen, if its rack already holds ``rack_cap`` replicas of the
    partition (later replicas leave first), or if the replication factor goes down (the replicas on the
    most loaded brokers leave first, never the first one kept).
    """
    rf = ctx.target_rf(len(replicas))
    group_of: dict[int, str] = ctx._group  # type: ignore[attr-defined]
    if len(replicas) == rf:
        groups = set(map(group_of.get, replicas))  # None: a broker not chosen
        if len(groups) == rf and None not in groups:  # the usual case: rf chosen brokers on rf racks stay
            return tuple(replicas), 0
    cap = ctx.rack_cap(rf)
    kept: list[int] = []
    per_group: Counter[str] = Counter()
    for broker in replicas:
        if broker in kept or not ctx.chosen(broker):
            continue
        group = ctx.group(broker)
        if per_group[group] < cap:
            per_group[group] += 1
            kept.append(broker)
    if len(kept) > rf:
        surplus = sorted(range(1, len(kept)), key=lambda i: (-ctx.load(kept[i]), -i))[: len(kept) - rf]
        kept = [b for i, b in enumerate(kept) if i not in set(surplus)]
    return tuple(kept), rf - len(kept)
