"""Differential: the actions on a live cluster give the Apache tool's stdout, exit code and effect.

Each scenario runs the same step with each tool from the same cluster state (reverting in between),
and compares stdout byte for byte, the exit code, the resulting replicas and the throttle configs.
Plans written by one tool are executed by the other.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_apache, run_ours, strip_java_stack_trace, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.differential]

TOOLS = {"apache": run_apache, "kreassign": run_ours}
THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


class Cluster:
    """Small helpers over the Java-free admin client, to set up and observe scenarios."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def create(self, name: str, layout: list[list[int]], messages: int = 0, size: int = 100) -> str:
        create_topic(self.bootstrap, name, layout, messages=messages, size=size)
        wait_until(lambda: len(self.replicas(name)) == len(layout), timeout=30)
        return name

    def replicas(self, topic: str) -> dict[int, list[int]]:
        md = self.admin.list_topics(topic, timeout=10).topics[topic]
        return {p: list(info.replicas) for p, info in md.partitions.items()}

    def throttles(self, topics: list[str]) -> dict[str, dict[str, str]]:
        resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3)]
        resources += [ConfigResource(ResourceType.TOPIC, t) for t in topics]
        result = {}
        futures = {}
        for resource in resources:  # librdkafka: one BROKER resource per call
            futures.update(self.admin.describe_configs([resource]))
        for resource, future in futures.items():
            entries = future.result(timeout=20)
            result[f"{resource.restype_int}:{resource.name}"] = {
                k: e.value for k, e in entries.items() if k in THROTTLE_KEYS and e.value and not e.is_default
            }
        return result

    def set_throttles(self, topic: str) -> None:
        """Every throttle the tools set: the rates on brokers 1-3, the throttled replicas of ``topic``."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

        resources = []
        for broker in (1, 2, 3):
            resource = ConfigResource(ResourceType.BROKER, str(broker))
            resource.incremental_configs = [
                ConfigEntry(key, "1000000", incremental_operation=AlterConfigOpType.SET) for key in THROTTLE_KEYS[:3]
            ]
            resources.append(resource)
        resource = ConfigResource(ResourceType.TOPIC, topic)
        resource.incremental_configs = [
            ConfigEntry(key, "*", incremental_operation=AlterConfigOpType.SET) for key in THROTTLE_KEYS[3:]
        ]
        resources.append(resource)
        for resource in resources:  # librdkafka: one BROKER resource per call
            for future in self.admin.incremental_alter_configs([resource]).values():
                future.result(timeout=20)

    def clear_broker_throttles(self) -> None:
        """Remove the throttle rates of brokers 1-3 (what a test that failed on purpose leaves behind)."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

        for broker in (1, 2, 3):
            resource = ConfigResource(ResourceType.BROKER, str(broker))
            resource.incremental_configs = [
                ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE) for key in THROTTLE_KEYS[:3]
            ]
            for future in self.admin.incremental_alter_configs([resource]).values():
                future.result(timeout=20)

    def reassigning(self) -> bool:
        out = run_ours(["--bootstrap-server", self.bootstrap, "--list"])
        return out.stdout != "No partition reassignments found.\n"

    def wait_idle(self, timeout: float = 120) -> None:
        assert wait_until(lambda: not self.reassigning(), timeout=timeout, interval=1)


@pytest.fixture(scope="module")
def cluster(kafka_cluster) -> Iterator[Cluster]:
    cluster = Cluster(kafka_cluster.bootstrap_servers)
    yield cluster
    cluster.clear_broker_throttles()  # the cluster is shared with the modules that run next


def _plan(topic: str, layout: dict[int, list[int]]) -> str:
    return json.dumps(
        {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]}
    )


def _both(args: list[str]):
    return run_apache(args), run_ours(args)


