"""Cluster snapshots: the JSON-lines format, its reader's errors, and the read-only SnapshotCluster port."""

from __future__ import annotations

import io
import json

import pytest

import kreassign.snapshot as snapshot_module
from kreassign.cluster.port import (
    ConfigResource,
    LogDirUsage,
    ReplicaLogDirInfo,
    ResourceType,
    all_cordoned,
    volume_capacity,
)
from kreassign.errors import CommandError, UnknownTopicOrPartitionError
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.snapshot import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotCluster,
    SnapshotFormatError,
    SnapshotLogDir,
    SnapshotPartition,
    SnapshotTopic,
    read_snapshot_columns,
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


# ------------------------------------------------------------------------------------------ the chunked reader
HEADER = '{"type":"snapshot","version":1}\n'
TOPIC_T = '{"type":"topic","topic":"t","min_insync_replicas":null}\n'


def partition_line(partition, **fields) -> str:
    record = {"type": "partition", "topic": "t", "partition": partition, "replicas": [1, 2], "log_dirs": ["/a", "/b"]}
    record.update(size_bytes=10, leader=1, isr=[1, 2])
    record.update(fields)
    return json.dumps({key: value for key, value in record.items() if value is not ...}) + "\n"  # ...: left out


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8192])
def test_chunks_of_any_size_read_the_same(monkeypatch, chunk):
    """Chunk boundaries, blank lines and partitions out of order give the snapshot the line-by-line rules give."""
    monkeypatch.setattr(snapshot_module, "_CHUNK_LINES", chunk)
    lines = text_of(SNAPSHOT).splitlines(keepends=True)
    lines.insert(3, "\n")
    lines.insert(6, "   \n")
    orders = next(i for i, line in enumerate(lines) if '"partition":0' in line and '"orders"' in line)
    lines[orders], lines[orders + 1] = lines[orders + 1], lines[orders]  # partition 1 before 0
    assert read_snapshot_lines(io.StringIO("".join(lines))) == SNAPSHOT


@pytest.mark.parametrize("chunk", [2, 8192])
def test_optional_partition_fields_read_like_the_exact_rules(monkeypatch, chunk):
    """Lines the column-wise checks leave to the exact rules (null or missing fields) keep their meaning."""
    monkeypatch.setattr(snapshot_module, "_CHUNK_LINES", chunk)
    text = (
        HEADER
        + TOPIC_T
        + "".join(
            [
                partition_line(0),
                partition_line(1, isr=None, size_bytes=None, leader=None),
                partition_line(2, isr=[2]),
                partition_line(3, log_dirs=...),
                partition_line(4, replicas=[], log_dirs=...),
            ]
        )
    )
    parts = read_snapshot_lines(io.StringIO(text)).topics["t"].partitions
    assert parts == (
        SnapshotPartition(0, (1, 2), ("/a", "/b"), 10, 1, (1, 2)),
        SnapshotPartition(1, (1, 2), ("/a", "/b"), None, None, ()),
        SnapshotPartition(2, (1, 2), ("/a", "/b"), 10, 1, (2,)),
        SnapshotPartition(3, (1, 2), (None, None), 10, 1, (1, 2)),
        SnapshotPartition(4, (), (), 10, 1, (1, 2)),
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (partition_line("2"), "line 5: partition must be an integer"),
        (partition_line(2, replicas=[1, True]), "line 5: replicas must be a list of integers"),
        (partition_line(2, isr=[1, 2.0]), "line 5: isr must be a list of integers"),
        (partition_line(2, size_bytes=False), "line 5: size_bytes must be an integer"),
        (partition_line(2, log_dirs=["/a"]), "line 5: log_dirs must have one entry per replica"),
        (partition_line(2, topic="u"), "line 5: partition of topic 'u' before its topic line"),
        (partition_line(2, topic=["t"]), "line 5: partition of topic ['t'] before its topic line"),
    ],
    ids=["partition", "replicas", "isr", "size", "dirs", "topic", "topic-type"],
)
@pytest.mark.parametrize("chunk", [2, 8192])
def test_a_bad_line_among_good_ones_is_named(monkeypatch, chunk, bad, message):
    monkeypatch.setattr(snapshot_module, "_CHUNK_LINES", chunk)
    text = HEADER + TOPIC_T + partition_line(0) + partition_line(1) + bad + partition_line(3)
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "snap.jsonl")
    assert caught.value.message == f"Invalid cluster snapshot snap.jsonl {message}"


def test_errors_come_in_file_order():
    """A bad field on line 3 is reported before invalid JSON on line 5, as a line-by-line reader would."""
    text = HEADER + TOPIC_T + partition_line("x") + partition_line(1) + '{"type":\n'
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "snap.jsonl")
    assert "line 3: partition must be an integer" in caught.value.message


def test_a_line_with_two_objects_is_an_error_even_when_the_count_adds_up():
    """Line 2 holds two objects and lines 3-4 one between them: parsed as one array the file would give four
    objects for four lines; each line alone is what counts."""
    text = HEADER + '{"type":"broker","id":1}, {"type":"broker","id":2}\n{"type":"broker",\n"id":3}\n'
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "snap.jsonl")
    assert caught.value.message.startswith("Invalid cluster snapshot snap.jsonl line 2: Extra data")


