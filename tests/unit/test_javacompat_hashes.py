"""Java hash codes and comparisons against values printed by a real JVM (Java 17)."""

from __future__ import annotations

import pytest

from kreassign.javacompat.hashes import (
    java_replica_hash,
    java_string_compare,
    java_string_hash,
    java_topic_partition_hash,
    topic_partition_hash,
)
from kreassign.model import TopicPartition, TopicPartitionReplica


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("Aa", 2112),
        ("BB", 2112),
        ("hello", 99162322),
        ("orders-0001", -1815850519),
        ("é€😀", 16752006),
    ],
)
def test_java_string_hash(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_topic_partition_hash() -> None:
    assert topic_partition_hash(java_string_hash("t-20"), 0) == topic_partition_hash(java_string_hash("t-10"), 1)
    assert topic_partition_hash(0, 0) == 961


def test_java_string_compare_uses_utf16_units() -> None:
    # U+FF61 sorts after U+1F600 by code point but before it in UTF-16 (0xD83D surrogate).
    assert java_string_compare("\uff61", "\U0001f600") > 0
    assert java_string_compare("a", "b") < 0 < java_string_compare("b", "a")
    assert java_string_compare("ab", "ab") == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [("hello", 99162322), ("éclair", -1824599816), ("😀x", 54959989)],
    ids=["ascii", "latin", "surrogates"],
)
def test_string_hash_matches_java(text, expected):
    assert java_string_hash(text) == expected


def test_hashes_of_kafka_keys() -> None:
    # hashCode() of org.apache.kafka.common.TopicPartition / TopicPartitionReplica, printed by Java 17
    assert java_topic_partition_hash(TopicPartition("t", 3)) == 1170
    assert java_replica_hash(TopicPartitionReplica("t", 3, 7)) == 141367
    assert java_replica_hash(TopicPartitionReplica("orders-0001", 2**31 - 1, 5)) == 871886830  # int overflow
    assert java_replica_hash(TopicPartitionReplica("é😀", -4, -9)) == 1918965990
