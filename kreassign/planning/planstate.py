"""A finished plan as indexes, and moves on it that keep its rules: what the driver-side stages after the
engine (:mod:`kreassign.planning.budget`, :mod:`kreassign.planning.bytebalance`) share. Standard library only.

The indexes: partitions numbered in (topic, partition) order; per broker its replicas, the new ones among them
(``fresh``: the plan moves them there) and the partitions it leads; per topic its replicas and leaders per
broker; per pair of brokers the partitions the plan moves from one to the other (``undo``). A move takes the
replica of a partition from one broker to another (it keeps its position in the list, so a leader's replica
takes the leadership along), alone or together with one the other way (a swap); :meth:`PlanState.evaluate`
says whether it keeps the rules (rack, replicas and leaders per broker within floor..ceil of the mean or no
further out, each topic's replicas and leaders on the two brokers no further apart, the two brokers' bytes no
further apart, the disk bound of the receiver) and :meth:`PlanState.apply` makes it."""

from __future__ import annotations

import bisect
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter

from kreassign.planning.capacity import disk_bounds
from kreassign.planning.context import BalanceContext, Row

PARTNERS = 64
"""Replicas of the receiving broker one swap search looks at per replica leaving, nearest in size first."""


@dataclass(frozen=True)
class MoveBudget:
    """At most ``amount`` replicas (``unit`` "replicas") or bytes (``unit`` "bytes") moved beyond the plan."""

    amount: int
    unit: str = "replicas"

    def __post_init__(self) -> None:
        if self.unit not in ("replicas", "bytes") or self.amount < 0:
            raise ValueError(f"invalid move budget {self.amount} {self.unit}")


@dataclass(frozen=True)
class Rest:
    """What the partitions a stage leaves alone add up to (the topics outside its scope,
    :mod:`kreassign.planning.scope`), per broker after the plan: replicas, leaderships, bytes and the largest
    replica; and before it ``held``, the bytes of the distinct replicas of each partition (what
    :mod:`kreassign.planning.capacity` counts); ``partitions``: how many."""

    partitions: int = 0
    replicas: Mapping[int, int] = field(default_factory=dict)
    leaders: Mapping[int, int] = field(default_factory=dict)
    bytes: Mapping[int, int] = field(default_factory=dict)
    largest: Mapping[int, int] = field(default_factory=dict)
    held: Mapping[int, int] = field(default_factory=dict)


def range_ok(old: int, new: int, low: int, high: int) -> bool:
    """A broker's count may change from ``old`` to ``new``: it ends within low..high or no further out."""
    if low <= new <= high:
        return True
    return max(low - new, new - high) <= max(low - old, old - high, 0)


def count_spread(counts: Mapping[int, int], brokers: int) -> int:
    """Max - min of a topic's counts over the chosen brokers (those it is not on hold 0)."""
    if not counts:
        return 0
    return max(counts.values()) - (min(counts.values()) if len(counts) == brokers else 0)