def test_list_without_reassignments(cluster):
    apache, ours = _both(["--bootstrap-server", cluster.bootstrap, "--list"])
    assert (ours.code, ours.stdout) == (apache.code, apache.stdout) == (0, "No partition reassignments found.\n")


def test_generate_current_section_identical_and_proposals_valid(cluster, tmp_path, kafka_cluster):
    topic = cluster.create(f"gen-{uuid.uuid4().hex[:6]}", [[1, 2], [2, 3], [3, 1], [1, 3]])
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": topic}], "version": 1}))
    racks = kafka_cluster.broker_racks
    for extra in ([], ["--disable-rack-aware"]):
        args = [
            "--bootstrap-server",
            cluster.bootstrap,
            "--generate",
            "--topics-to-move-json-file",
            str(topics),
            "--broker-list",
            "1,2,3",
            *extra,
        ]
        apache, ours = _both(args)
        assert apache.code == ours.code == 0, (apache, ours)
        current_a, proposed_a = apache.stdout.split("\n\nProposed partition reassignment configuration\n")
        current_o, proposed_o = ours.stdout.split("\n\nProposed partition reassignment configuration\n")
        assert current_o == current_a
        for proposed in (proposed_a, proposed_o):
            parts = json.loads(proposed)["partitions"]
            assert sorted(p["partition"] for p in parts) == [0, 1, 2, 3]
            for p in parts:
                assert len(p["replicas"]) == len(set(p["replicas"])) == 2
                assert set(p["replicas"]) <= {1, 2, 3}
                assert p["log_dirs"] == ["any", "any"]
                if not extra:
                    assert len({racks[b] for b in p["replicas"]}) == 2  # rack-aware: both racks
        assert proposed_o.endswith("\n") and proposed_a.endswith("\n")


def test_generate_with_seed_is_reproducible(cluster, tmp_path):
    topic = cluster.create(f"seed-{uuid.uuid4().hex[:6]}", [[1, 2, 3]] * 6)
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": topic}], "version": 1}))
    args = [
        "--bootstrap-server",
        cluster.bootstrap,
        "--generate",
        "--topics-to-move-json-file",
        str(topics),
        "--broker-list",
        "1,2,3",
        "--seed",
        "7",
    ]
    first, second = run_ours(args), run_ours(args)
    assert first.code == 0 and first.stdout == second.stdout


