"""Bytes per broker within a band around the mean, at the fewest bytes copied (``--bytes-tolerance``, 5 % by
default). Standard library only.

The balanced pipeline (:mod:`kreassign.planning.balanced`) moves the fewest replicas and spends its free
choices on each topic's balance, then on bytes; the bytes per broker it leaves can be far from even (on 100,000
partitions of log-normal sizes, 0.69 to 1.97 of the mean). This stage runs after it and after the disk stage
(:mod:`kreassign.planning.capacity`), on the driver, on the finished plan of either engine (so the plans stay
byte-identical across engines), and before ``--move-budget``. It changes the plan in place, one move at a time
(:class:`kreassign.planning.planstate.PlanState`: a replica from a heavier to a lighter broker, alone when the
replica counts allow it, else swapped with a smaller one), and every move keeps every rule of the plan: the rack
rule, replicas and leaders per broker within floor..ceil of the mean, each topic's replicas and leaders on the
two brokers no further apart (no topic's spread grows), the two brokers' bytes closer, the disk bound.

**First, each topic**: its replicas and leaders evened out by swaps that move no more replicas (the topic levels
of :mod:`kreassign.planning.budget` at a budget of 0, on the same indexes): a replica the plan moves from A to B
comes back, one of A's own goes instead. Each topic's evenness ranks above the bytes copied.

**The goal**: every chosen broker's bytes within ``mean * (1 - tolerance)`` .. ``mean * (1 + tolerance)``.
The *violation* of a plan is the sum over brokers of how far each is outside that band; a move is taken only
when it lowers the violation. **The cost** is the bytes copied: a replica moved to a broker that does not hold
it now costs its size, one moved on from a broker the plan moves it to costs nothing, one moved back to a
broker that holds it now gives its size back. Among the moves of a step, the one with the best violation
removed minus half its cost wins (a move that removes as much violation as it copies is still worth taking
when no cheaper one is left: a broker above the band whose partner is inside it), the cheaper on a tie.

**A step** takes the broker furthest outside the band, and tries it against the :data:`PARTNERS_TRIED`
brokers furthest on the other side of the mean: for the transfer that brings both into the band with the fewest
bytes, the replicas of the heavier one nearest in size (those the plan moves there first: moving them on is
free), each against the lighter one's replicas in the size window that keeps the pair's order (those the plan
moved from the heavier one first: moving them back pays, then those the plan moves there, then any). A broker
no move helps is passed over for the next one (and tried again once other moves were made). The search aims at
a band narrowed by a fortieth of its width each side, so that a later move cannot nudge a broker it brought to
the edge back out. Bounded: :data:`WORK_LIMIT` candidates in all.

**A second pass**, only when a broker is still outside the real band (small clusters of few, large
partitions, or a large cluster's scope): the same search on the real band, against
:data:`COSTLY_PARTNERS_TRIED` brokers, taking any move that brings it closer whatever it copies, and
a move the leaders' rule blocks when a leadership handed over within a partition keeps the rule
(:meth:`_Search.handover`). Plans that end inside the band after the first pass are what they were.

A broker can stay outside the band: one replica larger than the band (a partition of 30 % of the mean), or no
move within the rules. :class:`ByteBand` names those brokers and why, for the plan report.

**On a large cluster** the stage looks at a scope of whole topics, the least even first, and counts the
others through their totals per broker (:mod:`kreassign.planning.scope`): the stage indexes only the scope,
and the Spark engine's driver holds only the scope's partitions and those totals.

Deterministic: brokers by bytes then id, replicas by size then number; nothing depends on the order of ``rows``
or ``plan``.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kreassign.planning.budget import TopicState
from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.planstate import MoveBudget, PlanState, Rest, count_spread, nearest, range_ok
from kreassign.planning.scope import narrow

DEFAULT_TOLERANCE = 0.05
"""``--bytes-tolerance``'s default: 5 % of the mean bytes per broker either way."""
LARGE_SHARE = 0.05
"""A replica larger than this share of the mean bytes per broker may keep its broker outside the band."""
PARTNERS_TRIED = 3
"""Brokers on the other side of the mean one step tries, furthest first."""
COSTLY_PARTNERS_TRIED = 12
"""The same in the second pass (:meth:`_Search.run`)."""
SIZES_TRIED = 6
"""Replicas of the giving broker one pair tries per pool, nearest to the wanted size first."""
HANDOVER_TRIED = 24
"""Leadership changes one move that would break the leaders' rule tries to go with it (:meth:`_Search.handover`)."""
PARTNERS_PER_SIZE = 2
"""Replicas of the receiving broker tried per replica leaving, per pool, nearest to the wanted size first."""
LADDER = 1
"""Sizes of the ladder above the wanted one a pair tries (8 times it; more rungs found nothing more on the
benchmark and cost time)."""
WORK_LIMIT = 3_000_000
"""Candidates the stage looks at, all its steps together."""


