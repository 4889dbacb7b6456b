"""``--move-budget``: extra moves that buy topic and bytes balance the free choices cannot reach. Standard
library only.

The balanced pipeline (:mod:`kreassign.planning.balance`) moves the fewest replicas and spends only the free
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
in all, so that a large budget may be left partly unspent but the time does not grow with the cluster.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, groupby

from kreassign.planning.capacity import disk_bounds
from kreassign.planning.context import BalanceContext, Row

SEARCH_LIMIT = 1000
"""Candidates one search looks at before it gives up (a move for one topic, for one pair of brokers)."""
WORK_BASE, WORK_PER_REPLICA = 20_000, 20
"""Candidates a level (topic replicas, topic leaders, bytes) looks at, all its searches together: the base
plus so many per replica of the budget (a budget in bytes counts as replicas of the mean size), so that the
time of the stage grows with what it may buy, not with the cluster."""
LIGHTEST = 8
"""Brokers with the fewest bytes the heaviest one tries to give bytes to, lightest first."""
PARTNERS = 64
"""Replicas of the receiving broker one swap search looks at per replica leaving, nearest in size first (and
at most an eighth of that after the first that works, for a cheaper one)."""


@dataclass(frozen=True)
class MoveBudget:
    """At most ``amount`` replicas (``unit`` "replicas") or bytes (``unit`` "bytes") moved beyond the plan."""

    amount: int
    unit: str = "replicas"

    def __post_init__(self) -> None:
        if self.unit not in ("replicas", "bytes") or self.amount < 0:
            raise ValueError(f"invalid move budget {self.amount} {self.unit}")


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
) -> BudgetUse:
    """Spends ``budget`` on ``plan`` (changed in place). ``rows``: the partitions as they are now (topic,
    partition, current replicas, size); ``capacities``, ``other_bytes`` and ``limit`` as for
    :func:`kreassign.planning.capacity.fit_disk_capacity`."""
    state = _State(rows, plan, ctx, budget, capacities or {}, other_bytes or {}, limit)
    state.improve_topic_replicas()
    state.improve_topic_leaders()
    state.improve_bytes()
    for pid in sorted(state.changed):
        topic, partition, _, _ = state.rows[pid]
        plan[(topic, partition)] = list(state.reps[pid])
    return BudgetUse(
        budget=budget,
        used=state.spent,
        extra_replicas=state.extra_replicas,
        extra_bytes=state.extra_bytes,
        replica_moves=state.replica_moves,
        leader_moves=state.leader_moves,
    )


def _range_ok(old: int, new: int, low: int, high: int) -> bool:
    """A broker's count may change from ``old`` to ``new``: it ends within low..high or no further out."""
    if low <= new <= high:
        return True
    return max(low - new, new - high) <= max(low - old, old - high, 0)


def _spread(counts: Mapping[int, int], brokers: int) -> int:
    """Max - min of a topic's counts over the chosen brokers (those it is not on hold 0)."""
    if not counts:
        return 0
    return max(counts.values()) - (min(counts.values()) if len(counts) == brokers else 0)


