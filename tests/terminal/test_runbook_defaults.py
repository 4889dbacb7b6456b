"""Runbook flows with the defaults an operator runs (issue 33): no ``--journal-file``, a fresh
``XDG_STATE_HOME`` per test, the batched run in one process and the runbook's commands in a second one.

* The Apache-form ``--cancel`` from a second shell prints the Apache tool's stdout byte for byte, whatever
  kreassign has on disk: compared with the Apache tool's own ``--cancel`` (from the pinned jars) on the same
  state, a run of the same shape on another topic, live and after ``kill -9``.
* The original assignment is never lost: whatever ends a run (``--cancel``, Ctrl-C at a terminal, SIGTERM,
  ``kill -9`` then ``--cancel``, ``kill -9`` alone), the file the run named as the original holds the
  assignment from before the plan's first run, and a rerun of the same ``--execute`` resumes (and says so)
  without rewriting it.

The plan has two partitions on brokers 1,2: partition 0 only changes its order (a step that completes at
once), partition 1 moves to broker 3 (2 MB at 50 KB/s: about 40 s). With one partition moving at a time the
run completes its first step, then copies: that is where each test stops it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition
from tests.integration.differential import run_apache
from tests.integration.waiting import wait_until
from tests.terminal.screen import Terminal, remove_throttles, throttles_once_applied

pytestmark = pytest.mark.integration

SOURCE = [1, 2]
TARGETS = {0: [2, 1], 1: [3, 2]}  # partition 0: order only; partition 1: a copy to broker 3, led by it
BROKERS = [1, 2, 3]
ORIGINAL = {0: [1, 2], 1: [1, 2]}


class Runbook:
    """A topic and its plan, a default state folder, and the commands a runbook runs on them."""

    def __init__(self, bootstrap: str, port: KafkaCluster, folder: Path) -> None:
        self.bootstrap, self.port, self.folder = bootstrap, port, folder
        self.topic = f"runbook-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, self.topic, [SOURCE] * 2, messages=4000, size=1000)  # 2 MB per partition
        self.plan = folder / f"{self.topic}.json"
        partitions = [{"topic": self.topic, "partition": p, "replicas": r} for p, r in TARGETS.items()]
        self.plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
        self.env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
        self.env.pop("KREASSIGN_DEBUG", None)
        self.runs: list[subprocess.Popen] = []
        self.terminals: list[Terminal] = []

    # ---- the commands
    def execute_args(self, throttle: int) -> list[str]:
        args = ["--bootstrap-server", self.bootstrap, "--execute", "--reassignment-json-file", str(self.plan)]
        return [*args, "--max-partition-movements", "1", "--throttle", str(throttle), "--poll-interval-ms", "200"]

    def start(self, throttle: int = 50_000, name: str = "run") -> subprocess.Popen:
        """The batched --execute in the background, its stdout and stderr to files (as ``> out 2> err &``)."""
        with open(self.folder / f"{name}.out", "w") as out, open(self.folder / f"{name}.err", "w") as err:
            run = subprocess.Popen(
                [sys.executable, "-m", "kreassign", *self.execute_args(throttle)],
                stdout=out,
                stderr=err,
                env=self.env,
                cwd=self.folder,
            )
        self.runs.append(run)
        return run

    def second_shell(self, *args: str) -> subprocess.CompletedProcess:
        """A command of the runbook's second shell: kreassign as the Apache tool's drop-in."""
        return subprocess.run(
            [sys.executable, "-m", "kreassign", "--bootstrap-server", self.bootstrap, *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.folder,
            timeout=200,
        )

    def cancel(self) -> subprocess.CompletedProcess:
        return self.second_shell("--cancel", "--reassignment-json-file", str(self.plan))

    # ---- the cluster
    def layout(self) -> dict[int, list[int]]:
        return {p.partition: list(p.replicas) for p in self.port.describe_topics([self.topic])[self.topic]}

    def copying(self) -> bool:
        """Partition 0 is done and partition 1's copy runs under the run's throttle."""
        moving = self.port.list_reassignments([TopicPartition(self.topic, 0), TopicPartition(self.topic, 1)])
        return (
            TopicPartition(self.topic, 1) in moving
            and self.layout()[0] == TARGETS[0]
            and bool(throttles_once_applied(self.port, BROKERS, [self.topic], settle=0))
        )

    def wait_copying(self, where: str) -> None:
        assert wait_until(self.copying, timeout=90, interval=0.2), f"{where}: no copy under way: {self.outputs()}"
        time.sleep(0.5)

    def outputs(self) -> str:
        return "\n".join(f"--- {f.name}\n{f.read_text()}" for f in sorted(self.folder.glob("*.out")) if f.is_file())

    # ---- what kreassign keeps
    def original_files(self) -> list[Path]:
        return sorted((self.folder / "state" / "kreassign").glob("clusters/*/*-original.json"))

    def original(self) -> dict[int, list[int]]:
        [path] = self.original_files()
        return {p["partition"]: p["replicas"] for p in json.loads(path.read_text())["partitions"]}

    def close(self) -> None:
        for run in self.runs:
            if run.poll() is None:
                run.kill()
                run.wait()
        for terminal in self.terminals:
            terminal.kill()
        self.port.alter_reassignments(dict.fromkeys(self.port.list_reassignments(), None))
        remove_throttles(self.port, BROKERS, [self.topic])


@pytest.fixture
def runbook(kafka_cluster, port, tmp_path):
    made: list[Runbook] = []

    def make(name: str = "a") -> Runbook:
        folder = tmp_path / name
        folder.mkdir()
        book = Runbook(kafka_cluster.bootstrap_servers, port, folder)
        made.append(book)
        return book

    yield make
    for book in made:
        book.close()


def same_shape(stdout: str, topic: str) -> str:
    return stdout.replace(topic, "TOPIC")


@pytest.mark.parametrize("state", ["live run", "run killed with kill -9"])
def test_apache_form_cancel_prints_what_the_apache_tool_prints_on_the_same_state(runbook, state):
    ours, theirs = runbook("ours"), runbook("apache")
    results = {}
    for book, tool in ((ours, "kreassign"), (theirs, "apache")):
        run = book.start()
        book.wait_copying(tool)
        if state != "live run":
            run.send_signal(signal.SIGKILL)
            run.wait()
        if tool == "kreassign":
            done = book.cancel()
        else:
            apache = run_apache(
                ["--bootstrap-server", book.bootstrap, "--cancel", "--reassignment-json-file", str(book.plan)]
            )
            done = subprocess.CompletedProcess([], apache.code, apache.stdout, apache.stderr)
        results[tool] = done
        if state == "live run":
            run.wait(timeout=120)
    kreassign, apache = results["kreassign"], results["apache"]
    assert apache.stdout.startswith("Successfully cancelled partition reassignment for: "), apache.stdout
    assert same_shape(kreassign.stdout, ours.topic) == same_shape(apache.stdout, theirs.topic), kreassign.stderr
    assert kreassign.returncode == apache.returncode == 0
    # kreassign's account is on stderr: which run it stopped or cleaned up after, and where the original is
    assert "kreassign: " in kreassign.stderr and "-original.json" in kreassign.stderr, kreassign.stderr
    if state == "live run":
        assert "kreassign: stopped the batched run of this plan (pid " in kreassign.stderr, kreassign.stderr
        assert ours.runs[0].returncode == 4, ours.outputs()
    else:
        assert "kreassign: cleaned up after the batched run of this plan that died (pid " in kreassign.stderr
    # the cancelled step is back at its source in its exact order; the completed step stays
    assert ours.layout() == {0: TARGETS[0], 1: SOURCE}
    assert ours.port.list_reassignments() == {}
    assert throttles_once_applied(ours.port, BROKERS, [ours.topic]) == {}
    assert ours.original() == ORIGINAL


def stop_by_cancel(book: Runbook, run) -> str:
    cancel = book.cancel()
    assert cancel.returncode == 0 and cancel.stdout.startswith("Successfully cancelled"), cancel
    assert run.wait(timeout=120) == 4
    return cancel.stderr


def stop_by_sigterm(book: Runbook, run) -> str:
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=120) == 128 + signal.SIGTERM
    return ""


def stop_by_kill_then_cancel(book: Runbook, run) -> str:
    stop_by_kill(book, run)
    cancel = book.cancel()
    assert cancel.returncode == 0 and cancel.stdout.startswith("Successfully cancelled"), cancel
    return cancel.stderr


def stop_by_kill(book: Runbook, run) -> str:
    run.send_signal(signal.SIGKILL)
    run.wait()
    return ""


ENDS = {
    "--cancel": (stop_by_cancel, "was cancelled by --cancel (pid "),
    "SIGTERM": (stop_by_sigterm, "was interrupted by SIGTERM"),
    "kill -9 then --cancel": (stop_by_kill_then_cancel, "was cancelled by --cancel (pid "),
    "kill -9": (stop_by_kill, "died (pid "),
}


@pytest.mark.parametrize("end", [*ENDS, "Ctrl-C"])
def test_a_rerun_after_the_run_stopped_resumes_and_keeps_the_original(runbook, end):
    book = runbook()
    if end == "Ctrl-C":  # at the operator's terminal, stdout to a file
        terminal = Terminal(
            book.execute_args(50_000), cols=80, stdout_to=book.folder / "run.out", cwd=book.folder, env=book.env
        )
        book.terminals.append(terminal)
        book.wait_copying(end)
        terminal.ctrl_c()
        assert terminal.wait(timeout=120) == 130, terminal.text()
        how, said = "was interrupted by SIGINT", ""
    else:
        stop, how = ENDS[end]
        run = book.start()
        book.wait_copying(end)
        said = stop(book, run)
    first = (book.folder / "run.out").read_text()
    [original_file] = book.original_files()
    assert book.original() == ORIGINAL, first
    if end != "kill -9":  # a killed run prints nothing more; every other end names the original file
        assert f"--reassignment-json-file {original_file}" in first or str(original_file) in said, first + said
    assert book.layout()[0] == TARGETS[0]  # the completed step stays
    if end == "kill -9":  # --progress says what became of the run, and how to go on
        progress = book.second_shell("--progress", "--reassignment-json-file", str(book.plan), "--fail-if-incomplete")
        assert progress.returncode == 2, progress  # the killed run's step still copies in Kafka
        dead = "kreassign: The batched run of this plan died (pid {}) without its clean-up, its step(s) in flight of "
        assert dead.format(book.runs[0].pid) in progress.stderr, progress.stderr
        assert "run the same --execute again to resume it, or --cancel to revert" in progress.stderr

    rerun = book.second_shell(*book.execute_args(10_000_000)[2:])
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"Resuming the batched run of this plan that {how}" in rerun.stdout, rerun.stdout
    assert "1 of 2 partition(s) at their target" in rerun.stdout
    assert "Moving 1 of 2 partition(s) in " in rerun.stdout, rerun.stdout
    # the rerun shows the assignment as it is now, as the Apache tool's --execute does (the half-moved one), and
    # keeps the assignment from before the first run in its original file, which its own lines name
    shown = rerun.stdout.split("Current partition replica assignment\n\n")[1].split("\n")[0]
    assert {p["partition"]: p["replicas"] for p in json.loads(shown)["partitions"]}[0] == TARGETS[0]
    assert f"from before its first run, in {original_file}." in rerun.stdout
    assert book.original_files() == [original_file] and book.original() == ORIGINAL
    assert "Batched reassignment complete: 2 partition(s) at their target" in rerun.stdout
    assert book.layout() == TARGETS


def test_a_run_after_a_completed_one_starts_anew_and_keeps_the_first_original(runbook):
    book = runbook()
    first = book.second_shell(*book.execute_args(10_000_000)[2:])
    assert first.returncode == 0 and "Batched reassignment complete" in first.stdout, first.stdout
    [original_file] = book.original_files()
    first_original = original_file.read_text()
    # the plan is rolled back with the Apache form, then run again: a new run, the first one's files kept
    assert book.second_shell("--execute", "--reassignment-json-file", str(original_file)).returncode == 0
    assert wait_until(lambda: book.layout() == ORIGINAL and not book.port.list_reassignments(), timeout=60)
    again = book.second_shell(*book.execute_args(10_000_000)[2:])
    assert again.returncode == 0, again.stdout + again.stderr
    assert (
        "Starting a new batched run of this plan: the earlier one completed; its journal and original" in again.stdout
    )
    files = book.original_files()
    assert len(files) == 2 and original_file in files
    kept = next(f for f in files if f != original_file)
    assert kept.read_text() == first_original and original_file.read_text() == first_original
