"""KIP-435 steps and batches: the golden case of the KIP, tables of edge cases, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign.model import TopicPartition
from kreassign.planning.steps import Limits, next_step, plan_partition, plan_rounds, priority, select_steps

TP = TopicPartition("t", 0)


def targets(current, final, r):
    return [list(s.target) for s in plan_partition(TP, current, final, r)]


def test_kip_435_golden_example():
    # The KIP's example adds the new leader alone ([5, 0, 1, 2, 3, 4]) while its algorithm drops R excess
    # replicas in the same step, the leader among them. kreassign's leader step drops up to R excess replicas
    # but never the current leader (0), which goes once 5 is elected: one step fewer than the example.
    assert targets((0, 1, 2, 3, 4), (5, 6, 7, 8, 9), 2) == [
        [5, 0, 2, 3, 4],
        [5, 6, 7, 3, 4],
        [5, 6, 7, 8, 9],
    ]


@pytest.mark.parametrize(
    ("current", "final", "r", "expected"),
    [
        pytest.param((1, 2, 3), (1, 2, 3), 1, [], id="already-there"),
        pytest.param((1, 2, 3), (1, 3, 2), 1, [[1, 3, 2]], id="reorder-followers"),
        pytest.param((1, 2, 3), (2, 1, 3), 1, [[2, 1, 3]], id="leader-swap-no-data"),
        pytest.param((1, 2, 3), (3, 4, 5), 1, [[3, 1, 2], [3, 4, 2], [3, 4, 5]], id="leader-in-cr-then-one-by-one"),
        pytest.param((1, 2, 3), (1, 4, 5), None, [[1, 4, 5]], id="unlimited-one-step"),
        pytest.param((1, 2, 3), (4, 5, 6), None, [[4, 1, 3], [4, 5, 6]], id="unlimited-leader-first"),
        pytest.param((1, 2), (3, 1), 1, [[3, 1]], id="new-leader-and-a-drop-in-one-step"),
        pytest.param((1, 2), (3, 2), 1, [[3, 2, 1], [3, 2]], id="the-old-leader-goes-after-the-election"),
        pytest.param((1, 2, 3), (2, 1), 1, [[2, 1]], id="reorder-and-drop"),
        pytest.param((1, 2, 3), (1, 2, 3, 4, 5), 1, [[1, 2, 3, 4], [1, 2, 3, 4, 5]], id="rf-increase"),
        pytest.param((1, 2, 3), (1, 4, 5, 6, 7), 2, [[1, 4, 5, 2, 3], [1, 4, 5, 6, 7]], id="rf-increase-and-move"),
        pytest.param((1, 2, 3, 4, 5), (1, 2, 3), 1, [[1, 2, 3, 5], [1, 2, 3]], id="rf-decrease"),
        pytest.param((1, 2, 3, 4, 5), (1, 6), 2, [[1, 4, 5], [1, 6]], id="rf-decrease-and-move"),
        pytest.param((1,), (2,), 1, [[2, 1], [2]], id="rf1-move"),
        pytest.param((1, 2), (2, 3), 1, [[2, 1], [2, 3]], id="rf2-new-follower"),
    ],
)
def test_steps(current, final, r, expected):
    assert targets(current, final, r) == expected


def test_step_descriptions():
    steps = plan_partition(TP, (0, 1, 2), (3, 1, 2), 1)
    assert [s.describe() for s in steps] == [
        "t-0: [0,1,2] -> [3,1,2,0] (+3, leader 0->3)",
        "t-0: [3,1,2,0] -> [3,1,2] (-0)",
    ]
    assert steps[0].moves_leader and not steps[1].moves_leader
    assert steps[0].adding == (3,) and steps[1].removing == (0,)


def step(partition, source, target):
    return next_step(TopicPartition("t", partition), source, target, None)


def test_batch_takes_leader_movements_first_then_fills_with_others():
    plan = [step(0, (1, 2), (1, 3)), step(1, (1, 2), (3, 2)), step(2, (1, 2), (1, 4)), step(3, (2, 1), (4, 1))]
    candidates = sorted(plan, key=lambda s: priority(s, s.partition.partition))
    assert [s.partition.partition for s in candidates] == [1, 3, 0, 2]
    chosen = select_steps(candidates, 0, 0, Limits(partitions=3, leaders=1))
    assert [s.partition.partition for s in chosen] == [1, 0, 2]
    chosen = select_steps(candidates, 0, 0, Limits(partitions=2, leaders=2))
    assert [s.partition.partition for s in chosen] == [1, 3]


def test_batch_respects_moving_counts():
    candidates = [step(0, (1, 2), (3, 2)), step(1, (1, 2), (1, 3))]
    assert select_steps(candidates, 2, 0, Limits(partitions=2)) == []
    assert [s.partition.partition for s in select_steps(candidates, 1, 1, Limits(partitions=3, leaders=1))] == [1]


def test_rounds_of_the_golden_example():
    rounds = plan_rounds({TP: (0, 1, 2, 3, 4)}, {TP: (5, 6, 7, 8, 9)}, Limits(replicas=2))
    assert [r.number for r in rounds] == [1, 2, 3]
    assert rounds[-1].steps[0].target == (5, 6, 7, 8, 9)


# ---- properties over random clusters and targets

BROKERS = st.integers(min_value=0, max_value=11)


@st.composite
def moves(draw):
    n = draw(st.integers(min_value=1, max_value=8))
    plan = {}
    for p in range(n):
        current = tuple(draw(st.lists(BROKERS, min_size=1, max_size=6, unique=True)))
        final = tuple(draw(st.lists(BROKERS, min_size=1, max_size=6, unique=True)))
        plan[TopicPartition(draw(st.sampled_from(["a", "b"])), p)] = (current, final)
    limits = Limits(
        partitions=draw(st.none() | st.integers(min_value=1, max_value=4)),
        replicas=draw(st.none() | st.integers(min_value=1, max_value=3)),
        leaders=draw(st.none() | st.integers(min_value=1, max_value=3)),
    )
    return plan, limits


@settings(max_examples=400, deadline=None)
@given(moves())
def test_every_sequence_ends_at_the_target_and_keeps_the_rules(case):
    plan, limits = case
    for tp, (current, final) in plan.items():
        steps = plan_partition(tp, current, final, limits.replicas)
        replicas = current
        for i, s in enumerate(steps):
            assert s.source == replicas
            if limits.replicas is not None and not s.moves_leader:
                assert len(s.adding) <= limits.replicas
            if s.moves_leader:
                assert s.target[0] == final[0] and len(s.adding) <= 1 and i == 0
                assert s.source[0] not in s.removing  # the current leader stays until the new one is elected
                assert not s.removing or len(s.target) >= len(final)  # drops only what is beyond FTR's size
                assert limits.replicas is None or len(s.removing) <= limits.replicas
            assert len(s.target) >= min(len(current), len(final))  # replication factor after the step
            assert len(set(s.target)) == len(s.target)
            if i > 0:
                assert s.target[0] == final[0]  # the leader never moves again
            replicas = s.target
        assert replicas == final
        assert len(steps) <= 1 + len(set(current) ^ set(final)) + 1


@settings(max_examples=300, deadline=None)
@given(moves())
def test_rounds_never_break_a_limit_and_are_deterministic(case):
    plan, limits = case
    current = {tp: c for tp, (c, _) in plan.items()}
    final = {tp: f for tp, (_, f) in plan.items()}
    rounds = plan_rounds(current, final, limits)
    assert rounds == plan_rounds(current, final, limits)
    state = dict(current)
    for r in rounds:
        assert r.steps
        if limits.partitions is not None:
            assert len(r.steps) <= limits.partitions
        if limits.leaders is not None:
            assert sum(s.moves_leader for s in r.steps) <= limits.leaders
        assert len({s.partition for s in r.steps}) == len(r.steps)
        for s in r.steps:
            assert s.source == state[s.partition]
            state[s.partition] = s.target
    assert state == final


@pytest.mark.parametrize(
    ("limits", "text"),
    [
        (Limits(2, 1), "at most 2 partitions and 1 replica per partition moving at once, no limit on leaders"),
        (Limits(), "no limit on partitions, replicas per partition or leaders moving at once"),
        (Limits(5, 2, 3), "at most 5 partitions, 2 replicas per partition and 3 leaders moving at once"),
        (Limits(None, 1), "at most 1 replica per partition moving at once, no limit on partitions or leaders"),
        (
            Limits(1, None, 1, 3),
            "at most 1 partition and 1 leader moving at once, no limit on replicas per partition, "
            "at most 3 steps per broker",
        ),
    ],
    ids=["partitions-replicas", "none", "all", "replicas-only", "with-brokers"],
)
def test_limits_described_without_at_most_unlimited(limits, text):
    assert limits.describe() == text
    assert "unlimited" not in limits.describe()
