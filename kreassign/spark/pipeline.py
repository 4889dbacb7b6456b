"""The balanced ``--generate`` as a PySpark pipeline: the stages of ``kreassign.planning.balance``, run
per partition (``mapInPandas``), per broker and per topic (``applyInPandas``, ``cogroup``) on the
executors; row-level work (reading the JSON lines with a schema, the topic filter as a broadcast join,
counting, applying decisions) stays in the JVM. The driver sees per-broker and per-topic aggregates, the
few rows left over by a stage (vacancies a topic could not fill, partitions left without a leader), and
at the end the plan, streamed in (topic, partition) order.

Every stage calls the same pure function as the local engine with the same inputs (each sorts what it
gets), so the plans are byte-identical.

Spark jobs per run: one per replica round for the per-broker counts, one for the per-topic vacancies
(it runs the shed stage), one for the fill stage and its left-overs; two per leader round; one for the
final leader counts and the streamed plan. Set ``KREASSIGN_SPARK_TIMINGS=1`` for the wall time of each
stage on stderr.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kreassign.errors import CommandError
from kreassign.planning import balance
from kreassign.planning.balance import BalanceContext, SlotPlan

DEFAULT_MASTER = "local[*]"
CONNECT_SCHEME = "sc://"
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
_STATE = "topic string, partition long, size long, first long, kept array<long>, vacancies long"
_FILLED = (
    "topic string, partition long, size long, first long, kept array<long>, vacancies long, "
    "shed array<long>, changed boolean, before array<long>"
)
_SHED = "topic string, partition long, broker long"
_KEEP = StorageLevel.MEMORY_AND_DISK


# ---------------------------------------------------------------------------------------------- session
@contextmanager
def spark_session(master: str | None, conf: Mapping[str, str]) -> Iterator[SparkSession]:
    """A Spark session for one run, stopped at the end, leaving nothing in the temp dir.

    ``master``: ``local[...]`` (default ``local[*]``, an embedded session), a cluster URL
    (``spark://host:port``, ``yarn``, ``k8s://...``: kreassign is shipped to the executors as a zip), or
    ``sc://host:port`` (Spark Connect: the session is a client of a remote server, kreassign is added to
    it as a Python artifact). Quiet: no UI, Spark's logs at WARN, and a local JVM writes to stderr only.
    """
    url = master or DEFAULT_MASTER
    folder = tempfile.mkdtemp(prefix="kreassign-spark-")
    spark = None
    try:
        if url.startswith(CONNECT_SCHEME):
            spark = _connect_session(url, conf, folder)
        else:
            spark = _classic_session(url, conf, folder)
        yield spark
    finally:
        try:
            if spark is not None:
                spark.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _settings(url: str, conf: Mapping[str, str]) -> dict[str, str]:
    local = url.startswith("local")
    settings = {
        "spark.app.name": "kreassign-generate",
        "spark.sql.shuffle.partitions": str(2 * (os.cpu_count() or 2)) if local else "200",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.adaptive.enabled": "true",
        # the JSON reader must not evaluate filters per row (a large IN list made the scan O(rows x topics))
        "spark.sql.json.filterPushdown.enabled": "false",
    }
    settings.update(conf)
    return settings


def _classic_session(url: str, conf: Mapping[str, str], folder: str) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(url)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", folder)
    )
    for key, value in _settings(url, conf).items():
        builder = builder.config(key, value)
    with _stdout_to_stderr():  # the JVM (and the Python workers it starts) inherit stderr as stdout
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(conf.get("spark.log.level", "WARN"))
    if not url.startswith("local"):
        spark.sparkContext.addPyFile(_package_zip(folder))  # executors of a real cluster get kreassign this way
    return spark


CONNECT_DEFAULT_PORT = 15002
CONNECT_TIMEOUT = 10.0
"""Seconds to open a TCP connection to a Spark Connect server; the gRPC client alone retries for minutes."""


def _connect_session(url: str, conf: Mapping[str, str], folder: str) -> SparkSession:
    _check_reachable(url)
    builder = SparkSession.builder.remote(url)
    for key, value in _settings(url, conf).items():
        if key not in ("spark.app.name", "spark.log.level"):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.addArtifacts(_package_zip(folder), pyfile=True)  # Connect has no SparkContext.addPyFile
    return spark


def _check_reachable(url: str) -> None:
    from urllib.parse import urlsplit

    address = urlsplit(url.split(";", 1)[0])
    host, port = address.hostname or "localhost", address.port or CONNECT_DEFAULT_PORT
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise CommandError(f"Spark failed: cannot reach the Spark Connect server {host}:{port} ({exc})") from None


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 points at stderr while child processes start (Apache's stdout stays clean)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # pragma: no cover - no stdout at all
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _package_zip(folder: str) -> str:
    package = Path(__file__).resolve().parents[1]
    target = Path(folder) / "kreassign.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for file in package.rglob("*.py"):
            archive.write(file, Path("kreassign") / file.relative_to(package))
    return str(target)


# ---------------------------------------------------------------------------------------------- helpers
def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values) if values is not None else ()


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
    kind = _INTS if is_array else T.LongType()
    rows = [(t, p, [int(b) for b in v] if is_array else v) for (t, p), v in fixes.items()]
    schema = T.StructType(
        [T.StructField("topic", T.StringType()), T.StructField("partition", T.LongType()), T.StructField("fix", kind)]
    )
    small = spark.createDataFrame(rows, schema)
    joined = df.join(F.broadcast(small), ["topic", "partition"], "left")
    return joined.withColumn(column, F.coalesce(F.col("fix"), F.col(column))).drop("fix")


def _keep(df: DataFrame, cached: list[DataFrame]) -> DataFrame:
    """Persist ``df``: the next action materializes it (no separate checkpoint job). Released together at
    the end of the run: releasing one early would make Spark recompute the cached frames built on it."""
    kept = df.persist(_KEEP)
    cached.append(kept)
    return kept


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
    if session is not None:
        return _plan(session, path, topics, ctx)
    with spark_session(master, conf) as spark:
        return _plan(spark, path, topics, ctx)


def _plan(
    spark: SparkSession, path: str, topics: Sequence[str], ctx: BalanceContext
) -> dict[tuple[str, int], list[int]]:
    tick = _Timings()
    cached: list[DataFrame] = []
    wanted = spark.createDataFrame([(t,) for t in sorted(set(topics))], "topic string")
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
    state = _keep(_normalize(parts, ctx), cached)
    counts, held_bytes, open_total, total_bytes = _broker_stats(state)
    tick("read, normalize, count")
    total = sum(counts.values()) + open_total
    fresh = True  # counts describe state
    for _ in range(balance.REPLICA_ROUNDS):
        if not fresh:
            counts, held_bytes, open_total, _ = _broker_stats(state)
            tick("count")
        fresh = False
        targets = balance.counts_targets(ctx.brokers, counts, total, ctx.rack_groups())
        deficits = {b: targets[b] - counts.get(b, 0) for b in ctx.brokers}
        if not open_total and all(d >= 0 for d in deficits.values()):
            fresh = True
            break
        aims = {
            b: balance.shed_aim(-deficits[b], held_bytes.get(b, 0), total_bytes, len(ctx.brokers)) for b in ctx.brokers
        }
        shed = _keep(_shed(state, ctx, deficits, aims, spark), cached)
        topic_vacancies = _topic_vacancies(state, shed)
        tick("shed")
        slots = SlotPlan.build(ctx, deficits, topic_vacancies)
        filled = _keep(_fill(state, shed, ctx, slots, topic_vacancies), cached)
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
        fixes = {}
        if leftovers:  # rare: only then do the partitions that received a replica this round reach the driver
            received = [
                (r.topic, int(r.partition), _ints(r.kept), balance.newly_placed(_ints(r.before), _ints(r.kept)))
                for r in filled.where("changed").select("topic", "partition", "kept", "before").toLocalIterator()
            ]
            received = [r for r in received if r[3]]
            now, _, _, _ = _broker_stats(filled.select("kept", "size", F.lit(0).alias("vacancies")))
            fixes = balance.repair_leftovers(ctx, leftovers, now, targets, received)
            tick("repair")
        state = _keep(
            _replace(filled, fixes, "kept", spark).select(
                "topic", "partition", "size", "first", "kept", F.lit(0).cast("long").alias("vacancies")
            ),
            cached,
        )
        if not fixes and not summary.changed:
            break
    if not fresh:
        counts, _, _, _ = _broker_stats(state)
    floor, extra = divmod(total, len(ctx.brokers))
    if any(not floor <= counts.get(b, 0) <= floor + (1 if extra else 0) for b in ctx.brokers):
        final = {
            (r.topic, int(r.partition)): _ints(r.kept)
            for r in state.select("topic", "partition", "kept").toLocalIterator()
        }
        state = _keep(_replace(state, balance.replica_chains(ctx, final), "kept", spark), cached)
        tick("replica chains")
    try:
        return _leaders(state, ctx, spark, tick, cached)
    finally:
        for frame in cached:
            frame.unpersist()


def _normalize(parts: DataFrame, ctx: BalanceContext) -> DataFrame:
    def normalize(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            currents = [_ints(r) for r in pdf["current"]]
            results = [balance.normalize_partition(ctx, c) for c in currents]
            pdf = pdf.assign(
                first=pd.array([c[0] if c else None for c in currents], dtype="Int64"),
                kept=[list(k) for k, _ in results],
                vacancies=[v for _, v in results],
            )
            yield pdf[["topic", "partition", "size", "first", "kept", "vacancies"]]

    return parts.mapInPandas(normalize, _STATE)


def _shed(
    state: DataFrame,
    ctx: BalanceContext,
    deficits: Mapping[int, int],
    aims: Mapping[int, int | None],
    spark: SparkSession,
) -> DataFrame:
    """Per over-target broker (one group each): the replicas it gives up."""
    over = spark.createDataFrame([(b,) for b, d in deficits.items() if d < 0], "broker long")
    needy = balance.needy_groups(ctx, deficits)
    held = state.select("topic", "partition", "size", "kept", F.explode("kept").alias("broker")).join(
        F.broadcast(over), "broker"
    )

    def shed(pdf: pd.DataFrame) -> pd.DataFrame:
        broker = int(pdf["broker"].iloc[0])
        candidates = [
            (t, int(p), int(s), balance.shed_rank(ctx, broker, _ints(k), needy))
            for t, p, s, k in zip(pdf["topic"], pdf["partition"], pdf["size"], pdf["kept"], strict=True)
        ]
        chosen = balance.shed_from_broker(-deficits[broker], aims[broker], candidates)
        return pd.DataFrame(
            {"topic": [t for t, _ in chosen], "partition": [p for _, p in chosen], "broker": [broker] * len(chosen)}
        )

    return held.groupBy("broker").applyInPandas(shed, _SHED)


def _topic_vacancies(state: DataFrame, shed: DataFrame) -> dict[str, int]:
    """Vacancies per topic after shedding: one row per topic reaches the driver."""
    open_slots = state.where(F.col("vacancies") > 0).select("topic", F.col("vacancies").alias("n"))
    leaving = shed.select("topic", F.lit(1).cast("long").alias("n"))
    merged = open_slots.unionByName(leaving).groupBy("topic").agg(F.sum("n").alias("n"))
    return {r.topic: int(r.n) for r in merged.collect()}


def _fill(
    state: DataFrame, shed: DataFrame, ctx: BalanceContext, slots: SlotPlan, vacancies: Mapping[str, int]
) -> DataFrame:
    """Per topic: the shed replicas leave, the topic's window of slots fills the vacancies."""
    columns = ["topic", "partition", "size", "first", "kept", "vacancies", "shed", "changed", "before"]

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
        )[columns]

    return state.groupBy("topic").cogroup(shed.groupBy("topic")).applyInPandas(fill, _FILLED)


