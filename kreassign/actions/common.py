"""Pieces shared by several Apache actions: reading input files, log-dir states, clearing throttles."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.errors import CommandError, UnknownTopicOrPartitionError
from kreassign.javacompat.hashes import java_int_compare, java_int_hash, java_string_compare, java_string_hash
from kreassign.javacompat.hashmap import hash_set_order
from kreassign.model import Broker, PartitionInfo, TopicPartition, TopicPartitionReplica
from kreassign.planning.states import LogDirMoveKind, LogDirMoveState
from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES

Output = Callable[[str], object]
"""Where an action writes its stdout text (exact bytes, newlines included)."""


def discard(_text: str) -> None:
    """The Output of the Apache text with --output json: nowhere."""


def read_input_file(path: str) -> str:
    """Java's Utils.readFileAsString: its UTF-8 decoding, same error text."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        error = CommandError(f"Unable to read file {path}")  # the Apache text; the hint goes to stderr
        where = os.path.abspath(path)
        error.add_note(
            f"{where}: {exc.strerror or exc}. Check the path of the JSON file option"
            + ("" if os.path.isabs(path) else f" (relative paths are read from {os.getcwd()})")
            + "."
        )
        raise error from exc
    from kreassign.formats import decode_file_bytes

    return decode_file_bytes(data)


def find_log_dir_move_states(
    port: ClusterPort, targets: Mapping[TopicPartitionReplica, str]
) -> dict[TopicPartitionReplica, LogDirMoveState]:
    infos = port.describe_replica_log_dirs(list(targets)) if targets else {}
    states = {}
    for replica, target in targets.items():
        info = infos.get(replica)
        if info is None:
            states[replica] = LogDirMoveState(LogDirMoveKind.MISSING_REPLICA, target)
        elif info.current is None:
            states[replica] = LogDirMoveState(LogDirMoveKind.MISSING_LOG_DIR, target)
        elif info.future is None:
            kind = LogDirMoveKind.COMPLETED if info.current == target else LogDirMoveKind.CANCELLED
            states[replica] = LogDirMoveState(kind, target, current=info.current)
        else:
            states[replica] = LogDirMoveState(LogDirMoveKind.ACTIVE, target, current=info.current, future=info.future)
    return states


def describe_partitions(port: ClusterPort, topics: Sequence[str]) -> dict[TopicPartition, PartitionInfo]:
    described = port.describe_topics(list(dict.fromkeys(topics)))
    return {TopicPartition(t, p.partition): p for t, parts in described.items() for p in parts}


def describe_known_topics(port: ClusterPort, topics: Sequence[str]) -> dict[str, list[PartitionInfo] | None]:
    """Partitions of each topic; None for a topic the cluster does not know. One request; when it fails
    for an unknown topic, one request per topic to tell which."""
    names = list(dict.fromkeys(topics))
    if not names:
        return {}
    try:
        return dict(port.describe_topics(names))
    except UnknownTopicOrPartitionError:
        described: dict[str, list[PartitionInfo] | None] = {}
        for name in names:
            try:
                described.update(port.describe_topics([name]))
            except UnknownTopicOrPartitionError:
                described[name] = None
        return described


def live_broker_ids(brokers: Sequence[Broker]) -> set[int]:
    return {b.id for b in brokers}


def clear_all_throttles(
    port: ClusterPort, targets: Sequence[tuple[TopicPartition, Sequence[int]]], out: Output
) -> None:
    """Remove every throttle the Apache tool may have set for these partitions (its clearAllThrottles)."""
    broker_ids = [b.id for b in port.describe_brokers()]
    for _, replicas in targets:
        broker_ids.extend(replicas)
    brokers = hash_set_order(broker_ids, java_int_hash, java_int_compare)  # Collectors.toSet(), then addAll
    out(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} {','.join(map(str, brokers))}\n")
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.BROKER, str(b)): [ConfigOp(n, OpType.DELETE) for n in BROKER_LEVEL_THROTTLES]
            for b in brokers
        }
    )
    topics = hash_set_order((tp.topic for tp, _ in targets), java_string_hash, java_string_compare)
    out(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}\n")
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.TOPIC, t): [ConfigOp(n, OpType.DELETE) for n in TOPIC_LEVEL_THROTTLES]
            for t in topics
        }
    )