@dataclass(frozen=True)
class OutsideBand:
    """A broker the plan leaves outside the band: its bytes, its largest replica, and why it stays there:
    ``"large replica"`` (it holds a replica larger than :data:`LARGE_SHARE` of the mean) or ``"no move"`` (no
    move within the rules brings it closer)."""

    broker: int
    bytes: int
    largest: int
    reason: str


@dataclass(frozen=True)
class ByteBand:
    """What the stage did: the band (``low``..``high`` bytes, ``tolerance`` of ``mean``), the replicas it moved
    (a swap moves two), the bytes it copied beyond the plan it received (below 0 when it moved more back than
    away), and the brokers it left outside the band."""

    tolerance: float
    mean: float
    low: int
    high: int
    replica_moves: int
    extra_bytes: int
    outside: tuple[OutsideBand, ...]
    topic_moves: int = 0  # of replica_moves, those of the topic pass (swaps that move no more replicas)
    leader_moves: int = 0  # leaderships the topic pass changed without moving a replica


def band_of(total: int, brokers: int, tolerance: float) -> tuple[float, int, int]:
    """(mean, low, high) of the band for ``total`` bytes over ``brokers``."""
    mean = total / brokers if brokers else 0.0
    return mean, int(mean * (1 - tolerance)), int(mean * (1 + tolerance)) + 1


def unchanged_band(held: Mapping[int, int], brokers: Sequence[int], tolerance: float) -> ByteBand:
    """The stage's report for a plan it leaves as it is: every broker of ``brokers`` inside the band of
    ``held`` (their bytes after the plan)."""
    mean, low, high = band_of(sum(held.get(b, 0) for b in brokers), len(brokers), tolerance)
    return ByteBand(tolerance, mean, low, high, 0, 0, ())


