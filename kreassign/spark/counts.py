"""The per-broker and per-topic counts of the Spark engine (one job each; what reaches the driver is bounded by
brokers and topics), the replicas moved, and the lower bound of the replicas any balanced plan moves
(:func:`_minimum`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kreassign.planning.balanced.engine import topic_totals
from kreassign.planning.bounds import fewest_shed, replica_bands, shed_bytes, shed_counts, widened
from kreassign.planning.context import BalanceContext
from kreassign.spark.frames import _INTS
from kreassign.spark.lookups import _lookup, _member


def _broker_stats(state: DataFrame) -> tuple[Counter[int], Counter[int], int, int]:
    """One job: replicas and bytes per broker of ``kept``, the open vacancies (broker -1), and the bytes
    of all replicas and vacancies."""
    slots = F.concat(F.col("kept"), F.array_repeat(F.lit(-1).cast("long"), F.col("vacancies").cast("int")))
    rows = (
        state.select(F.explode(slots).alias("b"), "size")
        .groupBy("b")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("size").alias("bytes"))
        .collect()
    )
    counts = Counter({int(r.b): int(r.n) for r in rows if r.b >= 0})
    held = Counter({int(r.b): int(r.bytes or 0) for r in rows if r.b >= 0})
    open_total = sum(int(r.n) for r in rows if r.b < 0)
    return counts, held, open_total, sum(int(r.bytes or 0) for r in rows)


def _topic_counts(state: DataFrame) -> tuple[dict[str, int], dict[str, int]]:
    """One job, one row per topic: its replicas after planning (kept and vacancies) and its partitions."""
    rows = (
        state.groupBy("topic")
        .agg(F.sum(F.size("kept") + F.col("vacancies")).alias("replicas"), F.count(F.lit(1)).alias("partitions"))
        .collect()
    )
    replicas = topic_totals((r.topic, int(r.replicas)) for r in rows)
    return replicas, {r.topic: int(r.partitions) for r in rows}


def _replicas_added(state: DataFrame) -> int:
    """:func:`kreassign.planning.balanced.engine.replicas_added`: replicas in ``kept`` that ``current`` lacks."""
    return int(state.select(F.sum(F.size(F.array_except("kept", "current")))).first()[0] or 0)


def _stay(brokers: Sequence[int], replication_factor: int | None) -> tuple[Any, Any]:
    """Columns of a frame with ``current``: the distinct replicas on a chosen broker (``stay``), and the
    replication factor the partition is planned with (``rf``)."""
    chosen = list(brokers)
    stay = F.filter(F.array_distinct("current"), lambda b: _member(chosen, b))
    rf = F.lit(replication_factor) if replication_factor is not None else F.size("current")
    return stay.alias("stay"), rf.cast("long").alias("rf")


def _kept_and_forced() -> tuple[Any, Any]:
    """Of a frame with ``stay`` and ``rf`` (:func:`_stay`): the replicas that may stay, counted for
    their brokers (none when the replication factor goes down), and how many replicas must move."""
    counted = F.when(F.size("stay") <= F.col("rf"), F.col("stay")).otherwise(F.array().cast(_INTS))
    missing = F.greatest(F.lit(0).cast("long"), F.col("rf") - F.size("stay"))
    return counted, missing


def _minimum(
    parts: DataFrame, ctx: BalanceContext, with_bytes: bool, after: Mapping[int, int] | None = None
) -> tuple[int, int]:
    """:func:`kreassign.planning.bounds.minimum_movement` of ``parts`` (a frame with ``current`` and ``size``),
    in one job: per broker the replicas that may stay on it (of the partitions whose replication factor does not
    go down), and, in the row of ``-1 - rf`` (one per partition of that planned replication factor), the
    replicas forced to move and their bytes. ``with_bytes`` and ``after``: see :func:`_minimum_of`."""
    rows = parts.select(*_stay(ctx.brokers, ctx.replication_factor), "size")
    counted, missing = _kept_and_forced()
    stats = (
        rows.select(
            F.explode(F.concat(counted, F.array(-1 - F.col("rf")))).alias("b"),
            missing.alias("forced"),
            (missing * F.col("size")).alias("forced_bytes"),
        )
        .groupBy("b")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("forced").alias("forced"), F.sum("forced_bytes").alias("forced_bytes"))
        .collect()
    )
    kept = {int(r.b): int(r.n) for r in stats if r.b >= 0}
    per_rf = [r for r in stats if r.b < 0]
    forced = sum(int(r.forced or 0) for r in per_rf), sum(int(r.forced_bytes or 0) for r in per_rf)
    return _minimum_of(rows, ctx, kept, (*forced, {-1 - int(r.b): int(r.n) for r in per_rf}), with_bytes, after)


def _minimum_of(
    rows: DataFrame,
    ctx: BalanceContext,
    kept: Mapping[int, int],
    forced: tuple[int, int, Mapping[int, int]],
    with_bytes: bool,
    after: Mapping[int, int] | None = None,
) -> tuple[int, int]:
    """The lower bound from its counts: ``kept`` the replicas that may stay per broker, ``forced`` the
    replicas forced to move, their bytes and the partitions per planned replication factor; the bands of
    :func:`kreassign.planning.bounds.replica_bands`, widened to hold ``after`` (a plan's replicas per broker)
    when given. ``with_bytes`` and a broker that sheds (:func:`kreassign.planning.bounds.shed_counts`): one job
    on ``rows`` (``stay``, ``rf``, ``size``: :func:`_stay`) for the bytes of the smallest replicas each such
    broker sheds, and the sizes of the next ones it may shed."""
    moved, moved_bytes, rf_counts = forced
    total = sum(rf * n for rf, n in rf_counts.items())
    bands = replica_bands(ctx, total, rf_counts)
    if after is not None:
        bands = widened(bands, after) or bands
    must, may, extra = fewest_shed(kept, bands, total)
    counts = shed_counts(must, may, extra)
    if with_bytes and counts:
        counted, _ = _kept_and_forced()
        flat = rows.select(F.explode(counted).alias("b"), "size")
        # each broker's sizes sorted in one array (a few thousand): half the time of a window's row numbers;
        # the brokers that shed and how many looked up in literal arrays (no join); what reaches the driver:
        # per broker a sum and a few sizes
        first = _lookup({b: n for b, (n, _) in counts.items()}, F.col("b")).cast("int")
        more = _lookup({b: n for b, (_, n) in counts.items()}, F.col("b")).cast("int")
        sizes = (
            flat.where(_member(counts, F.col("b")))
            .groupBy("b")
            .agg(F.sort_array(F.collect_list("size")).alias("s"))
            .select(
                F.aggregate(F.slice("s", 1, first), F.lit(0).cast("long"), lambda acc, x: acc + x).alias("first"),
                F.when(more > 0, F.slice("s", first + 1, more)).otherwise(F.array().cast(_INTS)).alias("more"),
            )
            .collect()
        )
        moved_bytes += shed_bytes(((int(r.first), [int(x) for x in r.more]) for r in sizes), extra)
    return moved + sum(must.values()) + extra, moved_bytes