def _leader_counts(lead: DataFrame) -> tuple[Counter[int], int]:
    """One job: partitions led per broker, and how many have no leader."""
    rows = lead.groupBy("leader").count().collect()
    led = Counter({int(r[0]): int(r[1]) for r in rows if r[0] is not None})
    return led, sum(int(r[1]) for r in rows if r[0] is None)


def _leaders(
    state: DataFrame, ctx: BalanceContext, spark: SparkSession, tick: _Timings, cached: list[DataFrame]
) -> dict[tuple[str, int], list[int]]:
    lead = _keep(
        state.select(
            "topic",
            "partition",
            "kept",
            F.when(F.array_contains("kept", F.col("first")), F.col("first")).cast("long").alias("leader"),
        ),
        cached,
    )
    led, orphans_left = _leader_counts(lead)
    partitions = sum(led.values()) + orphans_left
    tick("leader counts")
    for _ in range(balance.LEADER_ROUNDS):
        targets = balance.counts_targets(ctx.brokers, led, partitions)
        if not orphans_left and all(led[b] <= targets[b] for b in ctx.brokers):
            break
        over = spark.createDataFrame([(b,) for b in ctx.brokers if led[b] > targets[b]], "leader long")
        dropped = (
            lead.join(F.broadcast(over), "leader")
            .groupBy("leader")
            .applyInPandas(_leader_shed(led, targets), "topic string, partition long")
            .withColumn("drop", F.lit(True))
        )
        lead = _keep(
            lead.join(dropped, ["topic", "partition"], "left")
            .withColumn("was", F.col("leader"))
            .withColumn("leader", F.when(F.col("drop"), F.lit(None).cast("long")).otherwise(F.col("leader")))
            .drop("drop"),
            cached,
        )
        orphans, gone = [], Counter()
        for r in lead.where("leader is null").select("topic", "partition", "kept", "was").toLocalIterator():
            orphans.append((r.topic, int(r.partition), _ints(r.kept)))
            if r.was is not None:
                gone[int(r.was)] += 1
        led = led - gone
        fixes = balance.assign_leaders(ctx, orphans, led, targets)
        led.update(fixes.values())
        orphans_left = len(orphans) - len(fixes)
        lead = _keep(_replace(lead.drop("was"), fixes, "leader", spark), cached)
        tick("leader round")
    floor, extra = divmod(partitions, len(ctx.brokers))
    rows = lead.select("topic", "partition", "kept", "leader").orderBy("topic", "partition")
    if any(not floor <= led[b] <= floor + (1 if extra else 0) for b in ctx.brokers):  # rare: chains on the driver
        collected = [(r.topic, int(r.partition), _ints(r.kept), r.leader) for r in rows.toLocalIterator()]
        replicas = {(t, p): k for t, p, k, _ in collected}
        leaders = {(t, p): (int(b) if b is not None else None) for t, p, _, b in collected}
        leaders.update(balance.leader_chains(ctx, leaders, replicas))  # type: ignore[arg-type]
        plan = {key: balance.order_replicas(replicas[key], leaders[key]) for key in replicas}  # type: ignore[arg-type]
    else:
        plan = {
            (r.topic, int(r.partition)): balance.order_replicas(_ints(r.kept), int(r.leader))
            for r in rows.toLocalIterator()
        }
    tick("plan streamed")
    return plan


def _leader_shed(led: Counter[int], targets: Mapping[int, int]):
    """Per broker above its leader target (one group each): the leaderships it gives up."""

    def shed(pdf: pd.DataFrame) -> pd.DataFrame:
        broker = int(pdf["leader"].iloc[0])
        candidates = [
            (t, int(p), 0, balance.leader_rank(_ints(k), led, targets))
            for t, p, k in zip(pdf["topic"], pdf["partition"], pdf["kept"], strict=True)
        ]
        chosen = balance.shed_from_broker(led[broker] - targets[broker], None, candidates)
        return pd.DataFrame({"topic": [t for t, _ in chosen], "partition": [p for _, p in chosen]})

    return shed
