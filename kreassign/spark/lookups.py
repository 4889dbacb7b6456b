"""Lookups in the Spark engine's columns: a broker's group (rack) and membership, from one SQL literal table
(:func:`_lookup`), and the topics as numbers (:class:`_TopicCodes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from kreassign.planning.context import BalanceContext
from kreassign.spark.frames import _table

DENSE_BROKER_RANGE = 1 << 14
"""Largest span of broker ids (highest - lowest + 1) looked up in an array indexed by id: a map column is
searched key by key (a thousand brokers: about twice the time of the array on 3,000,000 lookups), and an
``isin`` in a lambda is a set of boxed numbers. Bounded so that the array's SQL literal stays small (ids
spread wider, say 1 and 50,000, use the map)."""


def _lookup(values: Mapping[int, int], b: Any) -> Any:
    """``values[b]`` (an int) for the broker column ``b``, null for a broker not in ``values``: one array
    index when the ids span at most :data:`DENSE_BROKER_RANGE`, else a map. The table is one SQL literal
    (one call to the JVM, where a column per value took two each: seconds of the driver's time per run)."""
    if not values:
        return F.lit(None).cast("int")
    low, high = min(values), max(values)
    if high - low < DENSE_BROKER_RANGE:
        table = ",".join("null" if (v := values.get(i)) is None else str(int(v)) for i in range(low, high + 1))
        return F.when((b >= low) & (b <= high), F.get(F.expr(f"array({table})"), (b - low).cast("int")))
    pairs = ",".join(f"{int(k)}L,{int(v)}" for k, v in values.items())
    return F.try_element_at(F.expr(f"map({pairs})"), b)


def _member(brokers: Iterable[int], b: Any) -> Any:
    """Whether the broker column ``b`` is one of ``brokers`` (false for null)."""
    return F.coalesce(_lookup(dict.fromkeys(brokers, 1), b) == 1, F.lit(False))


def _group_codes(ctx: BalanceContext) -> dict[str, int]:
    """A number per group of chosen brokers (groups are only compared for equality)."""
    return {g: i for i, g in enumerate(sorted({ctx.group(x) for x in ctx.brokers}))}


def _group_of(ctx: BalanceContext, b: Any) -> Any:
    """The number (:func:`_group_codes`) of the group (rack, or a group of its own) of the broker column
    ``b``, null when it is not chosen: :meth:`BalanceContext.group`."""
    codes = _group_codes(ctx)
    return _lookup({x: codes[ctx.group(x)] for x in ctx.brokers}, b)


class _TopicCodes:
    """A number per topic, in the order of the names (so that the numbers sort as the names do): what the
    shed stage sends to Python in place of the names of the ~3,000,000 replicas it looks at (a broadcast
    join in the JVM). ``names``: the topics planned (bounded by topics, as every table on the driver)."""

    def __init__(self, spark: SparkSession, topics: Iterable[str]) -> None:
        self.names = sorted(set(topics))
        self.codes = {t: i for i, t in enumerate(self.names)}
        self.frame = F.broadcast(_table(spark, [(t, i) for i, t in enumerate(self.names)], "topic string, code long"))

    def coded(self, values: Mapping[str, int]) -> dict[int, int]:
        """``values`` by topic code (topics without a code left out)."""
        return {self.codes[t]: v for t, v in values.items() if t in self.codes}
