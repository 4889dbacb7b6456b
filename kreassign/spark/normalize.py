"""Stage 1 of the Spark engine: :func:`kreassign.planning.balanced.normalize.normalize_partition` of each
partition, its usual case in the JVM.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kreassign.planning.balanced.normalize import normalize_partition
from kreassign.planning.context import BalanceContext
from kreassign.spark.frames import _ints
from kreassign.spark.lookups import _group_of

_STATE = "topic string, partition long, size long, current array<long>, kept array<long>, vacancies long"


def _normalize(parts: DataFrame, ctx: BalanceContext) -> DataFrame:
    """:func:`kreassign.planning.balanced.normalize.normalize_partition` of each partition: its usual case (the
    replication factor stays, every replica on a chosen broker of a rack of its own: all stay) in the JVM,
    the others in Python. ``parts`` is read twice: it should be a checkpoint."""

    def normalize(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            results = [normalize_partition(ctx, _ints(r)) for r in pdf["current"]]
            pdf = pdf.assign(
                kept=[list(k) for k, _ in results],
                vacancies=[v for _, v in results],
            )
            yield pdf[["topic", "partition", "size", "current", "kept", "vacancies"]]

    rf = F.lit(ctx.replication_factor) if ctx.replication_factor is not None else F.size("current")
    groups = F.transform("current", lambda b: _group_of(ctx, b))  # null: not chosen
    intact = (
        (F.size("current") == rf) & (F.size(F.array_distinct(groups)) == rf) & F.forall(groups, lambda g: g.isNotNull())
    )
    marked = parts.withColumn("intact", F.coalesce(intact, F.lit(False)))
    kept = marked.where("intact").select(
        "topic",
        "partition",
        "size",
        "current",
        F.col("current").alias("kept"),
        F.lit(0).cast("long").alias("vacancies"),
    )
    return kept.unionByName(marked.where(~F.col("intact")).drop("intact").mapInPandas(normalize, _STATE))
