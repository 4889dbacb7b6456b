"""The balanced strategy (kreassign.planning.balanced): validity, balance, minimal movement, determinism.

Shapes: brokers added (they hold nothing yet), brokers removed (not in the chosen list), replication
factor changed, racks (equal-sized, so that a balanced rack-aware plan exists) or none.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.errors import CommandError
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.balanced.targets import counts_targets
from kreassign.planning.context import make_context
from kreassign.planning.placement_model import InvalidReplicationFactorError
from kreassign.planning.quality import measure_plan
from tests.shapes import reference_cluster


def cluster(seed: int, racks: int, per_rack: int, old: int, partitions: int, rf: int, topics: int = 3):
    """Brokers 1..racks*per_rack (rack of b: (b-1) % racks, or none when racks == 0); partitions placed at
    random, rack-valid, on the ``old`` first brokers."""
    rnd = random.Random(seed)
    count = max(racks, 1) * per_rack
    rack_of = {b: (f"r{(b - 1) % racks}" if racks else None) for b in range(1, count + 1)}
    pool = list(range(1, min(old, count) + 1))
    rows = []
    for i in range(partitions):
        replicas: list[int] = []
        for b in rnd.sample(pool, len(pool)):
            if len(replicas) == rf:
                break
            if rack_of[b] is None or rack_of[b] not in {rack_of[r] for r in replicas}:
                replicas.append(b)
        rows.append((f"t{i % topics}", i // topics, tuple(replicas), rnd.randint(0, 10_000)))
    return rack_of, rows


def spread_ok(counts: Counter, brokers, total: int) -> bool:
    floor, extra = divmod(total, len(brokers))
    return all(floor <= counts.get(b, 0) <= floor + (1 if extra else 0) for b in brokers)


shapes = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 10_000),
        "racks": st.sampled_from([0, 2, 3, 4]),
        "per_rack": st.integers(1, 4),
        "extra_old": st.integers(-3, 0),  # old brokers = all + extra_old: the others were just added
        "partitions": st.integers(1, 40),
        "rf": st.integers(1, 3),
        "remove": st.integers(0, 2),  # highest-numbered old brokers dropped from the chosen list
        "new_rf": st.sampled_from([None, None, 1, 2, 3]),
    }
)


def build(shape):
    count = max(shape["racks"], 1) * shape["per_rack"]
    old = max(1, count + shape["extra_old"])
    rf = min(shape["rf"], old, shape["racks"] or old)
    rack_of, rows = cluster(shape["seed"], shape["racks"], shape["per_rack"], old, shape["partitions"], rf)
    removed = set(range(old - shape["remove"] + 1, old + 1)) if shape["remove"] < count else set()
    # removing brokers of one rack only keeps racks equal when every rack loses as many: remove whole rows
    if shape["racks"] and removed:
        removed = {b for b in rack_of if (b - 1) // shape["racks"] == (count - 1) // shape["racks"]}
        if len(removed) == count:
            removed = set()
    if count - len(removed) < rf:
        removed = set()
    chosen = [b for b in rack_of if b not in removed]
    new_rf = shape["new_rf"]
    if new_rf is not None:
        new_rf = min(new_rf, len(chosen))
    return rack_of, rows, chosen, new_rf


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_plans_are_valid_balanced_and_move_the_fewest_replicas(shape):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    plan = plan_balanced(rows, ctx)
    assert sorted(plan) == sorted((t, p) for t, p, _, _ in rows)
    chosen_racks = {rack_of[b] for b in chosen}
    for t, p, current, _ in rows:
        replicas = plan[(t, p)]
        rf = new_rf or len(current)
        assert len(replicas) == rf and len(set(replicas)) == rf
        assert set(replicas) <= set(chosen)
        if rack_of[chosen[0]] is not None:
            per_rack = Counter(rack_of[b] for b in replicas)
            assert max(per_rack.values()) <= -(-rf // len(chosen_racks))
    total = sum(len(r) for r in plan.values())
    assert spread_ok(Counter(b for r in plan.values() for b in r), chosen, total)
    assert spread_ok(Counter(r[0] for r in plan.values()), chosen, len(plan))

    # minimal movement: forced moves (replicas on removed brokers, replicas added by a larger RF) plus
    # what the brokers above their target must give; a flat target (no racks) is the exact optimum.
    moved = sum(len(set(plan[(t, p)]) - set(current)) for t, p, current, _ in rows)
    kept = Counter()
    forced = 0
    for _, _, current, _ in rows:
        rf = new_rf or len(current)
        stay = [b for b in current if b in set(chosen)][:rf]
        kept.update(stay)
        forced += rf - len(stay)
    floor = total // len(chosen)
    if new_rf is None or new_rf >= max(len(c) for _, _, c, _ in rows):
        upper = forced + sum(max(0, kept[b] - floor) for b in chosen)
        # with racks, the last-resort chains may add a move or two when rack capacity is nearly full
        # (5 of 3,476 random shapes needed one extra move when this was measured)
        assert moved <= upper + (2 if rack_of[chosen[0]] is not None else 0)
        if rack_of[chosen[0]] is None:
            ceil_count = total % len(chosen)
            ordered = sorted((kept[b] for b in chosen), reverse=True)
            optimum = forced + sum(max(0, k - (floor + (1 if i < ceil_count else 0))) for i, k in enumerate(ordered))
            assert moved == optimum


@settings(max_examples=60, deadline=None)
@given(shapes, st.randoms(use_true_random=False))
def test_same_input_same_plan_whatever_the_row_order(shape, rnd):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert plan_balanced(rows, ctx) == plan_balanced(
        shuffled, make_context([(b, rack_of[b]) for b in chosen], new_rf, shuffled)
    )


def test_an_already_balanced_cluster_does_not_move():
    rows = [("t", p, ((p % 3) + 1, ((p + 1) % 3) + 1), 10) for p in range(6)]
    ctx = make_context([(1, None), (2, None), (3, None)], None, rows)
    assert plan_balanced(rows, ctx) == {("t", p): list(r) for t, p, r, _ in rows}


def test_a_removed_broker_gives_away_every_replica():
    rows = [("t", p, (1, 2, 3), 10) for p in range(4)]
    ctx = make_context([(1, None), (2, None), (4, None), (5, None)], None, rows)
    plan = plan_balanced(rows, ctx)
    assert all(3 not in r for r in plan.values())
    assert Counter(b for r in plan.values() for b in r) == {1: 3, 2: 3, 4: 3, 5: 3}


def test_targets_give_the_extra_replicas_to_the_brokers_holding_most():
    assert counts_targets([1, 2, 3], {1: 0, 2: 5, 3: 4}, 8) == {2: 3, 3: 3, 1: 2}
    # racks first: rack x (brokers 1, 2) and rack y (3, 4) share 6 replicas 3 and 3
    assert counts_targets([1, 2, 3, 4], {1: 3, 2: 3, 3: 0, 4: 0}, 6, {1: "x", 2: "x", 3: "y", 4: "y"}) == {
        1: 2,
        2: 1,
        3: 2,
        4: 1,
    }


def test_replication_factor_above_the_brokers_is_the_placer_error():
    rows = [("t", 0, (1,), 0)]
    with pytest.raises(InvalidReplicationFactorError, match="replication factor of 3 cannot be reached"):
        plan_balanced(rows, make_context([(1, None), (2, None)], 3, rows))
    with pytest.raises(InvalidReplicationFactorError, match="must be positive"):
        make_context([(1, None)], 0, rows)
    with pytest.raises(CommandError, match="No broker"):
        make_context([], None, rows)


def test_rack_rule_when_there_are_fewer_racks_than_replicas():
    """2 racks, RF 3: at most 2 replicas of a partition on one rack."""
    rows = [("t", p, (1, 3, 5), 0) for p in range(4)]  # all on rack a (odd brokers)
    rack_of = {1: "a", 2: "b", 3: "a", 4: "b", 5: "a", 6: "b"}
    plan = plan_balanced(rows, make_context(rack_of.items(), None, rows))
    for replicas in plan.values():
        assert max(Counter(rack_of[b] for b in replicas).values()) == 2


# ---- plan quality against the plans of the previous algorithm (before topic-aware shedding and leaders)
BASELINE = Path(__file__).with_name("data") / "balance_baseline.json"
"""Metrics of the plans the previous algorithm (kreassign 0.x, commit 0087f55) made for 200 shapes drawn by
``baseline_shape(i)``, i = 0..199 (the algorithm is replaced, so its results are stored, not recomputed)."""


def baseline_shape(i: int) -> dict:
    rnd = random.Random(i)
    return {
        "seed": rnd.randint(0, 10_000),
        "racks": rnd.choice([0, 2, 3, 4]),
        "per_rack": rnd.randint(1, 4),
        "extra_old": rnd.randint(-3, 0),
        "partitions": rnd.randint(1, 120),
        "rf": rnd.randint(1, 3),
        "remove": rnd.randint(0, 2),
        "new_rf": rnd.choice([None, None, 1, 2, 3]),
    }


def quality_of(shape):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    quality = measure_plan(rows, plan_balanced(rows, ctx), chosen, replication_factor=new_rf)
    return {d.name: d.after for d in quality.dimensions}, quality


def test_topic_and_bytes_balance_no_worse_than_the_previous_plans():
    baseline = json.loads(BASELINE.read_text())
    totals = Counter()
    for i, old in enumerate(baseline):
        assert old["shape"] == baseline_shape(i)
        after, quality = quality_of(old["shape"])
        topic_replicas, topic_leaders = after["topic_replica_spread"].misplaced, after["topic_leader_spread"].misplaced
        # per shape: never more replicas moved; each topic's replicas and leaders as even as before, unless
        # the plan moves fewer replicas than before (moves come first), or shape 95 (RF 1 on racks), one
        # replica worse: its rack-forced moves leave one topic fewer free choices
        assert quality.replicas_moved <= old["moved"], (i, old)
        slack = 1 if i == 95 else 10**9 if quality.replicas_moved < old["moved"] else 0
        assert topic_replicas <= old["topic_replicas_misplaced"] + slack, (i, old)
        assert topic_leaders <= old["topic_leaders_misplaced"] + slack, (i, old)
        totals["old_topic"] += old["topic_replicas_misplaced"] + old["topic_leaders_misplaced"]
        totals["new_topic"] += topic_replicas + topic_leaders
        totals["old_bytes"] += old["bytes_above_mean"]
        totals["new_bytes"] += after["bytes"].misplaced
    # over all shapes: topics much more even, bytes per broker at least as even (the topic comes first,
    # so on single small shapes bytes may lose a little of what the topic wins)
    assert totals["new_topic"] < 0.6 * totals["old_topic"]
    assert totals["new_bytes"] <= totals["old_bytes"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_topic_spread_within_one_when_nothing_forces_more(shape):
    """Brokers added, no racks, replication factor kept: every topic's leaders, and replicas on the
    brokers that received any, end within the floor..ceil of its share where the topic is large enough."""
    shape = {**shape, "racks": 0, "remove": 0, "new_rf": None}
    after, quality = quality_of(shape)
    assert quality.replicas_moved == quality.minimum_moves
    assert after["leaders"].max - after["leaders"].min <= 1
    assert after["replicas"].max - after["replicas"].min <= 1


def test_reference_cluster_three_brokers_added():
    """The shape of the issue: 12 brokers on 3 racks, 3 of them just added, 20 topics of 100 partitions;
    the previous plan left a topic at 35 replicas on one broker and 14 on another, leaders per topic
    spread by up to 16, bytes 580..780 GB."""
    brokers, rows = reference_cluster()
    ctx = make_context(brokers, None, rows)
    plan = plan_balanced(rows, ctx)
    quality = measure_plan(rows, plan, [b for b, _ in brokers])
    dims = {d.name: d.after for d in quality.dimensions}
    assert quality.replicas_moved == quality.minimum_moves == 1500
    assert dims["replicas"].max - dims["replicas"].min == 0 and dims["leaders"].max - dims["leaders"].min <= 1
    assert dims["topic_leader_spread"].max <= 1
    assert dims["topic_replica_spread"].max <= 16  # was 21: the rest is forced by racks (one needy broker each)
    assert dims["bytes"].max - dims["bytes"].min < 0.02 * dims["bytes"].mean  # was 28 %
    assert quality.score_after > 99
