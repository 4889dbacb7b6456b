"""``--move-budget``: extra moves that buy topic and bytes balance the free choices cannot reach. Standard
library only.

The balanced pipeline (:mod:`kreassign.planning.balanced`) moves the fewest replicas and spends only the free
choices on balance. This stage runs after it and after :mod:`kreassign.planning.capacity`, on the driver, on
the finished plan of either engine (so plans stay byte-identical across engines). It changes the plan in place,
one move at a time, greedily, until the budget is spent or no move improves the plan.

**A move** takes the replica of partition X on broker A to broker B (B not a replica of X; it keeps X's
position in the list, so a leader's replica takes the leadership along), either alone, when A is above the
floor and B below the ceil of the mean replicas per broker, or together with a replica of another partition
Y from B to A (a swap: replica counts unchanged). Every move keeps the rules of the plan:

* the rack rule (at most ``rack_cap`` replicas of a partition per rack);
* replicas and leaders per broker within floor..ceil of the mean (a broker outside it, which
  :mod:`kreassign.planning.capacity` may leave, never gets further out);
* disk capacity: a broker of known capacity never ends above its bound unless it was above it before the
  move and does not grow;
* for every topic the move touches, its replicas (and leaders) on A and B end no further apart than they
  were, and so do the bytes of A and B: no topic's spread, no broker's count range, no bytes min or max
  and no standard deviation gets worse, ever.

**The objective**, compared lexicographically, and each move must make one level strictly better: (1) the
topics' replica balance (the sum over topics and brokers of the square of the topic's replicas on the
broker: it falls exactly when a replica goes from a broker holding at least two more of its topic than the
other), worst topic first (topics are worked on in order of their spread, max - min over the chosen
brokers, largest first); (2) the topics' leader balance, reached by leadership changes within a partition
(free: no replica moves, so no budget is spent), in the same way; (3) bytes per broker (sum of squares),
from the broker with the most bytes to those with the least.

**The budget** counts what the plan moves beyond the plan this stage received (the fewest moves,
:func:`kreassign.planning.quality.minimum_movement`, whenever racks allow): replicas (or bytes) in the
proposal that are not in the current assignment. Moving on a replica the plan moves to A costs nothing (it
was moving anyway) and moving one back to a broker that holds it now gives one back: the budget is
``moved(final) - moved(received) <= allowed``, checked move by move. Once the room left is too small for a
replica, a swap is only looked for with a partner that costs nothing (one the plan moves to B) or pays back
(one it moves from A to B).

Deterministic: brokers, topics and partitions are taken in sorted orders with ids and names as ties, and
nothing depends on the order of ``rows`` or of ``plan``. Bounded: a heap of topics by spread, brokers sorted
by bytes, per broker its replicas sorted by size (a swap partner is found by bisection in the size window
that keeps the bytes rule, nearest first), per topic its counts per broker; each search gives up after
:data:`SEARCH_LIMIT` candidates, and each level after ``WORK_BASE + WORK_PER_REPLICA * budget`` candidates
in all, so that a large budget may be left partly unspent but the time does not grow with the cluster. On a
large cluster the stage looks at a scope of whole topics, the least even first, as the bytes stage does
(:mod:`kreassign.planning.scope`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.planstate import PARTNERS, MoveBudget, PlanState, Rest, count_spread, pair_delta, range_ok
from kreassign.planning.scope import narrow

SEARCH_LIMIT = 1000
"""Candidates one search looks at before it gives up (a move for one topic, for one pair of brokers)."""
WORK_BASE, WORK_PER_REPLICA = 20_000, 20
"""Candidates a level (topic replicas, topic leaders, bytes) looks at, all its searches together: the base
plus so many per replica of the budget (a budget in bytes counts as replicas of the mean size), so that the
time of the stage grows with what it may buy, not with the cluster."""
LIGHTEST = 8
"""Brokers with the fewest bytes the heaviest one tries to give bytes to, lightest first."""


@dataclass(frozen=True)
class BudgetUse:
    """What the stage did: ``used`` of the budget (replicas or bytes moved beyond the plan it received; at most
    ``budget.amount``, below 0 when it moved more replicas back than away), the same in replicas and in bytes,
    the replicas it moved (a swap moves two) and the leaderships it changed without moving a replica."""

    budget: MoveBudget
    used: int
    extra_replicas: int
    extra_bytes: int
    replica_moves: int
    leader_moves: int


def spend_move_budget(
    rows: Sequence[Row],
    plan: dict[tuple[str, int], list[int]],
    ctx: BalanceContext,
    budget: MoveBudget,
    capacities: Mapping[int, int | None] | None = None,
    other_bytes: Mapping[int, int] | None = None,
    limit: float = 0.8,
    rest: Rest | None = None,
) -> BudgetUse:
    """Spends ``budget`` on ``plan`` (changed in place). ``rows``: the partitions as they are now (topic,
    partition, current replicas, size); ``capacities``, ``other_bytes`` and ``limit`` as for
    :func:`kreassign.planning.capacity.fit_disk_capacity`. On a large cluster the stage looks at a scope of
    topics, the least even first (:mod:`kreassign.planning.scope`); ``rest``: given when ``rows`` are those
    topics' already, what the others add up to."""
    if rest is None and (narrowed := narrow(rows, plan, ctx.brokers)) is not None:
        rows, rest = narrowed
    state = TopicState(rows, plan, ctx, budget, capacities or {}, other_bytes or {}, limit, rest)
    state.improve_topic_replicas()
    state.improve_topic_leaders()
    state.improve_bytes()
    state.store(plan)
    return BudgetUse(
        budget=budget,
        used=state.spent,
        extra_replicas=state.extra_replicas,
        extra_bytes=state.extra_bytes,
        replica_moves=state.replica_moves,
        leader_moves=state.leader_moves,
    )


