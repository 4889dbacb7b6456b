"""The plan report's jobs of the Spark engine: per broker and per topic totals of a planned snapshot, before and
after, from tagged brokers (:func:`_tagged`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kreassign.planning.context import Row
from kreassign.planning.planstate import Rest
from kreassign.planning.quality import topic_spread
from kreassign.spark.frames import _INTS
from kreassign.spark.lookups import _member

_KINDS = 3
"""Bits of a tagged broker (:func:`_tagged`) that hold its kind."""


def _tagged(kind: int, column: Any) -> Any:
    """The brokers b of the array ``column`` as numbers b * 8 + ``kind`` (:func:`_untagged` reads them back):
    several arrays in one explode, grouped on one long (a (kind, broker) struct took twice the time)."""
    return F.transform(column, lambda b: F.shiftleft(b, _KINDS) + kind)


def _untagged(e: int) -> tuple[int, int]:
    """(kind, broker) of a tagged broker (:func:`_tagged`; a negative id too: the shift is arithmetic)."""
    return e & ((1 << _KINDS) - 1), e >> _KINDS


def _replicas_and_leaders() -> list[Any]:
    """Tagged brokers of a planned partition: 0 its replicas now, 1 after, 2 its leader now, 3 after."""

    def first(column: str) -> Any:
        return F.when(F.size(column) > 0, F.array(F.get(column, 0))).otherwise(F.array().cast(_INTS))

    return [
        _tagged(0, F.col("current")),
        _tagged(1, F.col("replicas")),
        _tagged(2, first("current")),
        _tagged(3, first("replicas")),
    ]


def broker_totals(joined: DataFrame) -> dict[str, tuple[dict[int, int], dict[int, int]]]:
    """One job, per broker before and after: replicas, leaders, bytes, and ``disk`` (the bytes of the
    distinct replicas of each partition, what :mod:`kreassign.planning.capacity` counts)."""
    kinds = ("replicas", "leaders", "bytes", "disk")

    entries = F.concat(
        *_replicas_and_leaders(), _tagged(4, F.array_distinct("current")), _tagged(5, F.array_distinct("replicas"))
    )
    rows = (
        joined.select(F.explode(entries).alias("e"), "size")
        .groupBy("e")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("size").alias("bytes"))
        .collect()
    )
    sides: dict[str, tuple[dict[int, int], dict[int, int]]] = {kind: ({}, {}) for kind in kinds}
    for r in rows:
        k, b = _untagged(int(r.e))
        if k < 4:
            sides["replicas" if k < 2 else "leaders"][k % 2][b] = int(r.n)
        if k < 2 and r.bytes:
            sides["bytes"][k][b] = int(r.bytes)
        if k >= 4:
            sides["disk"][k - 4][b] = int(r.bytes or 0)
    return sides


def rest_totals(others: DataFrame) -> Rest:
    """One job: :class:`kreassign.planning.planstate.Rest` of the planned partitions ``others`` (those of the
    topics outside the bytes stage's scope): per broker after the plan its replicas, leaders, bytes and largest
    replica, before it the bytes of the distinct replicas of each partition; how many partitions."""
    leader = F.when(F.size("replicas") > 0, F.array(F.get("replicas", 0))).otherwise(F.array().cast(_INTS))
    entries = F.concat(
        _tagged(1, F.col("replicas")),
        _tagged(3, leader),
        _tagged(4, F.array_distinct("current")),
        _tagged(6, F.array(F.lit(0).cast("long"))),  # one per partition
    )
    rows = (
        others.select(F.explode(entries).alias("e"), "size")
        .groupBy("e")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("size").alias("bytes"), F.max("size").alias("largest"))
        .collect()
    )
    replicas: dict[int, int] = {}
    leaders: dict[int, int] = {}
    bytes_: dict[int, int] = {}
    largest: dict[int, int] = {}
    held: dict[int, int] = {}
    partitions = 0
    for r in rows:
        k, b = _untagged(int(r.e))
        if k == 1:
            replicas[b], bytes_[b], largest[b] = int(r.n), int(r.bytes or 0), int(r.largest or 0)
        elif k == 3:
            leaders[b] = int(r.n)
        elif k == 4:
            held[b] = int(r.bytes or 0)
        else:
            partitions = int(r.n)
    return Rest(partitions, replicas, leaders, bytes_, largest, held)


def shift_totals(
    sides: dict[str, tuple[dict[int, int], dict[int, int]]],
    spreads: dict[str, list[tuple[int, int, int]]],
    rows: Sequence[Row],
    before: Mapping[tuple[str, int], Sequence[int]],
    after: Mapping[tuple[str, int], Sequence[int]],
    brokers: Sequence[int],
) -> None:
    """:func:`broker_totals` and :func:`topic_spreads` (changed in place) of the plan ``before`` made what they
    are of ``after``, without a job: ``after`` differs in a few partitions of ``rows``, which hold every
    partition of each topic it changes (the bytes stage's scope, :mod:`kreassign.planning.scope`)."""
    changed: set[str] = set()
    for topic, partition, _, size in rows:
        old, new = before[(topic, partition)], after[(topic, partition)]
        if old == new:
            continue
        changed.add(topic)
        size = size or 0
        for kind, side, sign in (("replicas", old, -1), ("replicas", new, 1)):
            for b in side:
                _add(sides[kind][1], b, sign)
                _add(sides["bytes"][1], b, sign * size)
        for b, sign in ((old[0], -1), (new[0], 1)) if old and new else ():
            _add(sides["leaders"][1], b, sign)
        for side, sign in ((set(old), -1), (set(new), 1)):
            for b in side:
                _add(sides["disk"][1], b, sign * size)
    counts: dict[str, tuple[Counter[int], Counter[int]]] = {topic: (Counter(), Counter()) for topic in changed}
    for topic, partition, _, _ in rows:
        if topic in counts:
            held, led = counts[topic]
            replicas = after[(topic, partition)]
            held.update(replicas)
            if replicas:
                led[replicas[0]] += 1
    chosen = frozenset(brokers)
    for topic, (held, led) in counts.items():
        spreads[topic][1] = topic_spread(held, chosen)
        spreads[topic][3] = topic_spread(led, chosen)


def _add(counts: dict[int, int], b: int, n: int) -> None:
    """counts[b] += n, the entry dropped at 0 (as a job leaves it out)."""
    value = counts.get(b, 0) + n
    if value:
        counts[b] = value
    else:
        counts.pop(b, None)


def plan_totals(joined: DataFrame) -> tuple[int, int, int, int, int]:
    """One job: replicas moved, bytes moved, leaders changed, bytes of all replicas before, partitions."""
    added = F.size(F.array_except("replicas", "current"))
    changed = (F.size("current") > 0) & (F.size("replicas") > 0) & (F.get("current", 0) != F.get("replicas", 0))
    row = joined.agg(
        F.sum(added),
        F.sum(added * F.col("size")),
        F.sum(changed.cast("long")),
        F.sum(F.col("size") * F.size("current")),
        F.count(F.lit(1)),
    ).first()
    return tuple(int(v or 0) for v in row)  # type: ignore[return-value]


def topic_spreads(
    joined: DataFrame, brokers: Sequence[int], per_topic: Iterable[str]
) -> dict[str, list[tuple[int, int, int, int]]]:
    """One job, per topic with partitions: for replicas before, after, leaders before, after, its
    (spread, misplaced, total) of :func:`kreassign.planning.quality.topic_spread`, from how many
    chosen brokers hold each count of it."""
    count = len(brokers)

    entries = F.concat(*_replicas_and_leaders())
    counts = (
        joined.select("topic", F.explode(entries).alias("e"))
        .where(_member(brokers, F.shiftright("e", _KINDS)))
        .groupBy("topic", "e")
        .count()
        .select("topic", F.col("e").bitwiseAND((1 << _KINDS) - 1).alias("k"), "count")
    )
    # per topic and kind, how many chosen brokers hold each count (a few rows): all the spread needs
    histogram: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for r in counts.groupBy("topic", "k", "count").agg(F.count(F.lit(1)).alias("m")).collect():
        histogram.setdefault((r.topic, int(r.k)), []).append((int(r[2]), int(r.m)))
    spreads = {t: [(0, 0, 0)] * 4 for t in per_topic}
    for (topic, k), pairs in histogram.items():
        total = sum(v * m for v, m in pairs)
        zeros = count - sum(m for _, m in pairs)
        floor, extra = divmod(total, count)
        ceil = floor + (1 if extra else 0)
        over = sum((v - ceil) * m for v, m in pairs if v > ceil)
        under = (sum((floor - v) * m for v, m in pairs if v < floor) + floor * zeros) if floor else 0
        high, low = max(v for v, _ in pairs), min(v for v, _ in pairs)
        spreads[topic][k] = (high - (0 if zeros else low), max(over, under), total)
    return spreads  # type: ignore[return-value]
