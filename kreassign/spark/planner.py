"""The Spark engine on a snapshot file (:class:`SnapshotPlanner`): the file read once, the survey, the lower
bound, the plan kept in the JVM, the plan report's totals and the streamed plan.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import islice, repeat
from typing import Any

import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kreassign.model import TopicColumns, TopicPartition
from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.planstate import Rest
from kreassign.snapshot import RATE_FIELDS, SnapshotFormatError
from kreassign.spark.counts import _kept_and_forced, _minimum, _minimum_of, _stay
from kreassign.spark.frames import _INTS, _KEEP, _keep, _replace, _table, _Timings
from kreassign.spark.lookups import _member
from kreassign.spark.pipeline import _plan_frame
from kreassign.spark.stream import stream_plan
from kreassign.spark.totals import broker_totals, plan_totals, rest_totals, shift_totals, topic_spreads

_RAW_SCHEMA = T.StructType(
    [
        T.StructField("type", T.StringType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.LongType()),
        T.StructField("replicas", T.ArrayType(T.LongType())),
        T.StructField("log_dirs", T.ArrayType(T.StringType())),
        T.StructField("size_bytes", T.LongType()),
        T.StructField("write_bytes_per_s", T.DoubleType()),
        T.StructField("read_bytes_per_s", T.DoubleType()),
    ]
)

_SLICE = 1 << 16
"""Rows of the collected plan turned into Python objects at a time (:meth:`SnapshotPlanner.collect`)."""


class SnapshotPlanner:
    """The balanced ``--generate`` of the ``topics`` of a snapshot file, with the driver's memory bounded by
    brokers and topics: every step below is one or a few Spark jobs whose results are per broker or per
    topic, and the two documents come back a slice at a time, in order (:meth:`stream`).

    The wanted rows of the file (topic lines and partitions) are read once and cached."""

    def __init__(self, spark: SparkSession, path: str, topics: Sequence[str]) -> None:
        self.spark = spark
        self.path = path
        self.names = sorted(set(topics))
        self.cached: list[DataFrame] = []
        self.tick = _Timings()
        self.wanted = _table(spark, [(t,) for t in self.names], "topic string")
        raw = spark.read.schema(_RAW_SCHEMA).option("mode", "FAILFAST").json(path)
        rows = (
            raw.where(F.col("type").isin("topic", "partition"))
            .join(F.broadcast(self.wanted), "topic")
            .select(
                "type",
                "topic",
                "partition",
                F.coalesce("size_bytes", F.lit(0)).alias("size"),
                F.col("replicas").alias("current"),
                "log_dirs",
                *RATE_FIELDS,  # null when not sampled (--write-cluster-snapshot --sample-rates)
            )
        )
        self.rows = _keep(rows, self.cached)
        self.parts = self.rows.where(F.col("type") == "partition").drop("type")
        self.joined: DataFrame | None = None
        self.per_topic: dict[str, int] = {}
        self.lower: tuple[tuple[int, ...], int | None, dict[int, int], tuple[int, int, dict[int, int]]] | None = None
        """What :meth:`survey` counted for :meth:`minimum`: brokers, replication factor, the counts."""

    def close(self) -> None:
        for frame in self.cached:
            frame.unpersist()

    def survey(
        self, brokers: Sequence[int] | None = None, replication_factor: int | None = None
    ) -> tuple[set[str], dict[str, int], Counter[int]]:
        """One job (it reads the file): the wanted topics that have a topic line, the partitions per topic,
        and the replicas per broker now (rows of type ``broker``, one per replica, counted beside them).
        With ``brokers``, the same job counts what :meth:`minimum` needs for them and ``replication_factor``
        (rows of type ``stay``, and sums on the partitions' rows): one job and one query plan fewer."""
        partition = F.col("type") == "partition"
        if brokers is not None:
            counted, missing = _kept_and_forced()
            frame = self.rows.select("type", "topic", "current", "size", *_stay(brokers, replication_factor))
            sums = [
                F.when(partition, missing).alias("forced"),
                F.when(partition, missing * F.col("size")).alias("forced_bytes"),
            ]
            rf = F.when(partition, F.col("rf")).otherwise(F.lit(None).cast("long"))  # a row per topic and rf
        else:
            counted, frame, sums, rf = None, self.rows, [], F.lit(None).cast("long")
        line = F.struct(F.col("type").alias("k"), F.col("topic").alias("topic"), rf.alias("b"), *sums)

        def entries(kind: str, brokers: Any) -> Any:
            nulls = [F.lit(None).cast("long").alias(name) for name in ("forced", "forced_bytes")]
            return F.transform(
                F.coalesce(F.when(partition, brokers), F.array().cast(_INTS)),
                lambda b: F.struct(
                    F.lit(kind).alias("k"),
                    F.lit(None).cast("string").alias("topic"),
                    b.alias("b"),
                    *(nulls if sums else []),
                ),
            )

        parts = [F.array(line), entries("broker", F.col("current"))]
        if counted is not None:
            parts.append(entries("stay", counted))
        aggregates = [F.count(F.lit(1)).alias("n")]
        if sums:
            aggregates += [F.sum(f"e.{name}").alias(name) for name in ("forced", "forced_bytes")]
        counts = frame.select(F.explode(F.concat(*parts)).alias("e")).groupBy("e.k", "e.topic", "e.b")
        known: set[str] = set()
        per_topic: dict[str, int] = {}
        load: Counter[int] = Counter()
        kept: dict[int, int] = {}
        forced = [0, 0]
        rf_counts: Counter[int] = Counter()
        for r in counts.agg(*aggregates).collect():
            if r.k == "topic":
                known.add(r.topic)
            elif r.k == "partition":
                per_topic[r.topic] = per_topic.get(r.topic, 0) + int(r.n)
                if sums:
                    forced = [f + int(v or 0) for f, v in zip(forced, (r.forced, r.forced_bytes), strict=True)]
                    rf_counts[int(r.b)] += int(r.n)
            elif r.b is None:
                continue
            elif r.k == "broker":
                load[int(r.b)] = int(r.n)
            else:
                kept[int(r.b)] = int(r.n)
        self.per_topic = per_topic
        if brokers is not None:
            self.lower = (tuple(brokers), replication_factor, kept, (forced[0], forced[1], dict(rf_counts)))
        self.tick("read, survey")
        return known, per_topic, load

    def minimum(self, ctx: BalanceContext, after: Mapping[int, int] | None = None) -> tuple[int, int]:
        """:func:`kreassign.planning.bounds.minimum_movement` in one job (two with a broker that sheds); none
        (one with such a broker) when :meth:`survey` counted it for the same brokers and replication factor.
        ``after``: a plan's replicas per broker (the bound of the plans at least as even)."""
        if self.lower is not None and self.lower[:2] == (ctx.brokers, ctx.replication_factor):
            _, _, kept, forced = self.lower
            rows = self.parts.select(*_stay(ctx.brokers, ctx.replication_factor), "size")
            minimum = _minimum_of(rows, ctx, kept, forced, with_bytes=True, after=after)
        else:
            minimum = _minimum(self.parts, ctx, with_bytes=True, after=after)
        self.tick("minimum")
        return minimum

    def plan(self, ctx: BalanceContext, minimum_moves: int | None = None) -> None:
        """The plan, kept in the JVM beside each partition's current replicas, log dirs and size;
        ``minimum_moves``: the replicas of :meth:`minimum` with the same brokers and replication factor, when
        the caller has it (it is not computed again)."""
        parts = self.parts.select("topic", "partition", "size", "current")
        final, _ = _plan_frame(self.spark, parts, ctx, self.tick, self.cached, minimum_moves)
        # both sides hashed by topic, joined where they are (one shuffle each, none after the join; see
        # requireAllClusterKeysForCoPartition), and persisted (a checkpoint would forget how it is hashed): the
        # per-topic aggregates of the report and of the streamed plan then shuffle none of its rows
        by_topic = self.parts.repartition("topic")
        joined = final.repartition("topic").join(by_topic, ["topic", "partition"]).persist(_KEEP)
        self.cached.append(joined)
        self.joined = joined

    def collect(self, live: AbstractSet[int]) -> tuple[dict[str, TopicColumns], dict[tuple[str, int], list[int]]]:
        """The whole plan on the driver (only for the stages that need every partition) with what those stages
        read of each partition, so that the file is not read again in Python: per topic, in name order, its
        partitions in order with their current replicas, log dirs (None for a replica on a broker outside
        ``live``, the snapshot's brokers, as :meth:`kreassign.snapshot.SnapshotCluster.describe_topic_columns`
        gives them) and size (0 when the file has none, as in the Spark plan); and the plan, its replicas as
        lists. One Arrow table (at 100,000 partitions 0.3 s where a Row at a time took 2 s), sorted there and
        turned into Python a column and a slice at a time: equal log dir tuples are one object, each broker
        id is one int object, and the plan's keys share the columns' names and partition numbers."""
        assert self.joined is not None
        table = self.joined.select("topic", "partition", "size", "current", "log_dirs", "replicas").toArrow()
        order = pc.sort_indices(table, sort_keys=[("topic", "ascending"), ("partition", "ascending")])

        def column(name: str) -> Iterator[Any]:
            nonlocal table
            values = table.column(name).take(order)
            table = table.drop_columns([name])  # its buffers go as soon as it is read
            for start in range(0, len(values), _SLICE):
                yield from values.slice(start, _SLICE).to_pylist()

        runs = pc.run_end_encode(table.column("topic").take(order).combine_chunks())  # a run per topic, in order
        names, ends = runs.values.to_pylist(), runs.run_ends.to_pylist()
        table = table.drop_columns(["topic"])
        ids: dict[int, int] = {}
        same = ids.setdefault  # one int object per broker id
        dirs: dict[tuple[str | None, ...], tuple[str | None, ...]] = {}
        partitions, sizes = list(column("partition")), list(column("size"))
        current = [tuple(map(same, on, on)) for on in column("current")]
        log_dirs = [
            dirs.setdefault(where, where)
            for where in (
                tuple(where or (None,) * len(on)) for where, on in zip(column("log_dirs"), current, strict=True)
            )
        ]
        if not live.issuperset(ids):  # SnapshotCluster.describe_topic_columns: no dir outside the cluster
            log_dirs = [
                where
                if live.issuperset(on)
                else tuple(d if b in live else None for b, d in zip(on, where, strict=True))
                for on, where in zip(current, log_dirs, strict=True)
            ]

        def interned(on: list[int]) -> list[int]:
            on[:] = map(same, on, on)  # in place: Arrow's list has no spare room (a new one has a third more)
            return on

        planned = map(interned, column("replicas"))
        plan: dict[tuple[str, int], list[int]] = {}
        topics: dict[str, TopicColumns] = {}
        start = 0
        for name, end in zip(names, ends, strict=True):
            topic = topics[name] = TopicColumns(name)
            topic.partitions, topic.replicas = partitions[start:end], current[start:end]
            topic.log_dirs, topic.sizes = log_dirs[start:end], sizes[start:end]
            plan.update(zip(zip(repeat(name), topic.partitions), islice(planned, end - start), strict=True))
            start = end
        self.tick("plan collected")
        return topics, plan

    def scoped(self, scope: frozenset[str]) -> tuple[list[Row], dict[tuple[str, int], list[int]]]:
        """The partitions of the topics in ``scope`` (:mod:`kreassign.planning.scope`) on the driver, as one
        Arrow table: the rows (topic, partition, current replicas, size) by topic and partition, and the plan."""
        assert self.joined is not None
        names = F.broadcast(_table(self.spark, [(t,) for t in sorted(scope)], "topic string"))
        table = self.joined.join(names, "topic").select("topic", "partition", "current", "size", "replicas").toArrow()
        topics, partitions, currents, sizes, replicas = (
            table.column(name).to_pylist() for name in ("topic", "partition", "current", "size", "replicas")
        )
        del table
        rows = sorted(zip(topics, partitions, map(tuple, currents), sizes, strict=True))
        plan = dict(zip(zip(topics, partitions, strict=True), replicas, strict=True))
        self.tick("scope collected")
        return rows, plan

    def rest(self, scope: frozenset[str]) -> Rest:
        """:func:`kreassign.spark.totals.rest_totals` of the topics outside ``scope``."""
        assert self.joined is not None
        names = F.broadcast(_table(self.spark, [(t,) for t in sorted(scope)], "topic string"))
        rest = rest_totals(self.joined.join(names, "topic", "left_anti"))
        self.tick("rest totals")
        return rest

    def change(
        self,
        rows: Sequence[Row],
        before: Mapping[tuple[str, int], Sequence[int]],
        after: Mapping[tuple[str, int], Sequence[int]],
        brokers: Sequence[int],
        totals: dict[str, tuple[dict[int, int], dict[int, int]]],
        spreads: dict[str, list[tuple[int, int, int]]],
    ) -> None:
        """The plan kept in the JVM with the replicas of ``after`` where they differ from ``before`` (a few
        partitions of ``rows``, :meth:`scoped`), and ``totals`` (:meth:`broker_totals`) and ``spreads``
        (:meth:`topic_spreads`) made those of the changed plan (:func:`kreassign.spark.totals.shift_totals`)."""
        assert self.joined is not None
        changes = {key: replicas for key, replicas in after.items() if replicas != before[key]}
        if changes:
            joined = _replace(self.joined, changes, "replicas", self.spark).persist(_KEEP)
            self.cached.append(joined)
            self.joined = joined
            shift_totals(totals, spreads, rows, before, after, brokers)

    def broker_totals(self) -> dict[str, tuple[dict[int, int], dict[int, int]]]:
        """:func:`kreassign.spark.totals.broker_totals` of the plan."""
        assert self.joined is not None
        sides = broker_totals(self.joined)
        self.tick("plan kept, broker totals")
        return sides

    def plan_totals(self) -> tuple[int, int, int, int, int]:
        """:func:`kreassign.spark.totals.plan_totals` of the plan."""
        assert self.joined is not None
        totals = plan_totals(self.joined)
        self.tick("plan totals")
        return totals

    def replication_factors(self) -> dict[int, int]:
        """One job: partitions per replication factor of the plan (what the rack limits need)."""
        assert self.joined is not None
        rows = self.joined.groupBy(F.size("replicas").alias("rf")).count().collect()
        self.tick("replication factors")
        return {int(r.rf): int(r["count"]) for r in rows}

    def topic_spreads(self, brokers: Sequence[int]) -> dict[str, list[tuple[int, int, int, int]]]:
        """:func:`kreassign.spark.totals.topic_spreads` of the plan."""
        assert self.joined is not None
        spreads = topic_spreads(self.joined, brokers, self.per_topic)
        self.tick("topic spreads")
        return spreads

    def other_bytes(self, dirs: Sequence[tuple[int, str]]) -> dict[int, int]:
        """One job (it reads the file again): per broker, the bytes of the replicas of the topics not
        planned that sit in one of its log dirs ``dirs`` (what DescribeLogDirs reports of a snapshot)."""
        if not dirs:
            return {}
        table = F.broadcast(_table(self.spark, list(dirs), "b long, d string"))
        raw = self.spark.read.schema(_RAW_SCHEMA).option("mode", "FAILFAST").json(self.path)
        others = (
            raw.where((F.col("type") == "partition") & (F.col("size_bytes") > 0))
            .join(F.broadcast(self.wanted), "topic", "left_anti")
            .select("topic", "partition", "size_bytes", F.explode(F.arrays_zip("replicas", "log_dirs")).alias("z"))
            .select("topic", "partition", "size_bytes", F.col("z.replicas").alias("b"), F.col("z.log_dirs").alias("d"))
            .join(table, ["b", "d"])
            .dropDuplicates(["topic", "partition", "b", "d"])
        )
        return {int(r.b): int(r[1]) for r in others.groupBy("b").agg(F.sum("size_bytes")).collect()}

    def left_behind(self, brokers: Sequence[int]) -> dict[int, dict[str, int]]:
        """One job (it reads the file again): :func:`kreassign.actions.balanced.left_behind`, the replicas of
        the topics not planned on each of ``brokers``, per topic."""
        if not brokers:
            return {}
        raw = self.spark.read.schema(_RAW_SCHEMA).option("mode", "FAILFAST").json(self.path)
        counts = (
            raw.where(F.col("type") == "partition")
            .join(F.broadcast(self.wanted), "topic", "left_anti")
            .select("topic", F.explode(F.array_distinct("replicas")).alias("b"))
            .where(_member(brokers, F.col("b")))
            .groupBy("b", "topic")
            .count()
            .collect()
        )
        self.tick("left behind")
        kept: dict[int, dict[str, int]] = {}
        for r in sorted(counts, key=lambda r: (r.b, r.topic)):
            kept.setdefault(int(r.b), {})[r.topic] = int(r["count"])
        return kept

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        """One job: :meth:`kreassign.snapshot.SnapshotCluster.recorded_rates` of the partitions planned, with the
        row reader's rule (a number, 0 or more; one of the two missing is 0). A value that is not a number
        fails the read of the file (FAILFAST), as a size that is not one does."""
        sampled = F.col(RATE_FIELDS[0]).isNotNull() | F.col(RATE_FIELDS[1]).isNotNull()
        table = self.parts.where(sampled).select("topic", "partition", *RATE_FIELDS).toArrow()
        topics, partitions, writes, reads = (table.column(name).to_pylist() for name in table.column_names)
        rates = {}
        for topic, partition, *pair in zip(topics, partitions, writes, reads, strict=True):
            for key, value in zip(RATE_FIELDS, pair, strict=True):
                if value is not None and not 0 <= value < float("inf"):
                    raise SnapshotFormatError(
                        f"Invalid cluster snapshot {self.path}: partition {topic}-{partition}: {key} must be a "
                        "number of bytes per second, 0 or more"
                    )
            rates[TopicPartition(topic, partition)] = (pair[0] or 0.0, pair[1] or 0.0)
        self.tick("recorded rates")
        return rates

    def log_dirs(self) -> list[str]:
        """One job: the distinct log dirs of the partitions planned."""
        return [
            r.d for r in self.parts.select(F.explode("log_dirs").alias("d")).distinct().collect() if r.d is not None
        ]

    def stream(
        self, heads: Sequence[tuple[str, str]], quoted: Mapping[str, str], dead: Sequence[int]
    ) -> Iterator[tuple[str, str]]:
        """:func:`kreassign.spark.stream.stream_plan` of the plan."""
        assert self.joined is not None
        partitions = sum(self.per_topic.values())
        yield from stream_plan(self.spark, self.joined, partitions, self.cached, heads, quoted, dead)
        self.tick("plan streamed")
