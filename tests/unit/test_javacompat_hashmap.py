"""The java.util.HashMap / HashSet layout model: iteration orders checked against a real JVM (Java 17), and
the bucket-wise fast path against the node-by-node replay. (tests/unit/test_placement_oracle.py runs the
JVM itself on many more cases, colliding keys among them.)"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign.javacompat.hashes import (
    java_int_hash,
    java_string_compare,
    java_string_hash,
    topic_partition_hash,
)
from kreassign.javacompat.hashmap import JavaHashMap, hash_set_order, iteration_order
from kreassign.model import TopicPartition

CASES = [
    ("ints-spanning-buckets", [1001, 1002, 1003, 17, 1, 33, 5], java_int_hash, "17,1,33,5,1001,1002,1003"),
    (
        "ints-with-resize",
        list(range(100, 0, -7)),
        java_int_hash,
        "65,2,100,37,72,9,44,79,16,51,86,23,58,93,30",
    ),
    (
        "strings",
        ["orders", "payments", "diff-a", "zeta", "alpha-1", "Alpha", "éclair"],
        java_string_hash,
        "zeta,alpha-1,diff-a,éclair,payments,Alpha,orders",
    ),
    (
        "forty-topics",
        [f"topic-{i}" for i in range(40)],
        java_string_hash,
        "topic-6,topic-7,topic-8,topic-9,topic-0,topic-1,topic-30,topic-2,topic-31,topic-3,topic-10,topic-32,"
        "topic-4,topic-11,topic-33,topic-5,topic-12,topic-34,topic-24,topic-25,topic-26,topic-27,topic-28,"
        "topic-29,topic-20,topic-21,topic-22,topic-23,topic-13,topic-35,topic-14,topic-36,topic-15,topic-37,"
        "topic-16,topic-38,topic-17,topic-39,topic-18,topic-19",
    ),
]


@pytest.mark.parametrize(("items", "hash_fn", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hash_set_order_matches_java(items, hash_fn, expected):
    assert ",".join(map(str, hash_set_order(items, hash_fn))) == expected


def test_duplicates_are_kept_once():
    assert hash_set_order([3, 1, 3, 2, 1], java_int_hash) == [1, 2, 3]


def test_put_keeps_insertion_order_in_a_bucket_and_compute_if_absent_reverses_it() -> None:
    keys = ["Aa", "BB", "x"]  # "Aa" and "BB" share a hash code
    put_map: JavaHashMap[str] = JavaHashMap(java_string_hash, java_string_compare)
    cia_map: JavaHashMap[str] = JavaHashMap(java_string_hash, java_string_compare)
    for key in keys:
        put_map.put(key)
        cia_map.compute_if_absent(key)
    assert list(put_map) == ["Aa", "BB", "x"]
    assert list(cia_map) == ["BB", "Aa", "x"]


def test_a_crowded_bucket_grows_the_table_then_becomes_a_tree() -> None:
    # 32 strings with one hash code: Java resizes 16 -> 32 -> 64 instead of treeifying, then builds a
    # tree ordered by String.compareTo, root moved to the front of the bucket.
    colliding = ["".join(parts) for parts in itertools.product(("Aa", "BB"), repeat=5)]
    layout: JavaHashMap[str] = JavaHashMap(java_string_hash, java_string_compare)
    for key in colliding[:9]:
        layout.put(key)
    assert layout.capacity == 32
    for key in colliding[9:]:
        layout.put(key)
    assert layout.capacity == 64
    order = list(layout)
    assert sorted(order) == sorted(colliding) and order != colliding


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.text(min_size=0, max_size=6), unique=True, max_size=200), cia=st.booleans())
def test_java_hash_map_holds_each_key_once(keys: list[str], cia: bool) -> None:
    layout: JavaHashMap[str] = JavaHashMap(java_string_hash, java_string_compare)
    for key in keys:
        assert (layout.compute_if_absent(key) if cia else layout.put(key)) is True
        assert (layout.compute_if_absent(key) if cia else layout.put(key)) is False
    assert sorted(layout) == sorted(keys)
    assert len(layout) == len(keys)


def _full_replay(calls: list, hash_code, compare, initial_capacity: int | None, cia: bool) -> list:
    layout = JavaHashMap(hash_code, compare, initial_capacity)
    for key in calls:
        layout.compute_if_absent(key) if cia else layout.put(key)
    return list(layout)


crowding_ints = st.one_of(
    st.integers(0, 40).map(lambda k: k * 64),  # one bucket up to a 64-slot table
    st.integers(0, 40).map(lambda k: k * 1024),  # one bucket up to 1024 slots
    st.integers(0, 8).map(lambda k: k << 20),  # equal low bits, different high bits (spread mixes them)
    st.integers(-(2**31), 2**31 - 1),
)


@settings(max_examples=300, deadline=None)
@given(
    calls=st.lists(crowding_ints, max_size=600),
    cia=st.booleans(),
    initial_capacity=st.none() | st.integers(0, 300),
)
def test_bucketwise_order_equals_the_full_replay(calls: list[int], cia: bool, initial_capacity: int | None) -> None:
    def identity(value: int) -> int:
        return value

    def compare(a: int, b: int) -> int:
        return (a > b) - (a < b)

    expected = _full_replay(calls, identity, compare, initial_capacity, cia)
    actual = iteration_order(calls, identity, compare, initial_capacity=initial_capacity, compute_if_absent=cia)
    assert actual == expected


@settings(max_examples=100, deadline=None)
@given(
    topics=st.lists(st.integers(10, 99), min_size=1, max_size=60, unique=True),
    partitions=st.integers(1, 12),
    cia=st.booleans(),
)
def test_bucketwise_order_with_equal_topic_partition_hashes(topics: list[int], partitions: int, cia: bool) -> None:
    # "t-20" partition 0 and "t-10" partition 1 have the same hash code: crowded, treeified buckets.
    calls = [TopicPartition(f"t-{n}", p) for n in topics for p in range(partitions)]

    def tp_hash(tp: TopicPartition) -> int:
        return topic_partition_hash(java_string_hash(tp.topic), tp.partition)

    expected = _full_replay(calls, tp_hash, None, None, cia)
    assert iteration_order(calls, tp_hash, None, compute_if_absent=cia) == expected


# 16 topics of one hash code ({Aa, BB}^4) among 40 others, in a shuffled plan order; the JVM's order of
# Collectors.toSet() over them (Java 17, printed by `new HashSet<>()` + add in this order). The bucket of the
# 16 becomes a tree ordered by String.compareTo: insertion order inside a bucket (the old model) is wrong.
PLAN_TOPICS = [
    "topic-5",
    "topic-32",
    "topic-19",
    "topic-3",
    "topic-1",
    "topic-35",
    "topic-20",
    "AaBBAaAa",
    "topic-11",
    "AaAaBBAa",
    "BBAaBBAa",
    "topic-0",
    "AaAaBBBB",
    "topic-8",
    "topic-16",
    "topic-21",
    "topic-22",
    "topic-29",
    "BBAaBBBB",
    "topic-15",
    "topic-10",
    "BBBBAaBB",
    "AaBBAaBB",
    "AaBBBBBB",
    "topic-28",
    "topic-7",
    "BBBBBBAa",
    "AaAaAaAa",
    "BBBBAaAa",
    "BBAaAaBB",
    "topic-4",
    "topic-31",
    "topic-30",
    "topic-39",
    "topic-34",
    "topic-18",
    "topic-14",
    "topic-23",
    "BBBBBBBB",
    "AaAaAaBB",
    "topic-13",
    "topic-9",
    "topic-37",
    "topic-24",
    "topic-26",
    "AaBBBBAa",
    "topic-6",
    "topic-33",
    "topic-12",
    "topic-2",
    "topic-27",
    "BBAaAaAa",
    "topic-25",
    "topic-17",
    "topic-38",
    "topic-36",
]
JVM_ORDER = [
    "topic-6",
    "topic-7",
    "topic-8",
    "topic-9",
    "topic-0",
    "topic-1",
    "topic-2",
    "topic-3",
    "topic-10",
    "topic-11",
    "topic-4",
    "topic-5",
    "topic-12",
    "topic-35",
    "topic-36",
    "topic-37",
    "topic-38",
    "topic-39",
    "AaBBBBBB",
    "AaBBAaAa",
    "AaAaBBAa",
    "AaAaAaAa",
    "AaAaAaBB",
    "BBAaBBAa",
    "BBAaAaBB",
    "BBAaAaAa",
    "AaAaBBBB",
    "BBAaBBBB",
    "BBBBAaBB",
    "BBBBAaAa",
    "AaBBAaBB",
    "AaBBBBAa",
    "BBBBBBAa",
    "BBBBBBBB",
    "topic-30",
    "topic-31",
    "topic-32",
    "topic-33",
    "topic-34",
    "topic-24",
    "topic-25",
    "topic-26",
    "topic-27",
    "topic-28",
    "topic-29",
    "topic-20",
    "topic-21",
    "topic-22",
    "topic-23",
    "topic-13",
    "topic-14",
    "topic-15",
    "topic-16",
    "topic-17",
    "topic-18",
    "topic-19",
]


def test_a_tree_bin_of_equal_hash_topics_iterates_like_the_jvm() -> None:
    assert hash_set_order(PLAN_TOPICS, java_string_hash, java_string_compare) == JVM_ORDER
    tree_less = sorted(
        dict.fromkeys(PLAN_TOPICS), key=lambda t: (java_string_hash(t) ^ (java_string_hash(t) & 0xFFFFFFFF) >> 16) & 127
    )
    assert tree_less != JVM_ORDER  # what a model without tree bins printed
