"""Lower bounds of what any plan must move, for the planner (which stops searching at the bound) and the plan
report (which shows what a plan moved against them). Standard library only.

The replicas: a balanced plan leaves each chosen broker within its band (:func:`replica_bands`: floor..ceil of
the mean, or of its rack's share where the rack rule holds a rack away from the mean), so a broker keeping more
replicas than its band's top must shed them, and when the brokers' kept replicas, each brought into its band,
still add up to more than all the replicas, that many more must go (:func:`fewest_shed`). Which brokers shed the
extra ones is any plan's choice: the bound takes the smallest replicas among all that may."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import eq, itemgetter, not_

from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.racklimits import broker_bands

Bands = dict[int, tuple[int, int]]
"""Per chosen broker, the fewest and the most replicas a balanced plan leaves on it."""


def replica_bands(ctx: BalanceContext, total: int, rf_counts: Mapping[int, int] | None) -> Bands:
    """The bands of the chosen brokers of ``ctx`` for ``total`` replicas: floor..ceil of the mean; where the
    rack rule holds a rack away from the mean (:meth:`kreassign.planning.context.BalanceContext.rack_holds` of
    ``rf_counts``, replication factor -> partitions as planned, read only when the racks differ in size),
    floor..ceil of the rack's share for its brokers and of the rest for the others
    (:func:`kreassign.planning.racklimits.broker_bands`, what the planner aims at)."""
    fixed = ctx.rack_holds(rf_counts)[0] if ctx.uneven_racks() and rf_counts is not None else {}
    return broker_bands(ctx.brokers, total, ctx.rack_groups(), fixed)


def widened(bands: Bands, after: Mapping[int, int]) -> Bands | None:
    """``bands`` widened to hold ``after`` (the replicas per broker a plan leaves), or None when they hold it
    already: the bound of the plans that leave every broker at least as even as that plan did (a planner
    stage may leave a broker outside its band, e.g. for its disk)."""
    if all(low <= after.get(b, 0) <= high for b, (low, high) in bands.items()):
        return None
    return {b: (min(low, after.get(b, 0)), max(high, after.get(b, 0))) for b, (low, high) in bands.items()}


def fewest_shed(kept: Mapping[int, int], bands: Bands, total: int) -> tuple[dict[int, int], dict[int, int], int]:
    """What the brokers keeping ``kept`` replicas must shed for ``total`` replicas to end within ``bands``:
    (per broker, the replicas above its band's top; per broker, those it may shed within its band (down to its
    floor); how many of the latter must go too, from any broker). Each broker's kept replicas brought into its
    band add up to ``sum(clamped)``; what is above ``total`` must go as well."""
    must: dict[int, int] = {}
    may: dict[int, int] = {}
    clamped = 0
    for b, (low, high) in bands.items():
        n = kept.get(b, 0)
        if n > high:
            must[b] = n - high
        if min(n, high) > low:
            may[b] = min(n, high) - low
        clamped += min(max(n, low), high)
    return must, may, max(0, clamped - total)


def minimum_movement(
    rows: Sequence[Row], ctx: BalanceContext, with_bytes: bool = True, after: Mapping[int, int] | None = None
) -> tuple[int, int]:
    """A lower bound of the replicas (and bytes) any balanced plan of ``rows`` on the chosen brokers of ``ctx``
    must move: the replicas a partition must gain (broker removed, replication factor raised) plus what
    :func:`fewest_shed` says the brokers must shed to end within :func:`replica_bands` (:func:`widened` to hold
    ``after``, the replicas per broker of a plan, when given), the smallest such replicas for the bytes. A
    replica of a partition whose replication factor goes down may be the one dropped, so it counts as kept by
    no broker. A replica the rack rule makes move is not counted: racks can only raise it."""
    brokers, replication_factor = ctx.brokers, ctx.replication_factor
    chosen = set(brokers)
    currents = list(map(itemgetter(2), rows))
    sizes = list(map(itemgetter(3), rows))
    lengths = list(map(len, currents))
    # The usual partition keeps all its replicas, on distinct chosen brokers, and its replication factor:
    # those are counted in C; the others one by one.
    usual = map(chosen.issuperset, currents)
    distinct = map(eq, map(len, map(set, currents)), lengths)
    same_rf = map(eq, lengths, repeat(replication_factor)) if replication_factor else repeat(True)
    simple = list(map(all, zip(usual, distinct, same_rf, strict=False)))
    flat: list[int] = list(chain.from_iterable(compress(currents, simple)))  # the brokers partitions keep
    flat_sizes: list[int] = (  # each partition's size, once per broker of flat
        list(chain.from_iterable(map(repeat, compress(sizes, simple), compress(lengths, simple)))) if with_bytes else []
    )
    forced = forced_bytes = 0
    rf_counts = Counter({replication_factor: len(currents)}) if replication_factor else Counter(lengths)
    for index in compress(range(len(currents)), map(not_, simple)):
        current, size = currents[index], sizes[index]
        rf = replication_factor or len(current)
        stay = current if chosen.issuperset(current) else [b for b in current if b in chosen]
        if len(set(stay)) < len(stay):  # a broker listed twice (invalid, but counted once)
            stay = list(dict.fromkeys(stay))
        if len(stay) <= rf:
            flat.extend(stay)
            if with_bytes:
                flat_sizes.extend([size] * len(stay))
        if len(stay) < rf:
            forced += rf - len(stay)
            forced_bytes += (rf - len(stay)) * size
    total = sum(rf * n for rf, n in rf_counts.items())
    bands = replica_bands(ctx, total, rf_counts)
    if after is not None:
        bands = widened(bands, after) or bands
    must, may, extra = fewest_shed(Counter(flat), bands, total)
    moves = forced + sum(must.values()) + extra
    if not with_bytes or not (must or extra):
        return moves, forced_bytes
    counts = shed_counts(must, may, extra)
    sizes_on: dict[int, list[int]] = {b: [] for b in counts}
    for b, size in zip(flat, flat_sizes, strict=True):
        if b in sizes_on:
            sizes_on[b].append(size)
    firsts = []
    for b, (first, more) in counts.items():
        smallest = _smallest(sizes_on[b], first + more)
        firsts.append((sum(smallest[:first]), smallest[first:]))
    return moves, forced_bytes + shed_bytes(firsts, extra)


def plan_minimum(
    ctx: BalanceContext,
    minimum: tuple[int, int] | None,
    after: Mapping[int, int],
    rf_counts: Callable[[], Mapping[int, int]],
    recount: Callable[[BalanceContext, Mapping[int, int]], tuple[int, int]],
) -> tuple[int, int]:
    """The minimum a plan report shows: ``minimum`` (:func:`minimum_movement` before planning, what the engine
    compared its moves with) while the plan leaves every broker within its band (``after``: its replicas per
    broker; ``rf_counts()``: its partitions per replication factor, asked only when the racks differ in size),
    else ``recount(ctx, after)``, the bound of the plans that leave every broker at least as even as it (a stage
    may leave a broker outside, for its disk): no plan that does as well beats the minimum reported."""
    bands = replica_bands(ctx, sum(after.values()), rf_counts() if ctx.uneven_racks() else None)
    if minimum is not None and widened(bands, after) is None:
        return minimum
    return recount(ctx, after)


def shed_counts(must: Mapping[int, int], may: Mapping[int, int], extra: int) -> dict[int, tuple[int, int]]:
    """Per broker that sheds by :func:`fewest_shed`: (its replicas that must go, those after them, smallest
    first, among which the ``extra`` smallest of all brokers go too)."""
    counts = {b: (n, 0) for b, n in must.items()}
    if extra:
        for b, n in may.items():
            counts[b] = (must.get(b, 0), min(n, extra))
    return counts


def shed_bytes(firsts: Iterable[tuple[int, Sequence[int]]], extra: int) -> int:
    """The fewest bytes :func:`fewest_shed`'s replicas hold, from each shedding broker's
    (:func:`shed_counts`) bytes of the smallest replicas it must shed and the sizes of its next ones: the
    ``extra`` smallest of those go too (whichever brokers shed them, a plan's choice)."""
    total = 0
    rest: list[int] = []
    for first, more in firsts:
        total += first
        rest.extend(more)
    return total + sum(heapq.nsmallest(extra, rest))


def _smallest(values: list[int], n: int) -> list[int]:
    """The ``n`` smallest ``values``, ascending. heapq.nsmallest beats a full sort while ``n`` is a small share
    of them (a tenth: 0.07 s against 0.11 s for 158 of 3,158 sizes, 200 times; from an eighth on the sort wins)."""
    return heapq.nsmallest(n, values) if n * 10 < len(values) else sorted(values)[:n]


def band_lower_bound(
    before: Mapping[int, int],
    after_total: int,
    brokers: Sequence[int],
    tolerance: float,
    drops: bool,
    outside: Collection[int] = (),
) -> int:
    """A lower bound of the bytes any plan must copy to bring every chosen broker's bytes within ``tolerance``
    of the mean (``after_total`` bytes over ``brokers``): :func:`bytes_into_band` of that band. Brokers in
    ``outside`` (those a plan leaves outside the band, e.g. holding a replica larger than it) count for neither
    side: the bound is then that of the plans that bring the other brokers into the band."""
    if not brokers:
        return 0
    mean = after_total / len(brokers)
    inside = [b for b in brokers if b not in outside] if outside else brokers
    return bytes_into_band(before, mean * (1 - tolerance), mean * (1 + tolerance), inside, brokers, drops)


def bytes_into_band(
    before: Mapping[int, int], low: float, high: float, inside: Sequence[int], brokers: Collection[int], drops: bool
) -> int:
    """A lower bound of the bytes any plan must copy to bring the brokers ``inside`` (of the chosen ``brokers``)
    within ``low``..``high`` bytes and empty the brokers left out: the larger of what the brokers below the band
    lack (every byte a broker receives is copied) and what the brokers above it, and the brokers left out, hold
    beyond it (every byte that leaves a broker is copied elsewhere, unless the plan drops replicas: ``drops``,
    a replication factor lowered, and then this side does not count)."""
    missing = sum(max(0.0, low - before.get(b, 0)) for b in inside)
    if drops:
        return int(missing)
    chosen = set(brokers)
    surplus = sum(max(0.0, before.get(b, 0) - high) for b in inside)
    surplus += sum(held for b, held in before.items() if b not in chosen)
    return int(max(missing, surplus))
