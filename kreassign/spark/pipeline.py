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
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import tempfile
import time
import zipfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import accumulate, chain, islice, pairwise, repeat
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kreassign.errors import CommandError
from kreassign.planning.balanced.chains import move_along_chains, replica_chains
from kreassign.planning.balanced.engine import REPLICA_ROUNDS, topic_totals
from kreassign.planning.balanced.fill import SlotPlan, fill_topic, newly_placed
from kreassign.planning.balanced.leaders import (
    LEADER_ROUNDS,
    assign_leaders,
    assign_topic_leaders,
    incumbent_leader,
    leader_quotas,
)
from kreassign.planning.balanced.normalize import normalize_partition
from kreassign.planning.balanced.repair import repair_leftovers
from kreassign.planning.balanced.shed import needy_groups, shed_aim, shed_from_broker
from kreassign.planning.balanced.targets import counts_targets, within_tolerance
from kreassign.planning.bounds import excess_over_targets
from kreassign.planning.context import BalanceContext

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
_STATE = "topic string, partition long, size long, current array<long>, kept array<long>, vacancies long"
_FILLED = (
    "topic string, partition long, kept array<long>, vacancies long, shed array<long>, changed boolean, "
    "before array<long>"
)
_LEAD = "topic string, partition long, kept array<long>, leader long"
_SHED = "topic string, partition long, broker long"
_DROP = "topic string, partition long"
_KEEP = StorageLevel.MEMORY_AND_DISK


# ---------------------------------------------------------------------------------------------- session
@contextmanager
def spark_session(master: str | None, conf: Mapping[str, str]) -> Iterator[SparkSession]:
    """A Spark session for one run, stopped at the end, leaving nothing in the temp dir.

    ``master``: ``local[...]`` (default ``local[*]``, an embedded session), a cluster URL
    (``spark://host:port``, ``yarn``, ``k8s://...``: kreassign is shipped to the executors as a zip), or
    ``sc://host:port`` (Spark Connect: the session is a client of a remote server, kreassign is added to
    it as a Python artifact). Quiet: no UI, Spark's logs at ERROR (``--spark-conf spark.log.level=WARN`` for
    more), py4j's logging silenced, and a local JVM writes to stderr only. A Ctrl-C ends as one
    ``Interrupted.`` line (the KeyboardInterrupt passes; stopping the session cannot replace it).
    """
    url = master or DEFAULT_MASTER
    folder = tempfile.mkdtemp(prefix="kreassign-spark-")
    spark = None
    with _quiet_py4j():
        try:
            if url.startswith(CONNECT_SCHEME):
                spark = _connect_session(url, conf, folder)
            else:
                spark = _classic_session(url, conf, folder)
            yield spark
        except KeyboardInterrupt:
            # the gateway's connection may be half-used (py4j was reading when the signal came): stopping the
            # session through it could fail and replace the interrupt; the JVM ends when this process does
            spark = None
            raise
        finally:
            try:
                if spark is not None:
                    spark.stop()
            finally:
                shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _quiet_py4j() -> Iterator[None]:
    """py4j logs its failures through the root logger (``logging.exception``, which would first configure it
    to print ``ERROR:root:...`` and a traceback on stderr, e.g. on Ctrl-C: "KeyboardInterrupt while sending
    command."). kreassign reports Spark's failures itself, in one line: while a session lives, the root logger
    has a handler that drops records, and py4j's own loggers are off."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    root.addHandler(guard)
    py4j = logging.getLogger("py4j")
    level = py4j.level
    py4j.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        py4j.setLevel(level)
        root.removeHandler(guard)


#: the driver JVM's log4j2 configuration: errors only, on stderr. Spark's default prints its WARN lines and
#: "Using Spark's default log4j profile" before ``spark.log.level`` applies. The root stays at WARN, the level
#: PySpark's shell logic takes as the default (else it announces "Setting default log level to ..."), and the
#: appender drops what is under ERROR.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
"""


LOCAL_JVM_HEAP_MIN = 2 << 30


