"""The Spark session of the Spark engine: embedded (local[N]), on a cluster (kreassign shipped to the executors
as a zip) or a Spark Connect client; quiet, and leaving nothing in the temp dir.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from kreassign.errors import CommandError
from kreassign.spark.interruption import interrupted

DEFAULT_MASTER = "local[*]"
CONNECT_SCHEME = "sc://"


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
            # session through it could fail and replace the interrupt; the local JVM is ended instead
            _end_local_jvm(spark)
            spark = None
            raise
        except Exception as exc:
            if interrupted(exc):  # py4j's own clean-up failed inside the interrupt (kreassign.spark.interruption)
                _end_local_jvm(spark)
                spark = None
                raise KeyboardInterrupt from None
            raise
        finally:
            try:
                if spark is not None:
                    spark.stop()
            finally:
                shutil.rmtree(folder, ignore_errors=True)


def _end_local_jvm(spark: SparkSession | None) -> None:
    """On Ctrl-C: ends the embedded session's JVM (the process pyspark started, ``gateway.proc``) before the
    session's folder is removed; a JVM left running a moment longer logs its tasks' failures to find the folder
    gone (seen in CI). Nothing for a Spark Connect session, or when no JVM was started."""
    try:
        proc = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
    except Exception:  # no session, a Connect session (no SparkContext), or no process of ours
        return
    try:
        proc.kill()
        proc.wait(timeout=10)
    except Exception:  # gone already, or slow to go: it ends with this process anyway
        return


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
    with _children_output_to_stderr():  # the JVM (and its Python workers) write to stderr, minus JVM noise
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


JVM_NOISE = (b"WARNING: Using incubator modules:",)
"""Lines the JVM prints at start-up whatever it runs (Spark 4 adds ``--add-modules=jdk.incubator.vector`` to its
java command, and no JVM option silences the warning): dropped from what reaches the operator's stderr."""


@contextmanager
def _children_output_to_stderr() -> Iterator[None]:
    """While child processes start (the JVM, which starts the Python workers), their stdout and stderr are a
    pipe that a thread copies to this process's stderr, without ``JVM_NOISE`` lines, for as long as they run:
    Apache's stdout stays clean and the JVM's real errors still reach the operator."""
    import threading

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        saved = os.dup(1), os.dup(2)
    except OSError:  # pragma: no cover - no stdout or stderr at all
        yield
        return
    reader, writer = os.pipe()
    threading.Thread(target=_copy_without_noise, args=(reader, os.dup(2)), daemon=True).start()
    try:
        os.dup2(writer, 1)
        os.dup2(writer, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, writer):
            os.close(fd)


def _copy_without_noise(reader: int, stderr: int) -> None:
    with os.fdopen(reader, "rb") as lines, os.fdopen(stderr, "wb", buffering=0) as out:
        for line in lines:
            if not line.startswith(JVM_NOISE):
                try:
                    out.write(line)
                except OSError:  # pragma: no cover - stderr closed: nothing to tell any more
                    return


def _package_zip(folder: str) -> str:
    package = Path(__file__).resolve().parents[1]
    target = Path(folder) / "kreassign.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for file in package.rglob("*.py"):
            archive.write(file, Path("kreassign") / file.relative_to(package))
    return str(target)
