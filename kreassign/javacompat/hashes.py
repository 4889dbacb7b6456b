"""``hashCode()`` and ``compareTo`` of the Java classes whose hash sets and maps the Apache tool iterates."""

from __future__ import annotations

import struct

from kreassign.javacompat.arithmetic import to_int32
from kreassign.javacompat.text import java_string_compare, utf16_units

__all__ = [
    "java_int_compare",
    "java_int_hash",
    "java_optional_string_hash",
    "java_replica_hash",
    "java_string_compare",
    "java_string_hash",
    "java_topic_partition_hash",
    "topic_partition_hash",
]


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a Java int."""
    if text.isascii():
        units: bytes | tuple[int, ...] = text.encode("ascii")
    else:
        data = utf16_units(text)
        units = struct.unpack(f">{len(data) // 2}H", data)
    h = 0
    for unit in units:
        h = (31 * h + unit) & 0xFFFFFFFF
    return to_int32(h)


def java_int_hash(value: int) -> int:
    """``Integer.hashCode()``: the value itself."""
    return to_int32(value)


def java_int_compare(a: int, b: int) -> int:
    """The sign of ``Integer.compareTo``."""
    return (a > b) - (a < b)


def java_optional_string_hash(text: str | None) -> int:
    """``Optional<String>.hashCode()``: 0 when empty."""
    return 0 if text is None else java_string_hash(text)


def topic_partition_hash(topic_hash: int, partition: int) -> int:
    """``TopicPartition.hashCode()`` from the topic's hash code: ``31 * (31 + partition) + topic.hashCode()``."""
    return to_int32(31 * (31 + partition) + topic_hash)


def java_topic_partition_hash(tp: object) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode()`` of anything with ``topic`` and ``partition``."""
    return topic_partition_hash(java_string_hash(tp.topic), tp.partition)  # type: ignore[attr-defined]


def java_replica_hash(replica: object) -> int:
    """``org.apache.kafka.common.TopicPartitionReplica.hashCode()`` (``topic``, ``partition``, ``broker_id``)."""
    result = 31 + java_string_hash(replica.topic)  # type: ignore[attr-defined]
    result = 31 * result + replica.partition  # type: ignore[attr-defined]
    return to_int32(31 * result + replica.broker_id)  # type: ignore[attr-defined]
