"""The bytes stage (kreassign.planning.bytebalance): every rule of the plan kept, never further from the band,
within the band whenever a brute-force search over every plan finds one that is, no more bytes copied than the
plan it received when that plan meets the goals already, the same plan whatever the order of the input; the
lower bound; the option; the report."""

from __future__ import annotations

import itertools
import json
import random
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.actions.balanced import parse_bytes_tolerance
from kreassign.errors import UsageError
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.bounds import band_lower_bound
from kreassign.planning.budget import MoveBudget
from kreassign.planning.bytebalance import DEFAULT_TOLERANCE, LARGE_SHARE, balance_bytes, band_of
from kreassign.planning.context import make_context
from tests.shapes import reference_cluster
from tests.unit.test_balance import build, shapes
from tests.unit.test_move_budget import (
    bytes_per_broker,
    check_stage,
    moved,
    planned_with_disks,
    shuffled_twins,
    topic_spreads,
)

UNLIMITED = MoveBudget(sys.maxsize, "bytes")


def violation(held, low, high):
    return sum(max(0, low - v, v - high) for v in held)


def topic_squares(plan):
    per_topic: Counter = Counter()
    for (t, _), replicas in plan.items():
        per_topic.update((t, b) for b in replicas)
    return sum(n * n for n in per_topic.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.sampled_from([0.01, 0.05, 0.2]), st.integers(0, 2**16), st.booleans())
def test_the_stage_keeps_every_rule_and_never_moves_away_from_the_band(shape, tolerance, seed, disks):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx, plan, capacities, other = planned_with_disks(rack_of, rows, chosen, new_rf, seed, disks)
    before = {key: list(replicas) for key, replicas in plan.items()}
    band = balance_bytes(rows, plan, ctx, tolerance, capacities, other, 0.8)
    _, extra_bytes = check_stage(rows, ctx, before, plan, UNLIMITED, capacities, other)
    assert band.extra_bytes == extra_bytes
    held_before, held_after = bytes_per_broker(rows, before, chosen), bytes_per_broker(rows, plan, chosen)
    mean, low, high = band_of(sum(held_after), len(chosen), tolerance)
    assert (band.low, band.high) == (low, high)
    assert violation(held_after, low, high) <= violation(held_before, low, high)
    named = {o.broker: o for o in band.outside}
    for b, held in zip(chosen, held_after, strict=True):
        assert (b in named) == (not low <= held <= high)
        if b in named:
            largest = max((size for t, p, _, size in rows if b in plan[(t, p)]), default=0)
            assert named[b].bytes == held and named[b].largest == largest
            assert named[b].reason == ("large replica" if largest > LARGE_SHARE * mean else "no move")


# ---- brute force on small clusters --------------------------------------------------------------------------
small = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 100_000),
        "brokers": st.integers(3, 4),
        "new": st.integers(0, 1),
        "racks": st.sampled_from([0, 2]),
        "partitions": st.integers(2, 5),
        "rf": st.integers(1, 2),
        "topics": st.integers(1, 2),
    }
)


