"""The deprecated --zookeeper path, and the --bootstrap-server path, on a real ZooKeeper-mode cluster
(Kafka 3.9.x with its ZooKeeper, 3 brokers, chroot /kafka), observed through the znodes and the brokers."""

from __future__ import annotations

import pytest

from kreassign.zookeeper.command import DEPRECATION_ADVICE, DEPRECATION_WARNING
from tests.integration.differential import run_ours, wait_until
from tests.integration.zookeeper_helpers import (
    config_changes,
    described_throttles,
    new_topic,
    plan_json,
    replicas,
    znode_json,
    znode_throttles,
)

pytestmark = pytest.mark.integration


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _verify_until_done(args: list[str], done_text: str, timeout: float = 120):
    outcomes = []

    def finished() -> bool:
        outcomes.append(run_ours(args))
        return done_text in outcomes[-1].stdout

    assert wait_until(finished, timeout=timeout, interval=1), outcomes[-1]
    return outcomes[-1]


def test_throttled_reassignment_through_zookeeper(zk_cluster, tmp_path):
    topic = new_topic(zk_cluster, "zk-move", [[1, 2], [2, 3]], messages=2000)
    plan = _write(tmp_path, "plan.json", plan_json(topic, {0: [2, 3], 1: [3, 1]}))
    zk = ["--zookeeper", zk_cluster.zookeeper_connect]
    changes_before = len(config_changes(zk_cluster))

    executed = run_ours([*zk, "--execute", "--reassignment-json-file", plan, "--throttle", "50000000"])
    assert executed.code == 0, executed
    assert executed.stderr == DEPRECATION_ADVICE + "\n"
    assert executed.stdout == (
        f"{DEPRECATION_WARNING}\n"
        "Current partition replica assignment\n\n"
        f'{{"version":1,"partitions":[{{"topic":"{topic}","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}},'
        f'{{"topic":"{topic}","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}}]}}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.\n"
        "The inter-broker throttle limit was set to 50000000 B/s\n"
        f"Successfully started partition reassignments for {topic}-0,{topic}-1\n"
    )
    # Throttles went to the config znodes, each write announced by a change notification.
    throttles = znode_throttles(zk_cluster, [topic])
    assert throttles[f"/config/topics/{topic}"] == {
        "leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
        "follower.replication.throttled.replicas": "0:3,1:1",
    }
    for broker in (1, 2, 3):
        assert throttles[f"/config/brokers/{broker}"] == {
            "leader.replication.throttled.rate": "50000000",
            "follower.replication.throttled.rate": "50000000",
        }
    new_changes = config_changes(zk_cluster)[changes_before:]
    assert {"version": 2, "entity_path": f"topics/{topic}"} in new_changes
    assert {c["entity_path"] for c in new_changes} >= {"brokers/1", "brokers/2", "brokers/3"}
    # ... and the brokers applied them.
    assert wait_until(lambda: f"2:{topic}" in described_throttles(zk_cluster, [topic]), timeout=30)

    verify = [*zk, "--verify", "--reassignment-json-file", plan]
    done = _verify_until_done(verify, "Clearing topic-level throttles")
    assert done.code == 0
    assert done.stdout == (
        f"{DEPRECATION_WARNING}\n"
        "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "
        "Use --bootstrap-server instead for more accurate results.\n"
        "Status of partition reassignment:\n"
        f"Reassignment of partition {topic}-0 is complete.\n"
        f"Reassignment of partition {topic}-1 is complete.\n"
        "Clearing broker-level throttles on brokers 1,2,3\n"
        f"Clearing topic-level throttles on topic {topic}\n"
    )
    assert replicas(zk_cluster, topic) == {0: [2, 3], 1: [3, 1]}
    assert znode_json(zk_cluster, "/admin/reassign_partitions") is None
    assert znode_throttles(zk_cluster, [topic]) == {}
    assert wait_until(lambda: described_throttles(zk_cluster, [topic]) == {}, timeout=30)