def local_jvm_heap() -> str:
    """``spark.driver.memory`` of an embedded session, whose JVM runs every task: a quarter of the machine's
    memory (what a JVM takes without ``-Xmx``; Spark sets 1g), at least 2 GiB. ``--spark-conf
    spark.driver.memory=...`` overrides it. With 1 GiB, ``local[1]`` failed at 1,000,000 partitions; with
    2 GiB, the JVM of ``local[2]`` died at 10,000,000 (6 GiB completed)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # pragma: no cover - no sysconf names: not Linux or macOS
        total = 0
    return f"{max(LOCAL_JVM_HEAP_MIN, total // 4) >> 20}m"


def _settings(url: str, conf: Mapping[str, str]) -> dict[str, str]:
    local = url.startswith("local")
    settings = {
        "spark.app.name": "kreassign-generate",
        "spark.sql.shuffle.partitions": str(2 * (os.cpu_count() or 2)) if local else "200",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.adaptive.enabled": "true",
        # the JSON reader must not evaluate filters per row (a large IN list made the scan O(rows x topics))
        "spark.sql.json.filterPushdown.enabled": "false",
        # a join on (topic, partition) of two frames hashed by topic needs no shuffle (SnapshotPlanner.plan)
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
    }
    if local:
        settings["spark.driver.memory"] = local_jvm_heap()
        # the JVM runs every task: with G1 (the default) a 1,000,000-partition --generate took 73-80 s
        # wall on 2 cores (local[2], 5 runs), with the parallel collector 68-70 s (serial: 69 s); C1 alone
        # (-XX:TieredStopAtLevel=1) took 88-90 s and whole-stage codegen off 91 s: the C2 compiler's time
        # pays for itself. A --spark-conf spark.driver.extraJavaOptions replaces this value.
        settings["spark.driver.extraJavaOptions"] = "-XX:+UseParallelGC"
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
    settings = _settings(url, conf)
    if "spark.driver.extraJavaOptions" not in conf:  # (a user's own value replaces kreassign's, as documented)
        log_config = Path(folder) / "log4j2.properties"
        log_config.write_text(_LOG4J2)
        java_options = [settings.get("spark.driver.extraJavaOptions", ""), f"-Dlog4j2.configurationFile={log_config}"]
        settings["spark.driver.extraJavaOptions"] = " ".join(filter(None, java_options))
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _stdout_to_stderr():  # the JVM (and the Python workers it starts) inherit stderr as stdout
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
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
    parts: DataFrame, brokers: Sequence[int], replication_factor: int | None, with_bytes: bool
) -> tuple[int, int]:
    """:func:`kreassign.planning.quality.minimum_movement` of ``parts`` (a frame with ``current`` and
    ``size``), in one job: per broker the replicas that may stay on it (of the partitions whose replication
    factor does not go down), and, in the row of broker -1 (one per partition), the replicas forced to move,
    their bytes and the target total. ``with_bytes``: see :func:`_minimum_of`."""
    rows = parts.select(*_stay(brokers, replication_factor), "size")
    counted, missing = _kept_and_forced()
    stats = (
        rows.select(
            F.explode(F.concat(counted, F.array(F.lit(-1).cast("long")))).alias("b"),
            missing.alias("forced"),
            (missing * F.col("size")).alias("forced_bytes"),
            "rf",
        )
        .groupBy("b")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.sum("forced").alias("forced"),
            F.sum("forced_bytes").alias("forced_bytes"),
            F.sum("rf").alias("total"),
        )
        .collect()
    )
    kept = {int(r.b): int(r.n) for r in stats if r.b >= 0}
    partitions = next((r for r in stats if r.b < 0), None)
    forced, forced_bytes, total = (
        (int(partitions.forced or 0), int(partitions.forced_bytes or 0), int(partitions.total or 0))
        if partitions is not None
        else (0, 0, 0)
    )
    return _minimum_of(rows, brokers, kept, (forced, forced_bytes, total), with_bytes)


def _minimum_of(
    rows: DataFrame,
    brokers: Sequence[int],
    kept: Mapping[int, int],
    forced: tuple[int, int, int],
    with_bytes: bool,
) -> tuple[int, int]:
    """The lower bound from its counts: ``kept`` the replicas that may stay per broker, ``forced`` the
    replicas forced to move, their bytes and the target total. ``with_bytes`` and a broker above its target:
    one job on ``rows`` (``stay``, ``rf``, ``size``: :func:`_stay`) for the bytes of the smallest replicas
    each such broker keeps beyond it."""
    moved, moved_bytes, total = forced
    surplus = excess_over_targets(kept, brokers, total)
    if with_bytes and surplus:  # the smallest replicas each broker keeps beyond its target
        counted, _ = _kept_and_forced()
        flat = rows.select(F.explode(counted).alias("b"), "size")
        # each broker's sizes sorted in one array (a few thousand): half the time of a window's row numbers;
        # the brokers above their target and their surplus looked up in a literal array (no join)
        sizes = (
            flat.where(_member(surplus, F.col("b")))
            .groupBy("b")
            .agg(F.sort_array(F.collect_list("size")).alias("s"))
            .select("s", _lookup(surplus, F.col("b")).alias("n"))
        )
        smallest = F.aggregate(F.slice("s", 1, F.col("n").cast("int")), F.lit(0).cast("long"), lambda acc, x: acc + x)
        moved_bytes += int(sizes.agg(F.sum(smallest)).first()[0] or 0)
    return moved + sum(surplus.values()), moved_bytes


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
        minimum_moves = _minimum(state, ctx.brokers, ctx.replication_factor, with_bytes=False)[0]
    if moved > minimum_moves:  # then the placement by bytes alone may move fewer (engine.plan_balanced)
        plain = _place(state, ctx, None, stats, spark, tick, cached, codes)
        if _replicas_added(plain) < moved:
            placed = plain
    tick("movement")
    return _leaders(placed, ctx, topic_partitions, spark, tick, cached, codes), topic_partitions


def _place(
    state: DataFrame,
    ctx: BalanceContext,
    topic_totals: Mapping[str, int] | None,
    stats: tuple[Counter[int], Counter[int], int, int],
    spark: SparkSession,
    tick: _Timings,
    cached: list[DataFrame],
    codes: _TopicCodes,
) -> DataFrame:
    """:func:`kreassign.planning.balanced.engine.place_replicas`: the replica rounds, then chains if needed.
    ``stats``: :func:`_broker_stats` of ``state``; ``topic_totals`` None: shed by bytes only."""
    counts, held_bytes, open_total, total_bytes = stats
    total = sum(counts.values()) + open_total
    fresh = True  # counts describe state
    for _ in range(REPLICA_ROUNDS):
        if not fresh:
            counts, held_bytes, open_total, _ = _broker_stats(state)
            tick("count")
        fresh = False
        targets = counts_targets(ctx.brokers, counts, total, ctx.rack_groups())
        deficits = {b: targets[b] - counts.get(b, 0) for b in ctx.brokers}
        if not open_total and all(d >= 0 for d in deficits.values()):
            fresh = True
            break
        aims = {b: shed_aim(-deficits[b], held_bytes.get(b, 0), total_bytes, len(ctx.brokers)) for b in ctx.brokers}
        shed = _keep(_shed(state, ctx, deficits, aims, topic_totals, spark, codes), cached)
        topic_vacancies = _topic_vacancies(state, shed)
        tick("shed")
        slots = SlotPlan.build(ctx, deficits, topic_vacancies)
        shed_rows = -sum(d for d in deficits.values() if d < 0)  # at most: a broker may have less to shed
        filled = _keep(_fill(state, shed, shed_rows, ctx, slots, topic_vacancies), cached)  # touched
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
        fixed = filled.select("topic", "partition", F.col("kept").alias("fix"))
        patched = _patched(state, _small(fixed, shed_rows + open_total), "kept")
        fixes = {}
        if leftovers:  # rare: only then do the partitions that received a replica this round reach the driver
            received = [
                (r.topic, int(r.partition), _ints(r.kept), newly_placed(_ints(r.before), _ints(r.kept)))
                for r in filled.where("changed").select("topic", "partition", "kept", "before").toLocalIterator()
            ]
            received = [r for r in received if r[3]]
            now, _, _, _ = _broker_stats(patched)
            fixes = repair_leftovers(ctx, leftovers, now, targets, received)
            tick("repair")
        if not fixes and not summary.changed:  # nothing moved: state and its counts stay as they are
            fresh = True
            break
        state = _keep(
            _replace(patched, fixes, "kept", spark).select(
                "topic", "partition", "size", "current", "kept", F.lit(0).cast("long").alias("vacancies")
            ),
            cached,
        )
    if not fresh:
        counts, _, _, _ = _broker_stats(state)
    if not within_tolerance(ctx, counts, total):
        final = {
            (r.topic, int(r.partition)): _ints(r.kept)
            for r in state.select("topic", "partition", "kept").toLocalIterator()
        }
        state = _keep(_replace(state, replica_chains(ctx, final), "kept", spark), cached)
        tick("replica chains")
    return state


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


def _shed(
    state: DataFrame,
    ctx: BalanceContext,
    deficits: Mapping[int, int],
    aims: Mapping[int, int | None],
    topic_totals: Mapping[str, int] | None,
    spark: SparkSession,
    codes: _TopicCodes,
) -> DataFrame:
    """Per over-target broker (one group each): the replicas it gives up. The rank of each is computed in
    the JVM (:func:`_shed_rank`): Python gets four numbers per replica held (the topic as its code, see
    :class:`_TopicCodes`: the names go back only with the replicas shed)."""
    over = _table(spark, [(b,) for b, d in deficits.items() if d < 0], "broker long")
    held = (
        state.select("topic", "partition", "size", "kept", F.explode("kept").alias("broker"))
        .join(F.broadcast(over), "broker")
        .join(codes.frame, "topic")
        .select("broker", "code", "partition", "size", _shed_rank(ctx, needy_groups(ctx, deficits)))
    )
    brokers = len(ctx.brokers)
    names = codes.names
    totals = codes.coded(topic_totals) if topic_totals is not None else None

    def shed(group: dict[str, list]) -> dict[str, list]:
        broker = group["broker"][0]
        candidates = list(zip(*(group[c] for c in ("code", "partition", "size", "rank")), strict=True))
        chosen = shed_from_broker(-deficits[broker], aims[broker], candidates, totals, brokers)
        return {
            "topic": [names[t] for t, _ in chosen],
            "partition": [p for _, p in chosen],
            "broker": [broker] * len(chosen),
        }

    return _grouped(held, "broker", shed, _SHED)


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


def _shed_rank(ctx: BalanceContext, needy: Sequence[tuple[str, int]]) -> Any:
    """:func:`kreassign.planning.balanced.shed.shed_rank` of the replica on ``broker`` of each partition's ``kept``,
    as a column ``rank``: 0 when the partition has no more replicas than racks hold a needy broker, or when
    one of those racks holds none of its other replicas; else 1."""
    codes = _group_codes(ctx)
    groups = [codes[g] for g, n in needy if n]
    others = F.transform(F.filter("kept", lambda b: b != F.col("broker")), lambda b: _group_of(ctx, b))
    free = F.array_except(F.array(*[F.lit(g) for g in groups]).cast("array<int>"), others)
    rank = F.when((F.size("kept") <= len(needy)) | (F.size(free) > 0), 0).otherwise(1)
    return rank.cast("long").alias("rank")


def _topic_vacancies(state: DataFrame, shed: DataFrame) -> dict[str, int]:
    """Vacancies per topic after shedding: one row per topic reaches the driver."""
    open_slots = state.where(F.col("vacancies") > 0).select("topic", F.col("vacancies").alias("n"))
    leaving = shed.select("topic", F.lit(1).cast("long").alias("n"))
    merged = open_slots.unionByName(leaving).groupBy("topic").agg(F.sum("n").alias("n"))
    return {r.topic: int(r.n) for r in merged.collect()}


def _fill(
    state: DataFrame,
    shed: DataFrame,
    shed_rows: int,
    ctx: BalanceContext,
    slots: SlotPlan,
    vacancies: Mapping[str, int],
) -> DataFrame:
    """Per topic: the shed replicas leave, the topic's window of slots fills the vacancies. Only the
    partitions with vacancies or a replica shed reach Python (what :func:`kreassign.planning.balanced.fill.fill_topic` changes: it
    leaves the others as they are, and never looks at them); one row each: its replicas after (``kept``) and
    ``before``, the vacancies still open, the brokers shed from it, and whether it ``changed``. ``shed_rows``:
    at most as many rows as ``shed`` has (see :func:`_small`)."""

    def fill(group: dict[str, list]) -> dict[str, list]:
        topic = group["topic"][0]
        partitions = [
            (p, _ints(k), v) for p, k, v in zip(group["partition"], group["kept"], group["vacancies"], strict=True)
        ]
        gone = [
            (p, int(b))
            for p, out in zip(group["partition"], group["leaving"], strict=True)
            if out is not None
            for b in out
        ]
        window = slots.window(topic, vacancies.get(topic, 0))
        results = fill_topic(ctx, partitions, gone, window)
        kept_before = {p: k for p, k, _ in partitions}
        return {
            "topic": [topic] * len(results),
            "partition": [p for p, _, _, _ in results],
            "kept": [list(r) for _, r, _, _ in results],
            "vacancies": [o for _, _, o, _ in results],
            "shed": [list(s) for _, _, _, s in results],
            "changed": [r != kept_before[p] for p, r, _, _ in results],
            "before": [list(kept_before[p]) for p, _, _, _ in results],
        }

    leaving = _small(shed.groupBy("topic", "partition").agg(F.collect_list("broker").alias("leaving")), shed_rows)
    touched = (
        state.select("topic", "partition", "kept", "vacancies")
        .join(leaving, ["topic", "partition"], "left")
        .where((F.col("vacancies") > 0) | F.col("leaving").isNotNull())
    )
    return _grouped(touched, "topic", fill, _FILLED)


def _leader_counts(lead: DataFrame) -> tuple[Counter[int], int]:
    """One job: partitions led per broker, and how many have no leader."""
    rows = lead.groupBy("leader").count().collect()
    led = Counter({int(r[0]): int(r[1]) for r in rows if r[0] is not None})
    return led, sum(int(r[1]) for r in rows if r[0] is None)


def _topics(spark: SparkSession, topics: Iterable[str]) -> DataFrame:
    """A small table of topic names, for a broadcast join."""
    return F.broadcast(_table(spark, [(t,) for t in sorted(set(topics))], "topic string"))


def _leaders(
    state: DataFrame,
    ctx: BalanceContext,
    per_topic: Mapping[str, int],
    spark: SparkSession,
    tick: _Timings,
    cached: list[DataFrame],
    codes: _TopicCodes,
) -> DataFrame:
    """The leader stage of :func:`kreassign.planning.balanced.engine.plan_balanced`: the topics with a quota
    (:func:`kreassign.planning.balanced.leaders.leader_quotas`) one group each, then rounds for the other
    partitions, then chains on the driver if needed. ``per_topic``: partitions per topic."""
    partitions = sum(per_topic.values())
    brokers = len(ctx.brokers)
    quotas = leader_quotas(ctx, per_topic)
    rows = state.select("topic", "partition", "kept", "current")

    def topic_leaders(group: dict[str, list]) -> dict[str, list]:
        """Per topic with a quota (one group each): its leaders."""
        topic = group["topic"][0]
        parts = [
            (p, _ints(k), incumbent_leader(_ints(c), _ints(k)))
            for p, k, c in zip(group["partition"], group["kept"], group["current"], strict=True)
        ]
        chosen = dict(assign_topic_leaders(ctx, quotas[topic], parts))
        return {
            "topic": group["topic"],
            "partition": group["partition"],
            "kept": group["kept"],
            "leader": [chosen[p] for p in group["partition"]],
        }

    if quotas:
        quota_topics = _topics(spark, quotas)
        fixed = _keep(_grouped(rows.join(quota_topics, "topic"), "topic", topic_leaders, _LEAD), cached)
        rest = rows.join(quota_topics, "topic", "left_anti")
    else:
        fixed, rest = spark.createDataFrame([], _LEAD), rows
    first = F.get("current", 0)  # null when there is none
    lead = _keep(
        rest.select(
            "topic", "partition", "kept", F.when(F.array_contains("kept", first), first).cast("long").alias("leader")
        ),
        cached,
    )
    led, orphans_left = _leader_counts(lead.unionByName(fixed))  # the leaders of quota topics never change
    tick("leader counts")
    for _ in range(LEADER_ROUNDS if len(quotas) < len(per_topic) else 0):
        targets = counts_targets(ctx.brokers, led, partitions)
        if not orphans_left and all(led[b] <= targets[b] for b in ctx.brokers):
            break
        over = _table(spark, [(b,) for b in ctx.brokers if led[b] > targets[b]], "leader long")
        shed = _leader_shed(led, targets, codes, codes.coded(per_topic), brokers)
        held = (
            lead.join(F.broadcast(over), "leader")
            .join(codes.frame, "topic")
            .select("leader", "code", "partition", _leader_rank(ctx.brokers, led, targets))
        )
        dropped = _grouped(held, "leader", shed, _DROP).withColumn("drop", F.lit(True))
        lead = _keep(
            lead.join(
                _small(dropped, sum(led[b] - targets[b] for b in ctx.brokers if led[b] > targets[b])),
                ["topic", "partition"],
                "left",
            )
            .withColumn("was", F.col("leader"))
            .withColumn("leader", F.when(F.col("drop"), F.lit(None).cast("long")).otherwise(F.col("leader")))
            .drop("drop"),
            cached,
        )
        orphans, gone, topic_led = [], Counter(), Counter()
        # one job, one row per topic with orphans: its orphans (the driver keeps them anyway: they are the
        # leaderships given up, not the partitions), and how many of its partitions each of their replicas
        # leads (the (topic, broker) pairs assign_leaders reads)
        for r in _orphans(lead).collect():
            for o in r.o:
                orphans.append((r.topic, int(o.partition), _ints(o.kept)))
                if o.was is not None:
                    gone[int(o.was)] += 1
            topic_led.update({(r.topic, int(x.leader)): int(x.n) for x in r.l or ()})
        led = led - gone
        fixes = assign_leaders(ctx, orphans, led, targets, topic_led)
        led.update(fixes.values())
        orphans_left = len(orphans) - len(fixes)
        lead = _keep(_replace(lead.drop("was"), fixes, "leader", spark), cached)
        tick("leader round")
    rows_out = lead.select("topic", "partition", "kept", "leader").unionByName(fixed)
    if not within_tolerance(ctx, led, partitions):  # chains on the driver
        rows_out = _replace(rows_out, _leader_chains(ctx, rows_out, cached), "leader", spark)
        tick("leader chains")
    leader = F.col("leader")
    return _keep(  # leaders.order_replicas: the leader first, then the other replicas
        rows_out.select(
            "topic", "partition", F.concat(F.array(leader), F.filter("kept", lambda b: b != leader)).alias("replicas")
        ),
        cached,
    )


def _orphans(lead: DataFrame) -> DataFrame:
    """Per topic with partitions without a leader: those (``o``: partition, kept, was), and how many of its
    other partitions each broker among their replicas leads (``l``: leader, n). One job; what reaches the
    driver is bounded by the orphans and the brokers, not by the topics' partitions."""
    orphan = F.col("leader").isNull()
    per_topic = lead.where(orphan).groupBy("topic").agg(F.collect_list(F.struct("partition", "kept", "was")).alias("o"))
    asked = per_topic.select("topic", F.explode(F.array_distinct(F.flatten("o.kept"))).alias("leader"))
    counts = (
        lead.where(~orphan)
        .join(asked, ["topic", "leader"], "left_semi")
        .groupBy("topic", "leader")
        .agg(F.count(F.lit(1)).alias("n"))
        .groupBy("topic")
        .agg(F.collect_list(F.struct("leader", "n")).alias("l"))
    )
    return per_topic.join(counts, "topic", "left")


