"""Targets that follow what the racks allow (kreassign.planning.racklimits): a rack with one broker left holds
what it must, the other brokers even out among themselves. Checked against a brute-force search of every
placement's replica counts on small random rack layouts."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kreassign.planning.balanced.engine import plan_balanced, replicas_added
from kreassign.planning.context import make_context
from tests.unit.test_generate_balanced_cli import cli

RACK_OF = {1: "a", 2: "b", 3: "a", 4: "b"}
LAYOUT = [(3, 2), (4, 1), (1, 2), (1, 4), (2, 1), (3, 2), (1, 2), (2, 3), (1, 4), (3, 2), (3, 2), (4, 3)]


def test_draining_a_broker_of_the_smaller_rack_evens_out_the_other_rack():
    """The issue's case: racks a={1,3}, b={2,4}, RF 2, 12 partitions, broker 3 drained. Broker 1, the only
    rack-a broker left, must hold all 12; rack b's 12 split 6/6 (was 12/8/4), at the fewest moves: the 6
    replicas of broker 3, and 2 from broker 2 (8 before) to broker 4 (4 before)."""
    rows = [("t", p, replicas, 4 << 20) for p, replicas in enumerate(LAYOUT)]
    ctx = make_context([(b, RACK_OF[b]) for b in (1, 2, 4)], None, rows)
    plan = plan_balanced(rows, ctx)
    assert Counter(b for r in plan.values() for b in r) == {1: 12, 2: 6, 4: 6}
    assert all({RACK_OF[b] for b in r} == {"a", "b"} for r in plan.values())
    assert replicas_added({(t, p): r for t, p, r, _ in rows}, plan) == 8
    assert sorted(Counter(r[0] for r in plan.values()).values()) == [4, 4, 4]


def test_the_same_through_the_command_line_from_a_snapshot(tmp_path, monkeypatch):
    import json

    from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot

    partitions = tuple(SnapshotPartition(p, r, ("/d", "/d"), 4 << 20) for p, r in enumerate(LAYOUT))
    brokers = tuple(SnapshotBroker(b, f"rack-{RACK_OF[b]}", ("/d",)) for b in (1, 2, 3, 4))
    snapshot = tmp_path / "cluster.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(snapshot))
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"orders"}]}')
    argv = ["--generate", "--cluster-snapshot-file", snapshot, "--topics-to-move-json-file", topics]
    code, out, _ = cli([*argv, "--broker-list", "1,2,4", "--strategy", "balanced"], monkeypatch)
    assert code == 0, out
    proposal = json.loads(out.splitlines()[4])["partitions"]
    assert Counter(b for p in proposal for b in p["replicas"]) == {1: 12, 2: 6, 4: 6}


def reachable_counts(chosen: list[int], rack_of: dict[int, str], rf: int, partitions: int, cap: int) -> set:
    """Every replica count vector (over ``chosen``) some valid placement reaches: per partition, ``rf``
    distinct brokers, at most ``cap`` on a rack; brute force over partitions (a set of vectors after each)."""
    sets = [
        s for s in combinations(range(len(chosen)), rf) if max(Counter(rack_of[chosen[i]] for i in s).values()) <= cap
    ]
    reached = {(0,) * len(chosen)}
    for _ in range(partitions):
        reached = {tuple(v + (i in s) for i, v in enumerate(vector)) for vector in reached for s in sets}
    return reached


@st.composite
def layouts(draw):
    brokers = draw(st.integers(3, 6))
    racks = draw(st.integers(2, 3))
    rack_of = {b: f"r{draw(st.integers(0, racks - 1))}" for b in range(1, brokers + 1)}
    drained = draw(st.sets(st.sampled_from(sorted(rack_of)), max_size=2))
    chosen = [b for b in rack_of if b not in drained]
    rf = draw(st.integers(2, 3))
    assume(rf <= len(chosen) <= 5 and len({rack_of[b] for b in chosen}) >= 2)
    partitions = draw(st.integers(1, 12 if len(chosen) <= 4 else 8))
    seed = draw(st.integers(0, 10**6))
    return rack_of, chosen, rf, partitions, seed


def current_placement(rack_of: dict[int, str], rf: int, partitions: int, seed: int):
    """Partitions placed at random over all brokers, rack-aware as Kafka places them when racks allow."""
    rnd = random.Random(seed)
    rows = []
    for p in range(partitions):
        replicas: list[int] = []
        for b in rnd.sample(sorted(rack_of), len(rack_of)):
            if len(replicas) < rf and (rack_of[b] not in {rack_of[r] for r in replicas} or rnd.random() < 0.2):
                replicas.append(b)
        for b in sorted(rack_of):
            if len(replicas) < rf and b not in replicas:
                replicas.append(b)
        rows.append(("t", p, tuple(replicas), rnd.randint(1, 100)))
    return rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(layouts())
def test_the_plan_reaches_the_most_even_counts_the_racks_allow(layout):
    """Whenever a brute-force search finds counts within one of the most even the racks allow (the least sum
    of squares of any placement), the plan's counts are such counts: none is further than one from it."""
    rack_of, chosen, rf, partitions, seed = layout
    rows = current_placement(rack_of, rf, partitions, seed)
    ctx = make_context([(b, rack_of[b]) for b in chosen], rf, rows)
    plan = plan_balanced(rows, ctx)
    cap = ctx.rack_cap(rf)
    for replicas in plan.values():
        assert len(set(replicas)) == rf and max(Counter(rack_of[b] for b in replicas).values()) <= cap
    counts = Counter(b for r in plan.values() for b in r)
    got = tuple(counts.get(b, 0) for b in chosen)
    reached = reachable_counts(chosen, rack_of, rf, partitions, cap)
    assert got in reached
    best = min(sum(v * v for v in vector) for vector in reached)
    evenest = [vector for vector in reached if sum(v * v for v in vector) == best]
    assert any(all(abs(g - e) <= 1 for g, e in zip(got, vector, strict=True)) for vector in evenest)
    assert sum(v * v for v in got) == best, (got, evenest)
    # moves: those forced (replicas on drained brokers) plus what each broker keeps beyond its final count,
    # and at most two more (the chains' hops, as in test_balance)
    kept = Counter(b for _, _, replicas, _ in rows for b in replicas if b in chosen)
    forced = sum(b not in chosen for _, _, replicas, _ in rows for b in replicas)
    least = forced + sum(max(0, kept[b] - counts[b]) for b in chosen)
    assert least <= replicas_added({(t, p): r for t, p, r, _ in rows}, plan) <= least + 2
