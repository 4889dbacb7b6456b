"""Run the Apache tool and kreassign side by side, and compare what a runbook can see."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kreassign.devcluster.jars import (
    LEGACY_REASSIGN_MAIN_CLASS,
    LEGACY_TOOL_KAFKA_VERSION,
    REASSIGN_MAIN_CLASS,
    apache_tool_command,
    pinned_kafka_version,
)

#: The JVM of the Apache tools the tests run: C1 only and the serial collector. What a tool prints and its exit
#: code do not depend on the JIT or the collector; the start-up takes about 60 % of the CPU time of
#: bin/kafka-run-class.sh's options (``APACHE_TOOL_JVM_OPTS``, which the benchmarks keep: they time the tool as
#: operators run it).
TEST_TOOL_JVM_OPTS = ("-Xmx256M", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
_archive_folder: list[Path] = []


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def tool_command(
    version: str | None = None, main_class: str = REASSIGN_MAIN_CLASS, archive: bool = True
) -> tuple[list[str], Path | None]:
    """argv prefix of an Apache tool for the tests (``TEST_TOOL_JVM_OPTS``), and the class-data archive this run
    writes, if it is the first of the tool in this test session: that run saves the classes it loaded in an
    archive (AppCDS, JDK 13+; its JVM warnings off, so stdout and stderr are the tool's own), which the later
    runs map instead of loading and verifying those classes from the jars (about half the CPU time again).
    A JVM that cannot use the archive loads the classes from the jars, silently. Call :func:`keep_archive`
    when the run has ended by itself. ``archive=False``: no archive (a tool run once a session)."""
    version = version or pinned_kafka_version()
    if not archive:
        return apache_tool_command(TEST_TOOL_JVM_OPTS, version, main_class), None
    if not _archive_folder:
        _archive_folder.append(Path(tempfile.mkdtemp(prefix="kreassign-tool-cds-")))
        atexit.register(shutil.rmtree, _archive_folder[0], True)
    saved = _archive_folder[0] / f"{version}-{main_class}.jsa"
    if saved.exists():
        return apache_tool_command((*TEST_TOOL_JVM_OPTS, f"-XX:SharedArchiveFile={saved}"), version, main_class), None
    partial = saved.with_name(f"{saved.name}.{os.getpid()}-{time.monotonic_ns()}")
    opts = (*TEST_TOOL_JVM_OPTS, "-Xlog:disable", f"-XX:ArchiveClassesAtExit={partial}")
    return apache_tool_command(opts, version, main_class), partial


def keep_archive(partial: Path | None, ended: bool = True) -> None:
    """The archive a tool's first run wrote (:func:`tool_command`), put in its place if the run ended by itself
    (it is written whole at the JVM's exit), else thrown away."""
    if partial is None or not partial.exists():
        return
    if ended:
        partial.replace(partial.with_name(partial.name.rsplit(".", 1)[0]))
    else:
        partial.unlink()


def run_tool(args: list[str], version: str | None = None, main_class: str = REASSIGN_MAIN_CLASS, timeout: float = 180):
    """An Apache tool (:func:`tool_command`) run to its end: its CompletedProcess (text)."""
    command, partial = tool_command(version, main_class)
    ended = False
    try:
        proc = subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout)
        ended = proc.returncode >= 0  # not killed by a signal
        return proc
    finally:
        keep_archive(partial, ended)


def run_apache(args: list[str], timeout: float = 180, operator_jvm: bool = False) -> Outcome:
    """The Apache tool's outcome. ``operator_jvm``: on bin/kafka-run-class.sh's JVM options (G1), for the inputs
    whose outcome depends on the JVM: on the tests' options the 100 MB inputs end in ``Java heap space``, where
    the operator's JVM reads them and Jackson refuses the string (its length limit)."""
    if operator_jvm:
        proc = subprocess.run([*apache_tool_command(), *args], capture_output=True, text=True, timeout=timeout)
    else:
        proc = run_tool(args, timeout=timeout)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def run_legacy_apache(args: list[str], timeout: float = 180) -> Outcome:
    """Kafka 2.8.2's kafka-reassign-partitions, the last Apache tool with --zookeeper."""
    proc = run_tool(args, LEGACY_TOOL_KAFKA_VERSION, LEGACY_REASSIGN_MAIN_CLASS, timeout=timeout)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def legacy_contract_stdout(stdout: str) -> str:
    """What kreassign's --zookeeper path keeps of Kafka 2.8.2's stdout: all (its deprecation line included)
    but the Java stack trace after an ``Error:`` line."""
    stdout = strip_java_stack_trace(stdout)
    # Kafka's ApiExceptions have no stack frames: "Error: M\n<class>: M\n\n"
    stackless = re.fullmatch(r"(.*?Error: (.*)\n)[\w.$]+: \2\n\n?", stdout, flags=re.S)
    return stackless.group(1) if stackless else stdout


def run_ours(args: list[str], timeout: float = 180) -> Outcome:
    proc = subprocess.run([sys.executable, "-m", "kreassign", *args], capture_output=True, text=True, timeout=timeout)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


_STACK_FRAME = "\n\tat "


def strip_java_stack_trace(stdout: str) -> str:
    """The Apache tool prints ``Error: <message>`` then ``Utils.stackTrace(e)`` (which starts with
    ``<exception class>: <message>``) on stdout. Keep what precedes the stack trace: that is the
    contract kreassign keeps (docs/compatibility.md)."""
    start = stdout.find("Error: ")
    frame = stdout.find(_STACK_FRAME, start)
    if start < 0:
        return stdout
    if frame < 0:  # an exception without frames (a server error): "<class>: M" and an empty line
        bare = re.fullmatch(r"(Error: (.*)\n)[\w.$]+: \2\n\n?", stdout[start:], flags=re.S)
        return stdout[:start] + bare.group(1) if bare else stdout
    header = stdout[start:frame]  # "Error: M\n<class>: M"  (M may span several lines)
    for cut in [m.start() for m in re.finditer("\n", header)]:
        message = header[len("Error: ") : cut]
        trace_head = header[cut + 1 :]
        if re.fullmatch(r"[\w.$]+(: " + re.escape(message) + r")?", trace_head, flags=re.S) or (
            message == "null" and re.fullmatch(r"[\w.$]+", trace_head)
        ):
            return stdout[: start + cut + 1]
    return stdout[:frame]


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def wait_until(predicate, timeout: float = 60, interval: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