class _State:
    """The plan as indexes (partitions numbered in topic, partition order; per broker its replicas, the new
    ones among them and the partitions it leads; per topic its replicas and leaders per broker) and the moves
    on it."""

    def __init__(
        self,
        rows: Sequence[Row],
        plan: Mapping[tuple[str, int], Sequence[int]],
        ctx: BalanceContext,
        budget: MoveBudget,
        capacities: Mapping[int, int | None],
        other_bytes: Mapping[int, int],
        limit: float,
    ) -> None:
        self.ctx = ctx
        self.budget = budget
        self.in_bytes = budget.unit == "bytes"
        self.rows = ordered = sorted(rows)
        self.size = sizes = [size or 0 for _, _, _, size in ordered]
        self.current = currents = [current for _, _, current, _ in ordered]
        self.reps = reps = [plan[(t, p)] for t, p, _, _ in ordered]  # copied when first changed
        if not set(ctx.brokers).issuperset(chain.from_iterable(reps)):
            raise ValueError("the plan places a replica on a broker that is not chosen")
        self.chosen = ctx.brokers
        self.group = {b: ctx.group(b) for b in ctx.brokers}
        brokers = len(ctx.brokers)
        total = sum(map(len, reps))
        self.floor, extra = divmod(total, brokers)
        self.ceil = self.floor + (1 if extra else 0)
        self.lfloor, lextra = divmod(len(reps), brokers)
        self.lceil = self.lfloor + (1 if lextra else 0)
        # per topic (in name order; rows are sorted, so each topic is a run of partitions)
        self.topic: list[int] = []
        self.partitions: list[range] = []  # topic -> its partitions' numbers
        self.tb: list[dict[int, int]] = []  # topic -> broker -> replicas
        self.lb: list[dict[int, int]] = []  # topic -> broker -> leaders
        start = 0
        for _, run in groupby(ordered, key=lambda row: row[0]):
            length = sum(1 for _ in run)
            self.topic += [len(self.tb)] * length
            self.partitions.append(range(start, start + length))
            self.tb.append(dict(Counter(chain.from_iterable(reps[start : start + length]))))
            self.lb.append(dict(Counter(r[0] for r in reps[start : start + length] if r)))
            start += length
        on: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        led: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        fresh: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        add_on = {b: items.append for b, items in on.items()}
        add_led = {b: items.append for b, items in led.items()}
        add_fresh = {b: items.append for b, items in fresh.items()}
        bytes_ = dict.fromkeys(ctx.brokers, 0)
        for pid, replicas in enumerate(reps):
            current, size = currents[pid], sizes[pid]
            for b in replicas:
                add_on[b](pid)
                bytes_[b] += size
                if b not in current:
                    add_fresh[b](pid)
            if replicas:
                add_led[replicas[0]](pid)
        # per broker a, per broker b: the partitions the plan moves from a (in the cluster now) to b
        self.undo: dict[int, dict[int, set[int]]] = {}
        for b, items in fresh.items():
            for pid in items:
                for a in currents[pid]:
                    self.undo.setdefault(a, {}).setdefault(b, set()).add(pid)
        self.fresh_brokers = {b for b, items in fresh.items() if items}
        self.on = on  # partitions with a replica on b
        self.fresh = fresh  # those the plan moves to b
        self.led = led  # partitions b leads
        self.bytes = bytes_
        self.count = {b: len(items) for b, items in on.items()}
        self.lead = {b: len(items) for b, items in led.items()}
        self.bounds: dict[int, float] = {}
        if any(capacities.get(b) for b in ctx.brokers):
            used_before: Counter[int] = Counter(other_bytes)
            for pid, current in enumerate(currents):
                used_before.update(dict.fromkeys(current, sizes[pid]))
            self.bounds = disk_bounds(used_before, capacities, ctx.brokers, limit)
        self.used = {b: self.bytes[b] + other_bytes.get(b, 0) for b in ctx.brokers}
        self.by_bytes = sorted((self.bytes[b], b) for b in ctx.brokers)
        self.by_size: dict[int, list[tuple[int, int]]] = {}  # per broker (size, partition), sorted; on demand
        self.fresh_by_size: dict[int, list[tuple[int, int]]] = {}  # the same of fresh
        self.spent = 0  # in the budget's unit
        self.extra_replicas = self.extra_bytes = self.replica_moves = self.leader_moves = 0
        self.changed: set[int] = set()
        amount = budget.amount
        if self.in_bytes:
            mean = sum(self.bytes.values()) / max(1, total)
            amount = int(amount / mean) if mean else 0
        self.work_limit = WORK_BASE + WORK_PER_REPLICA * amount

    # ------------------------------------------------------------------------------------------ moves
    def cost(self, pid: int, src: int, dst: int) -> int:
        """What taking pid's replica from src to dst adds to the replicas moved: -1, 0 or 1."""
        current = self.current[pid]
        return (dst not in current) - (src not in current)

    def price(self, pid: int, src: int, dst: int) -> int:
        """The cost in the budget's unit."""
        c = self.cost(pid, src, dst)
        return c * self.size[pid] if self.in_bytes else c

    def room(self) -> int:
        """What a move may still add to the budget used (a move that adds nothing is always allowed)."""
        return max(0, self.budget.amount - self.spent)

    def affordable(self, price: int, a: int, b: int) -> bool:
        """May a replica go from a to b at ``price``: within the room left, or a partner the plan moves from
        b to a could pay for it (coming back to a broker it is on now)?"""
        return price <= self.room() or bool(self.undo.get(a, {}).get(b))

    def fits(self, pid: int, src: int, dst: int) -> bool:
        """May pid's replica on src go to dst: a chosen broker not holding it, the rack rule kept?"""
        replicas = self.reps[pid]
        if dst in replicas or dst not in self.on:
            return False
        group = self.group
        rack = group[dst]
        same = 0
        for b in replicas:
            if b != src and group[b] == rack:
                same += 1
        return same < self.ctx.rack_cap(len(replicas))

    def sized(self, broker: int, fresh: bool = False) -> list[tuple[int, int]]:
        """Broker's replicas (``fresh``: those the plan moves there) as (size, partition), by size."""
        cache = self.fresh_by_size if fresh else self.by_size
        items = cache.get(broker)
        if items is None:
            size = self.size
            items = cache[broker] = sorted([(size[p], p) for p in (self.fresh if fresh else self.on)[broker]])
        return items

    def window(self, a: int, b: int, low: int, high: int, want: float, allowance: int) -> list[int]:
        """Up to :data:`PARTNERS` replicas of b sized within low..high, nearest to ``want`` first, that may go
        to a for at most ``allowance`` (in the budget's unit). When it is too small for any replica, only
        those the plan moves to b are looked at (moving them on costs nothing), and below 0 only those it
        moves from a (moving them back pays ``allowance`` back)."""
        if allowance >= (low if self.in_bytes else 1):
            items = self.sized(b)
        elif allowance >= 0:
            items = self.sized(b, fresh=True)
        else:
            items = sorted((self.size[y], y) for y in self.undo.get(a, {}).get(b, ()))
            if self.in_bytes:
                low = max(low, -allowance)
        lo = bisect.bisect_left(items, (low, -1))
        hi = bisect.bisect_right(items, (high, len(self.reps)))
        mid = bisect.bisect_left(items, (want, -1), lo, hi)
        left, right = mid - 1, mid
        found: list[int] = []
        while len(found) < PARTNERS and (left >= lo or right < hi):
            if left >= lo and (right >= hi or want - items[left][0] <= items[right][0] - want):
                found.append(items[left][1])
                left -= 1
            else:
                found.append(items[right][1])
                right += 1
        return found

    def evaluate(self, a: int, b: int, xs: Sequence[int], ys: Sequence[int]) -> tuple[int, int, int] | None:
        """Replicas of ``xs`` go from a to b (they fit), those of ``ys`` from b to a (they fit): None when a
        rule or the budget forbids it, else the change of the three objective levels (each <= 0)."""
        extra = sum(self.price(x, a, b) for x in xs) + sum(self.price(y, b, a) for y in ys)
        if extra > self.room():
            return None
        r = len(xs) - len(ys)
        if r and not (
            _range_ok(self.count[a], self.count[a] - r, self.floor, self.ceil)
            and _range_ok(self.count[b], self.count[b] + r, self.floor, self.ceil)
        ):
            return None
        led_x = [x for x in xs if self.reps[x][0] == a]
        led_y = [y for y in ys if self.reps[y][0] == b]
        lr = len(led_x) - len(led_y)
        if lr and not (
            _range_ok(self.lead[a], self.lead[a] - lr, self.lfloor, self.lceil)
            and _range_ok(self.lead[b], self.lead[b] + lr, self.lfloor, self.lceil)
        ):
            return None
        d = sum(self.size[x] for x in xs) - sum(self.size[y] for y in ys)
        d3 = 0
        if d:
            old_a, old_b = self.bytes[a], self.bytes[b]
            new_a, new_b = old_a - d, old_b + d
            if abs(new_a - new_b) > abs(old_a - old_b):
                return None
            receiver = b if d > 0 else a
            bound = self.bounds.get(receiver)
            if bound is not None and self.used[receiver] + abs(d) > bound:
                return None
            d3 = new_a * new_a + new_b * new_b - old_a * old_a - old_b * old_b
        d1 = _pair_delta(self.tb, self.topic, a, b, xs, ys)
        if d1 is None:
            return None
        d2 = _pair_delta(self.lb, self.topic, a, b, led_x, led_y) if led_x or led_y else 0
        if d2 is None:
            return None
        return d1, d2, d3

    def apply(self, a: int, b: int, xs: Sequence[int], ys: Sequence[int]) -> None:
        by_bytes = self.by_bytes
        for broker in (a, b):
            del by_bytes[bisect.bisect_left(by_bytes, (self.bytes[broker], broker))]
        for pid, src, dst in [*((x, a, b) for x in xs), *((y, b, a) for y in ys)]:
            self._move(pid, src, dst)
        for broker in (a, b):
            bisect.insort(by_bytes, (self.bytes[broker], broker))

    def _replicas(self, pid: int) -> list[int]:
        """pid's replicas, to change: a copy of the plan's list the first time."""
        if pid not in self.changed:
            self.changed.add(pid)
            self.reps[pid] = list(self.reps[pid])
        return self.reps[pid]

    def _move(self, pid: int, src: int, dst: int) -> None:
        replicas = self._replicas(pid)
        size, t = self.size[pid], self.topic[pid]
        cost = self.cost(pid, src, dst)
        self.extra_replicas += cost
        self.extra_bytes += cost * size
        self.spent += cost * size if self.in_bytes else cost
        position = replicas.index(src)
        replicas[position] = dst
        self.replica_moves += 1
        self.on[src].remove(pid)
        self.on[dst].append(pid)
        _sorted_remove(self.by_size.get(src), (size, pid))
        _sorted_add(self.by_size.get(dst), (size, pid))
        current = self.current[pid]
        if src not in current:
            self.fresh[src].remove(pid)
            if not self.fresh[src]:
                self.fresh_brokers.discard(src)
            _sorted_remove(self.fresh_by_size.get(src), (size, pid))
            for holder in current:
                self.undo[holder][src].discard(pid)
        if dst not in current:
            self.fresh[dst].append(pid)
            self.fresh_brokers.add(dst)
            _sorted_add(self.fresh_by_size.get(dst), (size, pid))
            for holder in current:
                self.undo.setdefault(holder, {}).setdefault(dst, set()).add(pid)
        self.count[src] -= 1
        self.count[dst] += 1
        self.bytes[src] -= size
        self.bytes[dst] += size
        self.used[src] -= size
        self.used[dst] += size
        _shift(self.tb[t], src, dst)
        if position == 0:
            self._lead(pid, src, dst)

    def _lead(self, pid: int, src: int, dst: int) -> None:
        self.lead[src] -= 1
        self.lead[dst] += 1
        self.led[src].remove(pid)
        self.led[dst].append(pid)
        _shift(self.lb[self.topic[pid]], src, dst)

    # ------------------------------------------------------------------------------------------ level 1
    def _worst_topic_first(self, per_topic: list[dict[int, int]], search, apply) -> None:
        """Topics by their spread over ``per_topic`` (counts per broker), largest first: ``search(t)`` finds
        a move that evens topic t out (with the candidates it looked at), ``apply`` makes it; until no topic
        improves or the level's work limit is reached."""
        brokers = len(self.chosen)
        heap = [(-s, t) for t, s in ((t, _spread(c, brokers)) for t, c in enumerate(per_topic)) if s >= 2]
        heapq.heapify(heap)
        work = 0
        while heap and work < self.work_limit:
            negative, t = heapq.heappop(heap)
            spread = _spread(per_topic[t], brokers)
            if spread != -negative:  # stale: the topic improved as the other side of a swap
                if spread >= 2:
                    heapq.heappush(heap, (-spread, t))
                continue
            move, looked = search(t)
            work += looked
            if move is None:
                continue  # no move improves this topic any more
            apply(move)
            spread = _spread(per_topic[t], brokers)
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
            replicas = self._replicas(pid)
            replicas.remove(dst)
            replicas.insert(0, dst)
            self.leader_moves += 1
            self._lead(pid, src, dst)

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
                    if _range_ok(self.lead[a], self.lead[a] - 1, self.lfloor, self.lceil) and _range_ok(
                        self.lead[c], self.lead[c] + 1, self.lfloor, self.lceil
                    ):
                        return [(x, a, c)], looked
                    # c gives back the leadership of a partition of an other topic that a is a replica of
                    for z in sorted(self.led[c]):
                        looked += 1
                        if self.topic[z] == t or a not in self.reps[z]:
                            continue
                        if _pair_delta(self.lb, self.topic, a, c, [x], [z]) is not None:
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