def test_generate_through_zookeeper(zk_cluster, tmp_path):
    topic = new_topic(zk_cluster, "zk-gen", [[1, 2], [2, 3], [3, 1]])
    topics = _write(tmp_path, "topics.json", f'{{"version":1,"topics":[{{"topic":"{topic}"}}]}}')
    args = ["--zookeeper", zk_cluster.zookeeper_connect, "--generate", "--topics-to-move-json-file", topics]
    first = run_ours([*args, "--broker-list", "1,2,3", "--seed", "3"])
    second = run_ours([*args, "--broker-list", "1,2,3", "--seed", "3"])
    assert first.code == 0 and first.stdout == second.stdout
    assert first.stdout.startswith(
        f"{DEPRECATION_WARNING}\n"
        "Current partition replica assignment\n"
        f'{{"version":1,"partitions":[{{"topic":"{topic}","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}}'
    )
    assert "\n\nProposed partition reassignment configuration\n" in first.stdout


def test_bootstrap_server_path_on_a_zookeeper_mode_cluster(zk_cluster, tmp_path):
    """Kafka 3.9 serves the reassignment admin APIs in ZooKeeper mode: the same plan, the normal path."""
    topic = new_topic(zk_cluster, "bs-move", [[1, 2], [2, 3]], messages=2000)
    plan = _write(tmp_path, "plan.json", plan_json(topic, {0: [2, 3], 1: [3, 1]}))
    bootstrap = ["--bootstrap-server", zk_cluster.bootstrap_servers]
    executed = run_ours([*bootstrap, "--execute", "--reassignment-json-file", plan, "--throttle", "50000000"])
    assert executed.code == 0, executed
    assert "The inter-broker throttle limit was set to 50000000 B/s\n" in executed.stdout
    assert executed.stderr == ""
    # incremental alter configs in ZooKeeper mode land in the same config znodes
    assert znode_throttles(zk_cluster, [topic])[f"/config/topics/{topic}"] == {
        "leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
        "follower.replication.throttled.replicas": "0:3,1:1",
    }
    done = _verify_until_done([*bootstrap, "--verify", "--reassignment-json-file", plan], "Clearing topic-level")
    assert done.stdout.startswith(
        f"Status of partition reassignment:\nReassignment of partition {topic}-0 is completed.\n"
        f"Reassignment of partition {topic}-1 is completed.\n"
    )
    assert replicas(zk_cluster, topic) == {0: [2, 3], 1: [3, 1]}
    assert znode_throttles(zk_cluster, [topic]) == {}
    assert wait_until(lambda: described_throttles(zk_cluster, [topic]) == {}, timeout=30)


def test_zookeeper_with_bootstrap_server_is_an_error_and_does_nothing(zk_cluster, tmp_path):
    topic = new_topic(zk_cluster, "zk-both", [[1, 2]])
    plan = _write(tmp_path, "plan.json", plan_json(topic, {0: [2, 3]}))
    changes_before = len(config_changes(zk_cluster))
    outcome = run_ours(
        [
            "--zookeeper",
            zk_cluster.zookeeper_connect,
            "--bootstrap-server",
            zk_cluster.bootstrap_servers,
            "--execute",
            "--reassignment-json-file",
            plan,
            "--throttle",
            "1000",
        ]
    )
    assert (outcome.code, outcome.stdout) == (1, "")
    assert outcome.stderr == (
        "Please don't specify both --zookeeper and --bootstrap-server: --zookeeper is deprecated, "
        "use --bootstrap-server alone\n"
    )
    assert znode_json(zk_cluster, "/admin/reassign_partitions") is None
    assert replicas(zk_cluster, topic) == {0: [1, 2]}
    assert len(config_changes(zk_cluster)) == changes_before
    assert znode_throttles(zk_cluster, [topic]) == {}


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--list"], "[list]"),
        (["--cancel", "--reassignment-json-file", "plan.json"], "[cancel]"),
        (["--execute", "--reassignment-json-file", "plan.json", "--additional"], "[additional]"),
    ],
    ids=["list", "cancel", "additional"],
)
def test_actions_that_need_bootstrap_server(zk_cluster, extra, named):
    outcome = run_ours(["--zookeeper", zk_cluster.zookeeper_connect, *extra])
    assert (outcome.code, outcome.stdout) == (1, "")
    assert outcome.stderr == f'You must specify --bootstrap-server when using "{named}"\n'
