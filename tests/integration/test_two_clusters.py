"""One ops host, two live clusters with the same topic names, one state folder (issue 39): what kreassign remembers
belongs to the cluster it was made on. The defaults an operator runs (no kreassign option, the default state folder
shared by both clusters' commands), a batched run in one process and a second shell's Apache-form command in another;
the Apache 4.4.0 tool's stdout on the same state is the reference.

Cluster A is ``kafka_cluster`` (brokers 1-3), cluster B ``kafka_cluster5`` (brokers 1-5): the same topic on both,
with other replicas and other data.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition, TopicPartitionReplica
from tests.integration.differential import run_apache, wait_until
from tests.terminal.screen import remove_throttles, throttles_once_applied

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

A_SOURCE = [[2, 1], [2, 3]]
B_SOURCE = [[1, 2], [1, 2]]
TARGET = [[3, 2], [3, 1]]
"""Valid on both clusters; each step adds broker 3 (a copy of the partition's data)."""


@dataclass
class Host:
    """The ops host: its state folder (XDG_STATE_HOME) and the two clusters' adapters."""

    folder: Path
    env: dict[str, str]
    a: str
    b: str
    port_a: KafkaCluster
    port_b: KafkaCluster

    def shell(self, bootstrap: str, *args: str) -> subprocess.CompletedProcess:
        """kreassign as the Apache tool's drop-in, in a second shell of the host."""
        command = [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, *args]
        return subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=240)

    def background(self, bootstrap: str, name: str, *args: str) -> subprocess.Popen:
        """``kreassign --bootstrap-server B ... > name.out 2> name.err &``"""
        command = [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, *args]
        with open(self.folder / f"{name}.out", "w") as out, open(self.folder / f"{name}.err", "w") as err:
            return subprocess.Popen(command, stdout=out, stderr=err, env=self.env, cwd=self.folder)

    def outputs(self, name: str) -> str:
        return "".join(f"--- {name}{ext}\n{(self.folder / f'{name}{ext}').read_text()}" for ext in (".out", ".err"))


