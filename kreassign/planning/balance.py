"""The ``--strategy balanced`` proposal: deterministic, rack-aware, minimal movement. Standard library only.

Goal, for the partitions of the listed topics and the brokers of ``--broker-list`` (the chosen brokers):

* every replica on a broker that is not chosen leaves it; each partition gets the target replication
  factor (``--replication-factor N``, else its current one);
* replicas of a partition sit on distinct racks, at most ``rack_cap(rf)`` per rack (1 when there are at
  least rf racks; the fewest that can fit rf replicas otherwise); without racks (``--disable-rack-aware``
  or no broker has one) every broker is its own rack;
* replicas per chosen broker end at ``floor(R/B)`` or ``ceil(R/B)`` (R replicas, B brokers), leaders per
  broker at ``floor(P/B)`` or ``ceil(P/B)`` (P partitions);
* as few replicas as possible move: a replica stays unless it must leave (broker removed, rack rule,
  replication factor lowered) or its broker is above its target; the brokers with the most kept replicas
  take the ``ceil`` targets. When racks allow it, the replicas moved are exactly the forced moves plus
  ``sum(max(0, kept_b - target_b))``, which no balanced plan can beat.
* free choices (which replicas leave an over-target broker, which replica leads) first even out each
  topic (its replicas and its leaders over the brokers), then bytes: a broker above the mean bytes sheds,
  one at a time, the replica whose size is closest to its remaining excess divided by the number it still
  sheds, any other broker its smallest (fewest bytes moved); bytes per broker are best effort and
  reported, not bounded.

The computation is a pipeline of small pure stages so that the Spark engine (``kreassign.spark``) runs
the very same functions, per partition, per broker and per topic in parallel, with only aggregates
(per broker, per topic) and the few left-over rows going through the driver:

1. :func:`normalize_partition` (per partition): kept replicas and vacancies.
2. :func:`counts_targets` (driver, from per-broker counts): replica targets per broker.
3. :func:`shed_from_broker` (per broker): which kept replicas leave an over-target broker: from the
   topics it holds most above their even share (``topic_totals``, one sum per topic), and, among
   those, the sizes that bring its bytes to the mean.
4. :class:`SlotPlan` (driver, from per-broker deficits and per-topic vacancy counts) and
   :func:`fill_topic` (per topic): under-target brokers' free slots, striped over the topics in name
   order, matched to the vacancies of each topic.
5. :func:`repair_leftovers` (driver): vacancies the topic could not fill within its slots.
6. :func:`counts_targets` again for leaders, :func:`shed_from_broker` for leaderships over target (from
   the topics the broker leads most above their even share), and :func:`assign_leaders` (driver) for
   the partitions left without a leader (furthest below target, then fewest leaders of the topic);
   :func:`leader_chains` (driver) only if a broker is still outside floor..ceil.
7. :func:`order_replicas` (per partition): the leader first, then the other replicas.

Every stage sorts its input, so the order rows arrive in (Spark's shuffles) never matters.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, repeat
from operator import add, itemgetter
from typing import TypeVar

from kreassign.errors import CommandError
from kreassign.planning.bounds import minimum_movement
from kreassign.planning.context import BalanceContext, Row

K = TypeVar("K")


# ---------------------------------------------------------------------------------------------- stage 1
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


# ---------------------------------------------------------------------------------------------- stage 2
def counts_targets(
    brokers: Sequence[int], counts: Mapping[int, int], total: int, group_of: Mapping[int, str] | None = None
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


# ---------------------------------------------------------------------------------------------- stage 3
def shed_from_broker(
    count: int,
    aim: int | None,
    held: Iterable[tuple[str, int, int, int]],
    topic_totals: Mapping[str, int] | None = None,
    brokers: int = 1,
) -> list[tuple[str, int]]:
    """The ``count`` replicas a broker gives up among ``held`` (topic, partition, size, rank), one at a time:
    lowest rank first (see :func:`shed_rank`); within a rank, with ``topic_totals`` (replicas per topic
    over ``brokers`` chosen brokers), first the topics this broker holds more than the ceil of their even
    share of, then those it holds more than the floor of (each such replica leaving evens its topic out by
    one); among those, the replica whose size is closest to what is left of the broker's excess bytes per
    replica still to shed (``aim`` is the first such size, see :func:`shed_aim`), or without ``aim`` the
    smallest one (fewest bytes moved); then by topic and partition."""
    if count <= 0:
        return []
    held = held if isinstance(held, list) else list(held)
    ranks: dict[int, list[tuple[int, str, int]]] = {}
    if len(set(map(itemgetter(3), held))) <= 1:  # the usual case: one rank
        if held:
            ranks[held[0][3]] = [(size, topic, partition) for topic, partition, size, _ in held]
    else:
        for topic, partition, size, rank in held:
            items = ranks.get(rank)
            if items is None:
                items = ranks[rank] = []
            items.append((size, topic, partition))
    return shed_ranked(count, aim, ranks, Counter(map(itemgetter(0), held)), topic_totals, brokers)


def shed_ranked(
    count: int,
    aim: int | None,
    ranks: Mapping[int, list[tuple[int, str, int]]],
    held_per_topic: Counter[str],
    topic_totals: Mapping[str, int] | None = None,
    brokers: int = 1,
) -> list[tuple[str, int]]:
    """:func:`shed_from_broker` from the broker's held replicas grouped by rank, each (size, topic, partition),
    and how many replicas of each topic it holds over all ranks (both are used up). A caller may leave out
    the ranks above the lowest ones that hold ``count`` replicas between them: picking never reaches
    those."""
    if count <= 0:
        return []
    excess = aim * count if aim is not None else 0
    totals = topic_totals or {}

    def level(topic: str) -> int:
        """0: held above the ceil of the topic's even share, 1: above its floor, 2: otherwise. (With T
        replicas over B brokers, n > floor(T/B) is n*B > T, and n > ceil(T/B) is (n-1)*B >= T.)"""
        if topic_totals is None:
            return 0
        n, total = held_per_topic[topic], totals.get(topic, 0)
        return 0 if (n - 1) * brokers >= total else 1 if n * brokers > total else 2

    chosen: list[tuple[str, int]] = []
    for rank in sorted(ranks):
        if len(chosen) == count:  # the lower ranks gave enough
            break
        items = ranks[rank]
        # The items of each topic held more than once (only those move between buckets) go to the bucket of
        # their topic's level now; those of the topics held once (most of them) only when picking gets past
        # bucket 0, unless one is at level 0 (held once, that is a topic total of 0 or less).
        several = {t for t, n in held_per_topic.items() if n > 1}
        by_topic: dict[str, list[tuple[int, str, int]]] = {t: [] for t in several}
        once: list[tuple[int, str, int]] = []
        for item in items:
            rest = by_topic.get(item[1])
            if rest is None:
                once.append(item)
            else:
                rest.append(item)
        where = {t: level(t) for t, rest in by_topic.items() if rest}
        buckets: list[list[tuple[int, str, int]]] = [[], [], []]
        for t, rest in by_topic.items():
            if rest:
                buckets[where[t]] += rest
        if once and (topic_totals is None or min(map(totals.get, map(itemgetter(1), once), repeat(0))) <= 0):
            _bucket_once(once, buckets, level)
            once = []
        # Picks come from the lowest bucket not empty, and items only move up (a topic's level rises as the
        # broker holds less of it), so a bucket is sorted when picking reaches it and takes the items that
        # move up unsorted until then (the lowest one often gives all the picks).
        current = 0
        buckets[current].sort()
        while len(chosen) < count:
            while not buckets[current] and current < 2:
                current += 1
                if once:
                    _bucket_once(once, buckets, level)
                    once = []
                buckets[current].sort()
            bucket = buckets[current]
            if not bucket:
                break
            want = max(0, excess) / (count - len(chosen)) if aim is not None else 0
            i = bisect.bisect_left(bucket, (want,))
            if i == len(bucket) or (i > 0 and abs(bucket[i - 1][0] - want) <= abs(bucket[i][0] - want)):
                i -= 1
            item = bucket.pop(i)
            size, topic, partition = item
            rest = by_topic.get(topic, ())
            if rest:
                rest.remove(item)  # type: ignore[attr-defined]
            chosen.append((topic, partition))
            excess -= size
            held_per_topic[topic] -= 1
            if rest and (moved_to := level(topic)) != where[topic]:  # from the current bucket to one above it
                for other in rest:
                    del bucket[bisect.bisect_left(bucket, other)]
                buckets[moved_to] += rest
                where[topic] = moved_to
    return chosen


def _bucket_once(
    items: Iterable[tuple[int, str, int]], buckets: list[list[tuple[int, str, int]]], level: Callable[[str], int]
) -> None:
    """Add the items of topics held once (size, topic, partition) to the bucket of their topic's level."""
    for item in items:
        buckets[level(item[1])].append(item)


