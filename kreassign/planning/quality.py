"""How balanced a placement is, before and after a plan: the numbers of the plan report. Standard library only.

Dimensions, each measured over the chosen brokers (``--broker-list``) before and after the plan:

* ``replicas``, ``leaders``, ``bytes`` per broker, and ``disk_use`` (percent of the broker's capacity, the
  bytes of the planned topics plus ``other_bytes``, the rest of its disk; only when every chosen broker's
  capacity is known);
* ``topic_replica_spread`` and ``topic_leader_spread``: for each topic, how many more replicas (leaders) of
  it its most loaded chosen broker holds than its least loaded one; the dimension is over topics (its max
  is the worst topic).

**Balancedness score** (0-100): the share of the load that sits where an even spread wants it. For one
dimension, the misplaced load is the least that would have to move to make it even: for counts, the
replicas (leaders) beyond ``ceil`` of the mean or missing below its ``floor``, per broker, for each topic
separately in the topic dimensions; for bytes, the bytes above the mean. Dimension score =
``100 * (1 - misplaced / total)``; the score of a placement is the mean of the scores of replicas,
leaders, bytes, topic replicas and topic leaders. 100 is a perfectly even cluster (within rounding); a
cluster of 4 brokers, one of them just added and empty, scores 75 on replicas.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from kreassign.planning.bounds import bytes_into_band, minimum_movement, plan_minimum
from kreassign.planning.context import BalanceContext, Row, make_context

if TYPE_CHECKING:
    from kreassign.planning.budget import BudgetUse
    from kreassign.planning.bytebalance import ByteBand
    from kreassign.planning.logdirs import LogDirChoice
    from kreassign.planning.netbalance import TrafficBalance
    from kreassign.planning.racklimits import RackHold


SCORED = ("replicas", "leaders", "bytes", "topic_replica_spread", "topic_leader_spread")


@dataclass(frozen=True)
class Spread:
    """One dimension on one side (before or after): min, max, mean and standard deviation of the values, and
    the misplaced share of ``total`` behind the score."""

    min: float
    max: float
    mean: float
    std: float
    misplaced: float
    total: float

    @property
    def score(self) -> float:
        return 100.0 if self.total <= 0 else 100.0 * max(0.0, 1.0 - self.misplaced / self.total)

    def as_dict(self) -> dict[str, float]:
        return {
            "min": self.min,
            "max": self.max,
            "mean": round(self.mean, 3),
            "std": round(self.std, 3),
            "score": round(self.score, 2),
        }


@dataclass(frozen=True)
class Dimension:
    name: str
    unit: str  # "replicas", "leaders", "bytes", "%"
    before: Spread
    after: Spread


@dataclass(frozen=True)
class PlanQuality:
    brokers: tuple[int, ...]  # the chosen brokers
    shown: tuple[int, ...]  # chosen brokers and those holding replicas before (removed ones)
    per_broker: dict[str, tuple[dict[int, int], dict[int, int]]]  # replicas/leaders/bytes: before, after
    dimensions: tuple[Dimension, ...]
    partitions: int
    replicas_moved: int
    bytes_moved: int
    leaders_changed: int
    minimum_moves: int
    minimum_bytes: int
    total_bytes: int
    score_before: float
    score_after: float
    budget: BudgetUse | None = None  # what --move-budget bought (None without the option)
    byte_band: ByteBand | None = None  # what --bytes-tolerance did (None when the stage did not run)
    bytes_lower_bound: int = 0  # minimum_bytes, or the band's bound when larger (bounds.band_lower_bound)
    log_dirs: LogDirChoice | None = None  # the dirs named for new replicas on JBOD brokers (logdirs.choose_log_dirs)
    rack_holds: tuple[RackHold, ...] = ()  # racks the rack rule holds away from the mean (racklimits.rack_totals)
    traffic: TrafficBalance | None = None  # bytes in and out per broker (netbalance), only when rates are known
    # per broker the plan empties (left out of its brokers), the replicas of other topics it keeps, per topic
    left_behind: dict[int, dict[str, int]] = field(default_factory=dict)

    def dimension(self, name: str) -> Dimension:
        return next(d for d in self.dimensions if d.name == name)


def _spread(values: Sequence[float], misplaced: float, total: float) -> Spread:
    if not values:
        return Spread(0, 0, 0.0, 0.0, 0.0, 0.0)
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return Spread(min(values), max(values), mean, std, misplaced, total)


def count_misplaced(counts: Iterable[int], brokers: int) -> tuple[int, int]:
    """(least unit moves to bring ``counts`` (one per broker; brokers not listed hold 0) within floor..ceil
    of their mean, total)."""
    return _misplaced(Counter(counts), brokers)


def _misplaced(histogram: Mapping[int, int], brokers: int) -> tuple[int, int]:
    """:func:`count_misplaced` from how many brokers hold each count (the listed ones): a topic's counts take
    few values, so this reads a handful of entries where the counts are hundreds."""
    total = sum(v * n for v, n in histogram.items())
    floor, extra = divmod(total, brokers)
    ceil = floor + (1 if extra else 0)
    over = sum((v - ceil) * n for v, n in histogram.items() if v > ceil)
    listed = sum(histogram.values())
    under = (
        (sum((floor - v) * n for v, n in histogram.items() if v < floor) + floor * (brokers - listed)) if floor else 0
    )
    return max(over, under), total


def _count_dimension(
    name: str, unit: str, before: Mapping[int, int], after: Mapping[int, int], brokers: Sequence[int]
) -> Dimension:
    sides = []
    for counts in (before, after):
        values = [counts.get(b, 0) for b in brokers]
        misplaced, total = count_misplaced(values, len(brokers))
        sides.append(_spread(values, misplaced, total))
    return Dimension(name, unit, sides[0], sides[1])


def _bytes_spread(values: Sequence[float]) -> Spread:
    total = sum(values)
    mean = total / len(values) if values else 0.0
    return _spread(values, sum(v - mean for v in values if v > mean), total)


TopicSpread = tuple[int, int, int]
"""One topic on one side of a topic dimension: its spread (max - min over the chosen brokers), and the
misplaced count and the total of :func:`count_misplaced`."""


def topic_spread(held: Mapping[int, int], chosen: frozenset[int]) -> TopicSpread:
    """The :data:`TopicSpread` of a topic holding ``held`` (count per broker, any broker). Reads only the
    brokers the topic is on (the others hold 0), a histogram of their counts, so it costs the topic's
    replicas, not topics x brokers."""
    if chosen.issuperset(held):  # the usual case: every broker holding the topic is chosen
        histogram = Counter(held.values())
    else:
        histogram = Counter(v for b, v in held.items() if b in chosen)
    histogram.pop(0, None)
    zeros = len(chosen) - sum(histogram.values())
    misplaced, total = _misplaced(histogram, len(chosen))
    return (max(histogram) if histogram else 0) - (0 if zeros else min(histogram)), misplaced, total


def topic_dimension(name: str, unit: str, before: Sequence[TopicSpread], after: Sequence[TopicSpread]) -> Dimension:
    """Over topics (each side: one :data:`TopicSpread` per topic, in topic order)."""
    sides = [
        _spread([s for s, _, _ in side], sum(m for _, m, _ in side), sum(t for _, _, t in side))
        for side in (before, after)
    ]
    return Dimension(name, unit, sides[0], sides[1])


def _topic_dimension(
    name: str, unit: str, by_topic: Sequence[tuple[Counter[int], Counter[int]]], brokers: Sequence[int]
) -> Dimension:
    chosen = frozenset(brokers)
    return topic_dimension(
        name, unit, [topic_spread(c[0], chosen) for c in by_topic], [topic_spread(c[1], chosen) for c in by_topic]
    )


def measure_plan(
    rows: Sequence[Row],
    plan: Mapping[tuple[str, int], Sequence[int]],
    brokers: Sequence[int],
    *,
    replication_factor: int | None = None,
    capacities: Mapping[int, int | None] | None = None,
    other_bytes: Mapping[int, int] | None = None,
    minimum: tuple[int, int] | None = None,
    budget: BudgetUse | None = None,
    current_load: Mapping[int, int] | None = None,
    byte_band: ByteBand | None = None,
    ctx: BalanceContext | None = None,
) -> PlanQuality:
    """The report of a plan: ``rows`` the partitions before (topic, partition, replicas, size), ``plan`` their
    replicas after (leader first), ``brokers`` the chosen ones; ``minimum``: :func:`minimum_movement` of the
    same input, and ``current_load`` the replicas per broker of ``rows``, when the caller has them already;
    ``budget`` what ``--move-budget`` bought, ``byte_band`` what the bytes stage did. ``ctx``: the balanced
    plan's brokers and rules: ``minimum`` then holds for plans that leave every broker as even as this one
    (:func:`kreassign.planning.bounds.plan_minimum`); without ``minimum``, :func:`minimum_movement` of the rows
    without racks."""
    chosen = sorted(set(brokers))
    # Column by column, so that most of the work runs in C: the rows grouped by topic (sorted unless each
    # topic's rows are together already, as the callers give them), their replicas before and after, sizes.
    names = list(map(itemgetter(0), rows))
    if len(set(names)) != sum(1 for _ in groupby(names)):
        rows = sorted(rows)
        names = list(map(itemgetter(0), rows))
    befores = list(map(itemgetter(2), rows))
    afters = list(map(plan.__getitem__, zip(names, map(itemgetter(1), rows), strict=True)))
    sizes = list(map(itemgetter(3), rows))
    by_topic: dict[str, tuple[Counter[int], Counter[int], Counter[int], Counter[int]]] = {}
    start = 0
    for name, group in groupby(names):
        end = start + len(list(group))
        before, after = befores[start:end], afters[start:end]
        by_topic[name] = (
            Counter(chain.from_iterable(before)),
            Counter(chain.from_iterable(after)),
            Counter(map(itemgetter(0), filter(None, before))),
            Counter(map(itemgetter(0), filter(None, after))),
        )
        start = end
    replicas0: Counter[int] = Counter(current_load if current_load is not None else chain.from_iterable(befores))
    leaders0: Counter[int] = Counter(map(itemgetter(0), filter(None, befores)))
    held0 = dict.fromkeys(replicas0, 0)  # plain dicts: faster to add to than Counters
    moved = moved_bytes = leaders_changed = total_bytes = 0
    changed = []  # the counts after are those before, but for these (most partitions keep their replicas)
    for before, after, size in zip(befores, afters, sizes, strict=True):
        if size:
            for b in before:
                held0[b] += size
            total_bytes += size * len(before)
        if before != tuple(after):
            added = len(set(after).difference(before))
            moved += added
            moved_bytes += added * size
            leaders_changed += bool(before and after and before[0] != after[0])
            changed.append((before, after, size))
    befores_changed, afters_changed = [c[0] for c in changed], [c[1] for c in changed]
    replicas1 = _shifted(replicas0, chain.from_iterable(befores_changed), chain.from_iterable(afters_changed))
    leaders1 = _shifted(
        leaders0, map(itemgetter(0), filter(None, befores_changed)), map(itemgetter(0), filter(None, afters_changed))
    )
    held1 = dict.fromkeys(replicas1, 0)  # in this order (a broker that holds nothing after ends at 0)
    held1.update(held0)
    for before, after, size in changed:
        if not size:
            continue
        for b in before:
            held1[b] -= size
        for b in after:
            held1[b] += size
    bytes0 = {b: n for b, n in held0.items() if n}
    bytes1 = {b: n for b, n in held1.items() if n}
    topics = [by_topic[t] for t in sorted(by_topic)]
    return quality_of(
        chosen,
        {"replicas": (replicas0, replicas1), "leaders": (leaders0, leaders1), "bytes": (bytes0, bytes1)},
        [
            _topic_dimension("topic_replica_spread", "replicas", [(c[0], c[1]) for c in topics], chosen),
            _topic_dimension("topic_leader_spread", "leaders", [(c[2], c[3]) for c in topics], chosen),
        ],
        partitions=len(rows),
        replicas_moved=moved,
        bytes_moved=moved_bytes,
        leaders_changed=leaders_changed,
        total_bytes=total_bytes,
        minimum=_minimum(rows, chosen, replication_factor, minimum, ctx, replicas1, afters),
        capacities=capacities,
        other_bytes=other_bytes,
        budget=budget,
        byte_band=byte_band,
        drops=replication_factor is not None and any(len(set(r[2])) > replication_factor for r in rows),
    )


def _minimum(
    rows: Sequence[Row],
    chosen: Sequence[int],
    replication_factor: int | None,
    minimum: tuple[int, int] | None,
    ctx: BalanceContext | None,
    after: Mapping[int, int],
    afters: Sequence[Sequence[int]],
) -> tuple[int, int]:
    """:func:`measure_plan`'s minimum: with ``ctx``, that of the plans as even as this one
    (:func:`kreassign.planning.bounds.plan_minimum`); else ``minimum``, or the minimum of the balanced plans of
    the chosen brokers without racks."""
    if ctx is not None:
        recount = partial(_recount, rows)
        return plan_minimum(ctx, minimum, after, lambda: Counter(map(len, afters)), recount)
    if minimum is not None:
        return minimum
    return minimum_movement(rows, make_context(((b, None) for b in chosen), replication_factor, current_load={}))


def _recount(rows: Sequence[Row], ctx: BalanceContext, after: Mapping[int, int]) -> tuple[int, int]:
    return minimum_movement(rows, ctx, after=after)


def _shifted(counts: Mapping[int, int], gone: Iterable[int], came: Iterable[int]) -> Counter[int]:
    """``counts`` less one per item of ``gone``, plus one per item of ``came``, without the keys left at 0."""
    shifted = Counter(counts)
    shifted.update(came)
    for key, n in Counter(gone).items():
        shifted[key] -= n
    return +shifted


def quality_of(
    brokers: Sequence[int],
    per_broker: Mapping[str, tuple[Mapping[int, int], Mapping[int, int]]],
    topic_dimensions: Sequence[Dimension],
    *,
    partitions: int,
    replicas_moved: int,
    bytes_moved: int,
    leaders_changed: int,
    total_bytes: int,
    minimum: tuple[int, int],
    capacities: Mapping[int, int | None] | None = None,
    other_bytes: Mapping[int, int] | None = None,
    budget: BudgetUse | None = None,
    byte_band: ByteBand | None = None,
    drops: bool = False,
) -> PlanQuality:
    """The report from aggregates (what :func:`measure_plan` counts from the rows, and the Spark engine with
    jobs): ``per_broker`` replicas, leaders and bytes (brokers holding none may be left out) before and
    after, ``topic_dimensions`` from :func:`topic_dimension`; with ``byte_band``, the lower bound of the
    bytes copied is the band's when larger (:func:`kreassign.planning.bounds.band_lower_bound`; ``drops``: the
    plan may drop replicas)."""
    chosen = sorted(set(brokers))
    replicas0, replicas1 = per_broker["replicas"]
    leaders0, leaders1 = per_broker["leaders"]
    bytes0, bytes1 = per_broker["bytes"]
    dimensions = [
        _count_dimension("replicas", "replicas", replicas0, replicas1, chosen),
        _count_dimension("leaders", "leaders", leaders0, leaders1, chosen),
        Dimension(
            "bytes",
            "bytes",
            _bytes_spread([bytes0.get(b, 0) for b in chosen]),
            _bytes_spread([bytes1.get(b, 0) for b in chosen]),
        ),
    ]
    if capacities and all(capacities.get(b) for b in chosen):
        other = other_bytes or {}
        sides = []
        for held in (bytes0, bytes1):
            use = [100.0 * (held.get(b, 0) + other.get(b, 0)) / capacities[b] for b in chosen]  # type: ignore[operator]
            sides.append(_spread([round(u, 2) for u in use], 0.0, 0.0))
        dimensions.append(Dimension("disk_use", "%", sides[0], sides[1]))
    dimensions += topic_dimensions
    scored = [d for d in dimensions if d.name in SCORED]
    shown = tuple(sorted(set(chosen) | set(replicas0)))
    return PlanQuality(
        brokers=tuple(chosen),
        shown=shown,
        per_broker={name: (dict(before), dict(after)) for name, (before, after) in per_broker.items()},
        dimensions=tuple(dimensions),
        partitions=partitions,
        replicas_moved=replicas_moved,
        bytes_moved=bytes_moved,
        leaders_changed=leaders_changed,
        minimum_moves=minimum[0],
        minimum_bytes=minimum[1],
        total_bytes=total_bytes,
        score_before=sum(d.before.score for d in scored) / len(scored),
        score_after=sum(d.after.score for d in scored) / len(scored),
        budget=budget,
        byte_band=byte_band,
        bytes_lower_bound=max(minimum[1], _band_bound(bytes0, bytes1, chosen, byte_band, drops)),
    )


def _band_bound(
    before: Mapping[int, int], after: Mapping[int, int], chosen: Sequence[int], band: ByteBand | None, drops: bool
) -> int:
    """The bytes any plan must copy to bring the brokers this plan brings within ``band`` (the bytes stage's:
    of the brokers the racks leave free) into it (:func:`kreassign.planning.bounds.bytes_into_band`); 0 without
    the stage. A broker the plan leaves outside the band (held by the rack rule, a large replica) counts for
    neither side."""
    if band is None:
        return 0
    inside = [b for b in chosen if band.low <= after.get(b, 0) <= band.high]
    return bytes_into_band(before, band.low, band.high, inside, chosen, drops)
