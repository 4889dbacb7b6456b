"""Batched reassignment (KIP-435) on a real 5-broker cluster, through the command line.

Every run must leave the cluster as a careful operator would: partitions at their target, new leaders
elected, no reassignment running, no throttle config left, and every message still there.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.topics import count_messages, create_topic
from kreassign.model import TopicPartition
from tests.integration.differential import run_ours, wait_until

pytestmark = pytest.mark.integration

THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


@pytest.fixture(scope="module")
def cluster5(kafka_cluster5):
    port = KafkaCluster(bootstrap_servers=kafka_cluster5.bootstrap_servers)
    yield kafka_cluster5.bootstrap_servers, port
    port.close()


def write_plan(path, topic: str, layout: dict[int, list[int]]) -> str:
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]}
    path.write_text(json.dumps(plan))
    return str(path)


def throttles(port: KafkaCluster, topics: list[str], brokers=range(1, 6)) -> dict:
    """Throttle configs of these topics and brokers (pass the running ones when a broker is stopped: it
    could not answer). Not from DescribeCluster: a loaded machine can fence a running broker for a moment."""
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in brokers]
    resources += [ConfigResource(ResourceType.TOPIC, t) for t in topics]
    described = port.describe_configs(resources)
    return {
        f"{r.type.value}:{r.name}": v
        for r, values in described.items()
        if (v := {k: values[k] for k in THROTTLE_KEYS if k in values})
    }


def throttles_once_applied(port: KafkaCluster, topics: list[str], settle: float = 15.0) -> dict:
    """:func:`throttles` once the brokers have applied what the controller accepted. A broker applies a
    config change a moment after the controller accepts it, so a read right after a run exits can still
    show a rate the run has deleted: read again for up to ``settle`` seconds while any is left, and return
    the last read (a rate that is really left stays there)."""
    last = throttles(port, topics)
    deadline = time.monotonic() + settle
    while last and time.monotonic() < deadline:
        time.sleep(0.5)
        last = throttles(port, topics)
    return last


def state(port: KafkaCluster, topic: str) -> dict[int, tuple[tuple[int, ...], int | None]]:
    return {p.partition: (p.replicas, p.leader) for p in port.describe_topics([topic])[topic]}


def batched(bootstrap, plan, journal, *extra) -> list[str]:
    return [
        "--bootstrap-server",
        bootstrap,
        "--execute",
        "--reassignment-json-file",
        plan,
        "--journal-file",
        str(journal),
        "--poll-interval-ms",
        "200",
        *extra,
    ]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kreassign", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


class Sampler:
    """Samples the cluster while a run goes on: reassignments in flight, replicas being added, leaders."""

    def __init__(self, port: KafkaCluster, topic: str) -> None:
        self.port, self.topic = port, topic
        self.samples: list[tuple[dict, dict]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            moving = self.port.list_reassignments()
            leaders = {p: leader for p, (_, leader) in state(self.port, self.topic).items()}
            self.samples.append((moving, leaders))
            time.sleep(0.1)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def test_batched_run_completes_within_its_limits_and_leaves_nothing_behind(cluster5, tmp_path):
    bootstrap, port = cluster5
    topic = "batched-complete"
    create_topic(bootstrap, topic, [[1, 2]] * 6, messages=3000, size=1000)
    target = {p: [3, 4, 5] if p % 2 == 0 else [4, 3] for p in range(6)}  # every replica moves
    plan = write_plan(tmp_path / "plan.json", topic, target)
    # throttles someone else set before the run: they must be there, unchanged, afterwards
    foreign = {
        ConfigResource(ResourceType.TOPIC, topic): [
            ConfigOp("follower.replication.throttled.replicas", OpType.SET, "9:9")
        ],
        ConfigResource(ResourceType.BROKER, "4"): [
            ConfigOp("leader.replication.throttled.rate", OpType.SET, "987654321")
        ],
    }
    before = {
        "broker:4": {"leader.replication.throttled.rate": "987654321"},
        f"topic:{topic}": {"follower.replication.throttled.replicas": "9:9"},
    }
    args = batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "2")
    args += ["--max-replica-movements", "1", "--max-leader-movements", "1", "--throttle", "300000"]
    port.incremental_alter_configs(foreign)
    try:
        # a broker applies a config change a moment after the controller accepts it
        assert wait_until(lambda: throttles(port, [topic]) == before, timeout=30, interval=0.2)
        with Sampler(port, topic) as sampler:
            result = run_ours(args, timeout=300)
        check_complete_run(port, bootstrap, topic, target, before, result, sampler, tmp_path)
    finally:
        port.incremental_alter_configs(
            {r: [ConfigOp(op.name, OpType.DELETE) for op in ops] for r, ops in foreign.items()}
        )


def check_complete_run(port, bootstrap, topic, target, before, result, sampler, tmp_path) -> None:
    assert result.code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Current partition replica assignment\n\n{")
    assert "Batched reassignment complete: 6 partition(s) at their target after" in result.stdout
    ours = [{tp: r for tp, r in moving.items() if tp.topic == topic} for moving, _ in sampler.samples]
    assert max(len(m) for m in ours) == 2  # P, reached and never exceeded
    assert max(len(r.adding) for m in ours for r in m.values()) == 1  # R
    assert max(sum(1 for r in m.values() if r.adding and r.adding[0] == r.replicas[0]) for m in ours) <= 1  # L
    for moving, leaders in sampler.samples:  # leader first
        for tp, r in moving.items():
            if tp.topic == topic:
                # a partition's leader is never dropped: the old one goes once the new one leads
                assert leaders[tp.partition] not in r.removing, (tp, r, leaders)
                # a step adds another broker than the new leader only once the new leader leads
                if set(r.adding) - {target[tp.partition][0]}:
                    assert leaders[tp.partition] == target[tp.partition][0], (tp, r, leaders)
    assert state(port, topic) == {p: (tuple(r), r[0]) for p, r in target.items()}
    assert port.list_reassignments() == {}
    assert throttles(port, [topic]) == before
    assert count_messages(bootstrap, topic, 6) == dict.fromkeys(range(6), 500)
    journal = json.loads((tmp_path / "j.json").read_text())
    assert journal["status"] == "completed"
    assert (
        (tmp_path / "j-original.json").read_text().startswith('{"version":1,"partitions":[{"topic":"batched-complete"')
    )


def test_dry_run_prints_the_steps_and_changes_nothing(cluster5, tmp_path):
    bootstrap, port = cluster5
    topic = "batched-dry"
    create_topic(bootstrap, topic, [[1, 2, 3]])
    plan = write_plan(tmp_path / "plan.json", topic, {0: [4, 5, 1]})
    result = run_ours([*batched(bootstrap, plan, tmp_path / "j.json", "--max-replica-movements", "1"), "--dry-run"])
    assert result.code == 0, result.stdout
    assert "Round 1:\n  batched-dry-0: [1,2,3] -> [4,1,3] (+4, -2, leader 1->4)\n" in result.stdout
    assert result.stdout.endswith("Round 2:\n  batched-dry-0: [4,1,3] -> [4,5,1] (+5, -3)\n")
    assert state(port, topic) == {0: ((1, 2, 3), 1)}
    assert not (tmp_path / "j.json").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_reverts_the_step_restores_throttles_and_the_rerun_resumes(cluster5, tmp_path, signum):
    bootstrap, port = cluster5
    topic = f"batched-{signum.name.lower()}"
    create_topic(bootstrap, topic, [[1, 2]] * 3, messages=3000, size=1000)
    target = {p: [3, 4] for p in range(3)}
    plan = write_plan(tmp_path / "plan.json", topic, target)
    args = batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "1", "--throttle", "50000")
    proc = start(args)
    try:
        assert wait_until(lambda: port.list_reassignments([TopicPartition(topic, p) for p in range(3)]), timeout=60)
        time.sleep(1.0)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, stdout + stderr
    assert f"Batched reassignment interrupted by {signum.name}: " in stdout
    assert port.list_reassignments() == {}
    assert throttles(port, [topic]) == {}
    assert json.loads((tmp_path / "j.json").read_text())["status"] == "interrupted"

    result = run_ours(batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "2"), timeout=180)
    assert result.code == 0, result.stdout + result.stderr
    assert f"Resuming the batched run of this plan that was interrupted by {signum.name}: " in result.stdout
    assert state(port, topic) == {p: (tuple(r), r[0]) for p, r in target.items()}
    assert throttles(port, [topic]) == {}
    assert count_messages(bootstrap, topic, 3) == dict.fromkeys(range(3), 1000)


def test_cancel_from_another_terminal_and_a_throttle_change_reach_the_running_executor(cluster5, tmp_path):
    bootstrap, port = cluster5
    topic = "batched-cancel"
    create_topic(bootstrap, topic, [[2, 3]] * 2, messages=2000, size=1000)
    plan = write_plan(tmp_path / "plan.json", topic, {0: [4, 5], 1: [4, 5]})
    journal = tmp_path / "j.json"
    proc = start(batched(bootstrap, plan, journal, "--max-partition-movements", "1", "--throttle", "20000"))
    try:
        assert wait_until(lambda: port.list_reassignments([TopicPartition(topic, 0), TopicPartition(topic, 1)]), 60)
        changed = run_ours(
            batched(bootstrap, plan, journal, "--max-partition-movements", "1", "--additional", "--throttle", "30000")
        )
        assert changed.code == 0, changed.stdout
        assert "will use the new throttle from its next poll" in changed.stdout
        rate = ConfigResource(ResourceType.BROKER, "4")
        assert wait_until(
            lambda: port.describe_configs([rate])[rate].get("follower.replication.throttled.rate") == "30000", 30
        )
        cancelled = run_ours(
            [
                "--bootstrap-server",
                bootstrap,
                "--cancel",
                "--reassignment-json-file",
                plan,
                "--journal-file",
                str(journal),
            ],
            timeout=120,
        )
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert cancelled.code == 0, cancelled.stdout
    assert cancelled.stdout.startswith(f"Cancelled the batched reassignment run by pid {proc.pid}")
    assert "To roll back to the original assignment: --execute --reassignment-json-file" in cancelled.stdout
    assert proc.returncode == 4, stdout + stderr
    assert "Batched reassignment cancelled" in stdout
    assert port.list_reassignments() == {}
    assert throttles(port, [topic]) == {}
    assert state(port, topic) == {0: ((2, 3), 2), 1: ((2, 3), 2)}
    assert count_messages(bootstrap, topic, 2) == {0: 1000, 1: 1000}


def test_per_broker_caps_hold_and_an_under_replicated_partition_waits_then_completes(
    kafka_cluster5, cluster5, tmp_path
):
    """--max-broker-movements 2 on 8 partitions of brokers 1-4, sampled every 100 ms: no broker (new replica
    or current leader) is part of more than 2 steps. A partition whose follower (broker 5) is down, with
    min.insync.replicas=2, waits until the broker is back, then moves."""
    bootstrap, port = cluster5
    topic, urp = "sched-caps", "sched-urp"
    layout = [[1, 2], [2, 1], [3, 4], [4, 3]] * 2
    create_topic(bootstrap, topic, layout, messages=8000, size=1000)
    create_topic(bootstrap, urp, [[4, 5]], messages=1000, size=1000)
    port.incremental_alter_configs(
        {ConfigResource(ResourceType.TOPIC, urp): [ConfigOp("min.insync.replicas", OpType.SET, "2")]}
    )
    target = {0: [1, 3], 1: [2, 3], 2: [3, 1], 3: [4, 1], 4: [1, 4], 5: [2, 4], 6: [3, 2], 7: [4, 2]}
    plan = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in target.items()]
        + [{"topic": urp, "partition": 0, "replicas": [4, 3]}],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    args = batched(bootstrap, str(tmp_path / "plan.json"), tmp_path / "j.json", "--max-broker-movements", "2")
    args += ["--throttle", "400000"]
    kafka_cluster5.stop_node(5)
    try:
        assert wait_until(lambda: state(port, urp)[0][1] == 4 and len(port.describe_topics([urp])[urp][0].isr) == 1, 60)
        with Sampler(port, topic) as sampler:
            proc = start(args)
            out: dict[str, list[str]] = {"stdout": [], "stderr": []}
            readers = [
                threading.Thread(target=lambda n=n, f=f: out[n].extend(iter(f.readline, "")), daemon=True)
                for n, f in (("stdout", proc.stdout), ("stderr", proc.stderr))
            ]
            for reader in readers:
                reader.start()
            try:
                # the run reaches the partition once broker 4 has a slot free (its caps moves come first)
                waits = "waits: at or under min.insync.replicas (ISR 1 of 2, min 2)"
                assert wait_until(lambda: any(waits in line for line in out["stderr"]), timeout=180), out
                time.sleep(2)
                assert state(port, urp) == {0: ((4, 5), 4)}  # still waiting for its health
                kafka_cluster5.start_node(5)
                proc.wait(timeout=300)
            finally:
                proc.kill()
                for reader in readers:
                    reader.join(timeout=30)
            stdout, stderr = "".join(out["stdout"]), "".join(out["stderr"])
    finally:
        kafka_cluster5.start_node(5)
    assert proc.returncode == 0, stdout + stderr
    peaks = []
    for moving, leaders in sampler.samples:
        load: dict[int, int] = {}
        for tp, r in moving.items():
            if tp.topic == topic and r.adding:
                for b in {*r.adding, leaders[tp.partition]}:
                    load[b] = load.get(b, 0) + 1
        peaks.append(max(load.values(), default=0))
    assert max(peaks) == 2  # reached, never exceeded
    assert state(port, topic) == {p: (tuple(r), r[0]) for p, r in target.items()}
    assert state(port, urp) == {0: ((4, 3), 4)}
    assert port.list_reassignments() == {}
    assert throttles(port, [topic, urp]) == {}
    assert count_messages(bootstrap, topic, 8) == dict.fromkeys(range(8), 1000)
    assert count_messages(bootstrap, urp, 1) == {0: 1000}
