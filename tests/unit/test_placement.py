"""Placement against golden values printed by the real Kafka 4.3.1 classes on OpenJDK 17.

The values came from tests/oracle/PlacementOracle.java (``StripedReplicaPlacer(new Random(seed))`` for
``place_topic``; ``ReassignPartitionsCommand.generateAssignment`` with its placer reseeded for
``calculate_assignment``). tests/unit/test_placement_oracle.py reruns that comparison on hundreds of
random cases when the Kafka jars are available.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign.errors import CommandError
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, TopicPartition
from kreassign.planning.placement import (
    NOT_ALL_BROKERS_HAVE_RACKS,
    calculate_assignment,
    describe_cluster_node_order,
    get_broker_metadata,
    place_topic,
)
from kreassign.planning.placement_model import InvalidReplicationFactorError, UsableBroker

U = UsableBroker


def _unaware(*ids: int) -> list[UsableBroker]:
    return [U(i) for i in ids]


# ------------------------------------------------------------------------------------------------
# place_topic: StripedReplicaPlacer.place


@pytest.mark.parametrize(
    ("seed", "brokers", "partitions", "rf", "expected"),
    [
        pytest.param(
            1,
            _unaware(1, 2, 3, 4),
            6,
            3,
            [[3, 4, 1], [4, 1, 2], [1, 2, 3], [2, 3, 4], [1, 2, 4], [2, 4, 3]],
            id="rack-unaware",
        ),
        pytest.param(
            7,
            _unaware(5, 17, 3, 1001, 42),
            10,
            3,
            [
                [5, 17, 42],
                [17, 42, 1001],
                [42, 1001, 3],
                [1001, 3, 5],
                [3, 5, 17],
                [42, 5, 1001],
                [5, 1001, 3],
                [1001, 3, 17],
                [3, 17, 42],
                [17, 42, 5],
            ],
            id="ids-not-contiguous",
        ),
        pytest.param(
            11,
            [U(i, f"rack-{i % 3}") for i in range(1, 10)],
            12,
            3,
            [[3, 7, 2], [1, 5, 6], [8, 9, 4]] * 3 + [[1, 2, 3], [8, 6, 4], [9, 7, 5]],
            id="racks-even",
        ),
        pytest.param(
            5,
            [U(1, "a"), U(2, "a"), U(3, "a"), U(4, "a"), U(5, "b"), U(6, "c")],
            8,
            3,
            [[6, 3, 5], [4, 5, 6], [5, 6, 1], [6, 2, 5], [3, 5, 6], [5, 6, 4], [4, 6, 5], [6, 5, 1]],
            id="racks-uneven",
        ),
        pytest.param(
            3,
            _unaware(1, 2, 3),
            10,
            2,
            [[3, 1], [1, 2], [2, 3], [1, 3], [3, 2], [2, 1], [3, 1], [1, 2], [2, 3], [1, 3]],
            id="more-partitions-than-brokers-reshuffles",
        ),
        pytest.param(
            8,
            [U(1, None, True), U(2), U(3, None, True), U(4)],
            6,
            3,
            [[4, 2, 3], [2, 4, 1], [2, 4, 1], [4, 2, 3], [2, 4, 3], [4, 2, 1]],
            id="fenced-brokers-only-as-followers",
        ),
    ],
)
def test_place_topic_matches_java(
    seed: int, brokers: list[UsableBroker], partitions: int, rf: int, expected: list[list[int]]
) -> None:
    assert place_topic(partitions, rf, brokers, JavaRandom(seed)) == expected


RF_BROKERS = [U(i, f"r{i % 2}") for i in (10, 11, 12, 13, 14, 15)]


@pytest.mark.parametrize(
    ("rf", "expected"),
    [
        pytest.param(1, [[12], [11], [14], [13], [10]], id="rf1"),
        pytest.param(2, [[13, 14], [10, 15], [11, 12], [14, 13], [15, 10]], id="rf2"),
        pytest.param(3, [[10, 11, 12], [13, 12, 15], [14, 15, 10], [11, 10, 13], [12, 13, 14]], id="rf3"),
        pytest.param(
            4,
            [[15, 14, 11, 10], [10, 11, 12, 13], [13, 12, 15, 14], [14, 15, 10, 11], [11, 10, 13, 12]],
            id="rf4",
        ),
        pytest.param(
            5,
            [
                [10, 15, 12, 11, 14],
                [11, 12, 13, 14, 15],
                [14, 13, 10, 15, 12],
                [15, 10, 11, 12, 13],
                [12, 11, 14, 13, 10],
            ],
            id="rf5",
        ),
    ],
)
def test_replication_factors_match_java(rf: int, expected: list[list[int]]) -> None:
    assert place_topic(5, rf, RF_BROKERS, JavaRandom(2024 + rf)) == expected


def test_two_hundred_partitions_match_java() -> None:
    brokers = [U(i, f"az{i % 3}") for i in range(1, 13)]
    placement = place_topic(200, 3, brokers, JavaRandom(99))
    assert placement[:2] == [[9, 4, 5], [7, 8, 12]]
    text = "\n".join(["S", *("R " + ",".join(map(str, replicas)) for replicas in placement)])
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "541cbdf519db925c78a4633d846c3079d404c539c369bf74d06f325a2b25c593"
    )


def test_topics_share_one_generator_like_javas_static_placer() -> None:
    rng = JavaRandom(13)
    brokers = _unaware(*range(6))
    assert place_topic(3, 2, brokers, rng) == [[4, 5], [5, 0], [0, 1]]
    assert place_topic(4, 3, brokers, rng) == [[5, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4]]
    assert place_topic(2, 1, brokers, rng) == [[1], [2]]


@pytest.mark.parametrize(
    ("brokers", "rf", "message"),
    [
        pytest.param(
            _unaware(1, 2),
            3,
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered "
            "or some brokers have all their log directories cordoned.",
            id="rf-above-broker-count",
        ),
        pytest.param(
            _unaware(1, 2),
            0,
            "Invalid replication factor 0: the replication factor must be positive.",
            id="rf-zero",
        ),
        pytest.param(
            [U(1, None, True)],
            1,
            "All brokers are currently fenced, or have all their log directories cordoned.",
            id="all-fenced",
        ),
        pytest.param(
            [],
            1,
            "All brokers are currently fenced, or have all their log directories cordoned.",
            id="no-broker",
        ),
    ],
)
def test_impossible_placements_raise_the_java_message(brokers: list[UsableBroker], rf: int, message: str) -> None:
    with pytest.raises(InvalidReplicationFactorError) as caught:
        place_topic(3, rf, brokers, JavaRandom(1))
    assert caught.value.message == message
    assert isinstance(caught.value, CommandError)  # printed as "Error: <message>"


# ------------------------------------------------------------------------------------------------
# get_broker_metadata + calculate_assignment: the whole --generate proposal

NODES6 = [Broker(i, f"rack-{i % 3}") for i in (1, 2, 3, 4, 5, 6)]


def _current(topics: dict[str, list[list[int]]]) -> dict[TopicPartition, list[int]]:
    return {TopicPartition(t, p): replicas for t, parts in topics.items() for p, replicas in enumerate(parts)}


def _generate(
    seed: int,
    topics: dict[str, list[list[int]]],
    broker_ids: list[int],
    rack_aware: bool = True,
    nodes: list[Broker] = NODES6,
) -> dict[str, list[list[int]]]:
    brokers = get_broker_metadata(nodes, broker_ids, rack_aware)
    proposal = calculate_assignment(_current(topics), brokers, JavaRandom(seed), topic_order=list(topics))
    result: dict[str, list[list[int]]] = {}
    for tp, replicas in proposal.items():
        assert tp.partition == len(result.setdefault(tp.topic, []))
        result[tp.topic].append(replicas)
    return result


def test_generate_one_topic_matches_java() -> None:
    proposal = _generate(42, {"orders": [[1, 2, 3]] * 6}, [1, 2, 3, 4, 5, 6])
    assert proposal == {"orders": [[5, 6, 1], [3, 4, 2], [1, 5, 6], [2, 3, 4], [6, 1, 5], [4, 2, 3]]}


def test_generate_several_topics_in_java_hash_map_order() -> None:
    topics = {name: [[1, 2]] * 4 for name in ("payments", "orders", "audit")}
    assert _generate(7, topics, [1, 2, 3, 4, 5, 6]) == {
        "audit": [[4, 5], [2, 3], [6, 1], [4, 5]],
        "orders": [[3, 4], [1, 2], [5, 6], [3, 4]],
        "payments": [[2, 6], [3, 4], [1, 5], [2, 6]],
    }


def test_generate_twelve_topics_matches_java() -> None:
    topics = {f"topic-{i}": [[1, 2, 3]] * 2 for i in range(12)}
    expected = {
        "topic-0": [[6, 1, 2], [4, 5, 3]],
        "topic-1": [[5, 3, 1], [6, 4, 2]],
        "topic-10": [[2, 6, 4], [3, 1, 5]],
        "topic-11": [[1, 2, 6], [5, 3, 4]],
        "topic-2": [[3, 1, 5], [4, 2, 6]],
        "topic-3": [[5, 3, 1], [6, 4, 2]],
        "topic-4": [[3, 1, 5], [4, 2, 6]],
        "topic-5": [[1, 2, 6], [5, 3, 4]],
        "topic-6": [[5, 3, 1], [6, 4, 2]],
        "topic-7": [[2, 3, 4], [6, 1, 5]],
        "topic-8": [[6, 1, 2], [4, 5, 3]],
        "topic-9": [[1, 2, 6], [5, 3, 4]],
    }
    assert _generate(5, topics, [1, 2, 3, 4, 5, 6]) == expected


def test_generate_rack_unaware_matches_java() -> None:
    topics = {name: [[1, 2]] * 3 for name in ("a", "b", "c", "d")}
    assert _generate(7, topics, [2, 4, 6], rack_aware=False) == {
        "a": [[4, 6], [6, 2], [2, 4]],
        "b": [[2, 4], [4, 6], [6, 2]],
        "c": [[4, 6], [6, 2], [2, 4]],
        "d": [[4, 6], [6, 2], [2, 4]],
    }


def test_generate_takes_the_replication_factor_of_the_first_partition_in_map_order() -> None:
    # Java iterates partition 2 first here, so the whole topic gets its replication factor of 1.
    proposal = _generate(9, {"t": [[1, 2, 3], [1, 2], [4]]}, [1, 2, 3, 4, 5, 6], rack_aware=False)
    assert proposal == {"t": [[2], [3], [4]]}


def test_generate_ignores_unknown_brokers() -> None:
    assert _generate(3, {"t": [[1], [1]]}, [1, 3, 99]) == {"t": [[3], [1]]}


def test_generate_without_racks_when_rack_awareness_is_off() -> None:
    nodes = [Broker(1, "r1"), Broker(2, None)]
    assert _generate(1, {"t": [[1, 2]]}, [1, 2], rack_aware=False, nodes=nodes) == {"t": [[2, 1]]}


def test_mixed_racks_are_an_error_when_rack_aware() -> None:
    with pytest.raises(CommandError) as caught:
        get_broker_metadata([Broker(1, "r1"), Broker(2, None)], [1, 2], True)
    assert caught.value.message == NOT_ALL_BROKERS_HAVE_RACKS
    assert NOT_ALL_BROKERS_HAVE_RACKS == (
        "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
        "assignment without rack information."
    )


def test_only_chosen_brokers_count_for_the_rack_check() -> None:
    nodes = [Broker(1, "r1"), Broker(2, None), Broker(3, "r2")]
    assert get_broker_metadata(nodes, [1, 3], True) == [U(1, "r1"), U(3, "r2")]


@pytest.mark.parametrize(
    ("broker_ids", "message"),
    [
        pytest.param([77], "All brokers are currently fenced, or have all their log directories cordoned.", id="none"),
        pytest.param(
            [1, 2],
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered or "
            "some brokers have all their log directories cordoned.",
            id="too-few",
        ),
    ],
)
def test_generate_errors_match_java(broker_ids: list[int], message: str) -> None:
    with pytest.raises(InvalidReplicationFactorError) as caught:
        _generate(1, {"t": [[1, 2, 3]]}, broker_ids)
    assert caught.value.message == message


def test_topic_order_must_match_the_current_assignment() -> None:
    with pytest.raises(ValueError, match="topic_order"):
        calculate_assignment(_current({"a": [[1]]}), _unaware(1), JavaRandom(1), topic_order=["a", "b"])


def test_describe_cluster_order_is_java_hash_map_order() -> None:
    # HashMap<Integer, Node> with 16 slots: bucket id % 16, ids in one bucket in response order.
    nodes = [Broker(17), Broker(3), Broker(1), Broker(2), Broker(33)]
    assert [n.id for n in describe_cluster_node_order(nodes)] == [17, 1, 33, 2, 3]


# ------------------------------------------------------------------------------------------------
# Properties

broker_sets = st.lists(
    st.tuples(st.integers(0, 3000), st.sampled_from([None, "a", "b", "c", "d"])),
    min_size=1,
    max_size=12,
    unique_by=lambda b: b[0],
)


@st.composite
def placements(draw: st.DrawFn) -> tuple[list[UsableBroker], int, int, int, bool]:
    raw = draw(broker_sets)
    rack_aware = draw(st.booleans())
    brokers = [U(i, (rack or "z") if rack_aware else None) for i, rack in raw]
    rf = draw(st.integers(1, len(brokers)))
    return brokers, rf, draw(st.integers(1, 60)), draw(st.integers(-(2**63), 2**63 - 1)), rack_aware


@settings(max_examples=300, deadline=None)
@given(placements())
def test_placements_are_valid(case: tuple[list[UsableBroker], int, int, int, bool]) -> None:
    brokers, rf, partitions, seed, _ = case
    ids = {b.id for b in brokers}
    result = place_topic(partitions, rf, brokers, JavaRandom(seed))
    assert len(result) == partitions
    for replicas in result:
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= ids
    assert result == place_topic(partitions, rf, brokers, JavaRandom(seed))


@settings(max_examples=300, deadline=None)
@given(placements())
def test_rack_aware_placement_spreads_replicas_over_racks(
    case: tuple[list[UsableBroker], int, int, int, bool],
) -> None:
    brokers, rf, partitions, seed, _ = case
    rack_of = {b.id: b.rack for b in brokers}
    rack_count = len(set(rack_of.values()))
    for replicas in place_topic(partitions, rf, brokers, JavaRandom(seed)):
        assert len({rack_of[r] for r in replicas}) == min(rf, rack_count)


@settings(max_examples=100, deadline=None)
@given(
    topics=st.dictionaries(
        st.text("abcxyz-0123456789.", min_size=1, max_size=8), st.integers(1, 12), min_size=1, max_size=30
    ),
    case=placements(),
)
def test_calculate_assignment_keeps_partitions_and_replication_factor(
    topics: dict[str, int], case: tuple[list[UsableBroker], int, int, int, bool]
) -> None:
    brokers, rf, _, seed, _ = case
    current = {TopicPartition(t, p): list(range(rf)) for t, count in topics.items() for p in range(count)}
    proposal = calculate_assignment(current, brokers, JavaRandom(seed))
    assert set(proposal) == set(current)
    assert all(len(set(replicas)) == rf for replicas in proposal.values())
    assert proposal == calculate_assignment(current, brokers, JavaRandom(seed))
    leaders = Counter(replicas[0] for replicas in proposal.values())
    assert set(leaders) <= {b.id for b in brokers}
