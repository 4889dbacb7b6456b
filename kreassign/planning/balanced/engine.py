"""The local engine of the balanced pipeline: :func:`plan_balanced` runs the stages in one process
(:func:`place_replicas`: stages 2 to 5 round after round, then chains; then the leaders), with
:func:`topic_totals` and :func:`replicas_added`, which the Spark engine calls too. Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from operator import add, itemgetter

from kreassign.planning.balanced.chains import replica_chains
from kreassign.planning.balanced.fill import SlotPlan, fill_topic, newly_placed
from kreassign.planning.balanced.leaders import _leaders
from kreassign.planning.balanced.normalize import normalize_partition
from kreassign.planning.balanced.repair import repair_leftovers
from kreassign.planning.balanced.shed import needy_groups, shed_aim, shed_rank, shed_ranked
from kreassign.planning.balanced.targets import counts_targets, within_tolerance
from kreassign.planning.bounds import minimum_movement
from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.racklimits import broker_bands

REPLICA_ROUNDS = 4
"""Shed-and-fill rounds at most: a round can leave a broker above target when two brokers shed the same
partition and only one slot fits it; the next round, from the new counts, moves that one."""


def plan_balanced(
    rows: Sequence[Row], ctx: BalanceContext, minimum_moves: int | None = None
) -> dict[tuple[str, int], list[int]]:
    """The whole pipeline in one process (the local engine). Same stages, same results as Spark's.

    Replicas are placed topic-aware first; when that run moves more than the lower bound of
    :func:`kreassign.planning.bounds.minimum_movement` (it may, when it had to repair left-over vacancies:
    racks nearly full), the placement by bytes alone (the previous algorithm) is computed too and the one
    moving fewer replicas wins (the topic-aware one on a tie): topic balance never costs a move. At the lower
    bound no balanced plan moves fewer, so the second placement is skipped (at 10,000,000 partitions the
    topic-aware run repaired left-overs, moved exactly the bound, and the second run was a third of the
    engine's time). ``minimum_moves``: that lower bound, when the caller has it already."""
    currents = dict(zip(map(itemgetter(0, 1), rows), map(itemgetter(2), rows), strict=True))
    if len(currents) < len(rows):  # a partition listed twice: its last row counts, at the place of its first
        rows = list({(t, p): (t, p, replicas, size) for t, p, replicas, size in rows}.values())
    normalized = dict(zip(currents, map(partial(normalize_partition, ctx), currents.values()), strict=True))
    kept, vacancies = map(itemgetter(0), normalized.values()), map(itemgetter(1), normalized.values())
    totals = topic_totals(zip(map(itemgetter(0), rows), map(add, map(len, kept), vacancies), strict=True))
    final = place_replicas(rows, ctx, normalized, totals)
    moved = replicas_added(currents, final)
    if minimum_moves is None:
        minimum_moves = minimum_movement(rows, ctx, with_bytes=False)[0]
    if moved > minimum_moves:
        plain = place_replicas(rows, ctx, normalized, None)
        if replicas_added(currents, plain) < moved:
            final = plain
    return _leaders(ctx, currents, final)


def replicas_added(
    currents: Mapping[tuple[str, int], Sequence[int]], plan: Mapping[tuple[str, int], Sequence[int]]
) -> int:
    return sum(
        len(set(replicas).difference(current))
        for current, replicas in zip(map(currents.__getitem__, plan), plan.values(), strict=True)
        if replicas != current
    )


def place_replicas(
    rows: Sequence[Row],
    ctx: BalanceContext,
    normalized: Mapping[tuple[str, int], tuple[tuple[int, ...], int]],
    totals: Mapping[str, int] | None,
) -> dict[tuple[str, int], tuple[int, ...]]:
    """Stages 2 to 5, round after round, then chains if needed: the replicas of every partition.
    ``normalized``: :func:`normalize_partition` of each row, in the order of ``rows``; ``totals`` None: shed
    by bytes only.

    After the first pass, a round touches all partitions only to list what the brokers above target
    hold (in order: a pass in memory order beats looking partitions up broker by broker); the replicas per
    broker are kept up to date as partitions change, and :func:`fill_topic` gets only the partitions that
    have vacancies or shed a replica (it leaves the others as they are)."""
    state = dict(normalized)
    total = sum(map(len, map(itemgetter(0), state.values()))) + sum(map(itemgetter(1), state.values()))
    total_bytes = sum(
        size * (len(kept) + vacancies) for (_, _, _, size), (kept, vacancies) in zip(rows, state.values(), strict=True)
    )
    counts: Counter[int] = Counter(chain.from_iterable(map(itemgetter(0), state.values())))
    opened = [key for key, (_, vacancies) in state.items() if vacancies]  # partitions with vacancies
    fixed = ctx.rack_holds(replication_factors(state.values()))[0] if ctx.uneven_racks() else {}
    for _ in range(REPLICA_ROUNDS):
        targets = counts_targets(ctx.brokers, counts, total, ctx.rack_groups(), fixed)
        deficits = {b: targets[b] - counts.get(b, 0) for b in ctx.brokers}
        if not opened and all(d >= 0 for d in deficits.values()):
            break
        needy = needy_groups(ctx, deficits)
        over = sorted(b for b, d in deficits.items() if d < 0)
        # what each broker above target holds, (size, topic, partition) by shed_rank (0 or 1), for shed_ranked
        held: dict[int, tuple[list[tuple[int, str, int]], list[tuple[int, str, int]]]] = {b: ([], []) for b in over}
        for (t, p, _, size), (kept, _) in zip(rows, state.values(), strict=True):
            # shed_rank is 0 whenever more racks hold a needy broker than the partition has replicas
            spare = len(needy) >= len(kept)
            for b in kept:
                mine = held.get(b)
                if mine is not None:
                    mine[0 if spare else shed_rank(ctx, b, kept, needy)].append((size, t, p))
        shed_by_topic: dict[str, list[tuple[int, int]]] = {}
        for b in over:
            items = list(chain.from_iterable(held[b]))
            aim = shed_aim(-deficits[b], sum(map(itemgetter(0), items)), total_bytes, len(ctx.brokers))
            ranks = {rank: ranked for rank, ranked in enumerate(held[b]) if ranked}
            per_topic = Counter(map(itemgetter(1), items))
            for t, p in shed_ranked(-deficits[b], aim, ranks, per_topic, totals, len(ctx.brokers)):
                shed_by_topic.setdefault(t, []).append((p, b))
        by_topic: dict[str, dict[int, tuple[tuple[int, ...], int]]] = {}  # the partitions fill_topic changes
        for t, p in chain(opened, ((t, p) for t, shed in shed_by_topic.items() for p, _ in shed)):
            by_topic.setdefault(t, {})[p] = state[(t, p)]
        topic_vacancies = {
            t: sum(map(itemgetter(1), parts.values())) + len(shed_by_topic.get(t, ())) for t, parts in by_topic.items()
        }
        slots = SlotPlan.build(ctx, deficits, topic_vacancies)
        filled: dict[tuple[str, int], tuple[int, ...]] = {}
        leftovers = []
        received = []
        for t in sorted(by_topic):
            window = slots.window(t, topic_vacancies[t])
            parts = [(p, kept, vacancies) for p, (kept, vacancies) in by_topic[t].items()]
            for p, replicas, missing, shed in fill_topic(ctx, parts, shed_by_topic.get(t, ()), window):
                filled[(t, p)] = replicas
                if missing:
                    leftovers.append((t, p, replicas, missing, shed))
                before = state[(t, p)][0]
                if replicas != before:
                    received.append((t, p, replicas, newly_placed(before, replicas)))
        if leftovers:
            now = counts.copy()
            for key, replicas in filled.items():
                now.subtract(state[key][0])
                now.update(replicas)
            filled.update(repair_leftovers(ctx, leftovers, now, targets, received))
        if all(state[key][0] == replicas for key, replicas in filled.items()):
            break
        for key, replicas in filled.items():
            before = state[key][0]
            counts.subtract(before)
            counts.update(replicas)
            state[key] = (replicas, 0)
        opened = []
    final = {key: kept for key, (kept, _) in state.items()}
    if not within_tolerance(ctx, counts, total, fixed):
        bands = broker_bands(ctx.brokers, total, ctx.rack_groups(), fixed) if fixed else None
        final.update(replica_chains(ctx, final, bands))
    return final


def replication_factors(normalized: Iterable[tuple[Sequence[int], int]]) -> dict[int, int]:
    """Partitions per replication factor, from (kept replicas, vacancies) per partition (what the rack
    limits need, :meth:`kreassign.planning.context.BalanceContext.rack_holds`)."""
    return dict(Counter(len(kept) + vacancies for kept, vacancies in normalized))


def topic_totals(replicas: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Replicas per topic after planning, from (topic, replicas of one partition) pairs (a per-topic sum)."""
    totals: Counter[str] = Counter()
    for topic, count in replicas:
        totals[topic] += count
    return dict(totals)