def balance_bytes(
    rows: Sequence[Row],
    plan: dict[tuple[str, int], list[int]],
    ctx: BalanceContext,
    tolerance: float = DEFAULT_TOLERANCE,
    capacities: Mapping[int, int | None] | None = None,
    other_bytes: Mapping[int, int] | None = None,
    limit: float = 0.8,
    rest: Rest | None = None,
    held: Collection[int] = (),
) -> ByteBand:
    """Brings ``plan`` (changed in place) within the band; ``rows``: the partitions as they are now (topic,
    partition, current replicas, size); ``capacities``, ``other_bytes`` and ``limit`` as for
    :func:`kreassign.planning.capacity.fit_disk_capacity`. The stage looks at the topics of its scope
    (:mod:`kreassign.planning.scope`); ``rest``: given when ``rows`` are those topics' already, what the others
    add up to. ``held``: the brokers of the racks the rack rule holds away from the mean
    (:meth:`kreassign.planning.context.BalanceContext.rack_holds`): no move of bytes within the rule changes
    what they hold much, so the band is that of the other brokers, and they are named outside it, for that
    reason ("rack rule")."""
    if rest is None and (narrowed := narrow(rows, plan, ctx.brokers)) is not None:
        rows, rest = narrowed
    # First each topic's replicas and leaders evened out by swaps that move no more replicas (the budget's
    # first two levels with a budget of 0: a replica the plan moves from A to B comes back, one of A's own goes
    # to B instead), then bytes, in the same indexes.
    state = TopicState(rows, plan, ctx, MoveBudget(0), capacities or {}, other_bytes or {}, limit, rest)
    state.improve_topic_replicas()
    state.improve_topic_leaders()
    topic_moves, leader_moves = state.replica_moves, state.leader_moves
    state.budget, state.in_bytes, state.spent = MoveBudget(sys.maxsize, "bytes"), True, 0
    skip = frozenset(held).intersection(ctx.brokers)
    free = [b for b in ctx.brokers if b not in skip] if skip else list(ctx.brokers)
    # the band of the brokers the racks leave free, then, in each rack the rule holds, that of its brokers
    groups = [free] if free else []
    for rack in sorted({ctx.group(b) for b in skip}):
        groups.append([b for b in ctx.brokers if b in skip and ctx.group(b) == rack])
    for group in groups:
        mean, low, high = band_of(sum(state.bytes[b] for b in group), len(group), tolerance)
        if any(state.size) and len(group) > 1:
            _Search(state, low, high, mean, frozenset(ctx.brokers).difference(group) if skip else skip).run()
    shown = free or list(ctx.brokers)  # the band reported: the free brokers' (all, when racks hold every one)
    mean, low, high = band_of(sum(state.bytes[b] for b in shown), len(shown), tolerance)
    state.store(plan)
    outside = []
    for b in ctx.brokers:
        on = state.bytes[b]
        if low <= on <= high and b not in skip:
            continue
        largest = max(max((state.size[p] for p in state.on[b]), default=0), state.rest.largest.get(b, 0))
        reason = "rack rule" if b in skip else "large replica" if largest > LARGE_SHARE * mean else "no move"
        outside.append(OutsideBand(b, on, largest, reason))
    return ByteBand(
        tolerance,
        mean,
        low,
        high,
        state.replica_moves,
        state.extra_bytes,
        tuple(outside),
        topic_moves,
        leader_moves,
    )


