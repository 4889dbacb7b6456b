"""Differential for --zookeeper: Kafka 2.8.2's tool (the last Apache tool with --zookeeper) and kreassign
side by side on the same ZooKeeper-mode Kafka 3.9.x cluster and inputs.

Compared: exit code and stdout, byte for byte (2.8.2's first line ``Warning: --zookeeper is deprecated, ...``
included), minus what docs/compatibility.md lists as the allowed difference of this path: Java stack traces after
``Error:`` lines. The ``--generate`` proposal is random in both tools: compared by shape.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from kreassign.zookeeper.command import DEPRECATION_ADVICE, DEPRECATION_WARNING
from tests.integration.differential import legacy_contract_stdout, run_legacy_apache, run_ours, wait_until
from tests.integration.zookeeper_helpers import new_topic, plan_json, replicas, znode_json, znode_throttles

pytestmark = [pytest.mark.integration, pytest.mark.differential]


def _both(args: list[str], first: str = "apache"):
    """Run both tools (``first`` first); assert the contract is identical; return kreassign's outcome, its
    stdout without the deprecation line both tools print first (checked here)."""
    runs = {}
    for tool in (first, "kreassign" if first == "apache" else "apache"):
        runs[tool] = run_legacy_apache(args) if tool == "apache" else run_ours(args)
    apache, ours = runs["apache"], runs["kreassign"]
    assert ours.code == apache.code, (apache, ours)
    assert ours.stdout == legacy_contract_stdout(apache.stdout), (apache, ours)
    if "--zookeeper" in args and ours.stdout:
        assert ours.stdout.startswith(DEPRECATION_WARNING + "\n")
        assert ours.stderr.startswith(DEPRECATION_ADVICE + "\n")
        return dataclasses.replace(ours, stdout=ours.stdout.removeprefix(DEPRECATION_WARNING + "\n"))
    return ours


@pytest.fixture(scope="module")
def zk(zk_cluster) -> list[str]:
    return ["--zookeeper", zk_cluster.zookeeper_connect]


def _file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("extra", [[], ["--disable-rack-aware"]], ids=["rack-aware", "rack-unaware"])
def test_generate(zk_cluster, zk, tmp_path, extra):
    topic = new_topic(zk_cluster, "dgen", [[1, 2], [2, 3], [3, 1], [1, 3]])
    topics = _file(tmp_path, "t.json", json.dumps({"version": 1, "topics": [{"topic": topic}, {"topic": "absent"}]}))
    args = [*zk, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3", *extra]
    apache, ours = run_legacy_apache(args), run_ours(args)
    assert apache.code == ours.code == 0, (apache, ours)
    separator = "\n\nProposed partition reassignment configuration\n"
    current_a, proposed_a = legacy_contract_stdout(apache.stdout).split(separator)
    current_o, proposed_o = ours.stdout.split(separator)
    assert current_o == current_a
    racks = zk_cluster.broker_racks
    for proposed in (proposed_a, proposed_o):
        assert proposed.endswith("}\n")
        parts = json.loads(proposed)["partitions"]
        assert sorted(p["partition"] for p in parts) == [0, 1, 2, 3]
        for p in parts:
            assert p["topic"] == topic and p["log_dirs"] == ["any", "any"]
            assert len(set(p["replicas"])) == 2 and set(p["replicas"]) <= {1, 2, 3}
            if not extra:
                assert len({racks[b] for b in p["replicas"]}) == 2


def test_generate_errors(zk_cluster, zk, tmp_path):
    topic = new_topic(zk_cluster, "dgenerr", [[1, 2], [2, 3]])
    topics = _file(tmp_path, "t.json", json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    args = [*zk, "--generate", "--topics-to-move-json-file", topics]
    ours = _both([*args, "--broker-list", "1,9"])
    assert ours.stdout == "Error: Replication factor: 2 larger than available brokers: 1.\n"
    ours = _both([*args, "--broker-list", "1,2,1"])
    assert ours.stdout == "Error: Broker list contains duplicate entries: 1\n"
    ours = _both([*args, "--broker-list", "5,1,2,3,4,1,2,3,4,5"])  # five: a Scala HashMap's order
    assert ours.stdout.startswith("Error: Broker list contains duplicate entries: ")
    duplicated = _file(
        tmp_path, "dup.json", json.dumps({"version": 1, "topics": [{"topic": t} for t in "abcdefabcdef"]})
    )
    ours = _both([*zk, "--generate", "--topics-to-move-json-file", duplicated, "--broker-list", "1,2"])
    assert ours.stdout.startswith("Error: List of topics to reassign contains duplicate entries: ")


def test_execute_refuses_bad_plans(zk_cluster, zk, tmp_path):
    topic = new_topic(zk_cluster, "dbad", [[1, 2], [2, 3]])
    plans = {
        # more than 4 partitions: Kafka 2.8 lists the missing ones in Scala HashMap order
        "missing partitions": {
            "version": 1,
            "partitions": [{"topic": t, "partition": p, "replicas": [1, 2]} for t in (topic, "nope") for p in range(4)],
        },
        "missing brokers": {
            "version": 1,
            "partitions": [
                {"topic": topic, "partition": 0, "replicas": [1, 9, 8, 7]},
                {"topic": topic, "partition": 1, "replicas": [12, 11, 10, 2]},
            ],
        },
        "log dirs": {
            "version": 1,
            "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": ["/tmp/x", "any"]}],
        },
        "empty": {"version": 1, "partitions": []},
        "duplicate": {
            "version": 1,
            "partitions": [
                {"topic": topic, "partition": 0, "replicas": [1, 2]},
                {"topic": topic, "partition": 0, "replicas": [2, 3]},
            ],
        },
        "duplicate replicas": {
            "version": 1,
            "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 1, 2, 2, 3, 3, 7, 7, 9, 9]}],
        },
        "duplicate partitions": {
            "version": 1,
            "partitions": [{"topic": topic, "partition": p % 6, "replicas": [1]} for p in range(12)],
        },
    }
    expected_first_lines = {
        "missing partitions": "Error: The proposed assignment contains non-existent partitions: List(",
        "missing brokers": "Error: The proposed assignment contains non-existent brokerIDs: ",
        "log dirs": "Error: bootstrap-server needs to be provided when replica reassignments are present.",
        "empty": "Error: Partition reassignment list cannot be empty",
        "duplicate": "Error: Partition reassignment contains duplicate topic partitions: ",
        "duplicate replicas": "Error: Partition replica lists may not contain duplicate entries: ",
        "duplicate partitions": "Error: Partition reassignment contains duplicate topic partitions: ",
    }
    for name, plan in plans.items():
        path = _file(tmp_path, "plan.json", json.dumps(plan))
        ours = _both([*zk, "--execute", "--reassignment-json-file", path, "--throttle", "1000"])
        assert ours.code == 1 and ours.stdout.startswith(expected_first_lines[name]), name
    assert replicas(zk_cluster, topic) == {0: [1, 2], 1: [2, 3]}
    assert znode_json(zk_cluster, "/admin/reassign_partitions") is None
    assert znode_throttles(zk_cluster, [topic]) == {}


def test_verify_refusals_and_unknown_partitions(zk, tmp_path):
    log_dirs = _file(
        tmp_path,
        "dirs.json",
        json.dumps({"version": 1, "partitions": [{"topic": "x", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]}),
    )
    _both([*zk, "--verify", "--reassignment-json-file", log_dirs])
    unknown = _file(tmp_path, "unknown.json", plan_json("no-such-topic", {0: [1, 2], 3: [2, 3]}))
    ours = _both([*zk, "--verify", "--reassignment-json-file", unknown, "--preserve-throttles"])
    assert "There is no active reassignment of partition no-such-topic-0, but replica set is  rather than 1,2." in (
        ours.stdout
    )


def test_verify_many_topics_and_brokers_prints_scala_set_order(zk_cluster, zk, tmp_path):
    """Five topics and unknown brokers 5-9 in the plan: both throttle-clearing lines list Scala HashSets."""
    topics = [new_topic(zk_cluster, f"dset{i}", [[1, 2]]) for i in range(5)]
    plan = {
        "version": 1,
        "partitions": [{"topic": t, "partition": 0, "replicas": [1, 2, 5 + i]} for i, t in enumerate(topics)],
    }
    path = _file(tmp_path, "plan.json", json.dumps(plan))
    ours = _both([*zk, "--verify", "--reassignment-json-file", path])
    assert "Clearing broker-level throttles on brokers " in ours.stdout


def test_throttled_execute_verify_and_rollback(zk_cluster, zk, tmp_path):
    """kreassign executes a slow throttled move; both verify it (in progress), both refuse a second execute;
    once it is done both verify it and clear throttles; then the Apache tool executes the rollback plan."""
    topic = new_topic(zk_cluster, "dmove", [[1, 2], [2, 3]], messages=3000)
    plan = _file(tmp_path, "plan.json", plan_json(topic, {0: [2, 3], 1: [3, 1]}))
    executed = run_ours([*zk, "--execute", "--reassignment-json-file", plan, "--throttle", "1"])
    assert executed.code == 0, executed
    rollback = executed.stdout.split("\n\n")[1]
    assert json.loads(rollback)["partitions"][0]["replicas"] == [1, 2]

    verify = [*zk, "--verify", "--reassignment-json-file", plan]
    in_progress = _both(verify)
    assert f"Reassignment of partition {topic}-0 is still in progress." in in_progress.stdout
    assert "Clearing" not in in_progress.stdout
    refused = _both([*zk, "--execute", "--reassignment-json-file", plan, "--throttle", "1"])
    assert refused.stdout.startswith("Cannot execute because there is an existing partition assignment.")
    assert znode_throttles(zk_cluster, [topic])["/config/brokers/1"]["leader.replication.throttled.rate"] == "1"

    # Let it finish: raise the rate through the admin API (--additional needs --bootstrap-server).
    bootstrap = ["--bootstrap-server", zk_cluster.bootstrap_servers]
    raised = run_ours(
        [*bootstrap, "--execute", "--additional", "--reassignment-json-file", plan, "--throttle", "500000000"]
    )
    assert raised.code == 0, raised
    # The admin API's reassignment takes over from the znode's, and the controller deletes the znode as it
    # does (KIP-455), before the copy ends: wait for the topic znode to show the target too.
    assert wait_until(lambda: replicas(zk_cluster, topic) == {0: [2, 3], 1: [3, 1]}, timeout=120)
    assert wait_until(lambda: znode_json(zk_cluster, "/admin/reassign_partitions") is None, timeout=120)
    for first in ("apache", "kreassign"):  # the first run clears the throttles, the second finds none
        done = _both(verify, first=first)
        assert done.stdout.endswith(f"Clearing topic-level throttles on topic {topic}\n")
    assert znode_throttles(zk_cluster, [topic]) == {}

    back = _file(tmp_path, "rollback.json", rollback)
    apache = run_legacy_apache([*zk, "--execute", "--reassignment-json-file", back, "--throttle", "500000000"])
    assert apache.code == 0, apache
    assert wait_until(lambda: replicas(zk_cluster, topic) == {0: [1, 2], 1: [2, 3]}, timeout=120)
    assert wait_until(lambda: znode_json(zk_cluster, "/admin/reassign_partitions") is None, timeout=60)
    done = _both([*zk, "--verify", "--reassignment-json-file", back], first="kreassign")
    assert f"Reassignment of partition {topic}-1 is complete." in done.stdout
    assert znode_throttles(zk_cluster, [topic]) == {}


@pytest.mark.parametrize(
    "extra",
    [
        ["--execute", "--additional"],
        ["--execute", "--timeout", "5"],
        ["--execute", "--replica-alter-log-dirs-throttle", "5"],
    ],
    ids=["additional", "timeout", "replica-alter-log-dirs-throttle"],
)
def test_options_that_need_bootstrap_server(zk, tmp_path, extra):
    """Kafka 2.8 dies with "You must specify --bootstrap-server when using ..." (stderr, exit 1)."""
    plan = _file(tmp_path, "plan.json", plan_json("x", {0: [1]}))
    ours = _both([*zk, *extra, "--reassignment-json-file", plan])
    assert (ours.code, ours.stdout) == (1, "")
    assert ours.stderr.startswith("You must specify --bootstrap-server when using")


def test_bad_reassignment_json(zk, tmp_path):
    """Malformed and ill-typed documents: Kafka 2.8.2's Jackson 2.10 and Scala texts (the unit table's
    documents, run through both tools on the live cluster)."""
    from tests.unit.test_zookeeper_jsontexts import KAFKA_2_8_2_MESSAGES

    for i, (document, _) in enumerate(KAFKA_2_8_2_MESSAGES):
        path = _file(tmp_path, f"bad-{i}.json", document)
        ours = _both([*zk, "--verify", "--reassignment-json-file", path])
        assert ours.code == 1 and ours.stdout.startswith("Error: "), document