def _leader_chains(ctx: BalanceContext, rows: DataFrame, cached: list[DataFrame]) -> dict[tuple[str, int], int]:
    """:func:`kreassign.planning.balanced.leaders.leader_chains` on (topic, partition, kept, leader) rows, with the
    partitions held in arrays on the driver (tens of bytes each, not a dict of tuples): streamed in
    (topic, partition) order, the order that function takes them in, one row per topic (its partitions,
    leaders, replicas as plain lists: no Row object per partition). Returns the leaders that change."""
    names: list[str] = []
    topic_of, partition_of, leader, flat, start = array("l"), array("q"), array("q"), array("q"), array("q", [0])
    without = F.coalesce(F.col("leader"), F.lit(_NO_LEADER))
    entries = F.sort_array(F.collect_list(F.struct("partition", without.alias("leader"), "kept")))
    per_topic = rows.groupBy("topic").agg(entries.alias("e"))
    lists = per_topic.select(
        "topic",
        F.col("e.partition").alias("partitions"),
        F.col("e.leader").alias("leaders"),
        F.transform("e.kept", F.size).alias("sizes"),
        F.flatten("e.kept").alias("kept"),
    )
    # kept: ordering samples it (one job) before it shuffles it; the next slice is fetched while one is read
    for r in _keep(lists, cached).orderBy("topic").toLocalIterator(prefetchPartitions=True):
        topic_of.extend(repeat(len(names), len(r.partitions)))
        names.append(r.topic)
        partition_of.extend(r.partitions)
        leader.extend(r.leaders)
        flat.extend(r.kept)
        start.extend(islice(accumulate(r.sizes, initial=start[-1]), 1, None))
    by_leader: dict[int, array] = {}
    for i, b in enumerate(leader):
        led = by_leader.get(b)
        if led is None:
            led = by_leader[b] = array("q")
        led.append(i)
    by_leader.pop(_NO_LEADER, None)
    load = Counter(leader)
    load.pop(_NO_LEADER, None)
    changed: dict[int, int] = {}

    def edges(u: int) -> Iterator[tuple[int, int]]:
        for i in by_leader.get(u, ()):
            if leader[i] == u:
                yield from ((i, v) for v in flat[start[i] : start[i + 1]] if v != u and ctx.chosen(v))

    def move(i: int, u: int, v: int) -> None:
        leader[i] = changed[i] = v
        by_leader.setdefault(v, array("q")).append(i)

    move_along_chains(list(ctx.brokers), load, edges, move)
    return {(names[topic_of[i]], partition_of[i]): v for i, v in changed.items()}


