"""JavaRandom against values printed by a real JVM (OpenJDK 17, java.util.Random / Collections.shuffle)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreassign.javacompat.random import JavaRandom, java_shuffle

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        pytest.param(0, [-1155484576, -723955400, 1033096058, -1690734402], id="zero"),
        pytest.param(1, [-1155869325, 431529176, 1761283695, 1749940626], id="one"),
        pytest.param(42, [-1170105035, 234785527, -1360544799, 205897768], id="42"),
        pytest.param(-1, [1155099827, 1887904451, 52699159, -1941176418], id="minus-one"),
        pytest.param(LONG_MIN, [-1155484576, -723955400, 1033096058, -1690734402], id="long-min"),
        pytest.param(LONG_MAX, [1155099827, 1887904451, 52699159, -1941176418], id="long-max"),
        pytest.param(123456789012345, [-1421006947, -2071311287, -583755257, -1678701992], id="big"),
    ],
)
def test_next_int_matches_java(seed: int, expected: list[int]) -> None:
    rng = JavaRandom(seed)
    assert [rng.next_int() for _ in range(4)] == expected


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        pytest.param(1, [0, 0, 0, 0, 0, 0, 0, 0], id="1"),
        pytest.param(2, [1, 1, 0, 1, 1, 1, 0, 1], id="2-power-of-two"),
        pytest.param(3, [0, 2, 0, 1, 2, 2, 2, 2], id="3"),
        pytest.param(7, [6, 5, 6, 4, 0, 3, 6, 6], id="7"),
        pytest.param(10, [0, 6, 6, 0, 5, 9, 9, 9], id="10"),
        pytest.param(16, [9, 11, 3, 12, 14, 10, 1, 11], id="16-power-of-two"),
        pytest.param(
            1 << 30,
            [664059525, 790173313, 202183593, 838741955, 999630887, 701344694, 101109329, 745133339],
            id="2^30",
        ),
        pytest.param(  # about half of the draws are rejected: exercises the loop
            (1 << 30) + 1,
            [404367186, 202218659, 1061057871, 1747022, 150672411, 1062585487, 1022913302, 650154807],
            id="2^30+1-rejection-loop",
        ),
        pytest.param(
            2**31 - 1,
            [1328119050, 1580346626, 404367186, 1677483910, 1999261775, 1402689389, 202218659, 1490266679],
            id="int-max",
        ),
        pytest.param(1000, [50, 626, 186, 910, 775, 389, 659, 679], id="1000"),
    ],
)
def test_next_int_bound_matches_java(bound: int, expected: list[int]) -> None:
    rng = JavaRandom(2024)
    assert [rng.next_int(bound) for _ in range(8)] == expected


def test_rejection_loop_consumes_like_java() -> None:
    rng = JavaRandom(3)
    for _ in range(1000):
        rng.next_int((1 << 30) + 1)
    assert rng.next_int() == 86962705


def test_other_draws_match_java() -> None:
    rng = JavaRandom(-77)
    assert [rng.next_long(), rng.next_long()] == [5086704758475763526, 2340815487651504330]
    assert [rng.next_boolean(), rng.next_boolean()] == [False, False]
    assert [rng.next_double(), rng.next_double()] == [0.9631553920787647, 0.6901585375809263]


def test_set_seed_is_new_random() -> None:
    rng = JavaRandom(5)
    rng.next_int()
    rng.set_seed(42)
    assert rng.next_int() == -1170105035


def test_shuffle_matches_collections_shuffle() -> None:
    rng = JavaRandom(99)
    items = list(range(12))
    java_shuffle(items, rng)
    assert items == [5, 0, 2, 3, 11, 4, 1, 8, 6, 9, 10, 7]
    assert rng.next_int() == -1078127818


def test_shuffle_of_one_element_draws_nothing() -> None:
    rng = JavaRandom(99)
    items = [5]
    java_shuffle(items, rng)
    assert items == [5]
    assert rng.next_int() == JavaRandom(99).next_int() == -1192035722


@pytest.mark.parametrize("bound", [0, -1])
def test_next_int_rejects_non_positive_bound(bound: int) -> None:
    with pytest.raises(ValueError, match="bound must be positive"):
        JavaRandom(1).next_int(bound)


def test_unseeded_generators_differ() -> None:
    assert [JavaRandom().next_int() for _ in range(3)] != [JavaRandom().next_int() for _ in range(3)]


@given(seed=st.integers(LONG_MIN, LONG_MAX), bound=st.integers(1, 2**31 - 1))
def test_next_int_bound_in_range_and_reproducible(seed: int, bound: int) -> None:
    first = [JavaRandom(seed).next_int(bound) for _ in range(2)]
    rng = JavaRandom(seed)
    draws = [rng.next_int(bound) for _ in range(5)]
    assert all(0 <= d < bound for d in draws)
    assert first[0] == first[1] == draws[0]


@given(seed=st.integers(LONG_MIN, LONG_MAX))
def test_seed_counts_as_a_java_long(seed: int) -> None:
    """Only the low 64 bits of the seed matter, as for a Java long."""
    assert JavaRandom(seed).next_int() == JavaRandom(seed + 2**64).next_int()