def test_equal_log_dirs_are_held_once():
    text = HEADER + TOPIC_T + partition_line(0) + partition_line(1)
    columns = read_snapshot_columns(io.StringIO(text))
    first, second = columns.topics["t"].log_dirs
    assert first == ("/a", "/b") and first is second
    assert columns.topics["t"].isr == [None, None]  # the ISR equals the replicas: not held twice


# ------------------------------------------------------------------------------------------ disks: volumes, cordons
DISK = 270_553_174_016  # a 252 GiB volume


class _TwoDirsOnOneVolume(SnapshotCluster):
    """The log dirs a live broker reports: broker 1's /d1 and /d2 on one volume (same total, usable a few bytes
    apart: read a moment apart), /d2 cordoned; broker 2's /d1 on a disk of its own, cordoned; broker 3 unknown."""

    def describe_log_dirs(self, broker_ids):
        found = super().describe_log_dirs(broker_ids)
        shown = {
            1: [
                LogDirUsage("/d1", found[1][0].replica_sizes, DISK, 83_741_118_464),
                LogDirUsage("/d2", found[1][1].replica_sizes, DISK, 83_741_114_368, cordoned=True),
            ],
            2: [LogDirUsage("/d1", found[2][0].replica_sizes, 1_000_000, 400_000, cordoned=True)],
            3: [LogDirUsage("/d1", found[3][0].replica_sizes)],
        }
        return {b: shown[b] for b in broker_ids if b in shown}


def test_a_volume_shared_by_two_log_dirs_is_counted_once_and_cordons_are_recorded():
    taken = snapshot_from_cluster(_TwoDirsOnOneVolume(SNAPSHOT))
    one, two, three = taken.brokers
    assert one.capacity_bytes == DISK  # was 2 * DISK = 541,106,348,032: the volume once per log dir
    assert one.dirs == (
        SnapshotLogDir("/d1", "/d1", DISK, 83_741_118_464, 500, False),
        SnapshotLogDir("/d2", "/d1", DISK, 83_741_114_368, 0, True),
    )
    assert one.cordoned_log_dirs == ("/d2",)
    assert (two.capacity_bytes, two.cordoned_log_dirs) == (1_000_000, ("/d1",))
    assert two.dirs[0].used_bytes == 500
    assert three.capacity_bytes is None and three.dirs == (SnapshotLogDir("/d1", "/d1", None, None, 7, False),)
    text = text_of(taken)
    assert text.splitlines()[1] == (
        '{"type":"broker","id":1,"rack":"rack-a","log_dirs":["/d1","/d2"],"capacity_bytes":270553174016,'
        '"dirs":[{"path":"/d1","volume":"/d1","total_bytes":270553174016,"usable_bytes":83741118464,'
        '"used_bytes":500,"cordoned":false},{"path":"/d2","volume":"/d1","total_bytes":270553174016,'
        '"usable_bytes":83741114368,"used_bytes":0,"cordoned":true}]}'
    )
    again = read_snapshot_lines(io.StringIO(text))
    assert again.brokers == taken.brokers
    assert text_of(again) == text
    # the port over the file gives the recorded volumes and cordons back: the same capacity, once
    usage = SnapshotCluster(again).describe_log_dirs([1, 2])
    assert [(d.path, d.volume, d.total_bytes, d.cordoned) for d in usage[1]] == [
        ("/d1", "/d1", DISK, False),
        ("/d2", "/d1", DISK, True),
    ]
    assert volume_capacity(usage[1]) == DISK
    assert all_cordoned(usage[2]) and not all_cordoned(usage[1])


def test_an_older_snapshot_without_dirs_reads_as_before():
    """A file written before ``dirs``: its capacity_bytes as recorded, each log dir a volume of its own."""
    text = HEADER + '{"type":"broker","id":1,"rack":null,"log_dirs":["/d1","/d2"],"capacity_bytes":2001}\n'
    read = read_snapshot_lines(io.StringIO(text))
    assert read.brokers == (SnapshotBroker(1, None, ("/d1", "/d2"), 2001),)
    assert text_of(read) == text
    usage = SnapshotCluster(read).describe_log_dirs([1])[1]
    assert [(d.path, d.volume, d.total_bytes, d.cordoned) for d in usage] == [
        ("/d1", "/d1", 1001, False),
        ("/d2", "/d2", 1000, False),
    ]
    assert volume_capacity(usage) == 2001


@pytest.mark.parametrize(
    ("dirs", "message"),
    [
        ('"x"', "dirs must be a list of objects"),
        ('[{"path":"/d2"}]', "dirs must give one object per log dir, in log_dirs order"),
        ('[{"path":"/d1","volume":3}]', "a dir's volume must be a string"),
        ('[{"path":"/d1","cordoned":"yes"}]', "a dir's cordoned must be true or false"),
        ('[{"path":"/d1","total_bytes":"big"}]', "total_bytes must be an integer"),
    ],
)
def test_bad_dirs_are_named(dirs, message):
    text = HEADER + '{"type":"broker","id":1,"log_dirs":["/d1"],"dirs":' + dirs + "}\n"
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "s.jsonl")
    assert caught.value.message == f"Invalid cluster snapshot s.jsonl line 2: {message}"
