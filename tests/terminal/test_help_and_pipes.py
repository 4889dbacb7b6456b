"""--help at a real terminal (80 and 140 columns) and into a pipe, the plan report on stderr's terminal while
stdout goes to a file, and kreassign writing into a real shell pipe whose reader has gone (``| head -1``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from kreassign.cli.spec import SPECS
from kreassign.devcluster.topics import create_topic
from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.terminal.screen import Terminal

pytestmark = pytest.mark.integration

KREASSIGN = f"{sys.executable} -m kreassign"


def option_heads() -> dict[str, str]:
    """Each option's first line in --help: its name whole, and its value's name."""
    from kreassign.cli.typer_app import option_head

    return {name: option_head(spec) for name, spec in SPECS.items()}


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """An offline cluster of 4 brokers and 2,500 partitions: --generate prints far more than a pipe holds
    (64 KiB), so its reader leaving is always seen, and --strategy balanced has a report to show."""
    path = tmp_path_factory.mktemp("snapshot")
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 2 - p % 2), ("/d1", "/d1"), 1000 * (p + 1), 1 + p % 2) for p in range(2500)
    )
    brokers = tuple(SnapshotBroker(b, "ab"[b % 2], ("/d1",)) for b in (1, 2, 3, 4))
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path / "c.jsonl"))
    (path / "topics.json").write_text('{"version":1,"topics":[{"topic":"orders"}]}')
    return path


def generate_offline(snapshot, *extra: str) -> list[str]:
    return [
        "--generate",
        "--cluster-snapshot-file",
        str(snapshot / "c.jsonl"),
        "--topics-to-move-json-file",
        str(snapshot / "topics.json"),
        "--broker-list",
        "1,2,3,4",
        *extra,
    ]


@pytest.mark.parametrize("cols", [80, 140])
def test_help_at_the_terminal_shows_every_option_name_whole(cols):
    terminal = Terminal(["--help"], cols=cols, rows=40)
    assert terminal.wait(timeout=60) == 0
    lines = terminal.lines()
    missing = [head for head in option_heads().values() if head not in lines]
    assert not missing, "\n".join(lines)
    assert lines[0] == "Usage: kreassign [OPTIONS]"
    assert "…" not in terminal.raw


def test_help_into_a_pipe_is_plain_text_at_80_columns_named_as_invoked(tmp_path):
    # the wheel's console script under the Apache tool's name
    script = tmp_path / "kafka-reassign-partitions"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom kreassign.cli.entry import main\nsys.exit(main())\n")
    script.chmod(0o755)
    for argv in ([str(script), "--help"], [str(script), "-h"]):
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == "Usage: kafka-reassign-partitions [OPTIONS]"
        assert all(head in lines for head in option_heads().values())
        assert not set(result.stdout) & set("╭╮╰╯│─━…") and "\x1b" not in result.stdout
        assert all(line == line.rstrip() for line in lines)
        assert all(len(line) <= 80 for line in lines if not line.startswith("  --"))


def test_plan_report_takes_the_width_of_stderrs_terminal(snapshot, tmp_path):
    """``> plan.txt`` on a 140-column terminal: the report on stderr is drawn for 140 columns, not 80."""
    plan = tmp_path / "plan.txt"
    terminal = Terminal(generate_offline(snapshot, "--strategy", "balanced"), cols=140, stdout_to=plan)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = terminal.lines()
    [headline] = [line for line in lines if line.startswith("Balanced plan (engine local)")]
    # wrapped at 140 columns, not 80; the per-broker bars use the width too
    assert 120 < len(headline) <= 140, "\n".join(lines)
    assert any("█" in line and len(line) > 100 for line in lines), "\n".join(lines)
    assert plan.read_text().startswith("Current partition replica assignment\n")


def run_pipeline(command: str, timeout: float = 120) -> tuple[int, str, str]:
    """Runs ``command`` (a shell pipeline starting with kreassign) in bash; returns kreassign's exit status
    (PIPESTATUS[0]), the pipeline's stdout, and the stderr of the whole."""
    status_file = f"/tmp/kreassign-pipestatus-{uuid.uuid4().hex}"
    try:
        result = subprocess.run(
            ["bash", "-c", f'{command}; echo "${{PIPESTATUS[0]}}" > {status_file}'],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        with open(status_file) as f:
            return int(f.read()), result.stdout, result.stderr
    finally:
        if os.path.exists(status_file):
            os.unlink(status_file)


def test_generate_into_head_exits_quietly(snapshot):
    """The reader leaves after the first line: no traceback, and like the Apache tool (Java's System.out
    ignores a broken pipe) the exit status of a good run, 0."""
    status, out, err = run_pipeline(f"{KREASSIGN} {' '.join(generate_offline(snapshot))} | head -1")
    assert (status, out, err) == (0, "Current partition replica assignment\n", "")


@pytest.fixture(scope="module")
def live_topic(kafka_cluster, tmp_path_factory):
    path = tmp_path_factory.mktemp("pipes")
    topic = f"pipes-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_cluster.bootstrap_servers, topic, [[1, 2], [2, 3], [3, 1]] * 100)
    (path / "topics.json").write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 2]}]}
    (path / "plan.json").write_text(json.dumps(plan))
    return path


