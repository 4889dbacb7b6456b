"""The helpers every stage of the Spark engine uses: small tables from the driver, local checkpoints, columns
patched from a table of fixes, per-stage timings, and :func:`_grouped`, the groups a Python worker gets as
plain lists.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, pairwise
from typing import Any

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

_INTS = T.ArrayType(T.LongType())
_KEEP = StorageLevel.MEMORY_AND_DISK


def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values) if values is not None else ()


def _table(spark: SparkSession, rows: Sequence[tuple], schema: str) -> DataFrame:
    """A small table of the driver's ``rows`` (``schema``: a DDL string of plain columns), sent to the JVM as
    one Arrow batch: from a list of tuples, Spark converts the rows in Python tasks (one more job, whose first
    one waits for the Python workers to start: over a second per run)."""
    if not rows:
        return spark.createDataFrame([], schema)
    names = [part.split()[0] for part in schema.split(",")]  # the types have no commas: array<long> at most
    return spark.createDataFrame(pd.DataFrame.from_records(list(rows), columns=names), schema)


class _Timings:
    """Wall time per stage on stderr when ``KREASSIGN_SPARK_TIMINGS`` is set (profiling)."""

    def __init__(self) -> None:
        self.enabled = bool(os.environ.get("KREASSIGN_SPARK_TIMINGS"))
        self.last = time.perf_counter()

    def __call__(self, stage: str) -> None:
        if self.enabled:
            now = time.perf_counter()
            print(f"spark stage {stage}: {now - self.last:.2f} s", file=sys.stderr, flush=True)
            self.last = now


def _replace(df: DataFrame, fixes: Mapping[tuple[str, int], Any], column: str, spark: SparkSession) -> DataFrame:
    """``df`` with ``column`` replaced for the (topic, partition) keys of ``fixes`` (a small table)."""
    if not fixes:
        return df
    is_array = isinstance(df.schema[column].dataType, T.ArrayType)
    rows = [(t, p, [int(b) for b in v] if is_array else v) for (t, p), v in fixes.items()]
    schema = f"topic string, partition long, fix {'array<long>' if is_array else 'long'}"
    return _patched(df, F.broadcast(_table(spark, rows, schema)), column)


BROADCAST_ROWS = 1_000_000
"""Rows of a table of changes (replicas shed, partitions filled, leaderships given up) up to which it is
joined to the partitions by broadcast: the partitions are then not shuffled."""


def _small(df: DataFrame, rows: int) -> DataFrame:
    """``df`` with a broadcast hint when it has at most :data:`BROADCAST_ROWS` rows (``rows``: a bound)."""
    return F.broadcast(df) if rows <= BROADCAST_ROWS else df


def _patched(df: DataFrame, fixes: DataFrame, column: str) -> DataFrame:
    """``df`` with ``column`` replaced by ``fix`` of the frame ``fixes`` (topic, partition, fix) where it has a row."""
    joined = df.join(fixes, ["topic", "partition"], "left")
    return joined.withColumn(column, F.coalesce(F.col("fix"), F.col(column))).drop("fix")


def _keep(df: DataFrame, cached: list[DataFrame]) -> DataFrame:
    """``df`` as a local checkpoint: the next action materializes it (no separate job), and the frames
    built on it start from it (a leaf), so that query plans stay small: persisted frames nest their whole
    lineage, whose text AQE builds at each job (its size doubled with each stage fed by two others, until
    the JVM ran out of heap at 1,000,000 partitions). Blocks go to disk when memory is short."""
    kept = df.localCheckpoint(eager=False, storageLevel=_KEEP)
    cached.append(kept)
    return kept


def _grouped(frame: DataFrame, key: str, func: Any, schema: Any) -> DataFrame:
    """``frame.groupBy(key).applyInPandas(func, schema)``, one Python call per group, without an Arrow
    round trip or a pandas frame per group: the rows are hashed to Spark partitions by ``key`` and sorted on
    it, and each Python worker cuts the batches it streams into groups (a group that spans batches is put
    together first). ``func`` gets a group's columns as plain lists (``{name: values}``, arrays as numpy
    arrays) and returns its rows' columns the same way, in the order of ``schema``; a batch's results go
    back as one frame. applyInPandas pays about 1.2 ms per group: 15 s for 10,000 topics of 100 partitions
    with a function that does nothing, 3 s with a pandas frame per group (measured with ``local[1]``); on
    the Python side alone, 10,000 groups of 15 rows (the fill stage's shape) took 5.0 s with a pandas frame
    per group, 0.7 s with lists. As with applyInPandas, the order of a group's rows is not defined: every
    function called sorts what it gets."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        pending: dict[str, list] | None = None  # the group that may go on in the next batch
        for pdf in batches:
            size = len(pdf)
            if not size:
                continue
            keys = pdf[key]
            starts = keys.ne(keys.shift()).to_numpy().nonzero()[0].tolist()  # where each group starts
            columns = {name: pdf[name].tolist() for name in pdf.columns}
            out = []
            for start, end in pairwise([*starts, size]):
                group = {name: values[start:end] for name, values in columns.items()}
                if pending is not None:  # only before the first group of a batch
                    if pending[key][0] == group[key][0]:
                        group = {name: pending[name] + values for name, values in group.items()}
                    else:
                        out.append(func(pending))
                    pending = None
                if end < size:  # a group that ends inside the batch is whole
                    out.append(func(group))
                else:
                    pending = group
            if out:
                yield _frame(out)
        if pending is not None:
            yield _frame([func(pending)])

    return frame.repartition(key).sortWithinPartitions(key).mapInPandas(run, schema)


def _frame(results: list[dict[str, list]]) -> pd.DataFrame:
    """The columns of several groups' results (see :func:`_grouped`) as one frame."""
    return pd.DataFrame({name: list(chain.from_iterable(r[name] for r in results)) for name in results[0]})