def small_cluster(shape):
    rnd = random.Random(shape["seed"])
    count, racks = shape["brokers"], shape["racks"]
    rack_of = {b: (f"r{(b - 1) % racks}" if racks else None) for b in range(1, count + 1)}
    old = list(range(1, count - shape["new"] + 1))
    rows = []
    for i in range(shape["partitions"]):
        replicas: list[int] = []
        for b in rnd.sample(old, len(old)):
            if len(replicas) == shape["rf"]:
                break
            if rack_of[b] is None or rack_of[b] not in {rack_of[r] for r in replicas}:
                replicas.append(b)
        rows.append((f"t{i % shape['topics']}", i // shape["topics"], tuple(replicas), rnd.choice([1, 10, 100, 1000])))
    return rack_of, sorted(rows)


def some_plan_within(rows, ctx, tolerance, spreads=None) -> bool:
    """Is there any plan (every partition on distinct brokers, its replication factor, the rack rule, replicas
    per broker within floor..ceil of the mean, with ``spreads`` no topic's replicas wider apart than that) whose
    bytes per broker are all within the band? Leaders are left out: they carry no bytes, and floor..ceil of them
    is always reachable when replicas are."""
    brokers = ctx.brokers
    total = sum(len(r[2]) for r in rows)
    floor, extra = divmod(total, len(brokers))
    ceil = floor + (1 if extra else 0)
    total_bytes = sum(len(r[2]) * r[3] for r in rows)
    _, low, high = band_of(total_bytes, len(brokers), tolerance)
    choices = []
    for _, _, current, _ in rows:
        rf = len(current)
        choices.append(
            [
                c
                for c in itertools.combinations(brokers, rf)
                if max(Counter(ctx.group(b) for b in c).values()) <= ctx.rack_cap(rf)
            ]
        )
    for combo in itertools.product(*choices):
        counts = Counter(itertools.chain.from_iterable(combo))
        if any(not floor <= counts.get(b, 0) <= ceil for b in brokers):
            continue
        held = Counter()
        for replicas, row in zip(combo, rows, strict=True):
            held.update(dict.fromkeys(replicas, row[3]))
        if not all(low <= held.get(b, 0) <= high for b in brokers):
            continue
        placed = {(t, p): replicas for (t, p, _, _), replicas in zip(rows, combo, strict=True)}
        if spreads is None or all(spreads[t] >= n for t, n in topic_spreads(placed, brokers).items()):
            return True
    return False


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small, st.sampled_from([0.05, 0.2, 0.5]))
def test_within_the_band_whenever_a_brute_force_search_finds_a_plan_that_is(shape, tolerance):
    """Among the plans that keep the stage's rules: no topic's replicas wider apart than in the plan it gets
    (a band reachable only by spreading a topic wider is not sought; 1 case in 6,000 random ones here)."""
    rack_of, rows = small_cluster(shape)
    ctx = make_context(list(rack_of.items()), None, rows)
    plan = plan_balanced(rows, ctx)
    spreads = topic_spreads(plan, ctx.brokers)
    band = balance_bytes(rows, plan, ctx, tolerance)
    if some_plan_within(rows, ctx, tolerance, spreads):
        assert not band.outside, (rows, plan, band)


@pytest.mark.parametrize(
    ("seed", "brokers", "new", "racks", "tolerance"),
    [(785, 4, 0, 0, 0.05), (49822, 4, 0, 0, 0.2), (39489, 4, 0, 2, 0.5), (88721, 4, 1, 0, 0.2)],
)
def test_cases_hypothesis_found(seed, brokers, new, racks, tolerance):
    """Two topics of partitions of 1, 10, 100 or 1,000 bytes, RF 2: the band needs a leadership handed over
    with a swap (785, 49822), or a move that copies more than twice what it brings into the band (39489,
    88721); before, the stage left 2 to 4 brokers outside."""
    shape = {"seed": seed, "brokers": brokers, "new": new, "racks": racks, "partitions": 5, "rf": 2, "topics": 2}
    if seed == 49822:
        shape["partitions"] = 3
    rack_of, rows = small_cluster(shape)
    ctx = make_context(list(rack_of.items()), None, rows)
    plan = plan_balanced(rows, ctx)
    before = {key: list(replicas) for key, replicas in plan.items()}
    band = balance_bytes(rows, plan, ctx, tolerance)
    assert band.outside == ()
    check_stage(rows, ctx, before, plan, UNLIMITED)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.sampled_from([0.05, 0.2]))
def test_never_more_bytes_than_the_plan_it_received_when_that_one_meets_the_goals(shape, tolerance):
    """When the plan of the fewest replica moves is within the band already and no swap that moves no more
    replicas evens a topic out, the stage leaves it as it is (so it copies exactly as much)."""
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    plan = plan_balanced(rows, ctx)
    before = {key: list(replicas) for key, replicas in plan.items()}
    _, low, high = band_of(sum(bytes_per_broker(rows, before, chosen)), len(chosen), tolerance)
    inside = all(low <= v <= high for v in bytes_per_broker(rows, before, chosen))
    balance_bytes(rows, plan, ctx, tolerance)
    if inside and topic_squares(plan) == topic_squares(before):
        assert moved(rows, plan)[1] <= moved(rows, before)[1]
    if inside:  # the topic pass only ever lowers what it swaps for
        assert topic_squares(plan) <= topic_squares(before)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.randoms(use_true_random=False))
