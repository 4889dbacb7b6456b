"""The Kafka adapter against the real cluster: every ClusterPort method, its Java error texts, batching.

The error texts were checked against the Apache tool and Java's Admin client of the pinned release
(Kafka 4.3.1) on the same kind of cluster.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ReplicaLogDirInfo, ResourceType
from kreassign.errors import ClusterError, ClusterTimeoutError, CommandError, UnknownTopicOrPartitionError
from kreassign.model import PartitionReassignment, TopicPartition, TopicPartitionReplica
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

ERRORS = "org.apache.kafka.common.errors."
THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def replicas_of(adapter: KafkaCluster, topic: str) -> list[tuple[int, ...]]:
    return [p.replicas for p in adapter.describe_topics([topic])[topic]]


# ------------------------------------------------------------------------------ brokers and topics
def test_describe_brokers_gives_ids_racks_and_addresses_in_java_order(adapter, kafka_cluster) -> None:
    brokers = adapter.describe_brokers()
    assert [b.id for b in brokers] == sorted(kafka_cluster.broker_ids)  # small ids: HashMap order is ascending
    assert {b.id: b.rack for b in brokers} == kafka_cluster.broker_racks
    assert {f"{b.host}:{b.port}" for b in brokers} == set(kafka_cluster.bootstrap_servers.split(","))


def test_cluster_id_is_the_clusters_own_from_brokers_and_controllers(kafka_cluster) -> None:
    # what kreassign remembers on disk is keyed by it: the id the cluster was formatted with, read once
    brokers = KafkaCluster(kafka_cluster.bootstrap_servers)
    controllers = KafkaCluster(bootstrap_controllers=kafka_cluster.bootstrap_controllers)
    try:
        assert brokers.cluster_id() == kafka_cluster.cluster_id
        assert controllers.cluster_id() == kafka_cluster.cluster_id
    finally:
        brokers.close()
        controllers.close()


def test_describe_topics_gives_sorted_partitions(adapter, topics) -> None:
    topic = topics([[1, 2], [2, 3], [3, 1]])
    partitions = adapter.describe_topics([topic, topic])[topic]
    assert [p.partition for p in partitions] == [0, 1, 2]
    assert [p.replicas for p in partitions] == [(1, 2), (2, 3), (3, 1)]
    assert all(set(p.isr) == set(p.replicas) and p.leader == p.replicas[0] for p in partitions)


def test_unknown_topic_reads_like_the_apache_tool(adapter, topics) -> None:
    topic = topics([[1]])
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(UnknownTopicOrPartitionError) as failure:
        adapter.describe_topics([topic, missing])
    assert failure.value.message == f"{ERRORS}UnknownTopicOrPartitionException: Topic {missing} not found."


def test_first_unknown_topic_is_the_one_java_reports(adapter) -> None:
    # The Apache tool (--execute) reported "Topic topic-x not found." for these names.
    names = ["nosuch", "zzz", "abc", "topic-x"]
    with pytest.raises(UnknownTopicOrPartitionError, match="Topic topic-x not found"):
        adapter.describe_topics(names)


def test_describe_topics_of_nothing_asks_nothing(adapter) -> None:
    assert adapter.describe_topics([]) == {}


def test_read_topics_answers_as_describe_topics_and_fails_as_it(adapter, topics) -> None:
    first, second = topics([[1, 2], [2, 3], [3, 1]]), topics([[2, 1, 3], [3, 1, 2]])
    assert adapter.read_topics([second, first, second]) == adapter.describe_topics([second, first])
    assert list(adapter.read_topics([second, first])) == [second, first]
    assert adapter.read_topics([]) == {}
    names = ["nosuch", "zzz", first, "abc", "topic-x"]  # the topic Java reports, as describe_topics
    with pytest.raises(UnknownTopicOrPartitionError) as failure:
        adapter.read_topics(names)
    assert failure.value.message == f"{ERRORS}UnknownTopicOrPartitionException: Topic topic-x not found."
    assert "nosuch" not in adapter.list_topic_names()  # asked without creating it


# ------------------------------------------------------------------------------ reassignments
def test_reassignment_runs_to_completion(adapter, topics) -> None:
    topic = topics([[1, 2], [2, 3]], messages=100)
    targets = {TopicPartition(topic, 0): [3, 2], TopicPartition(topic, 1): [2, 3]}
    assert adapter.alter_reassignments(targets, allow_replication_factor_change=False) == {}
    wait_until(lambda: replicas_of(adapter, topic) == [(3, 2), (2, 3)])
    wait_until(lambda: not adapter.list_reassignments([TopicPartition(topic, 0)]))


def test_reassignment_errors_are_javas_per_partition_messages(adapter, topics) -> None:
    topic = topics([[1, 2], [2, 3]])
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    errors = adapter.alter_reassignments(
        {
            TopicPartition(topic, 9): [1, 2],
            TopicPartition(topic, 0): [1, 99],
            TopicPartition(missing, 0): [1, 2],
            TopicPartition(topic, 1): None,
        }
    )
    assert errors == {
        TopicPartition(topic, 9): f"Unable to find partition {topic}:9.",
        TopicPartition(
            topic, 0
        ): "The manual partition assignment includes broker 99, but no such broker is registered.",
        TopicPartition(missing, 0): f"Unable to find a topic named {missing}.",
        TopicPartition(topic, 1): "No partition reassignment is in progress.",
    }


def test_replication_factor_change_can_be_refused(adapter, topics) -> None:
    topic = topics([[1, 2]])
    partition = TopicPartition(topic, 0)
    refused = adapter.alter_reassignments({partition: [1, 2, 3]}, allow_replication_factor_change=False)
    assert refused == {partition: "The replication factor is changed from 2 to 3"}
    assert replicas_of(adapter, topic) == [(1, 2)]


@pytest.fixture
def throttled_topic(adapter, topics) -> Iterator[str]:
    """A topic whose replicas are throttled to 1 byte/s on every broker, so a reassignment stays in
    progress; every throttle is removed afterwards."""
    topic = topics([[1], [1]], messages=400, size=1000)
    brokers = [ConfigResource(ResourceType.BROKER, str(b.id)) for b in adapter.describe_brokers()]
    topic_resource = ConfigResource(ResourceType.TOPIC, topic)
    changes = {b: [ConfigOp(key, OpType.SET, "1") for key in THROTTLE_RATES] for b in brokers}
    changes[topic_resource] = [ConfigOp(key, OpType.SET, "*") for key in THROTTLED_REPLICAS]
    adapter.incremental_alter_configs(changes)
    applied = {r: {op.name: str(op.value) for op in ops} for r, ops in changes.items()}
    try:
        wait_until(lambda: adapter.describe_configs(list(changes)) == applied, timeout=30)
        yield topic
    finally:
        adapter.alter_reassignments({TopicPartition(topic, 0): None, TopicPartition(topic, 1): None})
        cleared = {b: [ConfigOp(key, OpType.DELETE) for key in THROTTLE_RATES] for b in brokers}
        cleared[topic_resource] = [ConfigOp(key, OpType.DELETE) for key in THROTTLED_REPLICAS]
        adapter.incremental_alter_configs(cleared)


def test_in_progress_reassignment_is_listed_and_cancelled(adapter, throttled_topic) -> None:
    topic = throttled_topic
    moving = TopicPartition(topic, 0)
    assert adapter.alter_reassignments({moving: [2, 3]}) == {}
    expected = PartitionReassignment(replicas=(2, 3, 1), adding=(2, 3), removing=(1,))
    listed = wait_until(lambda: adapter.list_reassignments())
    assert listed[moving] == expected
    assert adapter.list_reassignments([moving, TopicPartition(topic, 1)]) == {moving: expected}
    assert adapter.list_reassignments([TopicPartition(topic, 1)]) == {}
    assert adapter.list_reassignments([]) == {}
    assert adapter.alter_reassignments({moving: None}) == {}
    wait_until(lambda: moving not in adapter.list_reassignments())
    wait_until(lambda: replicas_of(adapter, topic)[0] == (1,))


# ------------------------------------------------------------------------------ log directories
def test_replica_log_dirs_and_a_move_between_them(adapter, topics, kafka_cluster) -> None:
    topic = topics([[1, 2]], messages=50)
    here, absent = TopicPartitionReplica(topic, 0, 1), TopicPartitionReplica(topic, 0, 3)
    found = adapter.describe_replica_log_dirs([here, absent, TopicPartitionReplica(topic, 0, 2)])
    assert set(found) == {here, absent, TopicPartitionReplica(topic, 0, 2)}  # every replica asked, as in Java
    assert found[absent] == ReplicaLogDirInfo(current=None)  # broker 3 has no replica
    dirs = [str(d) for d in kafka_cluster.node(1).log_dirs]
    current = found[here].current
    assert current in dirs and found[here].future is None
    target = next(d for d in dirs if d != current)

    assert adapter.alter_replica_log_dirs({here: target}) == {here}
    wait_until(lambda: adapter.describe_replica_log_dirs([here]).get(here) == ReplicaLogDirInfo(current=target))


def test_log_dir_move_of_a_replica_not_there_yet_is_left_out(adapter, topics, kafka_cluster) -> None:
    topic = topics([[1]])
    not_there = TopicPartitionReplica(topic, 0, 2)
    assert adapter.alter_replica_log_dirs({not_there: str(kafka_cluster.node(2).log_dirs[1])}) == set()


def test_log_dir_move_failure_reads_like_the_apache_tool(adapter, topics) -> None:
    topic = topics([[1]])
    replica = TopicPartitionReplica(topic, 0, 1)
    with pytest.raises(CommandError) as failure:
        adapter.alter_replica_log_dirs({replica: "/no/such/dir"})
    assert failure.value.message == f"Failed to alter dir for {topic}-0-1"
    assert failure.value.__notes__ == [
        f"{ERRORS}LogDirNotFoundException: The user-specified log directory is not found in the broker config."
    ]


def test_unknown_broker_fails_at_once_with_javas_timeout_text(adapter, topics) -> None:
    topic = topics([[1]])
    started = time.monotonic()
    with pytest.raises(ClusterTimeoutError) as failure:
        adapter.describe_replica_log_dirs([TopicPartitionReplica(topic, 0, 99)])
    assert failure.value.message == (
        f"{ERRORS}TimeoutException: Timed out waiting for a node assignment. Call: describeReplicaLogDirs"
    )
    assert time.monotonic() - started < 10


# ------------------------------------------------------------------------------ configs
def test_configs_round_trip_dynamic_values_only(adapter, topics) -> None:
    topic = topics([[1, 2]])
    topic_resource = ConfigResource(ResourceType.TOPIC, topic)
    broker = ConfigResource(ResourceType.BROKER, "2")
    other = ConfigResource(ResourceType.BROKER, "3")
    try:
        adapter.incremental_alter_configs(
            {
                topic_resource: [ConfigOp("leader.replication.throttled.replicas", OpType.SET, "0:1,0:2")],
                broker: [ConfigOp("follower.replication.throttled.rate", OpType.SET, "1000000")],
                other: [ConfigOp("follower.replication.throttled.rate", OpType.SET, "2000000")],
            }
        )
        expected = {
            topic_resource: {"leader.replication.throttled.replicas": "0:1,0:2"},
            broker: {"follower.replication.throttled.rate": "1000000"},
            other: {"follower.replication.throttled.rate": "2000000"},
        }
        # brokers apply config records as the metadata reaches them
        wait_until(lambda: adapter.describe_configs([topic_resource, broker, other]) == expected, timeout=30)
    finally:
        adapter.incremental_alter_configs(
            {
                topic_resource: [ConfigOp("leader.replication.throttled.replicas", OpType.DELETE)],
                broker: [ConfigOp("follower.replication.throttled.rate", OpType.DELETE)],
                other: [ConfigOp("follower.replication.throttled.rate", OpType.DELETE)],
            }
        )
    cleared = {topic_resource: {}, broker: {}}
    wait_until(lambda: adapter.describe_configs([topic_resource, broker]) == cleared, timeout=30)


def test_config_errors_read_like_java(adapter, topics) -> None:
    topic = topics([[1]])
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(ClusterError) as invalid:
        adapter.incremental_alter_configs(
            {
                ConfigResource(ResourceType.TOPIC, topic): [
                    ConfigOp("leader.replication.throttled.replicas", OpType.SET, "x")
                ]
            }
        )
    assert invalid.value.message.startswith(
        f"{ERRORS}InvalidConfigurationException: Invalid value [x] for configuration leader.replication.throttled.replicas"
    )
    with pytest.raises(UnknownTopicOrPartitionError) as unknown:
        adapter.incremental_alter_configs(
            {
                ConfigResource(ResourceType.TOPIC, missing): [
                    ConfigOp("leader.replication.throttled.replicas", OpType.SET, "*")
                ]
            }
        )
    assert unknown.value.message == f"{ERRORS}UnknownTopicOrPartitionException: The topic '{missing}' does not exist."
    with pytest.raises(UnknownTopicOrPartitionError) as described:
        adapter.describe_configs([ConfigResource(ResourceType.TOPIC, missing)])
    assert described.value.message == f"{ERRORS}UnknownTopicOrPartitionException: "  # Java's text, empty message
    with pytest.raises(ClusterTimeoutError) as no_broker:
        adapter.incremental_alter_configs(
            {ConfigResource(ResourceType.BROKER, "99"): [ConfigOp(THROTTLE_RATES[0], OpType.DELETE)]}
        )
    assert no_broker.value.message.endswith("Timed out waiting for a node assignment. Call: incrementalAlterConfigs")


# ------------------------------------------------------------------------------ leaders and offsets
def test_preferred_leader_election(adapter, topics) -> None:
    topic = topics([[1, 2]])
    partition = TopicPartition(topic, 0)
    assert adapter.alter_reassignments({partition: [2, 1]}) == {}  # same replicas, new preferred leader
    wait_until(lambda: replicas_of(adapter, topic) == [(2, 1)])
    errors = adapter.elect_preferred_leaders([partition, TopicPartition(topic, 9)])
    assert errors == {TopicPartition(topic, 9): f"No such partition as {topic}-9"}
    wait_until(lambda: adapter.describe_topics([topic])[topic][0].leader == 2)
    assert adapter.elect_preferred_leaders([partition]) == {}  # not needed is not a failure
    assert adapter.elect_preferred_leaders([]) == {}


def test_log_end_offsets(adapter, topics) -> None:
    topic = topics([[1], [2], [3]], messages=30)
    partitions = [TopicPartition(topic, p) for p in range(3)]
    assert adapter.log_end_offsets(partitions) == dict.fromkeys(partitions, 10)
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(UnknownTopicOrPartitionError) as failure:
        adapter.log_end_offsets([TopicPartition(missing, 0)])
    assert failure.value.message == (
        f"{ERRORS}UnknownTopicOrPartitionException: Failed to fetch metadata for partition {missing}-0 because "
        f"metadata for topic `{missing}` could not be found"
    )


# ------------------------------------------------------------------------------ batching
def test_large_verify_reads_are_batched(adapter, topics) -> None:
    """1,000 partitions and 3,000 replicas: one DescribeTopics, one request per broker for log dirs,
    one ListPartitionReassignments."""
    topic = topics([[1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(1000)])
    sent: list[int] = []
    original = adapter._send_to_broker

    async def counting(broker_id, build, deadline):
        sent.append(broker_id)
        return await original(broker_id, build, deadline)

    partitions = adapter.describe_topics([topic])[topic]
    assert len(partitions) == 1000
    replicas = [TopicPartitionReplica(topic, p.partition, b) for p in partitions for b in p.replicas]

    def hosted() -> int:
        return sum(info.current is not None for info in adapter.describe_replica_log_dirs(replicas).values())

    wait_until(lambda: hosted() == 3000)  # brokers create logs lazily
    adapter._send_to_broker = counting
    try:
        assert hosted() == 3000
        assert sorted(sent) == [1, 2, 3]
        assert adapter.list_reassignments([TopicPartition(topic, p) for p in range(1000)]) == {}
    finally:
        del adapter._send_to_broker


# ------------------------------------------------------------------------------ controllers and failures
def test_bootstrap_controllers_support_what_java_supports(kafka_cluster, topics) -> None:
    topic = topics([[1, 2]])
    controllers = KafkaCluster(bootstrap_controllers=kafka_cluster.bootstrap_controllers)
    try:
        assert [b.id for b in controllers.describe_brokers()] == [n.node_id for n in kafka_cluster.controller_nodes]
        assert TopicPartition(topic, 0) not in controllers.list_reassignments()
        assert controllers.alter_reassignments({TopicPartition(topic, 0): None}) == {
            TopicPartition(topic, 0): "No partition reassignment is in progress."
        }
        resource = ConfigResource(ResourceType.TOPIC, topic)
        controllers.incremental_alter_configs({resource: [ConfigOp(THROTTLED_REPLICAS[0], OpType.SET, "*")]})
        wait_until(lambda: controllers.describe_configs([resource]) == {resource: {THROTTLED_REPLICAS[0]: "*"}})
        controllers.incremental_alter_configs({resource: [ConfigOp(THROTTLED_REPLICAS[0], OpType.DELETE)]})
        with pytest.raises(ClusterError) as unsupported:
            controllers.describe_topics([topic])
        assert unsupported.value.message == (
            f"{ERRORS}UnsupportedEndpointTypeException: This Admin API is not yet supported when "
            "communicating directly with the controller quorum."
        )
    finally:
        controllers.close()


def test_unreachable_cluster_times_out_with_javas_text_and_the_address() -> None:
    config = ClientConfig({"default.api.timeout.ms": "2000", "request.timeout.ms": "1000"})
    unreachable = KafkaCluster("127.0.0.1:1", client_config=config)
    try:
        with pytest.raises(ClusterTimeoutError) as failure:
            unreachable.list_reassignments()
        assert failure.value.message == (
            f"{ERRORS}TimeoutException: Timed out waiting for a node assignment. Call: listPartitionReassignments"
        )
        assert "127.0.0.1:1" in failure.value.__notes__[0]
    finally:
        unreachable.close()