def shed_aim(count: int, held_bytes: int, total_bytes: int, brokers: int) -> int | None:
    """Size each replica a broker sheds should have so that, shedding ``count``, it ends at the mean bytes:
    its excess over the mean divided by ``count``. None when it is not above the mean (then the smallest
    replicas go: fewest bytes copied)."""
    excess = held_bytes - total_bytes // brokers
    if count <= 0 or excess <= 0:
        return None
    return excess // count


def needy_groups(ctx: BalanceContext, deficits: Mapping[int, int]) -> tuple[tuple[str, int], ...]:
    """How many brokers below target each rack holds (what :func:`shed_rank` needs; small)."""
    return tuple(sorted(Counter(ctx.group(b) for b, d in deficits.items() if d > 0).items()))


def shed_rank(ctx: BalanceContext, broker: int, kept: Sequence[int], needy: tuple[tuple[str, int], ...]) -> int:
    """0 when some rack holding a broker below target could take this replica, else 1: shedding such
    replicas first lets the slots of the brokers below target fill them."""
    if len(needy) >= len(kept):  # more racks with a needy broker than other replicas: one is free
        return 0
    others = {ctx.group(b) for b in kept if b != broker}
    return 0 if any(count and group not in others for group, count in needy) else 1


# ---------------------------------------------------------------------------------------------- stage 4
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