def test_same_input_same_plan_whatever_the_order(shape, rnd):
    rows, ctx, plan, shuffled_rows, shuffled_plan = shuffled_twins(shape, rnd)
    balance_bytes(rows, plan, ctx)
    balance_bytes(shuffled_rows, shuffled_plan, ctx)
    assert shuffled_plan == plan


def test_reference_cluster_fewest_moves_worst_topic_at_the_racks_bound():
    """The 12-broker reference (3 racks of 4, one broker per rack just added, 20 topics of 100 partitions, RF 3):
    the minimum 1,500 moves hold. Each partition keeps one replica per rack, and at the fewest moves an old
    broker only loses replicas: topic-00003 has 42, 17 and 41 replicas on the old brokers of rack-00, so the
    rack's four brokers end at best 17 and three of at least 28 (83 over 3): no plan of 1,500 moves has a worst
    topic spread under 11. The stage reaches it (from 15), with bytes within 1 % of the mean."""
    brokers, rows = reference_cluster()
    ctx = make_context(brokers, None, rows)
    plan = plan_balanced(rows, ctx)
    chosen = [b for b, _ in brokers]
    assert max(topic_spreads(plan, chosen).values()) == 15
    band = balance_bytes(rows, plan, ctx)
    assert moved(rows, plan)[0] == 1500 and not band.outside
    assert max(topic_spreads(plan, chosen).values()) == 11
    assert max(topic_spreads(plan, chosen, leaders=True).values()) <= 1
    held = bytes_per_broker(rows, plan, chosen)
    assert max(held) - min(held) < 0.02 * sum(held) / len(held)


def test_new_brokers_filled_to_the_band_at_near_the_lower_bound():
    """Three brokers, one just added, sizes far apart: the plan of the fewest moves gives the new broker its
    share of replicas but not of bytes; the stage swaps until every broker is within 5 %, and copies at most
    a quarter more than the lower bound."""
    rnd = random.Random(3)
    rows = [("t", p, (1 + p % 2, 2 - p % 2), int(rnd.lognormvariate(10, 1.5))) for p in range(60)]
    ctx = make_context([(1, None), (2, None), (3, None)], None, rows)
    plan = plan_balanced(rows, ctx)
    before_held = Counter()
    for _, _, current, size in rows:
        before_held.update(dict.fromkeys(current, size))
    band = balance_bytes(rows, plan, ctx, DEFAULT_TOLERANCE)
    held = bytes_per_broker(rows, plan, [1, 2, 3])
    assert not band.outside and all(band.low <= v <= band.high for v in held)
    bound = band_lower_bound(before_held, sum(held), [1, 2, 3], DEFAULT_TOLERANCE, False)
    assert bound <= moved(rows, plan)[1] <= 1.25 * bound


def test_a_replica_larger_than_the_band_is_named():
    """One partition holds 90 % of the bytes: its brokers cannot come within 5 %; the report says why."""
    rows = [("big", 0, (1,), 9_000)] + [("t", p, (1 + p % 3,), 10) for p in range(99)]
    ctx = make_context([(1, None), (2, None), (3, None)], None, rows)
    plan = plan_balanced(rows, ctx)
    band = balance_bytes(rows, plan, ctx)
    holder = next(b for b in plan[("big", 0)])
    assert [(o.broker, o.reason, o.largest) for o in band.outside if o.broker == holder] == [
        (holder, "large replica", 9_000)
    ]


