"""--move-budget (kreassign.planning.budget): extra moves never beyond the budget, every rule of the plan kept
(racks, replicas and leaders per broker within floor..ceil, disk bounds), no topic, leader or bytes spread
worse than the plan without a budget, the same plan whatever the order of the input; and the option itself."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.actions.balanced import parse_move_budget
from kreassign.errors import UsageError
from kreassign.humanize import parse_size
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.budget import MoveBudget, spend_move_budget
from kreassign.planning.capacity import disk_bounds, fit_disk_capacity
from kreassign.planning.context import make_context
from tests.shapes import reference_cluster
from tests.unit.test_balance import build, shapes
from tests.unit.test_generate_balanced_cli import cli


# ---- an independent checker ------------------------------------------------------------------------------
def moved(rows, plan):
    """Replicas (and bytes) in the plan that are not in the current assignment."""
    replicas = size = 0
    for t, p, current, bytes_ in rows:
        added = len(set(plan[(t, p)]) - set(current))
        replicas += added
        size += added * bytes_
    return replicas, size


def outside(value, low, high):
    return max(low - value, value - high, 0)


def topic_spreads(plan, chosen, leaders=False):
    per_topic: dict[str, Counter] = {}
    for (t, _), replicas in plan.items():
        per_topic.setdefault(t, Counter()).update(replicas[:1] if leaders else replicas)
    return {t: max(c.get(b, 0) for b in chosen) - min(c.get(b, 0) for b in chosen) for t, c in per_topic.items()}


def bytes_per_broker(rows, plan, chosen):
    held = Counter()
    for t, p, _, size in rows:
        held.update(dict.fromkeys(plan[(t, p)], size))
    return [held.get(b, 0) for b in chosen]


def std(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def check_stage(rows, ctx, before, after, budget, capacities=None, other=None, limit=0.8):
    """Every promise of the stage, between the plan it received (``before``) and the one it left."""
    chosen = list(ctx.brokers)
    assert sorted(after) == sorted(before)
    for key, replicas in after.items():
        assert len(replicas) == len(before[key]) and len(set(replicas)) == len(replicas)
        assert set(replicas) <= set(chosen)
        if list(replicas) != list(before[key]):
            per_rack = Counter(ctx.group(b) for b in replicas)
            assert max(per_rack.values()) <= ctx.rack_cap(len(replicas)), (key, replicas)
    # replicas and leaders per broker: within floor..ceil of the mean, or no further out than before
    for pick in (lambda r: r, lambda r: r[:1]):
        total = sum(len(pick(r)) for r in after.values())
        low, extra = divmod(total, len(chosen))
        high = low + (1 if extra else 0)
        counts = [Counter(b for r in plan.values() for b in pick(r)) for plan in (before, after)]
        for b in chosen:
            assert outside(counts[1][b], low, high) <= outside(counts[0][b], low, high), b
    # disk: no broker past its bound unless it already was and does not grow
    if capacities:
        used_now = Counter(other or {})
        for _, _, current, size in rows:
            used_now.update(dict.fromkeys(current, size))
        bounds = disk_bounds(used_now, capacities, chosen, limit)
        received = dict(zip(chosen, bytes_per_broker(rows, before, chosen), strict=True))
        for b, held in zip(chosen, bytes_per_broker(rows, after, chosen), strict=True):
            if b in bounds:
                used = held + (other or {}).get(b, 0)
                assert used <= bounds[b] or held <= received[b], (b, used, bounds[b])
    # the budget: replicas (bytes) moved beyond the plan received
    extra_replicas = moved(rows, after)[0] - moved(rows, before)[0]
    extra_bytes = moved(rows, after)[1] - moved(rows, before)[1]
    extra = extra_bytes if budget.unit == "bytes" else extra_replicas
    assert extra <= budget.amount
    # no topic's replicas or leaders, no bytes min, max or std worse
    for leaders in (False, True):
        old, new = topic_spreads(before, chosen, leaders), topic_spreads(after, chosen, leaders)
        assert all(new[t] <= old[t] for t in old), leaders
    old_bytes, new_bytes = bytes_per_broker(rows, before, chosen), bytes_per_broker(rows, after, chosen)
    assert max(new_bytes) <= max(old_bytes) and min(new_bytes) >= min(old_bytes)
    assert std(new_bytes) <= std(old_bytes) + 1e-6
    return extra_replicas, extra_bytes


def planned_with_disks(rack_of, rows, chosen, new_rf, seed, disks):
    """The context and balanced plan of a shape, and with ``disks`` random disks (some of unknown size) with
    some other bytes on them, the plan fitted to them: some brokers cannot take much."""
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    plan = plan_balanced(rows, ctx)
    capacities = other = None
    if disks:
        rnd = random.Random(seed)
        capacities = {b: rnd.choice([None, rnd.randint(1_000, 200_000)]) for b in chosen}
        other = {b: rnd.randint(0, 5_000) for b in chosen}
        fit_disk_capacity(rows, plan, ctx, capacities, other, 0.8)
    return ctx, plan, capacities, other


budgets = st.one_of(
    st.integers(0, 30).map(lambda n: MoveBudget(n, "replicas")),
    st.integers(0, 200_000).map(lambda n: MoveBudget(n, "bytes")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, budgets, st.integers(0, 2**16), st.booleans())
def test_extra_moves_keep_every_rule_and_never_exceed_the_budget(shape, budget, seed, disks):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx, plan, capacities, other = planned_with_disks(rack_of, rows, chosen, new_rf, seed, disks)
    before = {key: list(replicas) for key, replicas in plan.items()}
    use = spend_move_budget(rows, plan, ctx, budget, capacities, other, 0.8)
    extra_replicas, extra_bytes = check_stage(rows, ctx, before, plan, budget, capacities, other)
    assert (use.extra_replicas, use.extra_bytes) == (extra_replicas, extra_bytes)
    assert use.used == (extra_bytes if budget.unit == "bytes" else extra_replicas)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes)
def test_a_zero_budget_never_moves_more_replicas(shape):
    """With nothing to spend, only moves that cost nothing: the plan still moves the fewest replicas."""
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    plan = plan_balanced(rows, ctx)
    received = moved(rows, plan)[0]
    spend_move_budget(rows, plan, ctx, MoveBudget(0))
    assert moved(rows, plan)[0] <= received


def shuffled_twins(shape, rnd):
    """A shape's rows, context and balanced plan, and the same rows and plan in a random order (a stage after the
    engine must give the same plan from either)."""
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    plan = plan_balanced(rows, ctx)
    shuffled_rows = list(rows)
    rnd.shuffle(shuffled_rows)
    keys = list(plan)
    rnd.shuffle(keys)
    return rows, ctx, plan, shuffled_rows, {key: list(plan[key]) for key in keys}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, budgets, st.randoms(use_true_random=False))
def test_same_input_same_plan_whatever_the_order(shape, budget, rnd):
    rows, ctx, plan, shuffled_rows, shuffled_plan = shuffled_twins(shape, rnd)
    spend_move_budget(rows, plan, ctx, budget)
    spend_move_budget(shuffled_rows, shuffled_plan, ctx, budget)
    assert shuffled_plan == plan


def test_a_budget_evens_out_what_the_free_choices_cannot():
    """Replica counts already even (nothing must move), but topic a on brokers 1-2 and b on 3-4 only: each
    swap of a replica of a with one of b evens both topics out by one on each broker."""
    rows = [("a", p, (1 + p % 2, 2 - p % 2), 100) for p in range(8)]
    rows += [("b", p, (3 + p % 2, 4 - p % 2), 100) for p in range(8)]
    ctx = make_context([(1, None), (2, None), (3, None), (4, None)], None, rows)
    plan = plan_balanced(rows, ctx)
    assert moved(rows, plan) == (0, 0) and topic_spreads(plan, ctx.brokers) == {"a": 8, "b": 8}
    spreads = []
    for amount in (0, 4, 8, 16, 100):
        after = {key: list(replicas) for key, replicas in plan.items()}
        use = spend_move_budget(rows, after, ctx, MoveBudget(amount))
        check_stage(rows, ctx, plan, after, MoveBudget(amount))
        spreads.append(max(topic_spreads(after, ctx.brokers).values()))
        assert use.used <= amount
    assert spreads[0] == 8 and spreads == sorted(spreads, reverse=True) and spreads[-1] == 0
    after = {key: list(replicas) for key, replicas in plan.items()}
    spend_move_budget(rows, after, ctx, MoveBudget(1_000, "bytes"))  # 10 replicas' worth
    assert moved(rows, after)[1] <= 1_000 and max(topic_spreads(after, ctx.brokers).values()) < 8


def test_moving_a_replica_back_where_it_is_saves_budget():
    """The plan moved a replica of t from broker 1 to 3 (1 held too many): with brokers 1 and 3 even by
    count, the swap that puts it back costs one replica moved and saves one: free at a zero budget."""
    rows = [("t", 0, (1,), 50), ("t", 1, (1,), 50), ("u", 0, (3,), 50), ("u", 1, (3,), 50)]
    ctx = make_context([(1, None), (3, None)], None, rows)
    plan = {("t", 0): [3], ("t", 1): [1], ("u", 0): [1], ("u", 1): [3]}  # two moves, topics even
    before = {key: list(replicas) for key, replicas in plan.items()}
    use = spend_move_budget(rows, plan, ctx, MoveBudget(0))
    assert plan == before and use.used == 0  # nothing improves: nothing changes
    # topics uneven now (both of t on 3): the swap back (t-0 to 1, u-0 to 3) costs -2
    plan = {("t", 0): [3], ("t", 1): [3], ("u", 0): [1], ("u", 1): [1]}
    use = spend_move_budget(rows, plan, ctx, MoveBudget(0))
    assert use.used == -2 and use.extra_replicas == -2 and moved(rows, plan)[0] == 2
    assert topic_spreads(plan, ctx.brokers) == {"t": 0, "u": 0}


def test_reference_cluster_worst_topic_even_for_a_few_moves():
    """The issue's shape (12 brokers on 3 racks, 3 just added): the free choices leave the worst topic 15
    replicas apart (the racks force it); 50 extra replicas even out every topic and the bytes."""
    from kreassign.planning.quality import measure_plan

    brokers, rows = reference_cluster()
    ctx = make_context(brokers, None, rows)
    plan = plan_balanced(rows, ctx)
    before = {key: list(replicas) for key, replicas in plan.items()}
    use = spend_move_budget(rows, plan, ctx, MoveBudget(50))
    check_stage(rows, ctx, before, plan, MoveBudget(50))
    old, new = (measure_plan(rows, p, [b for b, _ in brokers]) for p in (before, plan))
    was, now = ({d.name: d.after for d in q.dimensions} for q in (old, new))
    assert was["topic_replica_spread"].max == 15 and now["topic_replica_spread"].max <= 3
    assert new.replicas_moved == old.replicas_moved + use.used <= 1550
    assert now["bytes"].max - now["bytes"].min < was["bytes"].max - was["bytes"].min
    assert new.score_after > old.score_after


# ---- the option ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("50GB", 50 * 10**9),
        ("1.5TiB", 3 * 2**39),
        ("512b", 512),
        (" 2 kib ", 2048),
        (".5KB", 500),
        ("0B", 0),
        ("200", None),
        ("-5GB", None),
        ("5XB", None),
        ("1e3GB", None),
        ("GB", None),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_parse_move_budget():
    assert parse_move_budget(None) is None
    assert parse_move_budget("200") == MoveBudget(200, "replicas")
    assert parse_move_budget("0") == MoveBudget(0, "replicas")
    assert parse_move_budget("50GB") == MoveBudget(50 * 10**9, "bytes")
    for bad in ("-3", "1.5", "²", "", "abc", "50 XB", "1e3"):
        with pytest.raises(UsageError, match="Invalid --move-budget"):
            parse_move_budget(bad)


def _generate(path, topics, *extra):
    return [
        "--generate",
        "--cluster-snapshot-file",
        path,
        "--topics-to-move-json-file",
        topics,
        "--broker-list",
        "1,2,3,4",
        "--strategy",
        "balanced",
        *extra,
    ]


def _worst_topic(report):
    return next(d for d in report["dimensions"] if d["name"] == "topic_replica_spread")["after"]["max"]


def test_generate_with_a_budget_evens_out_the_topics(two_topics, monkeypatch):
    from tests.schema_check import errors, load_schema

    path, topics = two_topics
    # the budget counts from the plan it receives: the bytes stage off, that plan moves nothing
    code, out, err = cli(_generate(path, topics, "--output", "json", "--bytes-tolerance", "none"), monkeypatch)
    assert code == 0, out
    report = json.loads(out)["report"]
    assert "move_budget" not in report and "Move budget" not in err and "bytes_band" not in report
    assert report["replicas_moved"] == 0 and _worst_topic(report) == 8
    code, out, err = cli(
        _generate(path, topics, "--output", "json", "--move-budget", "16", "--bytes-tolerance", "none"), monkeypatch
    )
    assert code == 0, out
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    report = document["report"]
    assert report["move_budget"]["unit"] == "replicas" and report["move_budget"]["allowed"] == 16
    assert report["move_budget"]["used"] == report["replicas_moved"] <= 16
    assert _worst_topic(report) == 0 and report["score"]["after"] > report["score"]["before"]
    assert "Move budget: 16 of 16 replica(s) used" in err
    racks = {1: "a", 2: "b", 3: "a", 4: "b"}
    for partition in document["proposed"]["partitions"]:
        assert {racks[b] for b in partition["replicas"]} == {"a", "b"}
    code, out, err = cli(_generate(path, topics, "--move-budget", "10KiB"), monkeypatch)
    assert code == 0 and "Move budget: " in err and "of 10.0 KiB used" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--move-budget", "12"], "--move-budget needs --strategy balanced\n"),
        (["--strategy", "balanced", "--move-budget", "-1"], "Invalid --move-budget '-1': expected a number"),
        (["--strategy", "balanced", "--move-budget", "5 parsecs"], "Invalid --move-budget '5 parsecs'"),
    ],
)
def test_misplaced_or_bad_budget_is_one_error_line(two_topics, monkeypatch, extra, message):
    """A usage error on stderr, like every bad value of kreassign's own options: the message, then where the
    list of options is; nothing on stdout."""
    path, topics = two_topics
    argv = _generate(path, topics)[:-2] + extra
    code, out, err = cli(argv, monkeypatch)
    assert code == 1 and out == "" and err.startswith(message), out + err
    assert "Traceback" not in err and err.strip().splitlines()[1:] == ["Run with --help for the list of options."]


def test_budget_is_not_an_option_of_other_actions(monkeypatch):
    code, out, err = cli(
        ["--execute", "--reassignment-json-file", "x", "--bootstrap-server", "h:1", "--move-budget", "3"], monkeypatch
    )
    assert code == 1 and 'Option "[move-budget]" can\'t be used with action "[execute]"' in out + err


def test_report_line_says_what_the_budget_bought():
    from kreassign.cli.render_plan_report import render_plan_report_text
    from kreassign.planning.budget import BudgetUse
    from kreassign.planning.quality import measure_plan

    rows = [("t", p, (1, 2), 100 * (p + 1)) for p in range(4)]
    plan = {("t", 0): [1, 3], ("t", 1): [2, 3], ("t", 2): [1, 2], ("t", 3): [2, 1]}
    uses = {
        BudgetUse(MoveBudget(10), 4, 4, 3 * 2**20, 6, 1): "Move budget: 4 of 10 replica(s) used (3.0 MiB more copied)",
        BudgetUse(MoveBudget(0), -1, -1, -2048, 2, 0): "Move budget: -1 of 0 replica(s) used (2.0 KiB less copied)",
        BudgetUse(MoveBudget(2**30, "bytes"), 2**29, 2, 2**29, 2, 0): (
            "Move budget: 512.0 MiB of 1.0 GiB used (2 more replica(s) moved)"
        ),
    }
    for use, line in uses.items():
        text = render_plan_report_text(measure_plan(rows, plan, [1, 2, 3], budget=use), "local")
        assert line + " beyond the plan without a budget." in text.splitlines()
    assert "Move budget" not in render_plan_report_text(measure_plan(rows, plan, [1, 2, 3]), "local")