_NO_LEADER = -(1 << 62)


def _leader_shed(
    led: Counter[int], targets: Mapping[int, int], codes: _TopicCodes, per_topic: Mapping[int, int], brokers: int
):
    """Per broker above its leader target (one group each, rows with ``rank``, see :func:`_leader_rank`, and
    the topic's ``code``): the leaderships it gives up (from the topics it leads most above their even share,
    ``per_topic`` the partitions per topic code over ``brokers``)."""
    names = codes.names

    def shed(group: dict[str, list]) -> dict[str, list]:
        broker = group["leader"][0]
        topics, partitions, ranks = group["code"], group["partition"], group["rank"]
        candidates = list(zip(topics, partitions, [0] * len(topics), ranks, strict=True))
        chosen = shed_from_broker(led[broker] - targets[broker], None, candidates, per_topic, brokers)
        return {"topic": [names[t] for t, _ in chosen], "partition": [p for _, p in chosen]}

    return shed


def _leader_rank(brokers: Iterable[int], led: Mapping[int, int], targets: Mapping[int, int]) -> Any:
    """:func:`kreassign.planning.balanced.leaders.leader_rank` of each partition's ``kept``, as a column ``rank``."""
    below = [b for b in brokers if led.get(b, 0) < targets.get(b, 0)]
    return (-F.size(F.filter("kept", lambda b: _member(below, b)))).cast("long").alias("rank")


