"""The balanced ``--generate`` as a PySpark pipeline: the stages of ``kreassign.planning.balance``, run
per partition (``mapInPandas``), per broker and per topic (``applyInPandas``, ``cogroup``) on the
workers; the driver only sees per-broker and per-topic aggregates, the few left-over rows of each stage,
and at the end the plan it prints.

Every stage calls the same pure function as the local engine with the same inputs (each sorts what it
gets), so the plans are byte-identical.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kreassign.planning import balance
from kreassign.planning.balance import BalanceContext, SlotPlan
from kreassign.planning.quality import excess_over_targets

DEFAULT_MASTER = "local[*]"
_SNAPSHOT_SCHEMA = T.StructType(
    [
        T.StructField("type", T.StringType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.LongType()),
        T.StructField("replicas", T.ArrayType(T.LongType())),
        T.StructField("size_bytes", T.LongType()),
    ]
)
_INTS = T.ArrayType(T.LongType())
_STATE = "topic string, partition long, size long, current array<long>, kept array<long>, vacancies long"
_FILLED = (
    "topic string, partition long, size long, current array<long>, kept array<long>, vacancies long, "
    "shed array<long>, changed boolean, before array<long>"
)
_SHED = "topic string, partition long, broker long"


# ---------------------------------------------------------------------------------------------- session
def spark_session(master: str | None, conf: Mapping[str, str]) -> SparkSession:
    """An embedded ``local[*]`` session by default; quiet (no UI, Spark's logs at WARN on stderr)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    url = master or DEFAULT_MASTER
    builder = (
        SparkSession.builder.master(url)
        .appName("kreassign-generate")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)) if url.startswith("local") else "200")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.adaptive.enabled", "true")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(conf.get("spark.log.level", "WARN"))
    if not url.startswith("local"):
        spark.sparkContext.addPyFile(_package_zip())  # workers of a real cluster get kreassign this way
    return spark


def _package_zip() -> str:
    package = Path(__file__).resolve().parents[1]
    target = Path(tempfile.mkdtemp(prefix="kreassign-spark-")) / "kreassign.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for file in package.rglob("*.py"):
            archive.write(file, Path("kreassign") / file.relative_to(package))
    return str(target)


# ---------------------------------------------------------------------------------------------- helpers
def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values) if values is not None else ()


def _collect_counts(df: DataFrame, column: str, value: str | None = None) -> Counter[int]:
    """Per-broker count (or sum of ``value``) of the brokers in array column ``column``."""
    exploded = df.select(F.explode(column).alias("b"), *([F.col(value).alias("v")] if value else []))
    agg = F.sum("v") if value else F.count(F.lit(1))
    return Counter({int(r[0]): int(r[1]) for r in exploded.groupBy("b").agg(agg).collect()})


def _replace(df: DataFrame, fixes: Mapping[tuple[str, int], Any], column: str, spark: SparkSession) -> DataFrame:
    """``df`` with ``column`` replaced for the (topic, partition) keys of ``fixes`` (a small table)."""
    if not fixes:
        return df
    is_array = isinstance(df.schema[column].dataType, T.ArrayType)
    kind = _INTS if is_array else T.LongType()
    rows = [(t, p, [int(b) for b in v] if is_array else v) for (t, p), v in fixes.items()]
    schema = T.StructType(
        [T.StructField("topic", T.StringType()), T.StructField("partition", T.LongType()), T.StructField("fix", kind)]
    )
    small = spark.createDataFrame(rows, schema)
    joined = df.join(F.broadcast(small), ["topic", "partition"], "left")
    return joined.withColumn(column, F.coalesce(F.col("fix"), F.col(column))).drop("fix")


# ---------------------------------------------------------------------------------------------- pipeline
def run_pipeline(
    path: str,
    topics: Sequence[str],
    ctx: BalanceContext,
    *,
    master: str | None,
    conf: Mapping[str, str],
    session: SparkSession | None = None,
) -> dict[tuple[str, int], list[int]]:
    spark = session or spark_session(master, conf)
    wanted = sorted(set(topics))
    raw = spark.read.schema(_SNAPSHOT_SCHEMA).json(path)
    parts = raw.where((F.col("type") == "partition") & F.col("topic").isin(wanted)).select(
        "topic",
        "partition",
        F.coalesce("size_bytes", F.lit(0)).alias("size"),
        F.col("replicas").alias("current"),
    )
    state = _normalize(parts, ctx).localCheckpoint()
    totals = state.select(
        F.sum(F.size("kept") + F.col("vacancies")).alias("n"),
        F.sum(F.col("size") * (F.size("kept") + F.col("vacancies"))).alias("bytes"),
    ).first()
    total, total_bytes = int(totals["n"] or 0), int(totals["bytes"] or 0)
    per_topic = state.groupBy("topic").agg(F.sum(F.size("kept") + F.col("vacancies")).alias("n")).collect()
    topic_totals = balance.topic_totals((r.topic, int(r.n)) for r in per_topic)
    placed, repaired = _place(state, ctx, topic_totals, total, total_bytes, spark)
    moved = _replicas_added(placed)
    if repaired or moved > _minimum_moves(state, ctx):  # as balance.plan_balanced: by bytes only, if fewer moves
        plain, _ = _place(state, ctx, None, total, total_bytes, spark)
        if _replicas_added(plain) < moved:
            placed = plain
    return _leaders(placed, ctx, spark)