# ---------------------------------------------------------------------------------------------- stage 5
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


# ---------------------------------------------------------------------------------------------- stage 6
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


# ---------------------------------------------------------------------------------------------- local engine
REPLICA_ROUNDS = 4
"""Shed-and-fill rounds at most: a round can leave a broker above target when two brokers shed the same
partition and only one slot fits it; the next round, from the new counts, moves that one."""


def plan_balanced(
    rows: Sequence[Row], ctx: BalanceContext, minimum_moves: int | None = None
) -> dict[tuple[str, int], list[int]]:
    """The whole pipeline in one process (the local engine). Same stages, same results as Spark's.

    Replicas are placed topic-aware first; when that run moves more than the lower bound of
    :func:`kreassign.planning.quality.minimum_movement` (it may, when it had to repair left-over vacancies:
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
        minimum_moves = minimum_movement(rows, ctx.brokers, ctx.replication_factor, with_bytes=False)[0]
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
    for _ in range(REPLICA_ROUNDS):
        targets = counts_targets(ctx.brokers, counts, total, ctx.rack_groups())
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
    if not within_tolerance(ctx, counts, total):
        final.update(replica_chains(ctx, final))
    return final


def topic_totals(replicas: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Replicas per topic after planning, from (topic, replicas of one partition) pairs (a per-topic sum)."""
    totals: Counter[str] = Counter()
    for topic, count in replicas:
        totals[topic] += count
    return dict(totals)


def within_tolerance(ctx: BalanceContext, counts: Mapping[int, int], total: int) -> bool:
    """Does every chosen broker hold floor(total/B) or ceil(total/B)? (Then no chain is needed.)"""
    floor, extra = divmod(total, len(ctx.brokers))
    return all(floor <= counts.get(b, 0) <= floor + (1 if extra else 0) for b in ctx.brokers)


CHAIN_SEARCH_LIMIT = 2_000_000
"""Most (partition, broker) pairs one chain search looks at before it gives up."""


def replica_chains(
    ctx: BalanceContext, replicas: Mapping[tuple[str, int], Sequence[int]]
) -> dict[tuple[str, int], tuple[int, ...]]:
    """The last resort when the rounds leave a broker outside floor..ceil of the mean (racks that are
    nearly full): move replicas along chains (a replica of u moves to v, one of v to w ...), see
    :func:`move_along_chains`. Each hop is one more replica moved. Runs on the driver, only when
    needed; returns the changed partitions."""
    state = {key: list(r) for key, r in replicas.items()}
    load = Counter(b for r in state.values() for b in r)
    on: dict[int, list[tuple[str, int]]] = {}
    for key in sorted(state):
        for b in state[key]:
            on.setdefault(b, []).append(key)
    order = sorted(ctx.brokers, key=ctx.spread_rank)
    changed: dict[tuple[str, int], tuple[int, ...]] = {}
    budget = [CHAIN_SEARCH_LIMIT]

    def edges(u: int) -> Iterable[tuple[tuple[str, int], int]]:
        for key in on.get(u, ()):
            members = state[key]
            if u in members:
                rest = [b for b in members if b != u]
                cap = ctx.rack_cap(len(members))
                budget[0] -= len(order)
                if budget[0] < 0:
                    return
                yield from ((key, v) for v in order if ctx.fits(v, rest, cap))

    def move(key: tuple[str, int], u: int, v: int) -> None:
        members = state[key]
        members[members.index(u)] = v
        on.setdefault(v, []).append(key)
        changed[key] = tuple(members)

    move_along_chains(order, load, edges, move)
    return changed


def move_along_chains(
    order: Sequence[int],
    load: Counter[int],
    edges: Callable[[int], Iterable[tuple[K, int]]],
    move: Callable[[K, int, int], None],
) -> None:
    """Even out ``load`` over the brokers of ``order`` to floor..ceil of the mean with shortest chains:
    ``edges(u)`` lists (item, v) where item may pass from u to v; ``move`` applies one hop. First from
    each broker above the ceil to any below it, then from any above the floor to those below it."""
    from collections import deque

    if not order:
        return
    floor, extra = divmod(sum(load[b] for b in order), len(order))
    ceil = floor + (1 if extra else 0)

    def chain(starts: Sequence[int], wanted: int) -> bool:
        previous: dict[int, tuple[int, K] | None] = dict.fromkeys(starts)
        queue = deque(starts)
        while queue:
            u = queue.popleft()
            for item, v in edges(u):
                if v in previous:
                    continue
                previous[v] = (u, item)
                if load[v] < wanted:
                    while previous[v] is not None:
                        u, item = previous[v]  # type: ignore[misc]
                        move(item, u, v)
                        load[u] -= 1
                        load[v] += 1
                        v = u
                    return True
                queue.append(v)
        return False

    for start in order:
        while load[start] > ceil and chain([start], ceil):
            pass
    while any(load[b] < floor for b in order):
        donors = [b for b in order if load[b] > floor]
        if not donors or not chain(donors, floor):
            break


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