def _sorted_remove(items: list[tuple[int, int]] | None, item: tuple[int, int]) -> None:
    if items is not None:
        del items[bisect.bisect_left(items, item)]


def _sorted_add(items: list[tuple[int, int]] | None, item: tuple[int, int]) -> None:
    if items is not None:
        bisect.insort(items, item)


def _shift(counts: dict[int, int], src: int, dst: int) -> None:
    left = counts[src] - 1
    if left:
        counts[src] = left
    else:
        del counts[src]
    counts[dst] = counts.get(dst, 0) + 1


def _pair_delta(
    per_topic: Sequence[Mapping[int, int]], topic: Sequence[int], a: int, b: int, xs: Sequence[int], ys: Sequence[int]
) -> int | None:
    """Change of the sum of squares of per-topic counts when ``xs`` go a -> b and ``ys`` b -> a; None when
    a topic's counts on a and b would end further apart than they are."""
    net: dict[int, int] = {}
    for x in xs:
        net[topic[x]] = net.get(topic[x], 0) + 1
    for y in ys:
        net[topic[y]] = net.get(topic[y], 0) - 1
    delta = 0
    for t, n in net.items():
        if not n:
            continue
        counts = per_topic[t]
        old_a, old_b = counts.get(a, 0), counts.get(b, 0)
        new_a, new_b = old_a - n, old_b + n
        if abs(new_a - new_b) > abs(old_a - old_b):
            return None
        delta += new_a * new_a + new_b * new_b - old_a * old_a - old_b * old_b
    return delta