class _Search:
    def __init__(self, state: PlanState, low: int, high: int, mean: float, skip: frozenset[int] = frozenset()) -> None:
        # The search aims at a band narrower by a fortieth of its width each side, so that a broker it brings
        # to the edge of that band is still inside the real one after a later move nudges it.
        self.margin = (high - low) // 40
        self.state, self.low, self.high, self.mean = state, low + self.margin, high - self.margin, mean
        self.band = (low, high)
        self.work = 0
        self.skip = skip  # brokers the search leaves alone (held by the rack rule)

    def off(self, held: int) -> int:
        """How far ``held`` bytes are outside the band."""
        return held - self.high if held > self.high else (self.low - held if held < self.low else 0)

    def run(self) -> None:
        """The moves that copy at most twice what they bring into the band; then, only for brokers still
        outside (small clusters of few, large partitions, a large cluster's scope), any move that brings them
        closer, whatever it copies, against more partners, and moves that keep the leaders' rule only with a
        leadership handed over (:meth:`handover`)."""
        self.costly, self.partners = False, PARTNERS_TRIED
        self.search()
        low, high = self.band
        searched = [held for held, b in self.state.by_bytes if b not in self.skip]
        if searched and not low <= searched[0] <= searched[-1] <= high:
            # the real band now (no margin): no costly move for a broker inside it
            self.costly, self.low, self.high, self.margin = True, low, high, 0
            self.partners = COSTLY_PARTNERS_TRIED
            self.search()

    def search(self) -> None:
        state, mean = self.state, self.mean
        stuck: set[int] = set(self.skip)
        moved_since = False  # a move since the last time every broker outside the band was stuck
        version: dict[int, int] = {}  # per broker, the moves it took part in
        failed: dict[int, tuple[tuple[int, int], ...]] = {}  # per broker, itself and its partners when it last failed
        while self.work < WORK_LIMIT:
            by_bytes = state.by_bytes
            heavy = next((item for item in reversed(by_bytes) if item[1] not in stuck), None)
            light = next((item for item in by_bytes if item[1] not in stuck), None)
            over = self.off(heavy[0]) if heavy is not None and heavy[0] > self.high else 0
            under = self.off(light[0]) if light is not None and light[0] < self.low else 0
            if not over and not under:
                if len(stuck) <= len(self.skip) or not moved_since:  # none stuck but the skipped
                    return
                stuck = set(self.skip)  # moves since they were stuck may have opened one: another try each
                moved_since = False
                continue
            if over >= under:
                target = heavy[1]  # type: ignore[index]
                partners = [b for held, b in self._ends(by_bytes) if held < mean]
                pairs = [(target, b) for b in partners]
            else:
                target = light[1]  # type: ignore[index]
                partners = [b for held, b in reversed(self._ends(by_bytes, last=True)) if held > mean]
                pairs = [(a, target) for a in partners]
            signature = tuple((x, version.get(x, 0)) for x in (target, *partners))
            if failed.get(target) == signature:  # nothing it or its partners hold changed since it found no move
                stuck.add(target)
                continue
            best = None
            for a, b in pairs:
                found = self.pair(a, b, None if best is None else best[0])
                if found is not None:
                    best = found
                    if found[5]:
                        break  # all of the pair's violation removed, copying at most the bytes it transfers
            if best is None:
                stuck.add(target)
                failed[target] = signature
                continue
            _, a, b, xs, ys, _, handover = best
            state.apply(a, b, xs, ys)
            for pid, src, dst in handover or ():
                state.transfer_leadership(pid, src, dst)
            version[a] = version.get(a, 0) + 1
            version[b] = version.get(b, 0) + 1
            moved_since = True

    def _ends(self, by_bytes: list[tuple[int, int]], last: bool = False) -> list[tuple[int, int]]:
        """The :attr:`partners` lightest (``last``: heaviest) brokers of ``by_bytes`` the search looks at."""
        if not self.skip:
            return by_bytes[-self.partners :] if last else by_bytes[: self.partners]
        ordered = reversed(by_bytes) if last else iter(by_bytes)
        ends = [item for item in ordered if item[1] not in self.skip][: self.partners]
        return ends[::-1] if last else ends

    def handover(self, a: int, b: int, x: int, ys: Sequence[int]) -> list[tuple[int, int, int]] | None:
        """For a move that keeps every rule but the leaders' (a partition ``g`` leads goes to ``r``, which leads
        it then): leaderships changed with it, within partitions, so that leaders per broker stay within
        floor..ceil and no topic's leaders end wider apart: another replica of that partition leads it instead
        of ``r``, or ``g`` gets the leadership of a partition it is a follower of after the move, or both (the
        fewest changes first). A list of (partition, from, to) to make after the move, or None."""
        state = self.state
        reps, lead, lfloor, lceil = state.reps, state.lead, state.lfloor, state.lceil
        y = ys[0] if ys else None
        lr = (reps[x][0] == a) - (y is not None and reps[y][0] == b)
        if not lr:
            return None  # no leadership changes hands: a topic's leaders are what stops it
        # g gives up the leadership of `moving` to r; it joins `joined` as a follower
        g, r, moving, joined = (a, b, x, y) if lr > 0 else (b, a, y, x)
        assert moving is not None
        leaders = [r, *sorted((e for e in reps[moving] if e != g), key=lambda e: (lead[e], e))]
        givers = [None] if joined is None else [None, joined]
        givers += sorted(z for z in state.on[g] if z != moving and z != joined and reps[z][0] != g)
        tried = 0
        for changes in (1, 2):
            for e in leaders:
                for z in givers:
                    if (e != r) + (z is not None) != changes:
                        continue
                    tried += 1
                    if tried > HANDOVER_TRIED:
                        return None
                    net = {g: -1, r: 1}
                    shifts = [(state.topic[moving], g, r)]
                    if e != r:
                        net[r] -= 1
                        net[e] = net.get(e, 0) + 1
                        shifts.append((state.topic[moving], r, e))
                    if z is not None:
                        d = reps[z][0]
                        net[d] = net.get(d, 0) - 1
                        net[g] += 1
                        shifts.append((state.topic[z], d, g))
                    if all(range_ok(lead[c], lead[c] + n, lfloor, lceil) for c, n in net.items() if n) and (
                        _leaders_spread_ok(state, shifts)
                    ):
                        moves = [(moving, r, e)] if e != r else []
                        return moves + ([(z, reps[z][0], g)] if z is not None else [])
        return None

    def pair(self, a: int, b: int, beat: tuple[int, int, int, int] | None = None):
        """The best move from the heavier ``a`` to the lighter ``b``: (rank, a, b, xs, ys, whole, handover), or
        None (``handover``: the leadership that goes with it, :meth:`handover`);
        ``whole``: it ends both inside the band and copies no more than it transfers (no partner does better).
        ``beat``: the rank of the best move of another pair; only a better one is looked for."""
        state = self.state
        held_a, held_b = state.bytes[a], state.bytes[b]
        gap = held_a - held_b
        if gap <= 1:
            return None
        low, high, margin = self.low, self.high, self.margin
        before = self.off(held_a) + self.off(held_b)
        t_low = max(held_a - high, low - held_b, 1)  # the least that ends both inside
        t_high = min(held_a - low, high - held_b)  # the most
        want = t_low if t_low <= t_high else gap // 2
        least = max(held_a - high - margin, low - margin - held_b, 1)  # at the band's very edge
        single = state.count[a] > state.floor and state.count[b] < state.ceil
        size, current = state.size, state.current
        undo = sorted((size[y], y) for y in state.undo.get(a, {}).get(b, ()))
        # the partners: those the plan moved from a first (moving them back pays), then those it moves to b
        # (free), then any; an empty pool has none to offer
        y_pools = [undo] if undo else []
        if len(undo) < len(state.fresh[b]):
            y_pools.append(state.sized(b, fresh=True))
        if len(state.fresh[b]) < len(state.on[b]):
            y_pools.append(state.sized(b))
        refund = undo[-1][0] if undo else 0  # the most a partner can pay back (only one moving back pays)
        # The most a move ranks (2 * removed - price) is below 2 * before + refund, and with a replica x that
        # copies its size, 2 * min(before, 2 * size_x) - size_x + refund (it removes at most the pair's violation,
        # and at most twice what it transfers), below 3 * before / 2 + refund. A replica the plan moves from b to
        # a pays its size back moving back: no bound then.
        returns = bool(state.undo.get(b, {}).get(a))
        ceilings = (None if returns else 2 * before + refund, 3 * before // 2 + refund)
        seen: set[int] = set()
        tried: set[tuple[int, tuple[int, ...]]] = set()
        best = None
        work = 0
        for fresh, ceiling in zip((True, False), ceilings, strict=True):
            # those the plan moves to a first: moving them on copies nothing more
            ranked: list[tuple[tuple[int, int, int, int], int, tuple[int, ...], bool]] = []
            # only a move ranked above this one counts: the other pair's best, or this pair's
            bar = beat if best is None else best[0]
            if bar is not None and ceiling is not None and ceiling < bar[0]:
                continue  # no replica of this pool can do better
            if not fresh and len(state.fresh[a]) == len(state.on[a]):
                break  # the plan moves every replica of a there (a broker just added): all were looked at
            for size_x, x in _candidates(state.sized(a, fresh=fresh), want, least):
                work += 1
                if x in seen:
                    continue
                seen.add(x)
                holders = current[x]
                price_x = ((b not in holders) - (a not in holders)) * size_x  # state.price(x, a, b)
                # a move removes at most the pair's violation, and at most twice what it transfers (less than x)
                if bar is not None and 2 * min(before, 2 * size_x) - price_x + min(refund, size_x - 1) < bar[0]:
                    continue  # with x, no move ranks above the bar, whatever the partner
                options = [(0, -1)] if single and size_x < gap else []  # (size, partition) of the partner; -1: none
                low_y, high_y = size_x - gap + 1, size_x - 1  # the partner's sizes that keep the pair's order
                for pool in y_pools:
                    if pool[0][0] <= high_y and pool[-1][0] >= low_y:  # (often none is: no call)
                        options += nearest(pool, size_x - want, PARTNERS_PER_SIZE, low_y, high_y)
                for size_y, y in options:
                    moved = size_x - size_y
                    new_a, new_b = held_a - moved, held_b + moved
                    removed = (
                        before
                        - (new_a - high if new_a > high else (low - new_a if new_a < low else 0))
                        - (new_b - high if new_b > high else (low - new_b if new_b < low else 0))
                    )
                    if removed <= 0:
                        continue
                    price = price_x
                    if y >= 0:
                        holders = current[y]
                        price += ((a not in holders) - (b not in holders)) * size_y  # state.price(y, b, a)
                    if 2 * removed > price or self.costly:  # else it copies more than twice what it brings in
                        rank = (2 * removed - price, -price, -x, -y)
                        if bar is None or rank > bar:
                            whole = removed == before and price <= moved
                            ranked.append((rank, x, (y,) if y >= 0 else (), whole))
            # the best first; the first that keeps the rules is this pool's
            ranked.sort(reverse=True)
            for rank, x, ys, whole in ranked:
                if best is not None and rank <= best[0]:
                    break
                if (x, ys) in tried:
                    continue
                tried.add((x, ys))
                work += 1
                if not state.fits(x, a, b) or (ys and not state.fits(ys[0], b, a)):
                    continue
                if state.evaluate(a, b, (x,), ys) is not None:
                    best = (rank, a, b, (x,), ys, whole, None)
                    break
                if self.costly and state.evaluate(a, b, (x,), ys, leaders=False) is not None:
                    handover = self.handover(a, b, x, ys)
                    if handover is not None:
                        best = (rank, a, b, (x,), ys, whole, handover)
                        break
            if best is not None and best[5]:
                break  # a free move that does the whole job: the copied replicas need not be looked at
        self.work += work
        return best


def _leaders_spread_ok(state: PlanState, shifts: Sequence[tuple[int, int, int]]) -> bool:
    """Whether the leaderships ``shifts`` ((topic, from, to)) leave no topic's leaders wider apart."""
    changed: dict[int, dict[int, int]] = {}
    for t, src, dst in shifts:
        counts = changed.setdefault(t, dict(state.lb[t]))
        counts[src] = counts.get(src, 0) - 1
        counts[dst] = counts.get(dst, 0) + 1
    brokers = len(state.chosen)
    for t, counts in changed.items():
        after = {b: n for b, n in counts.items() if n}
        if count_spread(after, brokers) > count_spread(state.lb[t], brokers):
            return False
    return True


def _candidates(items: list[tuple[int, int]], want: int, least: int) -> list[tuple[int, int]]:
    """The replicas of a giving broker one pair tries: the :data:`SIZES_TRIED` nearest to ``want``, a few nearest
    to ``least`` (when copying ``want`` costs too much, the least that helps may not), then a few nearest to
    each of :data:`LADDER` rungs from 8 times ``want`` on (a small transfer may need a larger replica with a
    partner just smaller than it)."""
    if not items:
        return []
    found = nearest(items, want, SIZES_TRIED, low=1)
    if least < want:
        found += nearest(items, least, SIZES_TRIED // 2, low=least)
    aim = want * 8
    for _ in range(LADDER):
        if aim > items[-1][0]:
            break
        found += nearest(items, aim, SIZES_TRIED // 4, low=1)
        aim *= 8
    return found