def _replicas_added(state: DataFrame) -> int:
    return int(state.select(F.sum(F.size(F.array_except("kept", "current")))).first()[0] or 0)


def _minimum_moves(state: DataFrame, ctx: BalanceContext) -> int:
    """:func:`kreassign.planning.quality.minimum_movement` (replicas only) from per-broker aggregates."""
    chosen = list(ctx.brokers)
    stay = F.filter(F.array_distinct("current"), lambda b: b.isin(chosen))
    rf = F.lit(ctx.replication_factor) if ctx.replication_factor is not None else F.size("current")
    rows = state.select(stay.alias("stay"), rf.alias("rf"))
    sums = rows.select(
        F.sum(F.greatest(F.lit(0), F.col("rf") - F.size("stay"))).alias("forced"), F.sum("rf").alias("total")
    ).first()
    kept = _collect_counts(rows.where(F.size("stay") <= F.col("rf")), "stay")
    excess = excess_over_targets(kept, ctx.brokers, int(sums["total"] or 0))
    return int(sums["forced"] or 0) + sum(excess.values())


def _place(
    state: DataFrame,
    ctx: BalanceContext,
    topic_totals: Mapping[str, int] | None,
    total: int,
    total_bytes: int,
    spark: SparkSession,
) -> tuple[DataFrame, bool]:
    """The replica rounds and, if needed, the chains (:func:`kreassign.planning.balance.place_replicas`)."""
    repaired = False
    for _ in range(balance.REPLICA_ROUNDS):
        counts = _collect_counts(state, "kept")
        held_bytes = _collect_counts(state, "kept", "size")
        open_total = int(state.select(F.sum("vacancies")).first()[0] or 0)
        targets = balance.counts_targets(ctx.brokers, counts, total, ctx.rack_groups())
        deficits = {b: targets[b] - counts.get(b, 0) for b in ctx.brokers}
        if not open_total and all(d >= 0 for d in deficits.values()):
            break
        aims = {
            b: balance.shed_aim(-deficits[b], held_bytes.get(b, 0), total_bytes, len(ctx.brokers)) for b in ctx.brokers
        }
        shed = _shed(state, ctx, deficits, aims, topic_totals).localCheckpoint()
        topic_vacancies = _topic_vacancies(state, shed)
        slots = SlotPlan.build(ctx, deficits, topic_vacancies)
        filled = _fill(state, shed, ctx, slots, topic_vacancies).localCheckpoint()
        leftovers = [
            (r.topic, int(r.partition), _ints(r.kept), int(r.vacancies), _ints(r.shed))
            for r in filled.where(F.col("vacancies") > 0)
            .select("topic", "partition", "kept", "vacancies", "shed")
            .collect()
        ]
        fixes = {}
        if leftovers:  # rare: only then do the partitions that received a replica this round reach the driver
            repaired = True
            received = [
                (r.topic, int(r.partition), _ints(r.kept), balance.newly_placed(_ints(r.before), _ints(r.kept)))
                for r in filled.where("changed").select("topic", "partition", "kept", "before").collect()
            ]
            received = [r for r in received if r[3]]
            fixes = balance.repair_leftovers(ctx, leftovers, _collect_counts(filled, "kept"), targets, received)
        if not fixes and filled.where("changed").limit(1).count() == 0:
            break
        state = (
            _replace(filled, fixes, "kept", spark)
            .select("topic", "partition", "size", "current", "kept", F.lit(0).cast("long").alias("vacancies"))
            .localCheckpoint()
        )
    counts = _collect_counts(state, "kept")
    floor, extra = divmod(total, len(ctx.brokers))
    if any(not floor <= counts.get(b, 0) <= floor + (1 if extra else 0) for b in ctx.brokers):
        final = {
            (r.topic, int(r.partition)): _ints(r.kept) for r in state.select("topic", "partition", "kept").collect()
        }
        state = _replace(state, balance.replica_chains(ctx, final), "kept", spark).localCheckpoint()
    return state, repaired


