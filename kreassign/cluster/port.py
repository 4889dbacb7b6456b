"""What the rest of kreassign needs from a Kafka cluster. Implemented by the Kafka adapter
(``kreassign.cluster.kafka``), by the read-only offline snapshot (``kreassign.snapshot.SnapshotCluster``)
and by the in-memory simulated cluster used in tests (``kreassign.cluster.simulated``). Every
implementation has every call, so no action needs to know which one it has.

Every method either returns plain values from ``kreassign.model`` or raises a ``kreassign.errors``
type whose message is what the Apache tool would print after ``Error: ``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Protocol

from kreassign.errors import PartitionError
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    SnapshotPartition,
    TopicColumns,
    TopicPartition,
    TopicPartitionReplica,
)


class ResourceType(Enum):
    BROKER = "broker"
    TOPIC = "topic"


@dataclass(frozen=True)
class ConfigResource:
    type: ResourceType
    name: str


class OpType(Enum):
    SET = "set"
    DELETE = "delete"


@dataclass(frozen=True)
class ConfigOp:
    name: str
    op: OpType
    value: str | None = None


@dataclass(frozen=True)
class ReplicaLogDirInfo:
    """Where a replica lives on its broker; ``future`` is set while it moves between log dirs."""

    current: str | None
    future: str | None = None


@dataclass(frozen=True)
class LogDirUsage:
    """One log directory of a broker as DescribeLogDirs reports it (offline snapshots).

    ``replica_sizes`` maps the current (not future) replicas in the directory to their size in bytes
    (-1: unknown, only from a snapshot without sizes);
    ``total_bytes`` / ``usable_bytes`` are the volume's, or ``None`` when the broker does not say;
    ``volume``: the volume the directory is on, as a snapshot records it (the path of the broker's first log
    dir on it), None when not recorded (then :func:`volume_labels` infers it); ``cordoned``: the directory is
    cordoned (KIP-1066, broker config ``cordoned.log.dirs``; DescribeLogDirs v5+), it takes no new replica.
    """

    path: str
    replica_sizes: Mapping[TopicPartition, int]
    total_bytes: int | None = None
    usable_bytes: int | None = None
    volume: str | None = None
    cordoned: bool = False


VOLUME_SLACK_BYTES = 64 * 1024 * 1024
"""Two log dirs of one broker whose usable bytes differ by at most this much (and whose total bytes are equal)
are taken to be on one volume: DescribeLogDirs reads each dir's volume a moment apart, while the broker writes."""


def volume_labels(dirs: Sequence[LogDirUsage]) -> list[str]:
    """Per log dir of one broker (in order), its volume: the path of the first dir on the same volume.

    A recorded ``volume`` is used as is (a dir without one is a volume of its own). Otherwise two dirs share
    a volume when DescribeLogDirs gives both the same ``total_bytes`` and ``usable_bytes`` within
    :data:`VOLUME_SLACK_BYTES` (a dir without both figures is a volume of its own). Limit: two distinct disks
    of the same size that are equally full (within the slack) count as one: the capacity comes out lower
    than it is (the safe side); a snapshot's ``volume`` fields can be corrected by hand."""
    if any(d.volume is not None for d in dirs):
        return [d.volume if d.volume is not None else d.path for d in dirs]
    labels: list[str] = []
    for i, d in enumerate(dirs):
        label = d.path
        if d.total_bytes is not None and d.usable_bytes is not None:
            for j in range(i):
                other = dirs[j]
                if (
                    other.total_bytes == d.total_bytes
                    and other.usable_bytes is not None
                    and abs(other.usable_bytes - d.usable_bytes) <= VOLUME_SLACK_BYTES
                ):
                    label = labels[j]
                    break
        labels.append(label)
    return labels


def volume_capacity(dirs: Sequence[LogDirUsage]) -> int | None:
    """A broker's disk capacity: the total bytes of each volume its log dirs are on, each volume once; None
    without log dirs or when a dir's total is unknown."""
    if not dirs or not all(d.total_bytes for d in dirs):
        return None
    totals: dict[str, int] = {}
    for d, label in zip(dirs, volume_labels(dirs), strict=True):
        totals.setdefault(label, d.total_bytes)  # type: ignore[arg-type]
    return sum(totals.values())


def with_volumes(usage: Mapping[int, Sequence[LogDirUsage]]) -> dict[int, list[LogDirUsage]]:
    """Each broker's log dirs with their ``volume`` set (:func:`volume_labels`)."""
    return {
        b: [replace(d, volume=v) for d, v in zip(dirs, volume_labels(dirs), strict=True)] for b, dirs in usage.items()
    }


def all_cordoned(dirs: Sequence[LogDirUsage]) -> bool:
    """Whether every log dir of a broker is cordoned (it takes no new replica at all)."""
    return bool(dirs) and all(d.cordoned for d in dirs)


