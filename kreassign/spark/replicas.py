"""Stages 2 to 5 of the Spark engine (the replicas): the rounds of :func:`_place`, each the per-broker shed stage
(:func:`_shed`), the per-topic fill stage (:func:`_fill`) and the repair of the left-overs on the driver, then
chains if needed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kreassign.planning.balanced.chains import replica_chains
from kreassign.planning.balanced.engine import REPLICA_ROUNDS
from kreassign.planning.balanced.fill import SlotPlan, fill_topic, newly_placed
from kreassign.planning.balanced.repair import repair_leftovers
from kreassign.planning.balanced.shed import needy_groups, shed_aim, shed_from_broker
from kreassign.planning.balanced.targets import counts_targets, within_tolerance
from kreassign.planning.context import BalanceContext
from kreassign.planning.racklimits import broker_bands
from kreassign.spark.counts import _broker_stats
from kreassign.spark.frames import _grouped, _ints, _keep, _patched, _replace, _small, _table, _Timings
from kreassign.spark.lookups import _group_codes, _group_of, _TopicCodes

_FILLED = (
    "topic string, partition long, kept array<long>, vacancies long, shed array<long>, changed boolean, "
    "before array<long>"
)
_SHED = "topic string, partition long, broker long"


def _place(
    state: DataFrame,
    ctx: BalanceContext,
    topic_totals: Mapping[str, int] | None,
    stats: tuple[Counter[int], Counter[int], int, int],
    spark: SparkSession,
    tick: _Timings,
    cached: list[DataFrame],
    codes: _TopicCodes,
) -> DataFrame:
    """:func:`kreassign.planning.balanced.engine.place_replicas`: the replica rounds, then chains if needed.
    ``stats``: :func:`_broker_stats` of ``state``; ``topic_totals`` None: shed by bytes only."""
    counts, held_bytes, open_total, total_bytes = stats
    total = sum(counts.values()) + open_total
    fresh = True  # counts describe state
    rack_totals = ctx.rack_holds(_replication_factors(state))[0] if ctx.uneven_racks() else {}
    for _ in range(REPLICA_ROUNDS):
        if not fresh:
            counts, held_bytes, open_total, _ = _broker_stats(state)
            tick("count")
        fresh = False
        targets = counts_targets(ctx.brokers, counts, total, ctx.rack_groups(), rack_totals)
        deficits = {b: targets[b] - counts.get(b, 0) for b in ctx.brokers}
        if not open_total and all(d >= 0 for d in deficits.values()):
            fresh = True
            break
        aims = {b: shed_aim(-deficits[b], held_bytes.get(b, 0), total_bytes, len(ctx.brokers)) for b in ctx.brokers}
        shed = _keep(_shed(state, ctx, deficits, aims, topic_totals, spark, codes), cached)
        topic_vacancies = _topic_vacancies(state, shed)
        tick("shed")
        slots = SlotPlan.build(ctx, deficits, topic_vacancies)
        shed_rows = -sum(d for d in deficits.values() if d < 0)  # at most: a broker may have less to shed
        filled = _keep(_fill(state, shed, shed_rows, ctx, slots, topic_vacancies), cached)  # touched
        summary = filled.agg(
            F.sum(F.col("changed").cast("long")).alias("changed"),
            F.collect_list(
                F.when(F.col("vacancies") > 0, F.struct("topic", "partition", "kept", "vacancies", "shed"))
            ).alias("leftovers"),
        ).first()
        tick("fill")
        leftovers = [
            (r.topic, int(r.partition), _ints(r.kept), int(r.vacancies), _ints(r.shed)) for r in summary.leftovers
        ]
        fixed = filled.select("topic", "partition", F.col("kept").alias("fix"))
        patched = _patched(state, _small(fixed, shed_rows + open_total), "kept")
        fixes = {}
        if leftovers:  # rare: only then do the partitions that received a replica this round reach the driver
            received = [
                (r.topic, int(r.partition), _ints(r.kept), newly_placed(_ints(r.before), _ints(r.kept)))
                for r in filled.where("changed").select("topic", "partition", "kept", "before").toLocalIterator()
            ]
            received = [r for r in received if r[3]]
            now, _, _, _ = _broker_stats(patched)
            fixes = repair_leftovers(ctx, leftovers, now, targets, received)
            tick("repair")
        if not fixes and not summary.changed:  # nothing moved: state and its counts stay as they are
            fresh = True
            break
        state = _keep(
            _replace(patched, fixes, "kept", spark).select(
                "topic", "partition", "size", "current", "kept", F.lit(0).cast("long").alias("vacancies")
            ),
            cached,
        )
    if not fresh:
        counts, _, _, _ = _broker_stats(state)
    if not within_tolerance(ctx, counts, total, rack_totals):
        final = {
            (r.topic, int(r.partition)): _ints(r.kept)
            for r in state.select("topic", "partition", "kept").toLocalIterator()
        }
        bands = broker_bands(ctx.brokers, total, ctx.rack_groups(), rack_totals) if rack_totals else None
        state = _keep(_replace(state, replica_chains(ctx, final, bands), "kept", spark), cached)
        tick("replica chains")
    return state


def _replication_factors(state: DataFrame) -> dict[int, int]:
    """One job: :func:`kreassign.planning.balanced.engine.replication_factors` of ``state``."""
    rf = (F.size("kept") + F.col("vacancies")).alias("rf")
    return {int(r.rf): int(r["count"]) for r in state.groupBy(rf).count().collect()}


def _shed(
    state: DataFrame,
    ctx: BalanceContext,
    deficits: Mapping[int, int],
    aims: Mapping[int, int | None],
    topic_totals: Mapping[str, int] | None,
    spark: SparkSession,
    codes: _TopicCodes,
) -> DataFrame:
    """Per over-target broker (one group each): the replicas it gives up. The rank of each is computed in
    the JVM (:func:`_shed_rank`): Python gets four numbers per replica held (the topic as its code, see
    :class:`_TopicCodes`: the names go back only with the replicas shed)."""
    over = _table(spark, [(b,) for b, d in deficits.items() if d < 0], "broker long")
    held = (
        state.select("topic", "partition", "size", "kept", F.explode("kept").alias("broker"))
        .join(F.broadcast(over), "broker")
        .join(codes.frame, "topic")
        .select("broker", "code", "partition", "size", _shed_rank(ctx, needy_groups(ctx, deficits)))
    )
    brokers = len(ctx.brokers)
    names = codes.names
    totals = codes.coded(topic_totals) if topic_totals is not None else None

    def shed(group: dict[str, list]) -> dict[str, list]:
        broker = group["broker"][0]
        candidates = list(zip(*(group[c] for c in ("code", "partition", "size", "rank")), strict=True))
        chosen = shed_from_broker(-deficits[broker], aims[broker], candidates, totals, brokers)
        return {
            "topic": [names[t] for t, _ in chosen],
            "partition": [p for _, p in chosen],
            "broker": [broker] * len(chosen),
        }

    return _grouped(held, "broker", shed, _SHED)


def _shed_rank(ctx: BalanceContext, needy: Sequence[tuple[str, int]]) -> Any:
    """:func:`kreassign.planning.balanced.shed.shed_rank` of the replica on ``broker`` of each partition's ``kept``,
    as a column ``rank``: 0 when the partition has no more replicas than racks hold a needy broker, or when
    one of those racks holds none of its other replicas; else 1."""
    codes = _group_codes(ctx)
    groups = [codes[g] for g, n in needy if n]
    others = F.transform(F.filter("kept", lambda b: b != F.col("broker")), lambda b: _group_of(ctx, b))
    free = F.array_except(F.array(*[F.lit(g) for g in groups]).cast("array<int>"), others)
    rank = F.when((F.size("kept") <= len(needy)) | (F.size(free) > 0), 0).otherwise(1)
    return rank.cast("long").alias("rank")


def _topic_vacancies(state: DataFrame, shed: DataFrame) -> dict[str, int]:
    """Vacancies per topic after shedding: one row per topic reaches the driver."""
    open_slots = state.where(F.col("vacancies") > 0).select("topic", F.col("vacancies").alias("n"))
    leaving = shed.select("topic", F.lit(1).cast("long").alias("n"))
    merged = open_slots.unionByName(leaving).groupBy("topic").agg(F.sum("n").alias("n"))
    return {r.topic: int(r.n) for r in merged.collect()}


def _fill(
    state: DataFrame,
    shed: DataFrame,
    shed_rows: int,
    ctx: BalanceContext,
    slots: SlotPlan,
    vacancies: Mapping[str, int],
) -> DataFrame:
    """Per topic: the shed replicas leave, the topic's window of slots fills the vacancies. Only the
    partitions with vacancies or a replica shed reach Python (what :func:`kreassign.planning.balanced.fill.fill_topic` changes: it
    leaves the others as they are, and never looks at them); one row each: its replicas after (``kept``) and
    ``before``, the vacancies still open, the brokers shed from it, and whether it ``changed``. ``shed_rows``:
    at most as many rows as ``shed`` has (see :func:`_small`)."""

    def fill(group: dict[str, list]) -> dict[str, list]:
        topic = group["topic"][0]
        partitions = [
            (p, _ints(k), v) for p, k, v in zip(group["partition"], group["kept"], group["vacancies"], strict=True)
        ]
        gone = [
            (p, int(b))
            for p, out in zip(group["partition"], group["leaving"], strict=True)
            if out is not None
            for b in out
        ]
        window = slots.window(topic, vacancies.get(topic, 0))
        results = fill_topic(ctx, partitions, gone, window)
        kept_before = {p: k for p, k, _ in partitions}
        return {
            "topic": [topic] * len(results),
            "partition": [p for p, _, _, _ in results],
            "kept": [list(r) for _, r, _, _ in results],
            "vacancies": [o for _, _, o, _ in results],
            "shed": [list(s) for _, _, _, s in results],
            "changed": [r != kept_before[p] for p, r, _, _ in results],
            "before": [list(kept_before[p]) for p, _, _, _ in results],
        }

    leaving = _small(shed.groupBy("topic", "partition").agg(F.collect_list("broker").alias("leaving")), shed_rows)
    touched = (
        state.select("topic", "partition", "kept", "vacancies")
        .join(leaving, ["topic", "partition"], "left")
        .where((F.col("vacancies") > 0) | F.col("leaving").isNotNull())
    )
    return _grouped(touched, "topic", fill, _FILLED)
