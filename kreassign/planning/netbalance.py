"""Network-aware goals of the balanced plan: bytes in and bytes out per broker within a tolerance of the mean,
when the partitions' rates are known. Standard library only.

Per broker, with each partition's write and read rates (bytes per second, :mod:`kreassign.planning.traffic`):

* **bytes in**: the writes to the partitions it leads plus the replication it receives as a follower, that is
  the write rate of every partition it holds a replica of;
* **bytes out**: the reads its leaders serve plus the replication it sends as leader: for each partition it
  leads, its read rate plus its write rate times its followers.

The stage runs on the driver after the hard goals (the rack rule, replicas and leaders per broker within
floor..ceil of the mean, the bytes band, the disk bound; :mod:`kreassign.planning.pipeline`), on the plan of
either engine, and keeps them all: no move takes a broker out of floor..ceil, out of the bytes band (a broker
the bytes stage left outside it is not touched), over its disk bound, or puts two replicas of a partition on a
rack the rule forbids. The *violation* of a plan is the sum over brokers of how far its bytes in and its bytes
out are outside ``mean * (1 +- tolerance)``, each over its mean; a change is made only when it lowers it.

1. **Leaderships first** (they copy nothing): bytes out moves with the leadership of a partition to one of its
   followers. A broker's leaders stay within floor..ceil, so a leadership handed over comes back by a short
   cycle: the taker hands one of its own to the giver (two partitions), or to a third broker which hands one to
   the giver (three partitions).
2. **Then replicas**: a replica of a partition written fast on a broker above the band of bytes in swaps with a
   replica, of a partition written slower and of a size near it, on a broker below (the swap keeps the replica
   counts; a leader's replica takes the leadership along, so both swap a leadership or neither does), among the
   moves that lower the violation the one that lowers it most per byte copied beyond the plan (moving on a
   replica the plan moves there anyway copies nothing more).

Bounded (:data:`WORK_LIMIT` candidates); deterministic (brokers and partitions in sorted order, ties to the
lowest ids). Limits: topics' replica and leader spreads are not looked at by this stage; the rates are those of
a window (:mod:`kreassign.planning.traffic`'s limits), so the plan is as even as the window was typical.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter

from kreassign.planning.bytebalance import band_of
from kreassign.planning.capacity import disk_bounds
from kreassign.planning.context import BalanceContext, Row, make_context
from kreassign.planning.planstate import range_ok
from kreassign.planning.trafficlimits import TrafficLimit, traffic_limits

DEFAULT_TRAFFIC_TOLERANCE = 0.10
"""The traffic goals' default tolerance: bytes in and out per broker within 10 % of the mean."""
LEADERS_TRIED = 4
"""Partitions of the broker furthest outside the band one leadership step tries, most traffic first."""
REPLICAS_TRIED = 4
"""Replicas of that broker one replica step tries, fastest written first (slowest when it is below the band)."""
PARTNERS_TRIED = 4
"""Brokers on the other side of the mean one replica step tries, furthest first."""
SIZES_TRIED = 6
"""Replicas of a partner tried per replica, nearest in size first."""
CYCLES_TRIED = 8
"""Leaderships of the taker a cycle may hand on (most traffic first)."""
CYCLE_RETURNS = 2
"""Leaderships of the third broker of a cycle that may come back to the giver (least traffic first)."""
SEARCH_MARGIN = 0.2
"""The share of the tolerance the search leaves each side (it aims at 8 % for a tolerance of 10 %)."""
WORK_LIMIT = 300_000
"""Candidates the stage looks at, both passes together."""

Rates = Mapping[tuple[str, int], tuple[float, float]]
"""Per partition (topic, partition): (bytes written per second, bytes read per second)."""