def _normalize(parts: DataFrame, ctx: BalanceContext) -> DataFrame:
    def normalize(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            results = [balance.normalize_partition(ctx, _ints(r)) for r in pdf["current"]]
            pdf = pdf.assign(
                kept=[list(k) for k, _ in results],
                vacancies=[v for _, v in results],
            )
            yield pdf[["topic", "partition", "size", "current", "kept", "vacancies"]]

    return parts.mapInPandas(normalize, _STATE)


def _shed(
    state: DataFrame,
    ctx: BalanceContext,
    deficits: Mapping[int, int],
    aims: Mapping[int, int | None],
    topic_totals: Mapping[str, int] | None,
) -> DataFrame:
    """Per over-target broker (one group each): the replicas it gives up."""
    over = [b for b, d in deficits.items() if d < 0]
    needy = balance.needy_groups(ctx, deficits)
    held = state.select("topic", "partition", "size", "kept", F.explode("kept").alias("broker")).where(
        F.col("broker").isin(over)
    )

    def shed(pdf: pd.DataFrame) -> pd.DataFrame:
        broker = int(pdf["broker"].iloc[0])
        candidates = [
            (t, int(p), int(s), balance.shed_rank(ctx, broker, _ints(k), needy))
            for t, p, s, k in zip(pdf["topic"], pdf["partition"], pdf["size"], pdf["kept"], strict=True)
        ]
        chosen = balance.shed_from_broker(-deficits[broker], aims[broker], candidates, topic_totals, len(ctx.brokers))
        return pd.DataFrame(
            {"topic": [t for t, _ in chosen], "partition": [p for _, p in chosen], "broker": [broker] * len(chosen)}
        )

    return held.groupBy("broker").applyInPandas(shed, _SHED)


def _topic_vacancies(state: DataFrame, shed: DataFrame) -> dict[str, int]:
    """Vacancies per topic after shedding: one row per topic reaches the driver."""
    open_slots = state.where(F.col("vacancies") > 0).groupBy("topic").agg(F.sum("vacancies").alias("n"))
    leaving = shed.groupBy("topic").agg(F.count(F.lit(1)).alias("n"))
    merged = open_slots.unionByName(leaving).groupBy("topic").agg(F.sum("n").alias("n"))
    return {r.topic: int(r.n) for r in merged.collect()}


def _fill(
    state: DataFrame, shed: DataFrame, ctx: BalanceContext, slots: SlotPlan, vacancies: Mapping[str, int]
) -> DataFrame:
    """Per topic: the shed replicas leave, the topic's window of slots fills the vacancies."""

    def fill(parts: pd.DataFrame, leaving: pd.DataFrame) -> pd.DataFrame:
        topic = parts["topic"].iloc[0]
        rows = list(zip(parts["partition"], parts["kept"], parts["vacancies"], strict=True))
        partitions = [(int(p), _ints(k), int(v)) for p, k, v in rows]
        gone = [(int(p), int(b)) for p, b in zip(leaving["partition"], leaving["broker"], strict=True)]
        window = slots.window(topic, vacancies.get(topic, 0))
        results = {p: (r, o, s) for p, r, o, s in balance.fill_topic(ctx, partitions, gone, window)}
        kept_before = {p: k for p, k, _ in partitions}
        ordered = [results[int(p)] for p in parts["partition"]]
        return parts.assign(
            kept=[list(r) for r, _, _ in ordered],
            vacancies=[o for _, o, _ in ordered],
            shed=[list(s) for _, _, s in ordered],
            changed=[results[int(p)][0] != kept_before[int(p)] for p in parts["partition"]],
            before=[list(kept_before[int(p)]) for p in parts["partition"]],
        )[["topic", "partition", "size", "current", "kept", "vacancies", "shed", "changed", "before"]]

    return state.groupBy("topic").cogroup(shed.groupBy("topic")).applyInPandas(fill, _FILLED)


def _leaders(state: DataFrame, ctx: BalanceContext, spark: SparkSession) -> dict[tuple[str, int], list[int]]:
    per_topic = {r.topic: int(r[1]) for r in state.groupBy("topic").count().collect()}
    partitions = sum(per_topic.values())
    quotas = balance.leader_quotas(ctx, per_topic)
    first = F.col("current")[0]
    rows = state.select("topic", "partition", "kept", "current")
    quota_topics = F.broadcast(spark.createDataFrame([(t,) for t in sorted(quotas)], "topic string"))

    def topic_leaders(pdf: pd.DataFrame) -> pd.DataFrame:
        """Per topic with a quota (one group each): its leaders."""
        topic = pdf["topic"].iloc[0]
        parts = [
            (int(p), _ints(k), balance.incumbent_leader(_ints(c), _ints(k)))
            for p, k, c in zip(pdf["partition"], pdf["kept"], pdf["current"], strict=True)
        ]
        chosen = dict(balance.assign_topic_leaders(ctx, quotas[topic], parts))
        return pdf.assign(leader=[chosen[int(p)] for p in pdf["partition"]])[["topic", "partition", "kept", "leader"]]

    schema = "topic string, partition long, kept array<long>, leader long"
    fixed_rows = (
        rows.join(quota_topics, "topic").groupBy("topic").applyInPandas(topic_leaders, schema).localCheckpoint()
        if quotas
        else spark.createDataFrame([], schema)
    )
    fixed = Counter({int(r[0]): int(r[1]) for r in fixed_rows.groupBy("leader").count().collect()})
    lead = (
        rows.join(quota_topics, "topic", "left_anti")
        .select("topic", "partition", "kept", F.when(F.array_contains("kept", first), first).alias("leader"))
        .localCheckpoint()
    )
    for _ in range(balance.LEADER_ROUNDS if len(quotas) < len(per_topic) else 0):
        led = _led(lead) + fixed
        targets = balance.counts_targets(ctx.brokers, led, partitions)
        orphans_left = lead.where("leader is null").limit(1).count() > 0
        if not orphans_left and all(led[b] <= targets[b] for b in ctx.brokers):
            break
        over = [b for b in ctx.brokers if led[b] > targets[b]]
        shed = _leader_shed(led, targets, per_topic, len(ctx.brokers))
        dropped = (
            lead.where(F.col("leader").isin(over)).groupBy("leader").applyInPandas(shed, "topic string, partition long")
        )
        lead = (
            lead.join(dropped.withColumn("drop", F.lit(True)), ["topic", "partition"], "left")
            .withColumn("leader", F.when(F.col("drop"), F.lit(None).cast("long")).otherwise(F.col("leader")))
            .drop("drop")
            .localCheckpoint()
        )
        led = _led(lead) + fixed
        orphans = [(r.topic, int(r.partition), _ints(r.kept)) for r in lead.where("leader is null").collect()]
        orphan_topics = F.broadcast(
            spark.createDataFrame([(t,) for t in sorted({o[0] for o in orphans})], "topic string")
        )
        topic_led = {
            (r.topic, int(r.leader)): int(r[2])
            for r in lead.where("leader is not null")
            .join(orphan_topics, "topic")
            .groupBy("topic", "leader")
            .count()
            .collect()
        }
        chosen = balance.assign_leaders(ctx, orphans, led, targets, topic_led)
        lead = _replace(lead, chosen, "leader", spark).localCheckpoint()
    rows_out = lead.unionByName(fixed_rows).collect()
    replicas = {(r.topic, int(r.partition)): _ints(r.kept) for r in rows_out}
    leaders = {(r.topic, int(r.partition)): int(r.leader) for r in rows_out}
    if not balance.within_tolerance(ctx, Counter(leaders.values()), partitions):
        leaders.update(balance.leader_chains(ctx, leaders, replicas))
    return {key: balance.order_replicas(replicas[key], leaders[key]) for key in sorted(replicas)}


def _led(lead: DataFrame) -> Counter[int]:
    return Counter({int(r[0]): int(r[1]) for r in lead.where("leader is not null").groupBy("leader").count().collect()})


def _leader_shed(led: Counter[int], targets: Mapping[int, int], per_topic: Mapping[str, int], brokers: int):
    """Per broker above its leader target (one group each): the leaderships it gives up."""

    def shed(pdf: pd.DataFrame) -> pd.DataFrame:
        broker = int(pdf["leader"].iloc[0])
        candidates = [
            (t, int(p), 0, balance.leader_rank(_ints(k), led, targets))
            for t, p, k in zip(pdf["topic"], pdf["partition"], pdf["kept"], strict=True)
        ]
        chosen = balance.shed_from_broker(led[broker] - targets[broker], None, candidates, per_topic, brokers)
        return pd.DataFrame({"topic": [t for t, _ in chosen], "partition": [p for _, p in chosen]})

    return shed
