"""Java HashSet iteration order, checked against values printed by a real JVM (Java 17)."""

from __future__ import annotations

import pytest

from kreassign.planning.javaorder import java_hash_order, java_int_hash, java_string_hash

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
    assert ",".join(map(str, java_hash_order(items, hash_fn))) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("hello", 99162322), ("éclair", -1824599816), ("😀x", 54959989)],
    ids=["ascii", "latin", "surrogates"],
)
def test_string_hash_matches_java(text, expected):
    assert java_string_hash(text) == expected


def test_duplicates_are_kept_once():
    assert java_hash_order([3, 1, 3, 2, 1], java_int_hash) == [1, 2, 3]
