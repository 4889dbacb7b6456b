"""Stages 6 and 7 of the balanced pipeline: the leaders (:func:`leader_quotas` and
:func:`assign_topic_leaders` per topic with a quota, :func:`assign_leaders` for the partitions left
without one, :func:`leader_chains` if needed; :func:`_leaders` runs them in the local engine) and
:func:`order_replicas`, the leader first. Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter

from kreassign.planning.balanced.chains import move_along_chains
from kreassign.planning.balanced.shed import shed_ranked
from kreassign.planning.balanced.targets import counts_targets, within_tolerance
from kreassign.planning.context import BalanceContext


def incumbent_leader(current: Sequence[int], replicas: Sequence[int]) -> int | None:
    """The current leader (first replica) if it keeps a replica, else None."""
    return current[0] if current and current[0] in replicas else None


def assign_leaders(
    ctx: BalanceContext,
    orphans: Iterable[tuple[str, int, tuple[int, ...]]],
    led: Mapping[int, int],
    targets: Mapping[int, int],
    topic_led: Mapping[tuple[str, int], int] | None = None,
) -> dict[tuple[str, int], int]:
    """A leader for each partition left without one: the replica whose broker is furthest below its
    leader target, then the one leading the fewest partitions of the same topic (``topic_led``: leaders
    per (topic, broker) among the partitions that keep theirs, for the orphans' topics), then the earlier
    replica. Partitions with the fewest such candidates go first."""
    load = dict(led)
    per_topic = dict(topic_led or {})
    chosen = {}
    pending = sorted(orphans)

    def room(replicas: Sequence[int]) -> int:
        return sum(1 for b in replicas if load.get(b, 0) < targets.get(b, 0))

    # Two passes: first the partitions with exactly one replica below target (they have no choice).
    for strict in (True, False):
        later = []
        for topic, partition, replicas in pending:
            if strict and room(replicas) != 1:
                later.append((topic, partition, replicas))
                continue
            best = min(
                range(len(replicas)),
                key=lambda i: (
                    load.get(replicas[i], 0) - targets.get(replicas[i], 0),
                    per_topic.get((topic, replicas[i]), 0),
                    i,
                ),
            )
            b = replicas[best]
            chosen[(topic, partition)] = b
            load[b] = load.get(b, 0) + 1
            per_topic[(topic, b)] = per_topic.get((topic, b), 0) + 1
        pending = later
    return chosen


def leader_rank(replicas: Sequence[int], led: Mapping[int, int], targets: Mapping[int, int]) -> int:
    """Minus the number of replicas on brokers below their leader target: such leaderships go first."""
    return -sum(1 for b in replicas if led.get(b, 0) < targets.get(b, 0))


LeaderQuota = tuple[int, int, int]
"""Leaders of one topic per chosen broker: (base, start, extra): every broker leads ``base`` partitions of
the topic, and the ``extra`` brokers from position ``start`` of the spread order (cyclically) one more."""


def leader_quotas(ctx: BalanceContext, partitions: Mapping[str, int]) -> dict[str, LeaderQuota]:
    """Per topic with at least as many partitions as chosen brokers (``partitions``: partition counts), how
    many of its partitions each chosen broker leads: the floor or ceil of its even share, the ceils taken
    by the brokers in spread order, each topic (in name order) starting where the previous one stopped.
    Each such topic is then even, and so is their sum per broker (floor or ceil). Smaller topics are not
    listed: their leaders are balanced over the brokers as a whole (:func:`assign_leaders`). Driver-side,
    one row per topic."""
    quotas: dict[str, LeaderQuota] = {}
    start = 0
    count = len(ctx.brokers)
    for topic in sorted(partitions):
        base, extra = divmod(partitions[topic], count)
        if not base:
            continue
        quotas[topic] = (base, start, extra)
        start = (start + extra) % count
    return quotas


def assign_topic_leaders(
    ctx: BalanceContext, quota: LeaderQuota, partitions: Iterable[tuple[int, tuple[int, ...], int | None]]
) -> list[tuple[int, int]]:
    """One topic: a leader for each partition (partition, replicas, current leader or None) among its replicas,
    each broker leading at most its ``quota`` (:func:`leader_quotas`). Current leaders stay where the quota
    allows; the others are matched along augmenting paths (a partition may take a broker whose leadership
    of an other partition moves on), so that every quota is met whenever the replicas allow it; a
    partition that finds no room goes to its replica with the most room. Returns (partition, leader)."""
    base, start, extra = quota
    count = len(ctx.brokers)
    room: dict[int, int] = {}

    def free(b: int) -> int:
        if b not in room:
            room[b] = base + (1 if (ctx.spread_rank(b) - start) % count < extra else 0) if ctx.chosen(b) else 0
        return room[b]

    ordered = sorted(partitions)
    replicas_of = {p: [b for b in replicas if ctx.chosen(b)] or list(replicas) for p, replicas, _ in ordered}
    leader: dict[int, int] = {}
    led: dict[int, dict[int, None]] = {}

    def take(p: int, b: int) -> None:
        old = leader.get(p)
        if old is not None:
            del led[old][p]
            room[old] += 1
        leader[p] = b
        free(b)
        room[b] -= 1
        led.setdefault(b, {})[p] = None

    for p, _, incumbent in ordered:
        if incumbent is not None and incumbent in replicas_of[p] and free(incumbent) > 0:
            take(p, incumbent)
    for p, _, _ in ordered:
        if p in leader:
            continue
        candidates = replicas_of[p]
        best = max(candidates, key=lambda b: (free(b), -candidates.index(b)))
        if free(best) > 0:
            take(p, best)
            continue
        # breadth-first over brokers: previous[v] = (u, q): q, led by u, may pass to v
        previous: dict[int, tuple[int, int] | None] = dict.fromkeys(candidates)
        queue = list(candidates)
        found = None
        for u in queue:
            for q in led.get(u, ()):
                for v in replicas_of[q]:
                    if v in previous:
                        continue
                    previous[v] = (u, q)
                    if free(v) > 0:
                        found = v
                        break
                    queue.append(v)
                if found is not None:
                    break
            if found is not None:
                break
        if found is None:
            take(p, best)
            continue
        v = found
        while previous[v] is not None:
            u, q = previous[v]  # type: ignore[misc]
            take(q, v)
            v = u
        take(p, v)
    return sorted(leader.items())


# ---------------------------------------------------------------------------------------------- stage 7
def order_replicas(replicas: Sequence[int], leader: int) -> list[int]:
    return [leader, *(b for b in replicas if b != leader)]


LEADER_ROUNDS = 2


def _leaders(
    ctx: BalanceContext,
    currents: Mapping[tuple[str, int], Sequence[int]],
    filled: Mapping[tuple[str, int], tuple[int, ...]],
) -> dict[tuple[str, int], list[int]]:
    """Stage 6 and 7 of the local engine. The leaders per broker and per (topic, broker) are counted once,
    then kept up to date as leaderships change; a round passes over all partitions only to list what the
    brokers above target lead."""
    partitions = dict(Counter(map(itemgetter(0), filled)))
    quotas = leader_quotas(ctx, partitions)
    by_topic: dict[str, list[tuple[int, tuple[int, ...], int | None]]] = {}
    leaders: dict[tuple[str, int], int | None] = {}
    for key, replicas in filled.items():
        current = currents[key]  # incumbent_leader, inline
        incumbent = current[0] if current and current[0] in replicas else None
        if key[0] in quotas:
            by_topic.setdefault(key[0], []).append((key[1], replicas, incumbent))
        else:
            leaders[key] = incumbent
    led: Counter[int] = Counter(leaders.values())  # leaders per broker, the topics with quotas included
    del led[None]  # type: ignore[arg-type]
    assigned: dict[tuple[str, int], int] = {}
    for t in sorted(by_topic):
        for p, b in assign_topic_leaders(ctx, quotas[t], by_topic[t]):
            assigned[(t, p)] = b
            led[b] += 1
    orphans = [key for key, b in leaders.items() if b is None]
    # leaders per (topic, broker) of the partitions that keep theirs, for assign_leaders (which never reads
    # the orphans' (topic, None))
    topic_led: Counter[tuple[str, int | None]] = Counter(
        zip(map(itemgetter(0), leaders), leaders.values(), strict=True)
    )
    for _ in range(LEADER_ROUNDS if leaders else 0):
        targets = counts_targets(ctx.brokers, led, len(filled))
        if not orphans and all(led[b] <= targets[b] for b in ctx.brokers):
            break
        over = {b for b, n in led.items() if n > targets[b]}
        below = {b for b, n in targets.items() if led.get(b, 0) < n}  # leader_rank, inline: -(replicas in it)
        # What each broker above target leads, for shed_ranked: the partitions of rank 0 (no replica on a
        # broker below target; most of them, so kept as their keys, and made items only when the ranks below
        # 0 hold too few) and, per rank below 0, (0, topic, partition).
        plain: dict[int, list[tuple[str, int]]] = {b: [] for b in over}
        ranked: dict[int, dict[int, list[tuple[int, str, int]]]] = {b: {} for b in over}
        for key, b in leaders.items():
            if b in over:
                replicas = filled[key]  # most have no replica below target: isdisjoint says so in one call
                if below.isdisjoint(replicas):
                    plain[b].append(key)
                else:
                    ranked[b].setdefault(-sum(map(below.__contains__, replicas)), []).append((0, *key))
        for b in sorted(over):
            count, ranks = led[b] - targets[b], ranked[b]
            per_topic = Counter(map(itemgetter(0), plain[b]))
            per_topic.update(map(itemgetter(1), chain.from_iterable(ranks.values())))
            if plain[b] and sum(map(len, ranks.values())) < count:
                ranks[0] = [(0, t, p) for t, p in plain[b]]
            for t, p in shed_ranked(count, None, ranks, per_topic, partitions, len(ctx.brokers)):
                leaders[(t, p)] = None
                led[b] -= 1
                topic_led[(t, b)] -= 1
                orphans.append((t, p))
        fixes = assign_leaders(ctx, [(t, p, filled[(t, p)]) for t, p in orphans], led, targets, topic_led)
        for (t, _), b in fixes.items():
            led[b] += 1
            topic_led[(t, b)] += 1
        leaders.update(fixes)
        orphans = []
    leaders.update(assigned)
    if not within_tolerance(ctx, led, len(filled)):
        leaders.update(leader_chains(ctx, leaders, filled))  # type: ignore[arg-type]
    return {
        key: list(replicas) if replicas[0] == leaders[key] else order_replicas(replicas, leaders[key])  # type: ignore[arg-type]
        for key, replicas in sorted(filled.items())
    }


def leader_chains(
    ctx: BalanceContext,
    leaders: Mapping[tuple[str, int], int],
    replicas: Mapping[tuple[str, int], Sequence[int]],
) -> dict[tuple[str, int], int]:
    """Move leaderships along chains (u leads a partition with a replica on v, v leads one with a replica
    on w, ...) until every broker leads floor(P/B) or ceil(P/B) partitions (:func:`move_along_chains`).
    Runs on the driver once the parallel rounds have done what they can; returns the leaders that change."""
    leader = dict(leaders)
    by_leader: dict[int, list[tuple[str, int]]] = {}
    for key in sorted(leader):
        by_leader.setdefault(leader[key], []).append(key)
    changed: dict[tuple[str, int], int] = {}

    def edges(u: int) -> Iterable[tuple[tuple[str, int], int]]:
        for key in by_leader.get(u, ()):
            if leader[key] == u:
                yield from ((key, v) for v in replicas[key] if v != u and ctx.chosen(v))

    def move(key: tuple[str, int], u: int, v: int) -> None:
        leader[key] = changed[key] = v
        by_leader.setdefault(v, []).append(key)

    move_along_chains(list(ctx.brokers), Counter(leader.values()), edges, move)
    return changed