class ClusterPort(Protocol):
    def describe_brokers(self) -> list[Broker]:
        """Live brokers in the order the cluster reports them (DescribeCluster)."""
        ...

    def cluster_id(self) -> str | None:
        """The cluster's id (DescribeCluster's clusterId, KRaft and ZooKeeper mode alike), read once and
        kept: what kreassign remembers on disk belongs to it. None where there is none (a snapshot file
        written without it)."""
        ...

    def list_topic_names(self) -> list[str]:
        """Every topic name of the cluster, sorted."""
        ...

    def describe_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        """Partitions of each topic, sorted by partition. Raises ``ClusterError`` with
        ``org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic <t> not found.``
        semantics for an unknown topic (see UnknownTopicError)."""
        ...

    def read_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        """``describe_topics``' answer read the cheapest way the port knows (what the batched executor reads
        every poll); a topic that cannot be read that way is described with ``describe_topics``, whose errors
        it raises."""
        ...

    def describe_topic_columns(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        """The topics as columns, in the order given, partitions sorted (``describe_topics``' errors):
        each replica's log dir (None where unknown, or where its broker is not live) and each partition's
        size in bytes where the port holds it (a snapshot; None from a live cluster, which is asked with
        ``replica_sizes`` when sizes are wanted). What ``--generate`` reads, without an object per replica."""
        ...

    def list_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]: ...

    def alter_reassignments(
        self,
        targets: Mapping[TopicPartition, Sequence[int] | None],
        allow_replication_factor_change: bool = True,
    ) -> dict[TopicPartition, PartitionError]:
        """Submit (or, with ``None``, cancel) reassignments; returns the error of each failed partition."""
        ...

    def describe_replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        """Every replica whose broker answers is in the result, as in Java: ``current`` is None when the
        broker does not list the replica (it does not host it, or its log dir is offline). A replica on
        a broker the cluster does not know is a ClusterTimeoutError (Java's text); a snapshot leaves out
        replicas whose log dir it does not know."""
        ...

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """Start log-dir moves; returns the replicas whose move was accepted. A replica that is not
        available yet (ReplicaNotAvailable) is left out; any other failure raises ``CommandError``
        with message ``Failed to alter dir for <replica>``."""
        ...

    def describe_configs(self, resources: Iterable[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        """Dynamic (explicitly set) config values of each resource."""
        ...

    def incremental_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None: ...

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        """Returns the error of each partition whose election failed (none elected is not an error)."""
        ...

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]: ...

    def log_start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The log start offset of each partition (ListOffsets, earliest: it moves when retention deletes a
        segment); partitions that cannot be read now are left out. A snapshot holds none (CommandError)."""
        ...

    def committed_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        """Per partition, the offset each consumer group committed on it (ListGroups, then OffsetFetch of
        every group); partitions no group committed on are left out. A snapshot holds none (CommandError)."""
        ...

    def replica_sizes(
        self,
        broker_ids: Iterable[int],
        partitions: Iterable[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> dict[TopicPartitionReplica, int]:
        """Bytes of the current log of every replica hosted by these brokers (of ``partitions`` only, when
        given: the brokers are asked about those only) (DescribeLogDirs; a replica
        moving between log dirs counts its current log). Brokers the cluster does not know (not live) and
        offline log dirs are left out; a known broker that does not answer in time (``timeout_s``, by
        default the client's API timeout) is a ClusterTimeoutError."""
        ...

    def describe_log_dirs(self, broker_ids: Iterable[int]) -> dict[int, list[LogDirUsage]]:
        """Every log directory of each broker with the size of each current replica in it (for offline
        snapshots). A live cluster fails on a broker it does not know; a snapshot leaves it out."""
        ...

    def replica_log_end_offsets(self, replicas: Iterable[TopicPartitionReplica]) -> dict[TopicPartitionReplica, int]:
        """The log end offset of each replica on its own broker, leader or follower (ListOffsets sent to
        that broker as the debugging replica, id -2). Replicas their broker does not host (or cannot read
        now) and replicas on brokers the cluster does not know are left out."""
        ...

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        """(write_bytes_per_s, read_bytes_per_s) of the partitions whose rates a cluster snapshot recorded
        (``--write-cluster-snapshot --sample-rates``); {} for a live cluster, which records none."""
        ...

    def recorded_partition_rates(self) -> dict[tuple[str, int], tuple[float, float]]:
        """:meth:`recorded_rates` by (topic, partition), as the planner keys them (no TopicPartition made)."""
        ...

    def snapshot_file(self) -> str | None:
        """The cluster snapshot file this port reads, when it reads one from disk (Spark reads it as
        is); None for a live or simulated cluster."""
        ...

    def secrets(self) -> list[str]:
        """Secret values of the client configuration (passwords, keys), longest first, that no output
        may show; empty without a client configuration."""
        ...

    def close(self) -> None: ...


def read_topic_columns(port: ClusterPort, topics: Iterable[str]) -> dict[str, TopicColumns]:
    """``describe_topic_columns`` from the port's other calls, in the Apache tool's order for --generate
    (describeTopics, describeCluster, then describeReplicaLogDirs for the replicas on live brokers)."""
    described = port.describe_topics(list(dict.fromkeys(topics)))
    live = {b.id for b in port.describe_brokers()}
    assignment = {TopicPartition(topic, info.partition): info for topic, infos in described.items() for info in infos}
    log_dirs = replica_log_dirs(port, assignment, live)
    current: dict[str, TopicColumns] = {}
    interned: dict[tuple, tuple] = {}
    for topic, infos in described.items():
        columns = current[topic] = TopicColumns(topic)
        for info in infos:
            where = tuple(log_dirs.get(TopicPartitionReplica(topic, info.partition, b)) for b in info.replicas)
            columns.append(
                SnapshotPartition(info.partition, tuple(info.replicas), where, None, info.leader, info.isr), interned
            )
        columns.sort()
    return current


def replica_log_dirs(
    port: ClusterPort, assignment: Mapping[TopicPartition, PartitionInfo], live: set[int]
) -> dict[TopicPartitionReplica, str]:
    """Current log dir of every replica on a live broker (the Apache tool's getReplicaToLogDir)."""
    replicas = [
        TopicPartitionReplica(tp.topic, tp.partition, b)
        for tp, info in assignment.items()
        for b in info.replicas
        if b in live
    ]
    if not replicas:
        return {}
    return {r: info.current for r, info in port.describe_replica_log_dirs(replicas).items() if info.current}