# ---------------------------------------------------------------------------------------------- from a file
_RAW_SCHEMA = T.StructType(
    [
        T.StructField("type", T.StringType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.LongType()),
        T.StructField("replicas", T.ArrayType(T.LongType())),
        T.StructField("log_dirs", T.ArrayType(T.StringType())),
        T.StructField("size_bytes", T.LongType()),
    ]
)
_ANY = '"any"'  # kreassign.model.ANY_LOG_DIR, quoted
_ROWS_PER_STREAMED_PART = 100_000
"""Partitions per slice of the streamed plan (one Spark job each): the driver holds one slice's text at a
time, and the next one as it is fetched (about 20 MB each)."""


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
            )
        )
        self.rows = _keep(rows, self.cached)
        self.parts = self.rows.where(F.col("type") == "partition").drop("type")
        self.joined: DataFrame | None = None
        self.per_topic: dict[str, int] = {}
        self.lower: tuple[tuple[int, ...], int | None, dict[int, int], tuple[int, int, int]] | None = None
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
                F.when(partition, F.col("rf")).alias("rf"),
            ]
        else:
            counted, frame, sums = None, self.rows, []
        line = F.struct(
            F.col("type").alias("k"), F.col("topic").alias("topic"), F.lit(None).cast("long").alias("b"), *sums
        )

        def entries(kind: str, brokers: Any) -> Any:
            nulls = [F.lit(None).cast("long").alias(name) for name in ("forced", "forced_bytes", "rf")]
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
            aggregates += [F.sum(f"e.{name}").alias(name) for name in ("forced", "forced_bytes", "rf")]
        counts = frame.select(F.explode(F.concat(*parts)).alias("e")).groupBy("e.k", "e.topic", "e.b")
        known: set[str] = set()
        per_topic: dict[str, int] = {}
        load: Counter[int] = Counter()
        kept: dict[int, int] = {}
        forced = [0, 0, 0]
        for r in counts.agg(*aggregates).collect():
            if r.k == "topic":
                known.add(r.topic)
            elif r.k == "partition":
                per_topic[r.topic] = int(r.n)
                if sums:
                    forced = [f + int(v or 0) for f, v in zip(forced, (r.forced, r.forced_bytes, r.rf), strict=True)]
            elif r.b is None:
                continue
            elif r.k == "broker":
                load[int(r.b)] = int(r.n)
            else:
                kept[int(r.b)] = int(r.n)
        self.per_topic = per_topic
        if brokers is not None:
            self.lower = (tuple(brokers), replication_factor, kept, (forced[0], forced[1], forced[2]))
        self.tick("read, survey")
        return known, per_topic, load

    def minimum(self, brokers: Sequence[int], replication_factor: int | None) -> tuple[int, int]:
        """:func:`kreassign.planning.quality.minimum_movement` in one job (two with a surplus); none (one with
        a surplus) when :meth:`survey` counted it for the same brokers and replication factor."""
        if self.lower is not None and self.lower[:2] == (tuple(brokers), replication_factor):
            _, _, kept, forced = self.lower
            rows = self.parts.select(*_stay(brokers, replication_factor), "size")
            minimum = _minimum_of(rows, brokers, kept, forced, with_bytes=True)
        else:
            minimum = _minimum(self.parts, brokers, replication_factor, with_bytes=True)
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

    def collect(self) -> dict[tuple[str, int], list[int]]:
        """The whole plan on the driver (only for the stages that need every partition)."""
        assert self.joined is not None
        return {
            (r.topic, int(r.partition)): [int(b) for b in r.replicas]
            for r in self.joined.select("topic", "partition", "replicas").toLocalIterator()
        }

    def broker_totals(self) -> dict[str, tuple[dict[int, int], dict[int, int]]]:
        """One job, per broker before and after: replicas, leaders, bytes, and ``disk`` (the bytes of the
        distinct replicas of each partition, what :mod:`kreassign.planning.capacity` counts)."""
        assert self.joined is not None
        kinds = ("replicas", "leaders", "bytes", "disk")

        entries = F.concat(
            *_replicas_and_leaders(), _tagged(4, F.array_distinct("current")), _tagged(5, F.array_distinct("replicas"))
        )
        rows = (
            self.joined.select(F.explode(entries).alias("e"), "size")
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
        self.tick("plan kept, broker totals")
        return sides

    def plan_totals(self) -> tuple[int, int, int, int, int]:
        """One job: replicas moved, bytes moved, leaders changed, bytes of all replicas before, partitions."""
        assert self.joined is not None
        added = F.size(F.array_except("replicas", "current"))
        changed = (F.size("current") > 0) & (F.size("replicas") > 0) & (F.get("current", 0) != F.get("replicas", 0))
        row = self.joined.agg(
            F.sum(added),
            F.sum(added * F.col("size")),
            F.sum(changed.cast("long")),
            F.sum(F.col("size") * F.size("current")),
            F.count(F.lit(1)),
        ).first()
        self.tick("plan totals")
        return tuple(int(v or 0) for v in row)  # type: ignore[return-value]

    def topic_spreads(self, brokers: Sequence[int]) -> dict[str, list[tuple[int, int, int, int]]]:
        """One job, per topic with partitions: for replicas before, after, leaders before, after, its
        (spread, misplaced, total) of :func:`kreassign.planning.quality.topic_spread`, from how many
        chosen brokers hold each count of it."""
        assert self.joined is not None
        count = len(brokers)

        entries = F.concat(*_replicas_and_leaders())
        counts = (
            self.joined.select("topic", F.explode(entries).alias("e"))
            .where(_member(brokers, F.shiftright("e", _KINDS)))
            .groupBy("topic", "e")
            .count()
            .select("topic", F.col("e").bitwiseAND((1 << _KINDS) - 1).alias("k"), "count")
        )
        # per topic and kind, how many chosen brokers hold each count (a few rows): all the spread needs
        histogram: dict[tuple[str, int], list[tuple[int, int]]] = {}
        for r in counts.groupBy("topic", "k", "count").agg(F.count(F.lit(1)).alias("m")).collect():
            histogram.setdefault((r.topic, int(r.k)), []).append((int(r[2]), int(r.m)))
        spreads = {t: [(0, 0, 0)] * 4 for t in self.per_topic}
        for (topic, k), pairs in histogram.items():
            total = sum(v * m for v, m in pairs)
            zeros = count - sum(m for _, m in pairs)
            floor, extra = divmod(total, count)
            ceil = floor + (1 if extra else 0)
            over = sum((v - ceil) * m for v, m in pairs if v > ceil)
            under = (sum((floor - v) * m for v, m in pairs if v < floor) + floor * zeros) if floor else 0
            high, low = max(v for v, _ in pairs), min(v for v, _ in pairs)
            spreads[topic][k] = (high - (0 if zeros else low), max(over, under), total)
        self.tick("topic spreads")
        return spreads  # type: ignore[return-value]

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

    def log_dirs(self) -> list[str]:
        """One job: the distinct log dirs of the partitions planned."""
        return [
            r.d for r in self.parts.select(F.explode("log_dirs").alias("d")).distinct().collect() if r.d is not None
        ]

    def stream(
        self, heads: Sequence[tuple[str, str]], quoted: Mapping[str, str], dead: Sequence[int]
    ) -> Iterator[tuple[str, str]]:
        """Per topic in the order of ``heads`` ((topic, ``{"topic":NAME,"partition":``), topics with
        partitions), its entries of the current assignment and of the proposal (the Apache layout of
        :func:`kreassign.formats.format_topics_json`), built in the JVM: one job, a slice at a time.
        ``quoted``: the log dirs whose JSON form is not plain quotes around them; ``dead``: brokers
        outside the cluster (their replicas' log dirs print as any)."""
        assert self.joined is not None
        table = _table(
            self.spark, [(t, i, h) for i, (t, h) in enumerate(heads)], "topic string, rank long, head string"
        )
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

        rows = self.joined.join(F.broadcast(table), "topic").select(
            "topic",
            "rank",
            "partition",
            entry(F.col("current"), F.transform("current", dir_text)).alias("now"),
            entry(F.col("replicas"), F.array_repeat(F.lit(_ANY), F.size("replicas"))).alias("then"),
        )
        texts = rows.groupBy("topic", "rank").agg(
            F.sort_array(F.collect_list(F.struct("partition", "now", "then"))).alias("e")
        )
        slices = max(1, sum(self.per_topic.values()) // _ROWS_PER_STREAMED_PART)
        # kept: the range partitioning samples it first (one job), then shuffles it; neither builds it again
        topic_texts = _keep(
            texts.select(
                "rank",
                F.array_join(F.col("e.now"), ",").alias("now"),
                F.array_join(F.col("e.then"), ",").alias("then"),
            ),
            self.cached,
        )
        ordered = topic_texts.repartitionByRange(slices, "rank").sortWithinPartitions("rank")
        for r in ordered.toLocalIterator(prefetchPartitions=True):  # the next slice is built while one is printed
            yield r.now, r.then
        self.tick("plan streamed")