@pytest.mark.parametrize("executor", ["apache", "kreassign"])
def test_execute_throttled_then_verify_until_done(cluster, tmp_path, executor):
    """One tool executes a throttled move; both verify it; the plans and rollbacks cross over."""
    topic = cluster.create(f"exec-{executor}-{uuid.uuid4().hex[:6]}", [[1, 2], [2, 3], [3, 1]], messages=3000)
    before = cluster.replicas(topic)
    target = {0: [2, 3], 1: [3, 1], 2: [1, 2]}
    plan = tmp_path / "plan.json"
    plan.write_text(_plan(topic, target))
    run = TOOLS[executor]
    other = TOOLS["kreassign" if executor == "apache" else "apache"]
    executed = run(
        [
            "--bootstrap-server",
            cluster.bootstrap,
            "--execute",
            "--reassignment-json-file",
            str(plan),
            "--throttle",
            "10000000",
        ]
    )
    assert executed.code == 0, executed
    lines = executed.stdout.split("\n")
    assert lines[0] == "Current partition replica assignment"
    rollback = lines[2]
    assert json.loads(rollback)["partitions"][0]["replicas"] == before[0]
    assert lines[3:] == [
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
        "The inter-broker throttle limit was set to 10000000 B/s",
        f"Successfully started partition reassignments for {topic}-0,{topic}-1,{topic}-2",
        "",
    ]
    throttles = cluster.throttles([topic])
    assert throttles[f"4:{1}"]["leader.replication.throttled.rate"] == "10000000"
    assert throttles[f"2:{topic}"]["follower.replication.throttled.replicas"] == "0:3,1:1,2:2"
    assert throttles[f"2:{topic}"]["leader.replication.throttled.replicas"] == "0:1,0:2,1:2,1:3,2:1,2:3"
    cluster.wait_idle()
    verify = [
        "--bootstrap-server",
        cluster.bootstrap,
        "--verify",
        "--reassignment-json-file",
        str(plan),
        "--preserve-throttles",
    ]
    apache_v, ours_v = _both(verify)
    assert (ours_v.code, ours_v.stdout) == (apache_v.code, apache_v.stdout)
    assert cluster.throttles([topic]) == throttles  # --preserve-throttles kept them
    clearing = other(verify[:-1])
    assert clearing.code == 0
    assert "Clearing broker-level throttles on brokers 1,2,3\n" in clearing.stdout
    assert cluster.throttles([topic]) == {"4:1": {}, "4:2": {}, "4:3": {}, f"2:{topic}": {}}
    assert wait_until(lambda: cluster.replicas(topic) == target, timeout=30), cluster.replicas(topic)
    # roll back with the other tool, using the rollback JSON the first one printed
    back = tmp_path / "rollback.json"
    back.write_text(rollback)
    assert (
        other(["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(back)]).code == 0
    )
    cluster.wait_idle()
    # --list asks the controller; a broker's metadata, which replicas() reads, may trail it a moment
    assert wait_until(lambda: cluster.replicas(topic) == before, timeout=30), cluster.replicas(topic)


def test_execute_output_identical_for_both_tools(cluster, tmp_path):
    """Same starting state, same plan: byte-identical stdout from --execute, and the same throttles."""
    topic = cluster.create(f"same-{uuid.uuid4().hex[:6]}", [[1, 2], [2, 3]])
    plan, back = tmp_path / "plan.json", tmp_path / "back.json"
    plan.write_text(_plan(topic, {0: [3, 2], 1: [2, 1]}))
    back.write_text(_plan(topic, {0: [1, 2], 1: [2, 3]}))
    outputs, throttles = {}, {}
    for name, run in TOOLS.items():
        result = run(
            [
                "--bootstrap-server",
                cluster.bootstrap,
                "--execute",
                "--reassignment-json-file",
                str(plan),
                "--throttle",
                "5000000",
                "--replica-alter-log-dirs-throttle",
                "6000000",
            ]
        )
        outputs[name] = (result.code, result.stdout)
        throttles[name] = cluster.throttles([topic])
        cluster.wait_idle()
        run(["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", str(plan)])
        run(["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(back)])
        cluster.wait_idle()
        run(["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", str(back)])
    assert outputs["kreassign"] == outputs["apache"]
    assert throttles["kreassign"] == throttles["apache"]


def test_additional_is_required_while_a_reassignment_runs_and_cancel_reverts(cluster, tmp_path):
    topic = cluster.create(f"cancel-{uuid.uuid4().hex[:6]}", [[1, 2], [2, 1]], messages=20000, size=1000)
    plan = tmp_path / "plan.json"
    plan.write_text(_plan(topic, {0: [3, 1], 1: [3, 2]}))
    before = cluster.replicas(topic)
    outputs: dict[str, list] = {"apache": [], "kreassign": []}
    for name, run in TOOLS.items():
        started = run(
            [
                "--bootstrap-server",
                cluster.bootstrap,
                "--execute",
                "--reassignment-json-file",
                str(plan),
                "--throttle",
                "1024",
            ]
        )
        assert started.code == 0, started
        assert cluster.reassigning()
        for args in (
            ["--execute", "--reassignment-json-file", str(plan)],
            ["--list"],
            ["--verify", "--reassignment-json-file", str(plan)],
            ["--cancel", "--reassignment-json-file", str(plan)],
            ["--cancel", "--reassignment-json-file", str(plan)],
        ):
            result = run(["--bootstrap-server", cluster.bootstrap, *args])
            outputs[name].append((result.code, result.stdout))
        cluster.wait_idle(30)
        assert cluster.replicas(topic) == before
        assert cluster.throttles([topic]) == {"4:1": {}, "4:2": {}, "4:3": {}, f"2:{topic}": {}}
    assert outputs["kreassign"] == outputs["apache"]
    assert outputs["apache"][0][0] == 1 and outputs["apache"][0][1].startswith("Cannot execute because")


def test_log_dir_move(cluster, tmp_path, kafka_cluster):
    topic = cluster.create(f"logdir-{uuid.uuid4().hex[:6]}", [[1, 2]], messages=100)
    dirs = {b: [str(d) for d in kafka_cluster.node(b).log_dirs] for b in (1, 2)}
    outputs = {}
    for name, run in TOOLS.items():
        # move broker 1's replica to whichever of its dirs it is not in, then verify
        current = run_ours(
            [
                "--bootstrap-server",
                cluster.bootstrap,
                "--execute",
                "--reassignment-json-file",
                str(_write(tmp_path / "noop.json", _plan(topic, {0: [1, 2]}))),
                "--additional",
            ]
        )
        now = json.loads(current.stdout.split("\n")[2])["partitions"][0]["log_dirs"][0]
        target_dir = next(d for d in dirs[1] if d != now)
        plan = _write(
            tmp_path / f"{name}.json",
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": [target_dir, "any"]}
                    ],
                }
            ),
        )
        executed = run(
            ["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", plan, "--additional"]
        )
        assert executed.code == 0, executed
        cluster.wait_idle()
        verified = ["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", plan]
        assert wait_until(lambda v=verified: "completed successfully" in run_ours(v).stdout, timeout=60)
        apache_v, ours_v = _both(verified)
        assert (ours_v.code, ours_v.stdout) == (apache_v.code, apache_v.stdout)
        outputs[name] = [
            line.replace(now, "<from>").replace(target_dir, "<to>") for line in executed.stdout.splitlines()[3:]
        ]
    assert outputs["kreassign"] == outputs["apache"]


def _write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_bootstrap_controller_list_and_cancel(cluster, kafka_cluster, tmp_path):
    controllers = kafka_cluster.bootstrap_controllers
    plan = _write(tmp_path / "none.json", _plan("no-such-topic-for-cancel", {0: [1, 2]}))
    for args in (["--list"], ["--cancel", "--reassignment-json-file", plan, "--preserve-throttles"]):
        apache, ours = _both(["--bootstrap-controller", controllers, *args])
        assert (ours.code, ours.stdout) == (apache.code, apache.stdout)


def test_disallow_replication_factor_change(cluster, tmp_path):
    topic = cluster.create(f"rf-{uuid.uuid4().hex[:6]}", [[1, 2]])
    plan = _write(tmp_path / "grow.json", _plan(topic, {0: [1, 2, 3]}))
    args = [
        "--bootstrap-server",
        cluster.bootstrap,
        "--execute",
        "--reassignment-json-file",
        plan,
        "--disallow-replication-factor-change",
    ]
    apache, ours = _both(args)
    assert (ours.code, ours.stdout) == (apache.code, apache.stdout)
    assert apache.code == 1 and "Error reassigning partition(s):" in apache.stdout
    assert cluster.replicas(topic) == {0: [1, 2]}


def test_cancel_of_a_move_that_only_adds_a_replica(cluster, tmp_path):
    topic = cluster.create(f"grow-{uuid.uuid4().hex[:6]}", [[1, 2]], messages=20000, size=1000)
    plan = _write(tmp_path / "grow.json", _plan(topic, {0: [1, 2, 3]}))
    outputs = {}
    for name, run in TOOLS.items():
        started = run(
            [
                "--bootstrap-server",
                cluster.bootstrap,
                "--execute",
                "--reassignment-json-file",
                plan,
                "--throttle",
                "1024",
            ]
        )
        assert started.code == 0, started
        cancelled = run(["--bootstrap-server", cluster.bootstrap, "--cancel", "--reassignment-json-file", plan])
        outputs[name] = (cancelled.code, cancelled.stdout)
        cluster.wait_idle(30)
        assert cluster.replicas(topic) == {0: [1, 2]}
    assert outputs["kreassign"] == outputs["apache"]
    assert "Successfully cancelled partition reassignment for: " in outputs["apache"][1]


def test_verify_of_a_plan_naming_an_unknown_broker(cluster, tmp_path):
    """A completed plan whose replicas name broker 99, which the cluster does not have: Apache clears the
    broker-level throttles of the live brokers, then fails on broker 99 (at its deadline, shortened here)
    before the topic-level ones. Same stdout, exit code and throttles left; kreassign's hint names broker 99."""
    topic = cluster.create(f"gone-{uuid.uuid4().hex[:6]}", [[1, 2]])
    plan = _write(tmp_path / "gone.json", _plan(topic, {0: [1, 99]}))
    config = _write(tmp_path / "client.properties", "request.timeout.ms=5000\ndefault.api.timeout.ms=5000\n")
    args = ["--bootstrap-server", cluster.bootstrap, "--command-config", config, "--verify"]
    outcomes, left, stderr = {}, {}, {}
    for name, run in TOOLS.items():
        cluster.set_throttles(topic)
        result = run([*args, "--reassignment-json-file", plan])
        outcomes[name] = (result.code, strip_java_stack_trace(result.stdout))
        left[name] = cluster.throttles([topic])
        stderr[name] = result.stderr
    assert outcomes["kreassign"] == outcomes["apache"]
    code, stdout = outcomes["apache"]
    assert code == 1
    assert stdout == (
        f"Status of partition reassignment:\nThere is no active reassignment of partition {topic}-0, but replica set "
        "is 1,2 rather than 1,99.\n\nClearing broker-level throttles on brokers 1,2,3,99\n"
        "Error: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. "
        "Call: incrementalAlterConfigs\n"
    )
    assert left["kreassign"] == left["apache"]
    assert [left["kreassign"][f"4:{b}"] for b in (1, 2, 3)] == [{}, {}, {}]  # no throttle left on a live broker
    assert left["kreassign"][f"2:{topic}"]  # both fail before the topic-level throttles
    assert "Broker 99 is not in the cluster" in stderr["kreassign"]
    assert "bootstrap servers" not in stderr["kreassign"]


def test_verify_of_a_log_dir_move_for_a_replica_its_broker_does_not_host(cluster, tmp_path, kafka_cluster):
    """Broker 3 answers DescribeLogDirs without the replica: Java's "not found in any live log dir" text,
    and the move is not done, so neither tool clears the throttles."""
    topic = cluster.create(f"nohost-{uuid.uuid4().hex[:6]}", [[1, 2]])
    target = str(kafka_cluster.node(3).log_dirs[0])
    partition = {"topic": topic, "partition": 0, "replicas": [1, 3], "log_dirs": ["any", target]}
    plan = _write(tmp_path / "nohost.json", json.dumps({"version": 1, "partitions": [partition]}))
    outcomes, left = {}, {}
    for name, run in TOOLS.items():
        cluster.set_throttles(topic)
        result = run(["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", plan])
        outcomes[name] = (result.code, result.stdout)
        left[name] = cluster.throttles([topic])
    assert outcomes["kreassign"] == outcomes["apache"]
    assert outcomes["apache"] == (
        0,
        f"Status of partition reassignment:\nThere is no active reassignment of partition {topic}-0, but replica set "
        f"is 1,2 rather than 1,3.\nPartition {topic}-0 is not found in any live log dir on broker 3. There is likely an offline log "
        "directory on the broker.\n",
    )
    assert left["kreassign"] == left["apache"]
    assert all(left["apache"].values())  # nothing cleared
