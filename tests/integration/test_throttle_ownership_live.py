"""Throttles by ownership on the real cluster (issue 39): what others do during a batched run, with their own real
tools from a second shell, and a Ctrl-C (SIGINT to the run's process).

* an operator raises a broker's rate with Apache's ``kafka-configs --alter`` (ConfigCommand from the Kafka jars):
  the run's end keeps it (docs/batched-runs.md promised it; the rate was deleted);
* the Apache tool's ``--execute --additional`` of the same plan file: the run counts those reassignments as the
  plan's progress (it failed every partition "being reassigned by someone else"), and its Ctrl-C keeps the
  throttles that hold their copies back (its clean-up deleted the broker rates while they moved on unthrottled);
  the same command again waits for them and leaves nothing behind.

Defaults first: a batched run with no kreassign option but its limit and throttle, a fresh default state folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.jars import apache_tool_command
from kreassign.devcluster.topics import count_messages, create_topic
from kreassign.model import TopicPartition
from tests.integration.differential import run_apache, run_ours, wait_until
from tests.integration.test_batched import THROTTLE_KEYS as KEYS
from tests.integration.test_batched import throttles as batched_throttles

pytestmark = pytest.mark.integration

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


@pytest.fixture(scope="module")
def cluster(kafka_cluster):
    port = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    yield kafka_cluster.bootstrap_servers, port
    port.close()


def throttles(port: KafkaCluster, topic: str) -> dict:
    return batched_throttles(port, [topic], brokers=(1, 2, 3))


def settled(port: KafkaCluster, topic: str, expected: dict) -> dict:
    """The throttles once the brokers have applied the last change the controller accepted (up to 15 s)."""
    last = throttles(port, topic)
    deadline = time.monotonic() + 15
    while last != expected and time.monotonic() < deadline:
        time.sleep(0.3)
        last = throttles(port, topic)
    return last


def clear(port: KafkaCluster, topic: str) -> None:
    """What a test leaves (on failure too) goes: moves cancelled, every throttle config of these deleted."""
    moving = port.list_reassignments([TopicPartition(topic, p) for p in range(3)])
    if moving:
        port.alter_reassignments(dict.fromkeys(moving))
    changes = {
        ConfigResource(ResourceType.BROKER, str(b)): [ConfigOp(k, OpType.DELETE) for k in KEYS[:3]] for b in (1, 2, 3)
    }
    changes[ConfigResource(ResourceType.TOPIC, topic)] = [ConfigOp(k, OpType.DELETE) for k in KEYS[3:]]
    port.incremental_alter_configs(changes)


def plan_file(tmp_path, topic: str, partitions: int, target: list[int]) -> str:
    path = tmp_path / f"{topic}.json"
    partitions_json = [{"topic": topic, "partition": p, "replicas": target} for p in range(partitions)]
    path.write_text(json.dumps({"version": 1, "partitions": partitions_json}))
    return str(path)


def start(bootstrap: str, plan: str, env: dict, *extra: str, logs=None) -> subprocess.Popen:
    """The run, its stdout and stderr into ``logs``/run.out and run.err (read while it runs), or pipes."""
    args = [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, "--execute"]
    args += ["--reassignment-json-file", plan, *extra]
    if logs is None:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with open(logs / "run.out", "w") as out, open(logs / "run.err", "w") as err:
        return subprocess.Popen(args, stdout=out, stderr=err, text=True, env=env)


def finish(proc: subprocess.Popen, logs) -> tuple[str, str]:
    proc.wait(timeout=120)
    return (logs / "run.out").read_text(), (logs / "run.err").read_text()


def copying(port: KafkaCluster, topic: str, partitions: int) -> bool:
    """A step of the run copies under its throttle (its reassignment runs, broker 3's follower rate is set)."""
    moving = port.list_reassignments([TopicPartition(topic, p) for p in range(partitions)])
    return bool(moving) and FOLLOWER_RATE in throttles(port, topic).get("broker:3", {})


def test_a_rate_an_operator_raises_with_kafka_configs_during_a_run_is_kept_at_ctrl_c(cluster, tmp_path):
    bootstrap, port = cluster
    topic = "owned-kept"
    create_topic(bootstrap, topic, [[1, 2]] * 2, messages=4000, size=1000)  # 2 MB a partition
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = start(
        bootstrap, plan_file(tmp_path, topic, 2, [3, 2]), env, "--max-partition-movements", "1", "--throttle", "20000"
    )  # a throttled copy goes in bursts of a fetch (1 MB), then waits: a minute a step
    try:
        assert wait_until(lambda: copying(port, topic, 2), timeout=60, interval=0.2)
        kafka_configs = [
            *apache_tool_command(main_class="org.apache.kafka.tools.ConfigCommand"),
            "--bootstrap-server", bootstrap, "--entity-type", "brokers", "--entity-name", "3", "--alter",
            "--add-config", f"{FOLLOWER_RATE}=200000",
        ]  # fmt: skip
        raised = subprocess.run(kafka_configs, capture_output=True, text=True, timeout=120)
        assert raised.returncode == 0, raised.stdout + raised.stderr
        assert wait_until(lambda: throttles(port, topic)["broker:3"].get(FOLLOWER_RATE) == "200000", timeout=30)
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 130, stdout + stderr
        # the operator's rate stays, said once; everything of the run's own is gone
        kept = f"Kept {FOLLOWER_RATE} of broker 3 (200000): changed by someone else after this run set it"
        assert stderr.count(kept) == 1, stderr
        assert settled(port, topic, {"broker:3": {FOLLOWER_RATE: "200000"}}) == {"broker:3": {FOLLOWER_RATE: "200000"}}
        assert port.list_reassignments() == {}
    finally:
        proc.kill()
        clear(port, topic)


def test_the_plan_submitted_again_with_the_apache_tool_is_its_progress_and_stays_throttled_after_ctrl_c(
    cluster, tmp_path
):
    bootstrap, port = cluster
    topic = "owned-taken"
    create_topic(bootstrap, topic, [[1, 2]] * 3, messages=6000, size=1000)  # 2 MB a partition: two fetches
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    plan = plan_file(tmp_path, topic, 3, [3, 2])
    proc = start(bootstrap, plan, env, "--max-partition-movements", "1", "--throttle", "50000", logs=tmp_path)
    try:
        assert wait_until(lambda: copying(port, topic, 3), timeout=60, interval=0.2)
        # a second shell: the Apache form of the same plan, as an operator types the README's recipe to change the
        # running plan's throttle (the Apache tool sets its rates and lists, then submits every partition at once)
        apache = run_apache(
            ["--bootstrap-server", bootstrap, "--execute", "--additional", "--reassignment-json-file", plan,
             "--throttle", "40000"]
        )  # fmt: skip
        assert apache.code == 0, apache.stdout
        partitions = [TopicPartition(topic, p) for p in range(3)]
        # the run takes them as the plan's progress (seen at its next poll), and Ctrl-C
        said = "being reassigned by someone else to the plan's target"
        assert wait_until(lambda: said in (tmp_path / "run.err").read_text(), timeout=30, interval=0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = finish(proc, tmp_path)
        assert proc.returncode == 130, stdout + stderr
        assert "leaving it alone" not in stdout + stderr
        taken = {
            TopicPartition(topic, int(name.rsplit("-", 1)[1]))
            for line in stderr.splitlines()
            if "being reassigned by someone else to the plan's target" in line
            for name in line.split("kreassign: ", 1)[-1].split(":", 1)[0].split(",")
        }
        # their reassignments go on (not the run's to cancel), held back by the Apache tool's rates, which the run
        # keeps (changed after it set its own), said once each; the lists still name every copy in flight
        moving = port.list_reassignments(partitions)
        assert moving and set(moving) <= taken, (moving, stderr)
        now = throttles(port, topic)
        assert now["broker:3"].get(FOLLOWER_RATE) == "40000", now
        kept = [line for line in stderr.splitlines() if "changed by someone else after this run set it" in line]
        assert len(kept) == 1 and f"{FOLLOWER_RATE} of broker 3 (40000)" in kept[0], stderr
        copies = {f"{tp.partition}:{b}" for tp, r in moving.items() for b in r.adding}
        assert copies <= set(now[f"topic:{topic}"][FOLLOWER_REPLICAS].split(",")), now
        # the same command again, at a higher rate: it waits for their reassignments (no --additional needed: they
        # are the plan's), sets its own rate over the Apache tool's and puts that back when they are done
        again = start(bootstrap, plan, env, "--max-partition-movements", "1", "--throttle", "20000000")
        stdout, stderr = again.communicate(timeout=180)
        assert again.returncode == 0, stdout + stderr
        assert "Batched reassignment complete: 3 partition(s) at their target" in stdout
        # what the Apache tool had set stays for its --verify: its rates, and its list entries that the run never
        # held (those of partitions it had not reached when the Apache tool submitted them)
        rates = {f"broker:{b}": {LEADER_RATE: "40000", FOLLOWER_RATE: "40000"} for b in (1, 2, 3)}
        apache_lists = {
            LEADER_REPLICAS: {f"{p}:{b}" for p in range(3) for b in (1, 2)},
            FOLLOWER_REPLICAS: {f"{p}:3" for p in range(3)},
        }

        def apaches_only() -> bool:
            now = throttles(port, topic)
            lists = now.pop(f"topic:{topic}", {})
            return now == rates and all(set(v.split(",")) <= apache_lists[k] for k, v in lists.items())

        assert wait_until(apaches_only, timeout=15), throttles(port, topic)
        # and a --verify of the plan, now that nothing moves, removes them as the Apache tool's does (kreassign's
        # Apache form: the same text, without a JVM's start)
        verify = run_ours(["--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", plan])
        assert "Clearing broker-level throttles" in verify.stdout, verify.stdout
        assert settled(port, topic, {}) == {}
        assert {p.partition: p.replicas for p in port.describe_topics([topic])[topic]} == dict.fromkeys(
            range(3), (3, 2)
        )
        assert count_messages(bootstrap, topic, 3) == dict.fromkeys(range(3), 2000)
    finally:
        proc.kill()
        clear(port, topic)
