"""The balanced ``--generate`` as a PySpark pipeline: the stages of ``kreassign.planning.balanced``, run per
partition and per broker or topic (``mapInPandas``; a group's rows reach one Python call together,
:func:`_grouped`) on the executors; row-level work (reading the JSON lines with a schema, the topic filter
as a broadcast join, the usual case of normalising a partition, the ranks the shed stages sort by,
counting, applying decisions) stays in the JVM, and Python gets only the columns and rows a stage reads
(the fill stage only the partitions with vacancies or a replica shed). The driver sees per-broker and
per-topic aggregates, the few rows left over by a stage (vacancies a topic could not fill, partitions left
without a leader), and at the end the plan, streamed in (topic, partition) order.

Every stage calls the same pure function as the local engine with the same inputs (each sorts what it
gets), and the driver takes the same decisions in the same order as
:func:`kreassign.planning.balanced.engine.plan_balanced` (topic-aware placement, the placement by bytes alone
when that one may move fewer replicas, per-topic leader quotas), so the plans are byte-identical.

Spark jobs per run: one for the per-broker counts and one for the per-topic counts; per placement (one, or two
when the topic-aware one moved more than the lower bound), one per replica round for the per-broker counts,
one for the per-topic vacancies (it runs the shed stage), one for the fill stage and its left-overs, and one
for the replicas moved; one for the lower bound (none when :meth:`SnapshotPlanner.minimum` computed it, which
it does in the job of :meth:`SnapshotPlanner.survey`, with one more only when a broker keeps more replicas
than its target); one for the leader counts (it runs the per-topic leader stage), three per leader round; one
for the streamed plan.
Set ``KREASSIGN_SPARK_TIMINGS=1`` for the wall time of each stage on stderr.

This module runs the stages (:func:`run_pipeline`), each in a module of its own beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kreassign.planning.context import BalanceContext
from kreassign.spark.counts import _broker_stats, _minimum, _replicas_added, _topic_counts
from kreassign.spark.frames import _keep, _table, _Timings
from kreassign.spark.leaders import _leaders
from kreassign.spark.lookups import _TopicCodes
from kreassign.spark.normalize import _normalize
from kreassign.spark.replicas import _place
from kreassign.spark.session import spark_session

_SNAPSHOT_SCHEMA = T.StructType(
    [
        T.StructField("type", T.StringType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.LongType()),
        T.StructField("replicas", T.ArrayType(T.LongType())),
        T.StructField("size_bytes", T.LongType()),
    ]
)


def run_pipeline(
    path: str,
    topics: Sequence[str],
    ctx: BalanceContext,
    *,
    master: str | None,
    conf: Mapping[str, str],
    session: SparkSession | None = None,
) -> dict[tuple[str, int], list[int]]:
    if session is not None:
        return _plan(session, path, topics, ctx)
    with spark_session(master, conf) as spark:
        return _plan(spark, path, topics, ctx)


def _plan(
    spark: SparkSession, path: str, topics: Sequence[str], ctx: BalanceContext
) -> dict[tuple[str, int], list[int]]:
    """:func:`kreassign.planning.balanced.engine.plan_balanced`, step for step (the plan collected to the driver:
    for tests and the driver-side stages that need every partition)."""
    cached: list[DataFrame] = []
    wanted = _table(spark, [(t,) for t in sorted(set(topics))], "topic string")
    raw = spark.read.schema(_SNAPSHOT_SCHEMA).json(path)
    parts = (
        raw.where(F.col("type") == "partition")
        .join(F.broadcast(wanted), "topic")  # a hash lookup per row, not a scan of the topic list
        .select(
            "topic",
            "partition",
            F.coalesce("size_bytes", F.lit(0)).alias("size"),
            F.col("replicas").alias("current"),
        )
    )
    try:
        final, _ = _plan_frame(spark, _keep(parts, cached), ctx, _Timings(), cached)
        return {(r.topic, int(r.partition)): [int(b) for b in r.replicas] for r in final.toLocalIterator()}
    finally:
        for frame in cached:
            frame.unpersist()


def _plan_frame(
    spark: SparkSession,
    parts: DataFrame,
    ctx: BalanceContext,
    tick: _Timings,
    cached: list[DataFrame],
    minimum_moves: int | None = None,
) -> tuple[DataFrame, dict[str, int]]:
    """The plan as a cached frame (topic, partition, replicas: leader first), unordered, and the partitions
    per topic. ``parts``: (topic, partition, size, current) of the partitions to plan; ``minimum_moves``:
    the lower bound of the replicas moved (:func:`_minimum`), when the caller has it already."""
    state = _keep(_normalize(parts, ctx), cached)
    stats = _broker_stats(state)
    topic_replicas, topic_partitions = _topic_counts(state)
    tick("read, normalize, count")
    codes = _TopicCodes(spark, topic_partitions)
    placed = _place(state, ctx, topic_replicas, stats, spark, tick, cached, codes)
    moved = _replicas_added(placed)
    if minimum_moves is None:
        minimum_moves = _minimum(state, ctx, with_bytes=False)[0]
    if moved > minimum_moves:  # then the placement by bytes alone may move fewer (engine.plan_balanced)
        plain = _place(state, ctx, None, stats, spark, tick, cached, codes)
        if _replicas_added(plain) < moved:
            placed = plain
    tick("movement")
    return _leaders(placed, ctx, topic_partitions, spark, tick, cached, codes), topic_partitions