class PlanState:
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
        rest: Rest | None = None,
    ) -> None:
        """``rows`` and ``plan``: the partitions the moves may change; ``rest``: what the others add up to
        (none when ``rows`` are all of them)."""
        rest = rest or Rest()
        self.rest = rest
        self.ctx = ctx
        self.budget = budget
        self.in_bytes = budget.unit == "bytes"
        self.rows = ordered = sorted(rows)
        sizes = list(map(itemgetter(3), ordered))
        if None in sizes:
            sizes = [size or 0 for size in sizes]
        self.size = sizes
        self.current = currents = list(map(itemgetter(2), ordered))
        names = list(map(itemgetter(0), ordered))
        # copied when first changed
        self.reps = reps = list(map(plan.__getitem__, zip(names, map(itemgetter(1), ordered), strict=True)))
        self.chosen = ctx.brokers
        self.group = {b: ctx.group(b) for b in ctx.brokers}
        brokers = len(ctx.brokers)
        total = sum(map(len, reps)) + sum(rest.replicas.values())
        self.floor, extra = divmod(total, brokers)
        self.ceil = self.floor + (1 if extra else 0)
        self.lfloor, lextra = divmod(len(reps) + rest.partitions, brokers)
        self.lceil = self.lfloor + (1 if lextra else 0)
        # per topic (in name order; rows are sorted, so each topic is a run of partitions); per broker its
        # replicas, bytes, leaderships and the replicas the plan moves there: one pass, a topic at a time, so that
        # what a partition holds is read while it is at hand
        self.topic: list[int] = []
        self.partitions: list[range] = []  # topic -> its partitions' numbers
        self.tb: list[dict[int, int]] = []  # topic -> broker -> replicas
        self.lb: list[dict[int, int]] = []  # topic -> broker -> leaders
        on: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        led: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        fresh: dict[int, list[int]] = {b: [] for b in ctx.brokers}
        add_on = {b: items.append for b, items in on.items()}
        add_led = {b: items.append for b, items in led.items()}
        bytes_ = {b: rest.bytes.get(b, 0) for b in ctx.brokers}
        # per broker a, per broker b: the partitions the plan moves from a (in the cluster now) to b
        self.undo: dict[int, dict[int, set[int]]] = {}
        start = 0
        try:
            for name in dict.fromkeys(names):
                end = bisect.bisect_right(names, name, start)
                run = reps[start:end]
                self.topic += [len(self.tb)] * (end - start)
                self.partitions.append(range(start, end))
                self.tb.append(dict(Counter(chain.from_iterable(run))))
                self.lb.append(dict(Counter(map(itemgetter(0), filter(None, run)))))
                for pid, replicas, current in zip(range(start, end), run, currents[start:end], strict=True):
                    size = sizes[pid]
                    for b in replicas:
                        add_on[b](pid)
                        bytes_[b] += size
                        if b not in current:
                            fresh[b].append(pid)
                            for a in current:
                                self._undo_set(a, b).add(pid)
                    if replicas:
                        add_led[replicas[0]](pid)
                start = end
        except KeyError:
            raise ValueError("the plan places a replica on a broker that is not chosen") from None
        self.fresh_brokers = {b for b, items in fresh.items() if items}
        self.on = on  # partitions with a replica on b
        self.fresh = fresh  # those the plan moves to b
        self.led = led  # partitions b leads
        self.bytes = bytes_
        self.count = {b: len(items) + rest.replicas.get(b, 0) for b, items in on.items()}
        self.lead = {b: len(items) + rest.leaders.get(b, 0) for b, items in led.items()}
        self.bounds: dict[int, float] = {}
        if any(capacities.get(b) for b in ctx.brokers):
            used_before: Counter[int] = Counter(other_bytes)
            used_before.update(rest.held)
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
        self.total = total

    def _undo_set(self, a: int, b: int) -> set[int]:
        """The partitions the plan moves from a to b, a set to add to (made on first use)."""
        into = self.undo.get(a)
        if into is None:
            into = self.undo[a] = {}
        moved = into.get(b)
        if moved is None:
            moved = into[b] = set()
        return moved

    def store(self, plan: dict[tuple[str, int], list[int]]) -> None:
        """Writes the partitions the moves changed back into ``plan``."""
        for pid in sorted(self.changed):
            topic, partition, _, _ = self.rows[pid]
            plan[(topic, partition)] = list(self.reps[pid])

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
            pids = sorted((self.fresh if fresh else self.on)[broker])
            pids.sort(key=self.size.__getitem__)  # by size, then number: faster than sorting the pairs
            items = cache[broker] = list(zip(map(self.size.__getitem__, pids), pids, strict=True))
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
        return [pid for _, pid in nearest(items, want, PARTNERS, low, high)]

    def evaluate(
        self, a: int, b: int, xs: Sequence[int], ys: Sequence[int], leaders: bool = True
    ) -> tuple[int, int, int] | None:
        """Replicas of ``xs`` go from a to b (they fit), those of ``ys`` from b to a (they fit): None when a
        rule or the budget forbids it, else the change of the three objective levels (each <= 0).
        ``leaders`` False: the leadership rules are left to the caller (the second level is then 0)."""
        extra = sum(self.price(x, a, b) for x in xs) + sum(self.price(y, b, a) for y in ys)
        if extra > self.room():
            return None
        r = len(xs) - len(ys)
        if r and not (
            range_ok(self.count[a], self.count[a] - r, self.floor, self.ceil)
            and range_ok(self.count[b], self.count[b] + r, self.floor, self.ceil)
        ):
            return None
        led_x = [x for x in xs if self.reps[x][0] == a] if leaders else []
        led_y = [y for y in ys if self.reps[y][0] == b] if leaders else []
        lr = len(led_x) - len(led_y)
        if lr and not (
            range_ok(self.lead[a], self.lead[a] - lr, self.lfloor, self.lceil)
            and range_ok(self.lead[b], self.lead[b] + lr, self.lfloor, self.lceil)
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
        d1 = pair_delta(self.tb, self.topic, a, b, xs, ys)
        if d1 is None:
            return None
        d2 = pair_delta(self.lb, self.topic, a, b, led_x, led_y) if led_x or led_y else 0
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
                self._undo_set(holder, dst).add(pid)
        self.count[src] -= 1
        self.count[dst] += 1
        self.bytes[src] -= size
        self.bytes[dst] += size
        self.used[src] -= size
        self.used[dst] += size
        _shift(self.tb[t], src, dst)
        if position == 0:
            self._lead(pid, src, dst)

    def transfer_leadership(self, pid: int, src: int, dst: int) -> None:
        """``dst``, a replica of ``pid``, leads it instead of ``src`` (no replica moves)."""
        replicas = self._replicas(pid)
        replicas.remove(dst)
        replicas.insert(0, dst)
        self.leader_moves += 1
        self._lead(pid, src, dst)

    def _lead(self, pid: int, src: int, dst: int) -> None:
        self.lead[src] -= 1
        self.lead[dst] += 1
        self.led[src].remove(pid)
        self.led[dst].append(pid)
        _shift(self.lb[self.topic[pid]], src, dst)


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


def pair_delta(
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


def nearest(
    items: Sequence[tuple[int, int]], want: float, count: int, low: int = 0, high: int | None = None
) -> list[tuple[int, int]]:
    """Up to ``count`` of ``items`` ((size, partition), sorted) sized within low..high, nearest to ``want``
    first (the smaller on a tie)."""
    if not items or items[-1][0] < low or (high is not None and items[0][0] > high):
        return []  # none in the window (the usual answer when items are few)
    lo = bisect.bisect_left(items, (low, -1))
    hi = len(items) if high is None else bisect.bisect_right(items, (high, sys.maxsize))
    if lo >= hi:
        return []
    mid = bisect.bisect_left(items, (want, -1), lo, hi)
    left, right = mid - 1, mid
    found = []
    while len(found) < count and (left >= lo or right < hi):
        if left >= lo and (right >= hi or want - items[left][0] <= items[right][0] - want):
            found.append(items[left])
            left -= 1
        else:
            found.append(items[right])
            right += 1
    return found
