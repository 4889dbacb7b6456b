"""The plan report's numbers (kreassign.planning.quality): spreads, misplaced load, score, minimum movement."""

from __future__ import annotations

from kreassign.planning.bounds import minimum_movement
from kreassign.planning.context import make_context
from kreassign.planning.quality import count_misplaced, measure_plan


def test_misplaced_counts_are_the_least_unit_moves_to_floor_and_ceil():
    assert count_misplaced([4, 4, 4], 3) == (0, 12)
    assert count_misplaced([5, 4, 4], 3) == (0, 13)  # within floor..ceil
    assert count_misplaced([6, 3, 3], 3) == (2, 12)
    assert count_misplaced([9], 3) == (6, 9)  # the two brokers not listed hold 0


def test_one_empty_broker_of_four_scores_75_on_replicas():
    rows = [("t", p, (1, 2, 3), 10) for p in range(4)]
    plan = {("t", p): [1, 2, 3] for p in range(4)}
    quality = measure_plan(rows, plan, [1, 2, 3, 4])
    replicas = quality.dimension("replicas")
    assert (replicas.before.min, replicas.before.max, replicas.before.score) == (0, 4, 75.0)
    assert quality.replicas_moved == 0 and quality.minimum_moves == 3


def test_report_of_a_balancing_plan():
    rows = [("t", p, (1, 2), 100 * (p + 1)) for p in range(4)]
    plan = {("t", 0): [1, 3], ("t", 1): [2, 3], ("t", 2): [1, 2], ("t", 3): [2, 1]}
    quality = measure_plan(rows, plan, [1, 2, 3], capacities={1: 10_000, 2: 10_000, 3: 10_000}, other_bytes={3: 500})
    assert quality.replicas_moved == 2 and quality.bytes_moved == 300 and quality.leaders_changed == 2
    assert quality.per_broker["replicas"][1] == {1: 3, 2: 3, 3: 2}
    assert quality.dimension("topic_leader_spread").after.max == 2  # leaders 2, 2, 0
    disk = quality.dimension("disk_use")
    assert disk.before.min == 5.0 and disk.after.max == 9.0  # broker 3: 500 other bytes before; 2: 900 after
    assert quality.score_before < quality.score_after <= 100


def test_minimum_movement_counts_forced_moves_and_surplus():
    rows = [("t", p, (1, 2), 10) for p in range(3)]
    # broker 2 removed: 3 forced; broker 1 keeps 3, the target of 2 brokers x 3 replicas is 3: no surplus
    assert minimum_movement(rows, make_context([(1, None), (3, None)], None, rows)) == (3, 30)
    # a third broker added: 6 replicas over 3 brokers, 1 and 2 keep 3 each, 2 is the target: 2 moves
    assert minimum_movement(rows, make_context([(1, None), (2, None), (3, None)], None, rows)) == (2, 20)
    # replication factor down to 1: either replica may be the one dropped, nothing is forced
    assert minimum_movement(rows, make_context([(1, None), (2, None)], 1, rows)) == (0, 0)
