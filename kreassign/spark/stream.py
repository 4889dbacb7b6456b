"""The last job of the Spark engine on a snapshot file: both JSON documents built in the JVM and streamed to the
driver a slice at a time, in order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kreassign.spark.frames import _INTS, _keep, _table

_ANY = '"any"'  # kreassign.model.ANY_LOG_DIR, quoted
_ROWS_PER_STREAMED_PART = 100_000
"""Partitions per slice of the streamed plan (one Spark job each): the driver holds one slice's text at a
time, and the next one as it is fetched (about 20 MB each)."""


def stream_plan(
    spark: SparkSession,
    joined: DataFrame,
    partitions: int,
    cached: list[DataFrame],
    heads: Sequence[tuple[str, str]],
    quoted: Mapping[str, str],
    dead: Sequence[int],
) -> Iterator[tuple[str, str]]:
    """Per topic in the order of ``heads`` ((topic, ``{"topic":NAME,"partition":``), topics with
    partitions), its entries of the current assignment and of the proposal (the Apache layout of
    :func:`kreassign.formats.format_topics_json`), built in the JVM: one job, a slice at a time.
    ``quoted``: the log dirs whose JSON form is not plain quotes around them; ``dead``: brokers
    outside the cluster (their replicas' log dirs print as any)."""
    table = _table(spark, [(t, i, h) for i, (t, h) in enumerate(heads)], "topic string, rank long, head string")
    special = F.create_map(*[F.lit(x) for pair in quoted.items() for x in pair]) if quoted else None
    gone = F.lit(list(dead)).cast(_INTS) if dead else None

    def dir_text(b: Any, i: Any) -> Any:
        d = F.get(F.col("log_dirs"), i)
        text = F.concat(F.lit('"'), d, F.lit('"'))
        if special is not None:
            text = F.coalesce(F.element_at(special, d), text)
        unknown = d.isNull() if gone is None else (d.isNull() | F.array_contains(gone, b))
        return F.when(unknown, F.lit(_ANY)).otherwise(text)

    def entry(replicas: Any, dirs: Any) -> Any:
        return F.concat(
            F.col("head"),
            F.col("partition").cast("string"),
            F.lit(',"replicas":['),
            F.array_join(F.transform(replicas, lambda b: b.cast("string")), ","),
            F.lit('],"log_dirs":['),
            F.array_join(dirs, ","),
            F.lit("]}"),
        )

    rows = joined.join(F.broadcast(table), "topic").select(
        "topic",
        "rank",
        "partition",
        entry(F.col("current"), F.transform("current", dir_text)).alias("now"),
        entry(F.col("replicas"), F.array_repeat(F.lit(_ANY), F.size("replicas"))).alias("then"),
    )
    texts = rows.groupBy("topic", "rank").agg(
        F.sort_array(F.collect_list(F.struct("partition", "now", "then"))).alias("e")
    )
    slices = max(1, partitions // _ROWS_PER_STREAMED_PART)
    # kept: the range partitioning samples it first (one job), then shuffles it; neither builds it again
    topic_texts = _keep(
        texts.select(
            "rank",
            F.array_join(F.col("e.now"), ",").alias("now"),
            F.array_join(F.col("e.then"), ",").alias("then"),
        ),
        cached,
    )
    ordered = topic_texts.repartitionByRange(slices, "rank").sortWithinPartitions("rank")
    for r in ordered.toLocalIterator(prefetchPartitions=True):  # the next slice is built while one is printed
        yield r.now, r.then
