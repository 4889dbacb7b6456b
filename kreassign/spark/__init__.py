"""The Spark engine of ``--generate --strategy balanced`` (optional extra: ``pip install 'kreassign[spark]'``).

Nothing here imports pyspark at module level: the modules of the engine (``kreassign.spark.pipeline`` and
the stages it runs) do, and are imported only when :func:`plan_balanced_spark` or :func:`snapshot_planner`
runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from kreassign.errors import CommandError, KreassignError, UsageError
from kreassign.planning.context import BalanceContext
from kreassign.spark.interruption import interrupted

INSTALL_HINT = "--engine spark needs pyspark, pandas and pyarrow: pip install 'kreassign[spark]'"
#: The self-contained executable carries no Spark (hundreds of MB, and a Java runtime to go with it).
EXECUTABLE_HINT = (
    "--engine spark needs pyspark, pandas and pyarrow, which the self-contained executable does not carry: "
    "pip install 'kreassign[spark]' and run that kreassign"
)
#: The file beside the self-contained executable's interpreter (packaging/build_executable.py writes it).
EXECUTABLE_MARKER = "KREASSIGN-EXECUTABLE.json"


def missing_spark(exc: ImportError) -> CommandError:
    """The one line that says how to get the Spark engine: the Python package's extra. The self-contained
    executable (its interpreter's prefix holds ``EXECUTABLE_MARKER``) cannot add it, and says so."""
    import os
    import sys

    executable = os.path.isfile(os.path.join(sys.prefix, EXECUTABLE_MARKER))
    return CommandError(f"{EXECUTABLE_HINT if executable else INSTALL_HINT} ({exc.name} is missing)")


def plan_balanced_spark(
    snapshot_path: str,
    topics: Sequence[str],
    ctx: BalanceContext,
    *,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    session: Any = None,
) -> dict[tuple[str, int], list[int]]:
    """The balanced plan of ``topics`` in the snapshot file, computed by a PySpark pipeline; equal to
    ``kreassign.planning.balanced.engine.plan_balanced`` on the same input."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise missing_spark(exc) from None
    from kreassign.spark.pipeline import run_pipeline

    if session is None:
        check_master(master)
    try:
        return run_pipeline(snapshot_path, topics, ctx, master=master, conf=conf or {}, session=session)
    except KreassignError:
        raise
    except Exception as exc:  # Py4J, Spark Connect (gRPC), a Python worker's error: one line, no trace
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise worker_error(exc) or CommandError(spark_failure(exc)) from None


@contextmanager
def snapshot_planner(
    snapshot_path: str, topics: Sequence[str], *, master: str | None = None, conf: Mapping[str, str] | None = None
) -> Iterator[Any]:
    """A ``kreassign.spark.planner.SnapshotPlanner`` on a session of its own; a Spark failure inside the
    block is one ``CommandError`` line (a kreassign error passes as it is)."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise missing_spark(exc) from None
    from kreassign.spark.planner import SnapshotPlanner
    from kreassign.spark.session import spark_session

    check_master(master)
    try:
        with spark_session(master, conf or {}) as spark:
            planner = SnapshotPlanner(spark, snapshot_path, topics)
            try:
                yield planner
            finally:
                planner.close()
    except KreassignError:
        raise
    except Exception as exc:  # Py4J, Spark Connect (gRPC), a Python worker's error: one line, no trace
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise worker_error(exc) or CommandError(spark_failure(exc)) from None


_MASTER = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|(spark|k8s|sc)://\S+)$")


def check_master(master: str | None) -> None:
    """The forms of master URL Spark knows (``sc://`` is Spark Connect), checked before a JVM starts."""
    if master is not None and not _MASTER.match(master):
        raise UsageError(
            f"Invalid --spark-master '{master}': expected local[N], spark://HOST:PORT, yarn, k8s://URL "
            "or sc://HOST:PORT (Spark Connect)"
        )


_KREASSIGN_ERROR_LINE = re.compile(r"^(kreassign(?:\.\w+)+)\.(\w+): (.+)$")


def worker_error(exc: BaseException) -> KreassignError | None:
    """The typed error a stage raised in a Spark worker (e.g. an impossible replication factor), rebuilt
    on the driver so that both engines fail the same way."""
    import importlib

    for line in reversed(str(exc).splitlines()):
        match = _KREASSIGN_ERROR_LINE.match(line.strip())
        if not match:
            continue
        try:
            kind = getattr(importlib.import_module(match.group(1)), match.group(2))
        except (ImportError, AttributeError):
            return None
        if isinstance(kind, type) and issubclass(kind, KreassignError):
            try:
                return kind(match.group(3).strip())
            except TypeError:
                return None
    return None


_PYTHON_ERROR_LINE = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception)): (.+)$")
_NOISE = re.compile(r"\s+")


def spark_failure(exc: BaseException) -> str:
    """One line for a Spark failure: the error raised in a Python worker when there is one (its last
    ``SomeError: message`` line), else the first line of Spark's message, without Java or Python traces."""
    text = str(exc)
    worker = [m for m in (_PYTHON_ERROR_LINE.match(line.strip()) for line in text.splitlines()) if m]
    if "Traceback (most recent call last)" in text and worker:
        return f"Spark failed: {worker[-1].group(2).strip()}"
    if "JAVA_GATEWAY_EXITED" in text:
        return "Spark failed: its Java process did not start (Java 17+ is needed: check JAVA_HOME; Spark's message is on stderr)"
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    first = _NOISE.sub(" ", first)
    if len(first) > 400:
        first = first[:400] + "..."
    return f"Spark failed: {first}"
