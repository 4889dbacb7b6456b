"""Run the Apache tool and kreassign side by side, and compare what a runbook can see."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass

from kreassign.devcluster.jars import apache_tool_command, legacy_tool_command


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def run_apache(args: list[str], timeout: float = 180) -> Outcome:
    proc = subprocess.run([*apache_tool_command(), *args], capture_output=True, text=True, timeout=timeout)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def run_legacy_apache(args: list[str], timeout: float = 180) -> Outcome:
    """Kafka 2.8.2's kafka-reassign-partitions, the last Apache tool with --zookeeper."""
    proc = subprocess.run([*legacy_tool_command(), *args], capture_output=True, text=True, timeout=timeout)
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