def test_every_action_into_a_reader_that_has_gone(kafka_cluster, live_topic):
    """``| head -1`` and ``| true`` (a reader gone before the first write) for each action on the live
    cluster, and stdout or stderr closed (``>&-``, ``2>&-``): quiet, the exit status of the run."""
    bootstrap = f"--bootstrap-server {kafka_cluster.bootstrap_servers}"
    generate = f"--generate --topics-to-move-json-file {live_topic}/topics.json --broker-list 1,2,3"
    verify = f"--verify --reassignment-json-file {live_topic}/plan.json"
    cases = {
        "generate | head -1": (f"{KREASSIGN} {bootstrap} {generate} | head -1", 0),
        "generate | true": (f"{KREASSIGN} {bootstrap} {generate} | true", 0),
        "verify | true": (f"{KREASSIGN} {bootstrap} {verify} | true", 0),
        "list | true": (f"{KREASSIGN} {bootstrap} --list | true", 0),
        "help | true": (f"{KREASSIGN} --help | true", 0),
        "version | true": (f"{KREASSIGN} --version | true", 0),
        "usage error 2>&1 | true": (f"{KREASSIGN} --bogus 2>&1 | true", 1),
        "generate >&-": (f"{KREASSIGN} {bootstrap} {generate} >&-", 0),
        "usage error 2>&-": (f"{KREASSIGN} --bogus 2>&-", 1),
        "help >&- 2>&-": (f"{KREASSIGN} --help >&- 2>&-", 0),
    }
    for name, (command, expected) in cases.items():
        status, out, err = run_pipeline(command)
        assert status == expected, (name, status, err)
        assert "Traceback" not in err and "Broken pipe" not in err and "Exception ignored" not in err, (name, err)
        assert err == "", (name, err)
        if "head -1" in name:
            assert out == "Current partition replica assignment\n", (name, out)


def test_more_actions_into_a_reader_that_has_gone(kafka_cluster, live_topic, snapshot, tmp_path):
    """--progress and --cancel on the live cluster, and the offline --execute --dry-run (a batched plan's
    printout, longer than a pipe holds) into ``| head -1``."""
    bootstrap = f"--bootstrap-server {kafka_cluster.bootstrap_servers}"
    plan = tmp_path / "orders.json"
    moves = [{"topic": "orders", "partition": p, "replicas": [3, 4]} for p in range(2500)]
    plan.write_text(json.dumps({"version": 1, "partitions": moves}))
    dry_run = f"--execute --dry-run --cluster-snapshot-file {snapshot}/c.jsonl --reassignment-json-file {plan}"
    cases = {
        "progress | true": f"{KREASSIGN} {bootstrap} --progress --reassignment-json-file {live_topic}/plan.json | true",
        "cancel | true": f"{KREASSIGN} {bootstrap} --cancel --reassignment-json-file {live_topic}/plan.json | true",
        "execute --dry-run | head -1": f"{KREASSIGN} {dry_run} --max-partition-movements 500 | head -1",
    }
    for name, command in cases.items():
        status, out, err = run_pipeline(command)
        assert (status, err) == (0, ""), (name, status, err)
        if "head -1" in name:
            assert out == "Current partition replica assignment\n", (name, out)


def test_execute_into_a_reader_that_has_gone_still_executes(kafka_cluster, tmp_path):
    """As with the Apache tool (Java's System.out ignores a broken pipe), ``--execute ... | true`` runs the
    reassignment: a runbook's pipe does not change what the command does."""
    from kreassign.cluster.kafka import KafkaCluster

    topic = f"pipes-execute-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_cluster.bootstrap_servers, topic, [[1, 2], [2, 3]])
    plan = tmp_path / "plan.json"
    moves = [{"topic": topic, "partition": 0, "replicas": [2, 1]}, {"topic": topic, "partition": 1, "replicas": [3, 2]}]
    plan.write_text(json.dumps({"version": 1, "partitions": moves}))
    execute = f"--bootstrap-server {kafka_cluster.bootstrap_servers} --execute --reassignment-json-file {plan}"
    status, out, err = run_pipeline(f"{KREASSIGN} {execute} | true")
    assert (status, out, err) == (0, "", "")
    port = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # a reorder copies nothing: done at once, seen by the metadata soon
            layout = {p.partition: list(p.replicas) for p in port.describe_topics([topic])[topic]}
            if layout == {0: [2, 1], 1: [3, 2]}:
                break
            time.sleep(0.2)
        assert layout == {0: [2, 1], 1: [3, 2]}
    finally:
        port.close()