@pytest.fixture(scope="module")
def host(kafka_cluster, kafka_cluster5, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ops-host")
    env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
    env.pop("KREASSIGN_DEBUG", None)
    port_a = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    port_b = KafkaCluster(bootstrap_servers=kafka_cluster5.bootstrap_servers)
    yield Host(folder, env, kafka_cluster.bootstrap_servers, kafka_cluster5.bootstrap_servers, port_a, port_b)
    port_a.close()
    port_b.close()


def write_plan(path: Path, topic: str, replicas: list[list[int]]) -> str:
    partitions = [{"topic": topic, "partition": p, "replicas": r} for p, r in enumerate(replicas)]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


@pytest.fixture(scope="module")
def orders(host):
    """The same topic on both clusters: on A small, on B 8 MB a partition, and the plan x.json. Under a 10 KB/s
    throttle a follower still fetches about 1 MB (replica.fetch.max.bytes) per 11 s quota window: a partition
    copies for more than a minute, and B's run (one partition at a time) for minutes."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    create_topic(host.a, topic, A_SOURCE, messages=20, size=100)
    create_topic(host.b, topic, B_SOURCE, messages=16000, size=1000)
    yield topic, write_plan(host.folder / f"{topic}.json", topic, TARGET)
    remove_throttles(host.port_b, range(1, 6), [topic])


def layout(port: KafkaCluster, topic: str) -> list[list[int]]:
    return [list(p.replicas) for p in port.describe_topics([topic])[topic]]


def copying(port: KafkaCluster, topic: str, partitions: int, run: subprocess.Popen) -> bool:
    """The run ended, or its steps are in flight under its topic throttles."""
    if run.poll() is not None:
        return True
    moving = port.list_reassignments([TopicPartition(topic, p) for p in range(partitions)])
    return bool(moving) and f"topic:{topic}" in throttles_once_applied(port, [1, 2, 3], [topic], settle=0)


@pytest.fixture(scope="module")
def b_run(host, orders):
    """A batched run of x.json on B, as the operator starts it (defaults: no --journal-file), its steps copying."""
    topic, plan = orders
    run = host.background(
        host.b, "b-run", "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "1",
        "--throttle", "10000", "--poll-interval-ms", "200",
    )  # fmt: skip
    assert wait_until(lambda: copying(host.port_b, topic, len(TARGET), run), timeout=120, interval=0.2)
    assert run.poll() is None, f"the run on B ended before the second shell: {host.outputs('b-run')}"
    yield run
    if run.poll() is None:
        run.kill()
        run.wait()
    host.port_b.alter_reassignments(dict.fromkeys(host.port_b.list_reassignments(), None))


def test_an_apache_cancel_aimed_at_one_cluster_leaves_the_run_on_the_other_alone(host, orders, b_run):
    """Blocker 1: a batched run of x.json on B; on A, where nothing moves, the Apache-form --cancel of x.json prints
    what the Apache tool prints on A, and B's run goes on."""
    topic, plan = orders
    ours = host.shell(host.a, "--cancel", "--reassignment-json-file", plan)
    apache = run_apache(["--bootstrap-server", host.a, "--cancel", "--reassignment-json-file", plan])
    assert (ours.returncode, ours.stdout) == (apache.code, apache.stdout), ours.stderr
    assert ours.stdout.startswith("None of the specified partition reassignments are active.\n"), ours.stdout
    assert "batched run" not in ours.stderr, ours.stderr
    assert b_run.poll() is None, f"B's run was stopped by a cancel aimed at A: {host.outputs('b-run')}"
    assert host.port_b.list_reassignments([TopicPartition(topic, p) for p in range(len(TARGET))])
    assert layout(host.port_a, topic) == A_SOURCE


def test_a_plan_run_on_a_second_cluster_starts_its_own_lineage_and_original(host, orders, b_run):
    """Blocker 2: B's run of x.json stopped (resumable); the same batched command on A neither resumes it nor names
    B's assignment as A's: its "Current partition replica assignment" block and its original are A's."""
    topic, plan = orders
    b_run.send_signal(signal.SIGTERM)
    assert b_run.wait(timeout=120) == 128 + signal.SIGTERM, host.outputs("b-run")
    b_original = re.search(r"Original assignment \(to roll back\): (.*)\n", (host.folder / "b-run.out").read_text())
    assert b_original, host.outputs("b-run")
    assert wait_until(lambda: layout(host.port_b, topic) == B_SOURCE, timeout=30)  # its clean-up put B back
    before_a = layout(host.port_a, topic)
    assert before_a == A_SOURCE
    dirs = host.port_a.describe_replica_log_dirs(
        [TopicPartitionReplica(topic, p, b) for p, replicas in enumerate(before_a) for b in replicas]
    )
    on_a = host.shell(host.a, "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "2")
    assert on_a.returncode == 0, on_a.stdout + on_a.stderr
    assert "Resuming" not in on_a.stdout + on_a.stderr, on_a.stdout
    block = json.loads(on_a.stdout.split("\n")[2])
    assert [p["replicas"] for p in block["partitions"]] == A_SOURCE, on_a.stdout
    assert [p["log_dirs"] for p in block["partitions"]] == [
        [dirs[TopicPartitionReplica(topic, p, b)].current for b in replicas] for p, replicas in enumerate(A_SOURCE)
    ]
    original = re.search(r"Original assignment \(to roll back\): (.*)\n", on_a.stdout)
    assert original and original.group(1) != b_original.group(1), on_a.stdout
    kept = json.loads(Path(original.group(1)).read_text())
    assert [p["replicas"] for p in kept["partitions"]] == A_SOURCE
    assert [p["replicas"] for p in json.loads(Path(b_original.group(1)).read_text())["partitions"]] == B_SOURCE
    assert layout(host.port_a, topic) == TARGET


HOT_SOURCE = [[1, 2]] * 4
HOT_TARGET = [[1, 3], [1, 4], [1, 5], [1, 3]]
"""Each partition one step (the leader stays): adds one broker, drops broker 2."""


def test_an_apache_execute_additional_of_a_running_plan_hands_its_throttle_to_the_run(host):
    """Blocker 3, the submitting side: a batched run of rep.json on B, one partition at a time at 10 KB/s; from a
    second shell the Apache form ``--execute --additional --reassignment-json-file rep.json --throttle 20000000``
    (how the Apache docs say to change the throttle of a running reassignment) prints the Apache tool's text, starts
    none of the run's partitions behind its back, and hands the throttle to the run, which finishes with it."""
    topic = f"hot-{uuid.uuid4().hex[:8]}"
    create_topic(host.b, topic, HOT_SOURCE, messages=12000, size=1000)  # 3 MB a partition: 30 s a copy at 10 KB/s
    plan = write_plan(host.folder / f"{topic}.json", topic, HOT_TARGET)
    partitions = [TopicPartition(topic, p) for p in range(len(HOT_TARGET))]
    run = host.background(
        host.b, "hot-run", "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "1",
        "--throttle", "10000", "--poll-interval-ms", "200",
    )  # fmt: skip
    try:
        assert wait_until(lambda: copying(host.port_b, topic, len(HOT_TARGET), run), timeout=120, interval=0.2)
        assert run.poll() is None, host.outputs("hot-run")
        raised = host.shell(
            host.b, "--execute", "--additional", "--reassignment-json-file", plan, "--throttle", "20000000"
        )
        moving_after = host.port_b.list_reassignments(partitions)
        assert raised.returncode == 0, raised.stdout + raised.stderr
        lines = raised.stdout.split("\n")
        block = json.loads(lines[2])
        assert [(p["topic"], p["partition"]) for p in block["partitions"]] == [(topic, p) for p in range(4)]
        assert lines[:2] + lines[3:] == [
            "Current partition replica assignment",
            "",
            "",
            "Save this to use as the --reassignment-json-file option during rollback",
            "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
            "is removed.",
            "The inter-broker throttle limit was set to 20000000 B/s",
            "Successfully started partition reassignments for " + ",".join(f"{topic}-{p}" for p in range(4)),
            "",
        ], raised.stdout
        assert f"pid {run.pid}" in raised.stderr, raised.stderr
        assert len(moving_after) <= 1, f"the whole plan was submitted behind the run's back: {moving_after}"
        assert run.wait(timeout=180) == 0, host.outputs("hot-run")
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        host.port_b.alter_reassignments(dict.fromkeys(host.port_b.list_reassignments(partitions), None))
    err = (host.folder / "hot-run.err").read_text()
    assert "someone else" not in err, err
    assert "Throttle changed to 20000000 B/s" in err, err
    assert layout(host.port_b, topic) == HOT_TARGET
    assert throttles_once_applied(host.port_b, range(1, 6), [topic]) == {}
