"""Iteration order of Java's HashMap/HashSet, where the Apache tool's text depends on it.

Some Apache messages list the members of a ``HashSet`` (``Clearing broker-level throttles on brokers
1,2,3``); to print the same text we order members as Java would iterate them: by bucket
``(h ^ (h >>> 16)) & (n - 1)`` for the final table size ``n``, then by insertion order inside a bucket.
(Bins treeified past 8 collisions are not modelled; they need thousands of colliding keys.)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def java_int_hash(value: int) -> int:
    return _int32(value)


def java_topic_partition_hash(topic: str, partition: int) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode()``."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _table_size_for(capacity: int) -> int:
    n = 1
    while n < capacity:
        n <<= 1
    return max(n, 1)


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hash_order(items: Iterable[T], hash_fn: Callable[[T], int], *, presized_from: int | None = None) -> list[T]:
    """Members of a Java HashSet built by adding ``items`` in order (duplicates ignored).

    ``presized_from`` models ``new HashSet<>(collection)``: the table starts at
    ``tableSizeFor(max(size / .75 + 1, 16))`` for a collection of that size.
    """
    unique: dict[T, None] = dict.fromkeys(items)
    n = _DEFAULT_CAPACITY
    if presized_from is not None:
        n = _table_size_for(max(int(presized_from / _LOAD_FACTOR) + 1, _DEFAULT_CAPACITY))
    for size in range(1, len(unique) + 1):
        if size > n * _LOAD_FACTOR:
            n <<= 1
    buckets: dict[int, list[T]] = {}
    for item in unique:
        buckets.setdefault(_spread(hash_fn(item)) & (n - 1), []).append(item)
    return [item for index in sorted(buckets) for item in buckets[index]]
