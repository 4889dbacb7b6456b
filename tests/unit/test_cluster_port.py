"""The ClusterPort tells the whole truth: every port (the Kafka adapter, the offline snapshot, the simulated
cluster) has every call of the protocol, with the same parameters, so no action needs to ask which one it has."""

from __future__ import annotations

import inspect

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ClusterPort, LogDirUsage, ReplicaLogDirInfo
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.model import Broker, TopicPartition, TopicPartitionReplica
from kreassign.snapshot import SnapshotCluster, save_snapshot
from tests.unit.test_snapshot import SNAPSHOT

PORT_CALLS = sorted(
    name for name, member in vars(ClusterPort).items() if inspect.isfunction(member) and not name.startswith("_")
)


def test_the_protocol_has_the_calls_actions_used_to_probe_for():
    assert {"list_topic_names", "describe_log_dirs", "snapshot_file", "secrets", "replica_sizes"} <= set(PORT_CALLS)


@pytest.mark.parametrize("port_type", [KafkaCluster, SnapshotCluster, SimulatedCluster], ids=lambda t: t.__name__)
@pytest.mark.parametrize("call", PORT_CALLS)
def test_every_port_has_every_call(port_type, call):
    implemented = getattr(port_type, call, None)
    assert callable(implemented), f"{port_type.__name__} has no {call}"
    wanted = list(inspect.signature(getattr(ClusterPort, call)).parameters)
    assert list(inspect.signature(implemented).parameters) == wanted


def test_the_adapter_knows_its_secrets_without_connecting():
    config = ClientConfig(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="a" '
            'password="pa55word";',
        }
    )
    port = KafkaCluster("127.0.0.1:1", client_config=config)
    assert port.secrets() == ["pa55word"]
    assert port.snapshot_file() is None
    port.close()


def test_the_snapshot_file_is_named_only_when_it_is_on_disk(tmp_path):
    path = tmp_path / "cluster.jsonl"
    save_snapshot(SNAPSHOT, str(path))
    assert SnapshotCluster.open(str(path)).snapshot_file() == str(path)
    assert SnapshotCluster(SNAPSHOT).snapshot_file() is None  # "<snapshot>": in memory only
    assert SnapshotCluster(SNAPSHOT).secrets() == []


def test_a_replica_its_broker_does_not_host_has_no_current_log_dir():
    """As Java's describeReplicaLogDirs: the broker answers for every replica asked, hosted or not."""
    hosted, not_hosted = TopicPartitionReplica("orders", 0, 1), TopicPartitionReplica("orders", 0, 3)
    unknown_dir = TopicPartitionReplica("orders", 1, 3)  # hosted, but the snapshot does not know where
    assert SnapshotCluster(SNAPSHOT).describe_replica_log_dirs([hosted, not_hosted, unknown_dir]) == {
        hosted: ReplicaLogDirInfo("/d1"),
        not_hosted: ReplicaLogDirInfo(None),
    }
    simulated = SimulatedCluster([Broker(1), Broker(2), Broker(3)])
    simulated.add_topic("t", [[1, 2]])
    simulated.stop_broker(2)
    replicas = [TopicPartitionReplica("t", 0, b) for b in (1, 2, 3, 9)]
    assert simulated.describe_replica_log_dirs(replicas) == {  # broker 2 is down, 9 unknown: no answer
        replicas[0]: ReplicaLogDirInfo("/sim/1/data"),
        replicas[2]: ReplicaLogDirInfo(None),
    }


def test_the_simulated_cluster_lists_topics_and_log_dirs():
    simulated = SimulatedCluster([Broker(1), Broker(2)])
    simulated.add_topic("b", [[1, 2]], size=300)
    simulated.add_topic("a", [[2]], size=50)
    assert simulated.list_topic_names() == ["a", "b"]
    assert simulated.describe_log_dirs([2, 7]) == {
        2: [LogDirUsage("/sim/2/data", {TopicPartition("b", 0): 300, TopicPartition("a", 0): 50})]
    }


def test_every_port_gives_topic_columns_without_being_asked_which_it_is():
    """--generate reads describe_topic_columns from any port: a live-like cluster builds them from its other
    calls (log dirs of live brokers only, sizes unknown); a snapshot gives the columns it holds."""
    simulated = SimulatedCluster([Broker(1), Broker(2), Broker(3)])
    simulated.add_topic("t", [[3, 1], [1, 2]], size=10)
    simulated.stop_broker(3)
    columns = simulated.describe_topic_columns(["t"])
    assert list(columns) == ["t"]
    t = columns["t"]
    assert (t.partitions, t.replicas, t.sizes) == ([0, 1], [(3, 1), (1, 2)], [None, None])
    assert t.log_dirs == [(None, "/sim/1/data"), ("/sim/1/data", "/sim/2/data")]  # broker 3 is down
    assert t.leaders == [1, 1] and t.isr_at(0) == (1,)

    held = SnapshotCluster(SNAPSHOT).describe_topic_columns(["événements", "orders"])
    assert list(held) == ["événements", "orders"]
    assert held["orders"].sizes == [500, None] and held["orders"].log_dirs == [("/d1", "/d1"), ("/d1", None)]

    outside = SnapshotCluster(SNAPSHOT)
    outside.columns.topics["orders"].replicas[0] = (1, 9)  # a broker the snapshot does not list
    assert outside.describe_topic_columns(["orders"])["orders"].log_dirs[0] == ("/d1", None)
    for port in (simulated, SnapshotCluster(SNAPSHOT)):
        with pytest.raises(Exception, match="UnknownTopicOrPartitionException"):
            port.describe_topic_columns(["orders", "no-such-topic"] if port is not simulated else ["nope"])
