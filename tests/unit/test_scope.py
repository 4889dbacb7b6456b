"""The bytes stage's scope on a large cluster (kreassign.planning.scope): the least even topics first, up to
a budget of replicas per broker; the other topics' totals count in every rule exactly as their partitions
would; a scoped stage (the bytes band, --move-budget) keeps every rule and moves no partition of a topic outside
its scope."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.planning import scope
from kreassign.planning.budget import MoveBudget, spend_move_budget
from kreassign.planning.bytebalance import balance_bytes
from kreassign.planning.planstate import PlanState
from tests.unit.test_balance import build, shapes
from tests.unit.test_move_budget import check_stage, planned_with_disks

UNLIMITED = MoveBudget(sys.maxsize, "bytes")


@contextmanager
def budget(per_broker: int):
    saved = scope.REPLICAS_PER_BROKER
    scope.REPLICAS_PER_BROKER = per_broker
    try:
        yield
    finally:
        scope.REPLICAS_PER_BROKER = saved


def test_the_least_even_topics_come_first_until_the_budget():
    # (replicas, replica spread, leader spread)
    stats = {"a": (6, 1, 1), "b": (6, 3, 0), "c": (6, 2, 2), "d": (6, 2, 1), "e": (6, 3, 0)}
    with budget(5):
        assert scope.scope_topics(stats, 2) == frozenset({"b", "e"})  # 12 replicas reach 10: no more
        assert scope.scope_topics(stats, 3) == frozenset({"b", "e", "c"})
    with budget(15):
        assert scope.scope_topics(stats, 2) is None  # 30 replicas fit: every topic


def test_the_rest_counts_as_its_partitions_would():
    rack_of, rows, chosen, new_rf = build(
        {"seed": 7, "racks": 3, "per_rack": 3, "extra_old": 0, "partitions": 60, "rf": 3, "remove": 1, "new_rf": None}
    )
    ctx, plan, capacities, other = planned_with_disks(rack_of, rows, chosen, new_rf, 7, True)
    inside, rest = scope.split_scope(rows, plan, frozenset({"t0"}))
    assert inside and {r[0] for r in inside} == {"t0"} and rest.partitions == len(rows) - len(inside)
    whole = PlanState(rows, plan, ctx, UNLIMITED, capacities, other, 0.8)
    part = PlanState(inside, plan, ctx, UNLIMITED, capacities, other, 0.8, rest)
    for name in ("count", "lead", "bytes", "used", "bounds", "floor", "ceil", "lfloor", "lceil", "total"):
        assert getattr(part, name) == getattr(whole, name), name
    assert {b: max((whole.size[p] for p in whole.on[b]), default=0) for b in ctx.brokers} == {
        b: max(max((part.size[p] for p in part.on[b]), default=0), rest.largest.get(b, 0)) for b in ctx.brokers
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.integers(0, 2**16), st.booleans(), st.integers(1, 6), st.sampled_from([None, 0, 3, 20]))
def test_a_scoped_stage_keeps_every_rule_and_moves_only_topics_in_scope(shape, seed, disks, per_broker, moves):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx, plan, capacities, other = planned_with_disks(rack_of, rows, chosen, new_rf, seed, disks)
    before = {key: list(replicas) for key, replicas in plan.items()}
    allowed = UNLIMITED if moves is None else MoveBudget(moves)
    with budget(per_broker):
        narrowed = scope.narrow(rows, plan, ctx.brokers)
        if moves is None:
            balance_bytes(rows, plan, ctx, 0.05, capacities, other, 0.8)
        else:  # --move-budget, on the same scope (the plan it gets is the one narrowed)
            spend_move_budget(rows, plan, ctx, allowed, capacities, other, 0.8)
    check_stage(rows, ctx, before, plan, allowed, capacities, other)
    if narrowed is not None:
        topics = {row[0] for row in narrowed[0]}
        assert all(plan[key] == before[key] for key in plan if key[0] not in topics)