def broker_traffic(
    placements: Iterable[tuple[tuple[str, int], Sequence[int]]], rates: Rates
) -> tuple[dict[int, float], dict[int, float]]:
    """Bytes in and bytes out per second of each broker holding a replica of ``placements`` ((topic,
    partition), replicas with the leader first)."""
    into: dict[int, float] = {}
    out: dict[int, float] = {}
    for key, replicas in placements:
        if not replicas:
            continue
        write, read = rates.get(key, (0.0, 0.0))
        for b in replicas:
            into[b] = into.get(b, 0.0) + write
        leader = replicas[0]
        out[leader] = out.get(leader, 0.0) + read + write * (len(replicas) - 1)
        for b in replicas[1:]:
            out.setdefault(b, 0.0)
    return into, out


@dataclass(frozen=True)
class TrafficBalance:
    """What the traffic stage did: bytes in and out per second of each chosen broker before the plan (the
    cluster now) and after, the tolerance, and the leaderships and replicas it changed beyond the plan it
    received (``extra_bytes``: what its replica moves copy beyond that plan)."""

    tolerance: float
    brokers: tuple[int, ...]
    in_before: Mapping[int, float]
    in_after: Mapping[int, float]
    out_before: Mapping[int, float]
    out_after: Mapping[int, float]
    leader_moves: int = 0
    replica_moves: int = 0
    extra_bytes: int = 0
    limits: tuple[TrafficLimit, ...] = ()  # why a side ends outside the tolerance (trafficlimits)

    def spread(self, side: str, after: bool = True) -> float:
        """The largest distance of a chosen broker's bytes ``side`` ("in" or "out") from their mean, as a
        share of the mean (0 when the mean is 0)."""
        values = getattr(self, f"{side}_{'after' if after else 'before'}")
        held = [values.get(b, 0.0) for b in self.brokers]
        mean = sum(held) / len(held) if held else 0.0
        return max((abs(v - mean) for v in held), default=0.0) / mean if mean > 0 else 0.0

    @property
    def within(self) -> bool:
        """Every chosen broker's bytes in and out within the tolerance of the mean after the plan."""
        slack = 1e-9
        return self.spread("in") <= self.tolerance + slack and self.spread("out") <= self.tolerance + slack


def known_rates(rates: Rates | None) -> bool:
    """Whether ``rates`` say anything: some partition written or read."""
    return bool(rates) and any(w > 0 or r > 0 for w, r in rates.values())  # type: ignore[union-attr]


def balance_traffic(
    rows: Sequence[Row],
    plan: dict[tuple[str, int], list[int]],
    ctx: BalanceContext,
    rates: Rates,
    tolerance: float = DEFAULT_TRAFFIC_TOLERANCE,
    capacities: Mapping[int, int | None] | None = None,
    other_bytes: Mapping[int, int] | None = None,
    limit: float = 0.8,
    bytes_tolerance: float | None = None,
    held: Collection[int] = (),
) -> TrafficBalance:
    """Brings ``plan`` (changed in place) towards bytes in and out per broker within ``tolerance`` of the
    mean (see the module); ``rows``: the partitions now (topic, partition, current replicas, size);
    ``capacities``, ``other_bytes`` and ``limit`` as for :func:`kreassign.planning.capacity.fit_disk_capacity`;
    ``bytes_tolerance``: the bytes band the moves keep (None: the bytes stage did not run, only the disks
    bound bytes); ``held``: brokers the rack rule holds away from the mean (their bytes are left as they are)."""
    state = _Traffic(sorted(rows), plan, ctx, rates, tolerance, capacities or {}, other_bytes or {}, limit)
    state.freeze_bytes(bytes_tolerance, held)
    state.leaderships()
    state.replicas()
    return state.finish(plan, tolerance, held)


def balance_leadership_traffic(
    rows: Sequence[Row],
    plan: dict[tuple[str, int], list[int]],
    brokers: Sequence[int],
    rates: Rates,
    tolerance: float = DEFAULT_TRAFFIC_TOLERANCE,
) -> TrafficBalance:
    """``--strategy leaders`` with rates: the leadership pass alone on ``plan`` (changed in place; every
    partition keeps its replicas), over ``brokers`` (those holding a replica), leaders per broker kept within
    floor..ceil of the mean or no further out."""
    ctx = make_context([(b, None) for b in brokers], None, rows)
    state = _Traffic(sorted(rows), plan, ctx, rates, tolerance, {}, {}, 1.0)
    state.leaderships()
    return state.finish(plan, tolerance, leaders_only=True)


