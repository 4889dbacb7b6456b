"""Iteration order of Scala 2.13 immutable sets and maps (pure, standard library only).

Kafka 2.8's tool prints some sets as they iterate (``Clearing broker-level throttles on brokers 1,2,3``).
Scala's ``Set``/``Map`` keep insertion order up to 4 members (``Set1``..``Set4``, ``Map1``..``Map4``);
from 5 members on they are CHAMP tries (``HashSet``/``HashMap``), whose order follows the bits of each
member's improved hash code: five bits per level from the lowest, a node's own members before its
sub-nodes, both by ascending five-bit index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from kreassign.javacompat.hashes import java_int_hash, java_string_hash, java_topic_partition_hash

T = TypeVar("T")

_SMALL = 4
_BITS = 5
_HASH_LENGTH = 32


def _improve(hash_code: int) -> int:
    """``scala.collection.Hashing.improve``, which the immutable CHAMP collections apply to ``##``."""
    m = 0xFFFFFFFF
    h = hash_code & m
    h = (h + (~(h << 9) & m)) & m
    h ^= h >> 14
    h = (h + (h << 4)) & m
    return h ^ (h >> 10)


def _champ_order(members: list[tuple[T, int]], shift: int) -> list[T]:
    if shift >= _HASH_LENGTH or len(members) == 1:
        return [m for m, _ in members]  # a collision node keeps insertion order
    slots: dict[int, list[tuple[T, int]]] = {}
    for member in members:
        slots.setdefault((member[1] >> shift) & 0x1F, []).append(member)
    inline = [group[0][0] for _, group in sorted(slots.items()) if len(group) == 1]
    nested = [_champ_order(group, shift + _BITS) for _, group in sorted(slots.items()) if len(group) > 1]
    return inline + [m for sub in nested for m in sub]


def champ_order(items: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """Members of a Scala 2.13 ``immutable.HashSet`` (or keys of a ``HashMap``) of ``items``, whatever
    their number (``groupBy`` returns a ``HashMap`` even for one key)."""
    return _champ_order([(m, _improve(hash_code(m))) for m in dict.fromkeys(items)], 0)


def scala_set_order(items: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """Members of a Scala 2.13 immutable ``Set`` built by adding ``items`` in order (``toSet``, ``++``)."""
    unique = list(dict.fromkeys(items))
    if len(unique) <= _SMALL:
        return unique
    return champ_order(unique, hash_code)


def scala_int_set_order(items: Iterable[int]) -> list[int]:
    return scala_set_order(items, java_int_hash)


def scala_string_set_order(items: Iterable[str]) -> list[str]:
    return scala_set_order(items, java_string_hash)


def scala_topic_partition_order(items: Iterable) -> list:
    """Keys of a Scala immutable ``Map[TopicPartition, _]`` (or members of a set of them)."""
    return scala_set_order(items, java_topic_partition_hash)


def scala_duplicates(items: Iterable[T], hash_code: Callable[[T], int], compare: object = None) -> list[T]:
    """Kafka 2.8's ``CoreUtils.duplicates`` (``groupBy(identity)`` then the keys seen more than once): the
    repeated elements in ``HashMap`` order. ``compare`` is unused (same signature as ``java_duplicates``)."""
    seen: set[T] = set()
    repeated = []
    for item in items:
        if item in seen:
            repeated.append(item)
        seen.add(item)
    return champ_order(repeated, hash_code)