def test_lower_bound():
    before = {1: 100, 2: 100, 3: 0}
    # mean 200/3; band 5 %: 63.33..70; the new broker lacks 63.33, the others hold 30 above each
    assert band_lower_bound(before, 200, [1, 2, 3], 0.05, False) == 63
    # broker 4 left out: 2 x 12.5 above the band and its 50 must leave (75), but broker 3 lacks 79.17
    assert band_lower_bound({1: 100, 2: 100, 3: 0, 4: 50}, 250, [1, 2, 3], 0.05, False) == 79
    assert band_lower_bound({1: 100, 2: 100, 3: 0, 4: 150}, 250, [1, 2, 3], 0.05, False) == 175  # now what leaves
    assert band_lower_bound(before, 200, [1, 2, 3], 0.05, True) == 63  # replicas dropped: only what is missing
    assert band_lower_bound({}, 0, [], 0.05, False) == 0
    # broker 3 left outside (it could not reach the band): only brokers 1 and 2, 30 above the band each
    assert band_lower_bound(before, 200, [1, 2, 3], 0.05, False, {3}) in (59, 60)  # 60, floored in floats


@pytest.mark.parametrize(
    ("value", "expected"), [(None, DEFAULT_TOLERANCE), ("5", 0.05), ("2.5%", 0.025), ("100", 1.0), ("none", None)]
)
def test_option_values(value, expected):
    assert parse_bytes_tolerance(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "101", "five", ""])
def test_option_bad_values(value):
    with pytest.raises(UsageError, match=f"Invalid --bytes-tolerance '{value}'"):
        parse_bytes_tolerance(value)


def test_json_report_and_text_report(two_topics, monkeypatch):
    """--output json carries the band and the lower bound (and validates against the schema); the text report
    says the band and the bytes copied against the lower bound."""
    from tests.schema_check import errors, load_schema
    from tests.unit.test_generate_balanced_cli import cli
    from tests.unit.test_move_budget import _generate

    path, topics = two_topics
    code, out, err = cli(_generate(path, topics, "--output", "json"), monkeypatch)
    assert code == 0, out
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    report = document["report"]
    band = report["bytes_band"]
    assert band["tolerance"] == 0.05 and band["low"] <= band["high"]
    assert report["bytes_lower_bound"] >= report["minimum_bytes_moved"]
    code, out, err = cli(_generate(path, topics), monkeypatch)
    assert code == 0
    assert "copied (lower bound " in err and "Bytes per broker: within 5% of the mean (" in err
    code, out, err = cli(_generate(path, topics, "--bytes-tolerance", "none", "--output", "json"), monkeypatch)
    assert code == 0 and "bytes_band" not in json.loads(out)["report"]


def test_option_needs_the_balanced_strategy_and_a_good_value_before_the_cluster_is_read(two_topics, monkeypatch):
    from tests.unit.test_generate_balanced_cli import cli

    path, topics = two_topics
    argv = ["--generate", "--cluster-snapshot-file", path, "--topics-to-move-json-file", topics, "--broker-list"]
    code, out, err = cli([*argv, "1,2,3,4", "--bytes-tolerance", "5"], monkeypatch)
    assert code == 1 and "--bytes-tolerance needs --strategy balanced" in out + err
    code, out, err = cli([*argv, "1,2,3,4", "--strategy", "balanced", "--bytes-tolerance", "0"], monkeypatch)
    assert (code, out) == (1, "") and "Invalid --bytes-tolerance '0'" in err  # a usage error: stderr only


def test_sizes_unknown_are_said_not_balanced(tmp_path, monkeypatch):
    """A snapshot without sizes (or a cluster that does not say them): the report says the bytes were not
    balanced, not a band of 0 B..1 B."""
    from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
    from tests.unit.test_generate_balanced_cli import cli

    partitions = tuple(SnapshotPartition(p, (1, 2), ("/d", "/d"), None) for p in range(6))
    brokers = tuple(SnapshotBroker(b, None, ("/d",)) for b in (1, 2, 3))
    path = tmp_path / "c.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"t": SnapshotTopic("t", partitions)}), str(path))
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"t"}]}')
    argv = ["--generate", "--cluster-snapshot-file", path, "--topics-to-move-json-file", topics]
    code, out, err = cli([*argv, "--broker-list", "1,2,3", "--strategy", "balanced"], monkeypatch)
    assert code == 0, out
    assert "Bytes per broker: the partitions' sizes are unknown (0 bytes): not balanced." in err