class _Traffic:
    def __init__(self, rows, plan, ctx, rates, tolerance, capacities, other_bytes, limit) -> None:
        self.ctx = ctx
        self.keys = keys = [(t, p) for t, p, _, _ in rows]
        self.reps = reps = list(map(plan.__getitem__, keys))  # copied when first changed
        self.changed: set[int] = set()
        self.current = currents = list(map(itemgetter(2), rows))
        self.size = sizes = [size or 0 for _, _, _, size in rows]
        zero = (0.0, 0.0)
        pairs = list(map(rates.get, keys, repeat(zero)))
        self.write = writes = list(map(itemgetter(0), pairs))
        # bytes out of each partition's leader: its reads and the replication to its followers (the replication
        # factor of a partition does not change here)
        self.loads = loads = [
            r + w * (len(replicas) - 1) if replicas else 0.0 for (w, r), replicas in zip(pairs, reps, strict=True)
        ]
        self.load = loads.__getitem__
        self.leader_of = [replicas[0] if replicas else None for replicas in reps]  # kept with reps
        brokers = ctx.brokers
        self.group = {b: ctx.group(b) for b in brokers}
        self.led: dict[int, set[int]] = {b: set() for b in brokers}
        self.on: dict[int, set[int]] = {b: set() for b in brokers}
        into = dict.fromkeys(brokers, 0.0)
        out = dict.fromkeys(brokers, 0.0)
        add_on = {b: items.add for b, items in self.on.items()}
        add_led = {b: items.add for b, items in self.led.items()}
        for pid, (replicas, w, load) in enumerate(zip(reps, writes, loads, strict=True)):
            if not replicas:
                continue
            for b in replicas:
                add_on[b](pid)
                into[b] += w
            leader = replicas[0]
            add_led[leader](pid)
            out[leader] += load
        # bytes are whole numbers: their sum does not depend on the order
        held = {b: sum(map(sizes.__getitem__, items)) for b, items in self.on.items()}
        self.into, self.out, self.bytes = into, out, held
        # the cluster now (current replicas, the first leads), for the report
        holders = sorted(set(chain.from_iterable(currents)))
        self.in_before = in_before = dict.fromkeys(holders, 0.0)
        self.out_before = out_before = dict.fromkeys(holders, 0.0)
        for current, w, (_, r) in zip(currents, writes, pairs, strict=True):
            if current:
                for b in current:
                    in_before[b] += w
                out_before[current[0]] += r + w * (len(current) - 1)
        partitions = sum(map(bool, reps))
        self.lfloor, extra = divmod(partitions, len(brokers))
        self.lceil = self.lfloor + (1 if extra else 0)
        n = len(brokers)
        mean_in, mean_out = sum(self.into.values()) / n, sum(self.out.values()) / n
        self.mean = {"in": mean_in, "out": mean_out}
        # the search aims at a band narrower by SEARCH_MARGIN of the tolerance each side, so that brokers it
        # brings to the edge leave room for the moves of the others
        aim = tolerance * (1 - SEARCH_MARGIN)
        self.band = {side: (m * (1 - aim), m * (1 + aim)) for side, m in self.mean.items()}
        self.bounds: dict[int, float] = {}
        if any(capacities.get(b) for b in brokers):
            used_before: dict[int, int] = dict(other_bytes)
            for pid, current in enumerate(currents):
                for b in current:
                    used_before[b] = used_before.get(b, 0) + self.size[pid]
            self.bounds = disk_bounds(used_before, capacities, brokers, limit)
        self.used = {b: self.bytes[b] + other_bytes.get(b, 0) for b in brokers}
        self.frozen: set[int] = set()
        self.byte_band: tuple[int, int] | None = None
        self.work = 0
        self.leader_moves = self.replica_moves = self.extra_bytes = 0
        self.by_size: dict[int, list[tuple[int, int]]] = {}
        self.top_led: dict[int, list[int]] = {}
        self.followed: dict[int, dict[int, list[int]]] = {}

    def freeze_bytes(self, tolerance: float | None, held: Collection[int]) -> None:
        """The bytes band the replica moves keep; brokers outside it, or held by the racks, keep their bytes."""
        self.frozen = set(held).intersection(self.bytes)
        if tolerance is None:
            return
        free = [b for b in self.ctx.brokers if b not in self.frozen] or list(self.ctx.brokers)
        _, low, high = band_of(sum(self.bytes[b] for b in free), len(free), tolerance)
        self.byte_band = (low, high)
        self.frozen.update(b for b in self.ctx.brokers if not low <= self.bytes[b] <= high)

    # ------------------------------------------------------------------------------------------ measure
    def off(self, side: str, value: float) -> float:
        """How far ``value`` is outside the band of ``side``, over the mean."""
        low, high = self.band[side]
        mean = self.mean[side]
        if not mean:
            return 0.0
        return (value - high if value > high else low - value if value < low else 0.0) / mean

    def violation(self, side: str, b: int) -> float:
        return self.off(side, (self.into if side == "in" else self.out)[b])

    def gain(self, d_in: Mapping[int, float], d_out: Mapping[int, float]) -> float:
        """How much the changes of bytes in and out (per broker) lower the violation."""
        into, out, off = self.into, self.out, self.off
        gained = 0.0
        for b, d in d_in.items():
            if d:
                gained += off("in", into[b]) - off("in", into[b] + d)
        for b, d in d_out.items():
            if d:
                gained += off("out", out[b]) - off("out", out[b] + d)
        return gained

    def queue(self, side: str) -> list[tuple[float, int]]:
        """The brokers outside the band of ``side``, as a heap of (-violation, broker)."""
        heap = [(-v, b) for b in self.ctx.brokers if (v := self.violation(side, b)) > 0]
        heapq.heapify(heap)
        return heap

    def pop(self, side: str, heap: list[tuple[float, int]], skip: Collection[int]) -> int | None:
        """The broker furthest outside the band of ``side`` (the lowest id on a tie) not in ``skip``; entries
        made stale by moves are dropped or pushed again with their violation now."""
        while heap:
            negative, b = heapq.heappop(heap)
            if b in skip:
                continue
            v = self.violation(side, b)
            if v <= 0:
                continue
            if v != -negative:
                heapq.heappush(heap, (-v, b))
                continue
            return b
        return None

    def requeue(self, heap: list[tuple[float, int]], side: str, brokers: Iterable[int], stuck: set[int]) -> None:
        """Brokers a move changed: tried again (no longer stuck) when still outside the band."""
        for b in brokers:
            stuck.discard(b)
            v = self.violation(side, b)
            if v > 0:
                heapq.heappush(heap, (-v, b))

    # ------------------------------------------------------------------------------------------ leaderships
    def leaderships(self) -> None:
        """Leadership cycles that copy nothing, while one lowers the violation of bytes out."""
        stuck: set[int] = set()
        heap = self.queue("out")
        while self.work < WORK_LIMIT:
            b = self.pop("out", heap, stuck)
            if b is None:
                return
            heavy = self.out[b] > self.band["out"][1]
            best: tuple[float, list[tuple[int, int, int]]] | None = None
            gap = abs(self.out[b] - self.mean["out"])
            if heavy:
                tried = self._tried(sorted(self.led[b]), gap, self._top_led(b)[:LEADERS_TRIED])
                options = [(p, b, f) for p in tried for f in self.reps[p][1:]]
            else:
                tried = self._tried(sorted(self.on[b] - self.led[b]), gap)
                options = [(p, self.reps[p][0], b) for p in tried]
            out, loads, off = self.out, self.loads, self.off
            for p, giver, taker in options:
                for cycle in self._cycles(p, giver, taker):
                    self.work += 1
                    d_out: dict[int, float] = {}
                    for pid, src, dst in cycle:
                        load = loads[pid]
                        d_out[src] = d_out.get(src, 0.0) - load
                        d_out[dst] = d_out.get(dst, 0.0) + load
                    gained = 0.0  # self.gain({}, d_out), inline: the same sum in the same order
                    for c, d in d_out.items():
                        if d:
                            gained += off("out", out[c]) - off("out", out[c] + d)
                    if gained > 1e-12 and (best is None or gained > best[0]):
                        best = (gained, cycle)
            if best is None:
                stuck.add(b)
                continue
            for pid, src, dst in best[1]:
                self._hand_over(pid, src, dst)
            self.requeue(heap, "out", {c for _, src, dst in best[1] for c in (src, dst)}, stuck)

    def _top_led(self, b: int) -> list[int]:
        """The partitions b leads, the most traffic first (kept until a leadership of b changes)."""
        top = self.top_led.get(b)
        if top is None:
            # by load, the highest first; the sort is stable, so ties stay by id
            top = self.top_led[b] = sorted(sorted(self.led[b]), key=self.load, reverse=True)
        return top

    def _top_key(self, pid: int) -> tuple[float, int]:
        """The order of :meth:`_top_led`: the most traffic first, the lowest id on a tie."""
        return -self.loads[pid], pid

    def _followed(self, b: int) -> dict[int, list[int]]:
        """The partitions b follows by their leader (kept until one of them changes)."""
        by_leader = self.followed.get(b)
        if by_leader is None:
            by_leader = self.followed[b] = {}
            found_of = by_leader.get
            followed = sorted(self.on[b] - self.led[b])
            for s, leader in zip(followed, map(self.leader_of.__getitem__, followed), strict=True):
                found = found_of(leader)
                if found is None:
                    by_leader[leader] = [s]
                else:
                    found.append(s)
        return by_leader

    def _touched(self, pid: int, *brokers: int) -> None:
        """Forget what the caches hold of pid's replicas and of ``brokers``."""
        for b in (*self.reps[pid], *brokers):
            self.top_led.pop(b, None)
            self.followed.pop(b, None)

    def _tried(self, pids: list[int], gap: float, top: list[int] | None = None) -> list[int]:
        """The partitions a step tries: the :data:`LEADERS_TRIED` with the most traffic (``top``, when known),
        and as many whose leader load is nearest to ``gap`` (what would bring the broker to the mean)."""
        load = self.load
        tried = heapq.nlargest(LEADERS_TRIED, pids, key=load) if top is None else top
        distance = [abs(x - gap) for x in map(load, pids)]
        near = [pids[i] for i in heapq.nsmallest(LEADERS_TRIED, range(len(pids)), key=distance.__getitem__)]
        return tried + [p for p in near if p not in tried]

    def _cycles(self, p: int, giver: int, taker: int) -> Iterable[list[tuple[int, int, int]]]:
        """Leadership changes that start with p from ``giver`` to ``taker`` (a follower of p) and keep every
        broker's leaders within floor..ceil: alone when the counts allow, else with one back from the taker to
        the giver, or from the taker to a third broker and from it to the giver (of the taker's, the
        :data:`CYCLES_TRIED` with the most traffic; of the third broker's, the :data:`CYCLE_RETURNS` with the
        least)."""
        lead = self.led
        if range_ok(len(lead[giver]), len(lead[giver]) - 1, self.lfloor, self.lceil) and range_ok(
            len(lead[taker]), len(lead[taker]) + 1, self.lfloor, self.lceil
        ):
            yield [(p, giver, taker)]
        by_leader = self._followed(giver)
        for q in self._top_led(taker)[:CYCLES_TRIED]:
            if q == p:
                continue
            followers = self.reps[q][1:]
            if giver in followers:
                yield [(p, giver, taker), (q, taker, giver)]
            for h in followers:
                if h != giver:
                    returns = by_leader.get(h, ())
                    if len(returns) > CYCLE_RETURNS:  # the least traffic first
                        returns = sorted(returns, key=lambda s: (self.loads[s], s))[:CYCLE_RETURNS]
                    for s in returns:
                        if s != p:
                            yield [(p, giver, taker), (q, taker, h), (s, h, giver)]

    def _replicas_of(self, pid: int) -> list[int]:
        if pid not in self.changed:
            self.changed.add(pid)
            self.reps[pid] = list(self.reps[pid])
        return self.reps[pid]

    def _hand_over(self, pid: int, src: int, dst: int) -> None:
        replicas = self._replicas_of(pid)
        load = self.load(pid)
        replicas.remove(dst)
        replicas.insert(0, dst)
        self.leader_of[pid] = dst
        # the caches follow the change: src leads pid no more, dst leads it; each follower's index by leader
        # moves pid from src to dst (src follows it now, dst no longer does)
        top = self.top_led.get(src)
        if top is not None:
            top.remove(pid)
        top = self.top_led.get(dst)
        if top is not None:
            bisect.insort(top, pid, key=self._top_key)
        followed = self.followed
        for f in replicas:
            by_leader = followed.get(f)
            if by_leader is None:
                continue
            if f != src:
                by_leader[src].remove(pid)
            if f != dst:
                bisect.insort(by_leader.setdefault(dst, []), pid)
        self.led[src].discard(pid)
        self.led[dst].add(pid)
        self.out[src] -= load
        self.out[dst] += load
        self.leader_moves += 1

    # ------------------------------------------------------------------------------------------ replicas
    def replicas(self) -> None:
        """Swaps of replicas that lower the violation (bytes in, then out), the most per byte copied first."""
        for side in ("in", "out"):
            stuck: set[int] = set(self.frozen)
            heap = self.queue(side)
            rate = self.write.__getitem__ if side == "in" else self.load
            values = self.into if side == "in" else self.out
            while self.work < WORK_LIMIT:
                b = self.pop(side, heap, stuck)
                if b is None:
                    break
                heavy = values[b] > self.band[side][1]
                partners = self._partners(side, b, heavy, stuck)
                if heavy:
                    xs = heapq.nlargest(REPLICAS_TRIED, sorted(self.on[b]), key=rate)
                    pairs = [(b, x, c) for x in xs for c in partners]
                else:
                    pairs = []
                    for c in partners:
                        xs = heapq.nlargest(REPLICAS_TRIED, sorted(self.on[c]), key=rate)
                        pairs += [(c, x, b) for x in xs]
                best = None
                for a, x, c in pairs:
                    found = self._swap(a, x, c)
                    if found is not None and (best is None or found[0] > best[0]):
                        best = found
                if best is None:
                    stuck.add(b)
                    continue
                _, a, x, c, y = best
                self._apply_swap(a, x, c, y)
                self.requeue(heap, side, (a, c), stuck)

    def _partners(self, side: str, b: int, heavy: bool, stuck: set[int]) -> list[int]:
        values = self.into if side == "in" else self.out
        others = [c for c in self.ctx.brokers if c != b and c not in stuck and c not in self.frozen]
        pick = heapq.nsmallest if heavy else heapq.nlargest
        # the lowest id on a tie: ``others`` are in id order (the context's), and both keep the first on a tie
        return pick(PARTNERS_TRIED, others, key=values.__getitem__)

    def _sized(self, b: int) -> list[tuple[int, int]]:
        items = self.by_size.get(b)
        if items is None:
            items = self.by_size[b] = sorted((self.size[pid], pid) for pid in self.on[b])
        return items

    def _swap(self, a: int, x: int, c: int):
        """The best swap of x (on a) with a replica of c near it in size: (rank, a, x, c, y), or None."""
        from kreassign.planning.planstate import nearest

        if c in self.reps[x] or not self._fits(x, a, c):
            return None
        best = None
        for _, y in nearest(self._sized(c), self.size[x], SIZES_TRIED):
            self.work += 1
            if a in self.reps[y] or not self._fits(y, c, a):
                continue
            found = self._evaluate(a, x, c, y)
            if found is not None and (best is None or found > best[0]):
                best = (found, a, x, c, y)
        return best

    def _fits(self, pid: int, src: int, dst: int) -> bool:
        """May pid's replica on src go to dst (the rack rule)?"""
        replicas = self.reps[pid]
        rack = self.group[dst]
        same = sum(1 for b in replicas if b != src and self.group[b] == rack)
        return same < self.ctx.rack_cap(len(replicas))

    def _evaluate(self, a: int, x: int, c: int, y: int):
        """Rank of swapping x (a -> c) with y (c -> a), or None when a rule forbids it or it gains nothing."""
        leads_x, leads_y = self.reps[x][0] == a, self.reps[y][0] == c
        if leads_x != leads_y:
            shift = 1 if leads_x else -1  # leaderships a gives c
            la, lc = len(self.led[a]), len(self.led[c])
            if not (
                range_ok(la, la - shift, self.lfloor, self.lceil) and range_ok(lc, lc + shift, self.lfloor, self.lceil)
            ):
                return None
        d = self.size[x] - self.size[y]  # bytes a gives c
        if d:
            if self.byte_band is not None:
                low, high = self.byte_band
                if not (low <= self.bytes[a] - d <= high and low <= self.bytes[c] + d <= high):
                    return None
            receiver = c if d > 0 else a
            bound = self.bounds.get(receiver)
            if bound is not None and self.used[receiver] + abs(d) > bound:
                return None
        dw = self.write[x] - self.write[y]
        d_out = {a: 0.0, c: 0.0}
        if leads_x:
            d_out[a] -= self.load(x)
            d_out[c] += self.load(x)
        if leads_y:
            d_out[c] -= self.load(y)
            d_out[a] += self.load(y)
        gained = self.gain({a: -dw, c: dw}, d_out)
        if gained <= 1e-12:
            return None
        price = self._price(x, a, c) + self._price(y, c, a)
        # free moves first (by what they gain), then the most gained per byte copied
        return (1, gained, -price, -x, -y) if price <= 0 else (0, gained / price, -price, -x, -y)

    def _price(self, pid: int, src: int, dst: int) -> int:
        """Bytes copied beyond the plan when pid's replica goes from src to dst."""
        current = self.current[pid]
        return ((dst not in current) - (src not in current)) * self.size[pid]

    def _apply_swap(self, a: int, x: int, c: int, y: int) -> None:
        for pid, src, dst in ((x, a, c), (y, c, a)):
            self.extra_bytes += self._price(pid, src, dst)
            replicas = self._replicas_of(pid)
            leads = replicas[0] == src
            self._touched(pid, src, dst)
            replicas[replicas.index(src)] = dst
            if leads:
                self.leader_of[pid] = dst
            self._touched(pid)
            self.on[src].discard(pid)
            self.on[dst].add(pid)
            size = self.size[pid]
            for b, sign in ((src, -1), (dst, 1)):
                self.bytes[b] += sign * size
                self.used[b] += sign * size
                self.into[b] += sign * self.write[pid]
                items = self.by_size.get(b)
                if items is not None:
                    if sign < 0:
                        del items[bisect.bisect_left(items, (size, pid))]
                    else:
                        bisect.insort(items, (size, pid))
            if leads:
                load = self.load(pid)
                self.led[src].discard(pid)
                self.led[dst].add(pid)
                self.out[src] -= load
                self.out[dst] += load
            self.replica_moves += 1

    def finish(
        self,
        plan: dict[tuple[str, int], list[int]],
        tolerance: float,
        held: Collection[int] = (),
        leaders_only: bool = False,
    ) -> TrafficBalance:
        """Writes the changed partitions back into ``plan``; what the stage did, and why a side ends outside the
        tolerance (``held``: the brokers the rack rule holds; ``leaders_only``: no replica moves)."""
        for pid in sorted(self.changed):
            plan[self.keys[pid]] = list(self.reps[pid])
        limits = traffic_limits(
            self.ctx.brokers,
            {"in": self.into, "out": self.out},
            {"in": self.write, "out": self.loads},
            {"in": [len(replicas) for replicas in self.reps], "out": [1 if r else 0 for r in self.reps]},
            tolerance,
            held,
            leaders_only,
        )
        return TrafficBalance(
            tolerance,
            tuple(self.ctx.brokers),
            self.in_before,
            dict(self.into),  # the plan places replicas on chosen brokers only
            self.out_before,
            dict(self.out),
            self.leader_moves,
            self.replica_moves,
            self.extra_bytes,
            limits,
        )