class TopicState(PlanState):
    """The plan's indexes (:class:`kreassign.planning.planstate.PlanState`) and the three levels of the budget."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        amount = self.budget.amount
        if self.in_bytes:
            mean = sum(self.bytes.values()) / max(1, self.total)
            amount = int(amount / mean) if mean else 0
        self.work_limit = WORK_BASE + WORK_PER_REPLICA * amount

    # ------------------------------------------------------------------------------------------ level 1
    def _worst_topic_first(self, per_topic: list[dict[int, int]], search, apply) -> None:
        """Topics by their spread over ``per_topic`` (counts per broker), largest first: ``search(t)`` finds
        a move that evens topic t out (with the candidates it looked at), ``apply`` makes it; until no topic
        improves or the level's work limit is reached."""
        brokers = len(self.chosen)
        heap = [(-s, t) for t, s in ((t, count_spread(c, brokers)) for t, c in enumerate(per_topic)) if s >= 2]
        heapq.heapify(heap)
        work = 0
        while heap and work < self.work_limit:
            negative, t = heapq.heappop(heap)
            spread = count_spread(per_topic[t], brokers)
            if spread != -negative:  # stale: the topic improved as the other side of a swap
                if spread >= 2:
                    heapq.heappush(heap, (-spread, t))
                continue
            move, looked = search(t)
            work += looked
            if move is None:
                continue  # no move improves this topic any more
            apply(move)
            spread = count_spread(per_topic[t], brokers)
            if spread >= 2:
                heapq.heappush(heap, (-spread, t))

    def improve_topic_replicas(self) -> None:
        """Worst topic first: a replica from a broker holding most of the topic to one holding at least
        two fewer (alone, or swapped with a replica of an other topic), until no topic improves."""
        self._worst_topic_first(self.tb, self._topic_move, lambda move: self.apply(*move))

    def _topic_move(self, t: int):
        """A move that evens topic t out: from the brokers holding most of it (most bytes first), its
        replicas there (the cheapest first), to the brokers holding at least two fewer. Returns (the move or
        None, candidates looked at)."""
        counts = self.tb[t]
        high = max(counts.values())
        sources = sorted((b for b, v in counts.items() if v == high), key=lambda b: (-self.bytes[b], b))
        looked = 0
        held: dict[int, list[tuple[bool, int, int]]] = {a: [] for a in sources}
        for p in self.partitions[t]:
            for a in self.reps[p]:
                if a in held:
                    held[a].append((a in self.current[p], self.size[p], p))
        room = self.room()
        for a in sources:
            # the topic's replicas on a: those the plan moves there first (moving them on costs nothing)
            for _, _, x in sorted(held[a]):
                for b in self._destinations(counts, high, self._within_budget(a, x, room)):
                    looked += 1
                    if looked > SEARCH_LIMIT:
                        return None, looked
                    price = self.price(x, a, b)
                    if not self.affordable(price, a, b) or not self.fits(x, a, b):
                        continue
                    if self.count[a] > self.floor and self.count[b] < self.ceil:
                        found = self.evaluate(a, b, (x,), ())
                        if found is not None and found[0] < 0:
                            return (a, b, (x,), ()), looked
                    y, seen = self._partner(a, b, x, price)
                    looked += seen
                    if y is not None:
                        return (a, b, (x,), (y,)), looked
        return None, looked

    def _within_budget(self, a: int, x: int, room: int) -> set[int] | None:
        """Where x may go from a when the room left is tight (None: anywhere): to a broker it is on now (no
        replica moved), or where the move is paid for by a swap partner that costs nothing (a replica the
        plan moves to that broker) or that pays back (one it moves there from a)."""
        fresh = a not in self.current[x]  # then x itself costs nothing
        # in bytes, a fresh x leaves the whole room to a partner
        tight = (room <= 0 if fresh else room < self.size[x]) if self.in_bytes else room < 1
        if not tight or (fresh and self.ceil > self.floor):  # (a fresh x may also move alone, for free)
            return None
        only = {*self.current[x], *self.undo.get(a, {})}
        if fresh:
            only.update(self.fresh_brokers)
        return only

    def _destinations(self, counts: Mapping[int, int], high: int, only: set[int] | None) -> Iterator[int]:
        """Brokers (of ``only``) holding at most ``high - 2`` replicas of the topic: fewest first, then
        fewest bytes."""
        if only is not None:
            picked = [(counts.get(b, 0), self.bytes[b], b) for b in only if b in self.on]
            yield from (b for v, _, b in sorted(picked) if v <= high - 2)
            return
        if len(counts) < len(self.chosen):
            yield from (b for _, b in self.by_bytes if b not in counts)
        yield from (b for _, _, b in sorted((v, self.bytes[b], b) for b, v in counts.items() if v <= high - 2))

    def _partner(self, a: int, b: int, x: int, price: int) -> tuple[int | None, int]:
        """A replica y on b, of an other topic, to swap with x (a -> b) so that x's topic improves: bytes of a
        and b end no further apart (y's size within the window that allows), the nearest in size to x first,
        then the cheapest among the next few. Returns (y or None, candidates looked at)."""
        size_x, t = self.size[x], self.topic[x]
        gap = self.bytes[a] - self.bytes[b]
        low, high = (size_x - gap, size_x) if gap >= 0 else (size_x, size_x - gap)
        room = self.room()
        leader_x = self.reps[x][0] == a
        tb = self.tb
        best: tuple | None = None
        looked = 0
        for y in self.window(a, b, low, high, size_x, room - price):
            looked += 1
            if best is not None and looked > best[3] + PARTNERS // 8:
                break
            counts = tb[self.topic[y]]
            if counts is tb[t] or counts.get(a, 0) >= counts[b]:
                continue  # y's topic would not stay as even
            extra = price + self.price(y, b, a)
            if extra > room:
                continue
            if (self.reps[y][0] == b) != leader_x and self.lead[a] == self.lead[b]:
                continue  # the leaderships would not stay even (checked in full below otherwise)
            if not self.fits(y, b, a):
                continue
            found = self.evaluate(a, b, (x,), (y,))
            if found is None or found[0] >= 0:
                continue
            rank = (extra, abs(size_x - self.size[y]), y, looked)
            if best is None or rank < best:
                best = rank
                if extra <= 0:
                    break
        return (best[2] if best else None), looked

    # ------------------------------------------------------------------------------------------ level 2
    def improve_topic_leaders(self) -> None:
        """Leaderships within a partition, from a broker leading most of its topic to a replica leading at
        least two fewer (alone, or with a leadership of an other topic coming back): no replica moves."""
        self._worst_topic_first(self.lb, self._leader_move, self._apply_leaderships)

    def _apply_leaderships(self, move: list[tuple[int, int, int]]) -> None:
        for pid, src, dst in move:
            self.transfer_leadership(pid, src, dst)

    def _leader_move(self, t: int) -> tuple[list[tuple[int, int, int]] | None, int]:
        counts = self.lb[t]
        high = max(counts.values())
        looked = 0
        for a in sorted(b for b, v in counts.items() if v == high):
            for x in (p for p in self.partitions[t] if self.reps[p][0] == a):
                for c in sorted(self.reps[x][1:], key=lambda b: (counts.get(b, 0), b)):
                    looked += 1
                    if looked > SEARCH_LIMIT:
                        return None, looked
                    if counts.get(c, 0) > high - 2:
                        continue
                    if range_ok(self.lead[a], self.lead[a] - 1, self.lfloor, self.lceil) and range_ok(
                        self.lead[c], self.lead[c] + 1, self.lfloor, self.lceil
                    ):
                        return [(x, a, c)], looked
                    # c gives back the leadership of a partition of an other topic that a is a replica of
                    for z in sorted(self.led[c]):
                        looked += 1
                        if self.topic[z] == t or a not in self.reps[z]:
                            continue
                        if pair_delta(self.lb, self.topic, a, c, [x], [z]) is not None:
                            return [(x, a, c), (z, c, a)], looked
        return None, looked

    # ------------------------------------------------------------------------------------------ level 3
    def improve_bytes(self) -> None:
        """From the broker with the most bytes to those with the fewest: one replica, or a swap, that brings
        the pair closer (a transfer between 0 and their gap), topics and leaders no less even. A broker no
        move helps is passed over for the next heaviest."""
        if not any(self.size):
            return
        stuck: set[int] = set()
        work = 0
        while work < self.work_limit:
            a = next((b for _, b in reversed(self.by_bytes) if b not in stuck), None)
            if a is None:
                return
            move = None
            for _, b in self.by_bytes[:LIGHTEST]:
                if self.bytes[a] <= self.bytes[b]:
                    break
                move, looked = self._bytes_move(a, b)
                work += looked
                if move is not None:
                    break
            if move is None:
                stuck.add(a)
                continue
            self.apply(*move)

    def _bytes_move(self, a: int, b: int):
        """The move from a to b whose transfer is nearest to half their gap: a replica of a alone when the
        counts allow, else a swap. A good one (it transfers at least half of what is within reach: half the
        gap, or a's largest replica) is taken at once."""
        gap = self.bytes[a] - self.bytes[b]
        single = self.count[a] > self.floor and self.count[b] < self.ceil
        room = self.room()
        items = self.sized(a)
        if not items:
            return None, 0
        good = gap - min(gap / 2, items[-1][0])  # |gap - 2 * transfer| at most this: good enough
        # the replicas the plan moves to a first (moving them on costs nothing), then the largest
        xs = sorted(items, key=lambda item: (a in self.current[item[1]], -item[0], item[1]))
        best: tuple | None = None
        looked = 0
        for size_x, x in xs:
            if looked > SEARCH_LIMIT:
                break
            looked += 1
            price = self.price(x, a, b)
            if not self.affordable(price, a, b) or not self.fits(x, a, b):
                continue
            if single:
                partners: list[tuple[int, ...]] = [()] if 0 < size_x < gap else []
            else:  # y with size_x - gap < size_y < size_x, the nearest to size_x - gap / 2 first
                window = self.window(a, b, size_x - gap + 1, size_x - 1, size_x - gap / 2, room - price)
                partners = [(y,) for y in window]
            for ys in partners:
                looked += 1
                if ys and (price + self.price(ys[0], b, a) > room or not self.fits(ys[0], b, a)):
                    continue
                found = self.evaluate(a, b, (x,), ys)
                if found is None or found[2] >= 0:
                    continue
                moved = size_x - sum(self.size[y] for y in ys)
                rank = (abs(gap - 2 * moved), x, ys)
                if best is None or rank < best:
                    best = rank
                if abs(gap - 2 * moved) <= good:
                    return (a, b, (x,), ys), looked
                break  # the nearest partner that works is the best for this x
        return (None if best is None else (a, b, (best[1],), best[2])), looked
