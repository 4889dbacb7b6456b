"""Cluster snapshots: the JSON-lines format, its reader's errors, and the read-only SnapshotCluster port."""

from __future__ import annotations

import io

import pytest

from kreassign.cluster.port import ConfigResource, ReplicaLogDirInfo, ResourceType
from kreassign.errors import CommandError, UnknownTopicOrPartitionError
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.snapshot import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotCluster,
    SnapshotFormatError,
    SnapshotPartition,
    SnapshotTopic,
    read_snapshot_lines,
    snapshot_from_cluster,
    write_snapshot,
)

SNAPSHOT = ClusterSnapshot(
    (
        SnapshotBroker(1, "rack-a", ("/d1", "/d2"), 2000),
        SnapshotBroker(2, "rack-b", ("/d1",)),
        SnapshotBroker(3, None, ("/d1",)),
    ),
    {
        "orders": SnapshotTopic(
            "orders",
            (
                SnapshotPartition(0, (1, 2), ("/d1", "/d1"), 500, 1, (1, 2)),
                SnapshotPartition(1, (2, 3), ("/d1", None), None, 2, (2,)),
            ),
            2,
        ),
        "événements": SnapshotTopic("événements", (SnapshotPartition(0, (3,), ("/d1",), 7, 3, (3,)),)),
    },
)


def text_of(snapshot: ClusterSnapshot) -> str:
    buffer = io.StringIO()
    write_snapshot(snapshot, buffer)
    return buffer.getvalue()


def test_the_format_is_json_lines_with_a_versioned_header():
    lines = text_of(SNAPSHOT).splitlines()
    assert lines[0] == '{"type":"snapshot","version":1}'
    assert lines[1] == '{"type":"broker","id":1,"rack":"rack-a","log_dirs":["/d1","/d2"],"capacity_bytes":2000}'
    assert lines[4] == '{"type":"topic","topic":"orders","min_insync_replicas":2}'
    assert lines[5] == (
        '{"type":"partition","topic":"orders","partition":0,"replicas":[1,2],"log_dirs":["/d1","/d1"],'
        '"size_bytes":500,"leader":1,"isr":[1,2]}'
    )
    assert '"topic":"événements"' in lines[-2]


def test_write_then_read_gives_the_same_snapshot_and_the_same_bytes():
    text = text_of(SNAPSHOT)
    again = read_snapshot_lines(io.StringIO(text))
    assert again == SNAPSHOT
    assert text_of(again) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ('{"type":"broker","id":1}\n', "the first line must be the snapshot header"),
        ('{"type":"snapshot","version":2}\n', "Unsupported cluster snapshot version 2"),
        ('{"type":"snapshot","version":1}\n{"type":\n', "line 2"),
        ('{"type":"snapshot","version":1}\n[1]\n', "line 2: expected an object with a type"),
        ('{"type":"snapshot","version":1}\n{"type":"broker","id":"1"}\n', "line 2: id must be an integer"),
        (
            '{"type":"snapshot","version":1}\n{"type":"partition","topic":"t","partition":0,"replicas":[1]}\n',
            "partition of topic 't' before its topic line",
        ),
        (
            '{"type":"snapshot","version":1}\n{"type":"topic","topic":"t"}\n'
            '{"type":"partition","topic":"t","partition":0,"replicas":[1],"log_dirs":["/a","/b"]}\n',
            "log_dirs must have one entry per replica",
        ),
    ],
    ids=["empty", "no-header", "version", "bad-json", "not-object", "bad-id", "orphan-partition", "dirs-length"],
)
def test_reader_errors_name_the_line(text, message):
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "snap.jsonl")
    assert message in caught.value.message
    assert "\n" not in caught.value.message


def test_unknown_record_types_are_skipped_for_forward_compatibility():
    text = text_of(SNAPSHOT) + '{"type":"quota","name":"x"}\n'
    assert read_snapshot_lines(io.StringIO(text)) == SNAPSHOT


def test_snapshot_cluster_reads_like_a_cluster():
    port = SnapshotCluster(SNAPSHOT, "snap.jsonl")
    assert [(b.id, b.rack) for b in port.describe_brokers()] == [(1, "rack-a"), (2, "rack-b"), (3, None)]
    described = port.describe_topics(["orders"])
    assert [(p.partition, p.replicas, p.leader) for p in described["orders"]] == [(0, (1, 2), 1), (1, (2, 3), 2)]
    assert port.list_reassignments() == {}
    dirs = port.describe_replica_log_dirs(
        [TopicPartitionReplica("orders", 1, 2), TopicPartitionReplica("orders", 1, 3)]
    )
    assert dirs == {TopicPartitionReplica("orders", 1, 2): ReplicaLogDirInfo("/d1")}
    configs = port.describe_configs(
        [ConfigResource(ResourceType.TOPIC, "orders"), ConfigResource(ResourceType.BROKER, "1")]
    )
    assert configs == {
        ConfigResource(ResourceType.TOPIC, "orders"): {"min.insync.replicas": "2"},
        ConfigResource(ResourceType.BROKER, "1"): {},
    }
    usage = port.describe_log_dirs([1])[1]
    assert [(d.path, dict(d.replica_sizes)) for d in usage] == [
        ("/d1", {TopicPartition("orders", 0): 500}),
        ("/d2", {}),
    ]


def test_sizes_for_the_dry_run():
    port = SnapshotCluster(SNAPSHOT)
    assert port.replica_sizes([2]) == {TopicPartitionReplica("orders", 0, 2): 500}
    assert port.replica_sizes([1, 3]) == {
        TopicPartitionReplica("orders", 0, 1): 500,
        TopicPartitionReplica("événements", 0, 3): 7,
    }
    assert port.replica_log_end_offsets([TopicPartitionReplica("orders", 0, 1)]) == {}


def test_unknown_topic_is_the_java_error():
    with pytest.raises(UnknownTopicOrPartitionError) as caught:
        SnapshotCluster(SNAPSHOT).describe_topics(["nope"])
    assert (
        caught.value.message == "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic nope not found."
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda port: port.alter_reassignments({TopicPartition("orders", 0): [1]}),
        lambda port: port.alter_replica_log_dirs({TopicPartitionReplica("orders", 0, 1): "/d2"}),
        lambda port: port.incremental_alter_configs({}),
        lambda port: port.elect_preferred_leaders([]),
        lambda port: port.log_end_offsets([]),
    ],
    ids=["reassign", "log-dirs", "configs", "elect", "offsets"],
)
def test_snapshot_cluster_is_read_only(call):
    with pytest.raises(CommandError) as caught:
        call(SnapshotCluster(SNAPSHOT, "snap.jsonl"))
    assert "snap.jsonl" in caught.value.message


def test_a_snapshot_taken_from_a_snapshot_cluster_is_the_snapshot():
    """snapshot_from_cluster reads only ClusterPort calls (plus list_topic_names and describe_log_dirs),
    so a SnapshotCluster gives back what it holds (sizes become those of the replicas found)."""
    port = SnapshotCluster(SNAPSHOT)
    taken = snapshot_from_cluster(port)
    assert [b.id for b in taken.brokers] == [1, 2, 3]
    assert taken.topics["orders"] == SNAPSHOT.topics["orders"]
    assert taken.topics["événements"] == SNAPSHOT.topics["événements"]
    only = snapshot_from_cluster(port, ["orders"])
    assert list(only.topics) == ["orders"]
