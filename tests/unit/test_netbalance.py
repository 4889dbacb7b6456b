"""The traffic goals of the balanced plan (kreassign.planning.netbalance): with rates known, the hard goals (rack
rule, replicas and leaders per broker, the bytes band, the disks) still hold and the traffic never ends further
from its band; leaderships first (nothing copied); the same plan whatever the order; the report and the options
through the command line; without rates nothing changes."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.bytebalance import balance_bytes, band_of
from kreassign.planning.capacity import disk_bounds
from kreassign.planning.context import make_context
from kreassign.planning.netbalance import (
    TrafficBalance,
    balance_leadership_traffic,
    balance_traffic,
    broker_traffic,
)
from kreassign.planning.pipeline import STAGES
from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.unit.test_balance import build, shapes
from tests.unit.test_generate_balanced_cli import cli
from tests.unit.test_move_budget import bytes_per_broker, outside, planned_with_disks


def random_rates(rows, seed: int) -> dict[tuple[str, int], tuple[float, float]]:
    """Write rates by a Zipf-like law over the partitions, reads on a few of them."""
    rnd = random.Random(seed)
    rates = {}
    for rank, (t, p, _, _) in enumerate(sorted(rows, key=lambda r: rnd.random()), start=1):
        write = 1_000_000 / rank ** rnd.choice([0.5, 1.0])
        rates[(t, p)] = (write, write * rnd.choice([0, 0, 1, 3]))
    return rates


def violation(traffic: TrafficBalance, after: bool) -> float:
    """Sum over brokers of how far bytes in and out are outside the band, each over its mean."""
    total = 0.0
    for side in ("in", "out"):
        values = [getattr(traffic, f"{side}_{'after' if after else 'before'}").get(b, 0.0) for b in traffic.brokers]
        mean = sum(values) / len(values)
        if mean:
            low, high = mean * (1 - traffic.tolerance), mean * (1 + traffic.tolerance)
            total += sum(max(0.0, low - v, v - high) for v in values) / mean
    return total


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.integers(0, 2**16), st.booleans(), st.sampled_from([0.05, 0.1, 0.3]), st.sampled_from([None, 0.05]))
def test_traffic_goals_keep_the_hard_goals_and_the_bytes_band(shape, seed, disks, tolerance, bytes_tolerance):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx, plan, capacities, other = planned_with_disks(rack_of, rows, chosen, new_rf, seed, disks)
    if bytes_tolerance is not None:
        balance_bytes(rows, plan, ctx, bytes_tolerance, capacities, other, 0.8)
    before = {key: list(replicas) for key, replicas in plan.items()}
    rates = random_rates(rows, seed)
    # the plan before the stage, as the stage measures it
    into, out = broker_traffic(before.items(), rates)
    received = TrafficBalance(tolerance, ctx.brokers, {}, into, {}, out)
    done = balance_traffic(rows, plan, ctx, rates, tolerance, capacities, other, 0.8, bytes_tolerance)
    # every partition keeps its number of distinct replicas, on chosen brokers, the rack rule where it changed
    assert sorted(plan) == sorted(before)
    for key, replicas in plan.items():
        assert len(replicas) == len(before[key]) == len(set(replicas)) and set(replicas) <= set(chosen)
        if replicas != before[key]:
            assert max(Counter(ctx.group(b) for b in replicas).values()) <= ctx.rack_cap(len(replicas))
    # replicas and leaders per broker: within floor..ceil of the mean, or no further out than the plan received
    for pick in (lambda r: r, lambda r: r[:1]):
        total = sum(len(pick(r)) for r in plan.values())
        low, extra = divmod(total, len(chosen))
        high = low + (1 if extra else 0)
        counts = [Counter(b for r in p.values() for b in pick(r)) for p in (before, plan)]
        assert all(outside(counts[1][b], low, high) <= outside(counts[0][b], low, high) for b in chosen)
    # the bytes band: a broker inside it stays inside, one outside keeps its bytes; disks never past a bound
    held_before, held_after = bytes_per_broker(rows, before, chosen), bytes_per_broker(rows, plan, chosen)
    if bytes_tolerance is not None:
        _, low, high = band_of(sum(held_before), len(chosen), bytes_tolerance)
        for was, now in zip(held_before, held_after, strict=True):
            assert (low <= now <= high) if low <= was <= high else now == was
    if capacities:
        used_now = Counter(other)
        for _, _, current, size in rows:
            used_now.update(dict.fromkeys(current, size))
        bounds = disk_bounds(used_now, capacities, chosen, 0.8)
        for b, was, now in zip(chosen, held_before, held_after, strict=True):
            assert b not in bounds or now + other[b] <= bounds[b] or now <= was
    # the traffic it reports is the plan's, and it never ends further from the band than the plan it received
    into, out = broker_traffic(plan.items(), rates)
    for b in chosen:
        assert done.in_after[b] == pytest.approx(into.get(b, 0.0), rel=1e-9, abs=1e-6)
        assert done.out_after[b] == pytest.approx(out.get(b, 0.0), rel=1e-9, abs=1e-6)
    assert violation(done, True) <= violation(received, True) + 1e-9
    # leaderships alone copy nothing: the bytes copied are those of the replica swaps
    if done.replica_moves == 0:
        assert done.extra_bytes == 0 and held_after == held_before


@settings(max_examples=100, deadline=None)
@given(shapes, st.integers(0, 2**16), st.randoms(use_true_random=False))
def test_same_plan_whatever_the_order_of_the_rows(shape, seed, rnd):
    rack_of, rows, chosen, new_rf = build(shape)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    rates = random_rates(rows, seed)
    plans = []
    for ordered in (rows, rnd.sample(rows, len(rows))):
        plan = plan_balanced(ordered, ctx)
        balance_traffic(ordered, plan, ctx, rates, 0.1)
        plans.append(plan)
    assert plans[0] == plans[1]


def test_one_broker_leading_every_hot_partition_hands_leaderships_over_and_copies_nothing():
    """Broker 1 leads the hot partitions, 2 and 3 follow them and lead the cold ones: leaderships change in
    cycles (counts kept: 2 leaders each), bytes out end within 10 %, no replica moves."""
    rows = [("hot", p, (1, 2, 3), 100) for p in range(2)] + [
        ("cold", p, (2 + p % 2, 1, 3 - p % 2), 100) for p in range(4)
    ]
    ctx = make_context([(1, None), (2, None), (3, None)], None, rows)
    plan = {(t, p): list(r) for t, p, r, _ in rows}
    rates = {("hot", p): (1000.0, 1000.0) for p in range(2)} | {("cold", p): (1.0, 0.0) for p in range(4)}
    done = balance_traffic(rows, plan, ctx, rates, 0.1)
    assert done.replica_moves == 0 and done.extra_bytes == 0 and done.leader_moves > 0
    assert Counter(r[0] for r in plan.values()) == Counter({1: 2, 2: 2, 3: 2})
    assert all(sorted(plan[(t, p)]) == sorted(r) for t, p, r, _ in rows)
    assert done.spread("out") < done.spread("out", after=False)


def test_leaders_strategy_with_rates_keeps_replica_sets_and_counts():
    from kreassign.planning.leaders import plan_leaders

    rows = [("t", p, (1 + p % 4, 1 + (p + 1) % 4, 1 + (p + 2) % 4), 10) for p in range(16)]
    rates = {("t", p): (1000.0 if p % 4 == 0 else 10.0, 3000.0 if p % 8 == 0 else 0.0) for p in range(16)}
    plan = plan_leaders(rows)
    before = {k: list(v) for k, v in plan.items()}
    done = balance_leadership_traffic(rows, plan, [1, 2, 3, 4], rates, 0.1)
    assert all(sorted(plan[k]) == sorted(before[k]) for k in plan)
    assert done.replica_moves == 0 and done.extra_bytes == 0
    counted = TrafficBalance(0.1, (1, 2, 3, 4), {}, {}, {}, broker_traffic(before.items(), rates)[1])
    assert done.spread("out") < counted.spread("out")
    assert Counter(r[0] for r in plan.values()) == Counter(r[0] for r in before.values())


def test_the_traffic_stage_is_an_entry_of_the_pipeline_after_the_hard_goals():
    names = [stage.name for stage in STAGES]
    assert names.index("traffic") > max(names.index(n) for n in ("disk capacity", "bytes band", "move budget"))


# ---- the command line -----------------------------------------------------------------------------------------
def write_snapshot(path, rated: bool):
    """4 brokers, racks a/b; topic 'hot' led by broker 1 (written fast and read), 'cold' spread."""
    partitions = {}
    for topic, count in (("hot", 4), ("cold", 8)):
        parts = []
        for p in range(count):
            replicas = (1, 2) if topic == "hot" else (1 + p % 4, 1 + (p + 1) % 4)
            rates = (5e6 if topic == "hot" else 1e4, 1e7 if topic == "hot" else 0.0) if rated else (None, None)
            parts.append(SnapshotPartition(p, replicas, ("/d",) * 2, 1000 + 10 * p, replicas[0], (), *rates))
        partitions[topic] = SnapshotTopic(topic, tuple(parts), 1)
    brokers = tuple(SnapshotBroker(b, "a" if b % 2 else "b", ("/d",)) for b in range(1, 5))
    save_snapshot(ClusterSnapshot(brokers, partitions), str(path))
    return path


def generate_argv(snapshot, topics, *extra):
    return [
        "--generate",
        "--cluster-snapshot-file",
        snapshot,
        "--topics-to-move-json-file",
        topics,
        "--broker-list",
        "1,2,3,4",
        *extra,
    ]


@pytest.fixture
def topics(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text('{"version":1,"topics":[{"topic":"hot"},{"topic":"cold"}]}')
    return path


def test_report_shows_bytes_in_and_out_only_when_rates_are_known(tmp_path, topics, monkeypatch):
    rated = write_snapshot(tmp_path / "rated.jsonl", True)
    plain = write_snapshot(tmp_path / "plain.jsonl", False)
    code, out, err = cli(generate_argv(rated, topics, "--strategy", "balanced"), monkeypatch)
    assert code == 0, err
    assert "Bytes in per broker: " in err and "Bytes out per broker: " in err and "Traffic: " in err
    assert "in /s" in err and "out /s" in err
    code, plain_out, plain_err = cli(generate_argv(plain, topics, "--strategy", "balanced"), monkeypatch)
    assert code == 0 and "Bytes in per broker" not in plain_err and "Traffic:" not in plain_err
    assert out.splitlines()[0] == plain_out.splitlines()[0] == "Current partition replica assignment"


def test_json_report_carries_the_traffic_and_the_per_broker_rates(tmp_path, topics, monkeypatch):
    from tests.schema_check import errors, load_schema

    rated = write_snapshot(tmp_path / "rated.jsonl", True)
    argv = generate_argv(rated, topics, "--strategy", "balanced", "--output", "json", "--traffic-tolerance", "20")
    code, out, _ = cli(argv, monkeypatch)
    assert code == 0
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    traffic = document["report"]["traffic"]
    assert traffic["tolerance"] == 0.2 and traffic["out_spread_after"] <= traffic["out_spread_before"]
    brokers = document["report"]["brokers"]
    assert sum(b["bytes_in_per_s_before"] for b in brokers) == pytest.approx(4 * 2 * 5e6 + 8 * 2 * 1e4)
    assert sum(b["bytes_in_per_s_after"] for b in brokers) == pytest.approx(4 * 2 * 5e6 + 8 * 2 * 1e4)
    assert sum(b["bytes_out_per_s_after"] for b in brokers) == pytest.approx(4 * (1e7 + 5e6) + 8 * 1e4, rel=1e-6)
    code, plain, _ = cli(
        generate_argv(
            write_snapshot(tmp_path / "p.jsonl", False), topics, "--strategy", "balanced", "--output", "json"
        ),
        monkeypatch,
    )
    report = json.loads(plain)["report"]
    assert "traffic" not in report and "bytes_in_per_s_after" not in report["brokers"][0]


def test_leaders_strategy_balances_bytes_out_when_rates_are_known(tmp_path, topics, monkeypatch):
    rated = write_snapshot(tmp_path / "rated.jsonl", True)
    argv = [a for a in generate_argv(rated, topics, "--strategy", "leaders") if a not in ("--broker-list", "1,2,3,4")]
    code, _, err = cli(argv, monkeypatch)
    assert code == 0, err
    assert "Bytes out per broker: " in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--strategy", "balanced", "--traffic-tolerance", "0"), "Invalid --traffic-tolerance '0'"),
        (("--traffic-tolerance", "10"), "--traffic-tolerance needs --strategy balanced or --strategy leaders"),
        (("--strategy", "balanced", "--sample-rates", "5"), "--generate --sample-rates samples a live cluster"),
        (("--replace-broker", "1=4", "--traffic-tolerance", "10"), "--traffic-tolerance can't be used with"),
    ],
)
def test_option_errors_are_one_line(tmp_path, topics, monkeypatch, extra, message):
    rated = write_snapshot(tmp_path / "rated.jsonl", True)
    argv = generate_argv(rated, topics, *extra)
    if "--replace-broker" in extra:
        argv.remove("--broker-list")
        argv.remove("1,2,3,4")
    code, out, err = cli(argv, monkeypatch)
    assert code == 1 and out == ""
    assert message in err and "Traceback" not in err


def test_generate_samples_the_live_cluster_with_sample_rates(monkeypatch):
    """``--generate --strategy balanced --sample-rates`` on a live cluster (the simulated one here): the rates
    come from kreassign.execution.sampling.sample_rates over the window, and the traffic stage plans with them;
    without the option no rate is read and the plan is the bytes-only one."""
    from functools import partial

    import kreassign.execution.sampling as traffic
    from kreassign.actions.balanced import generate_balanced
    from kreassign.cluster.simulated import SimulatedCluster
    from kreassign.model import Broker, TopicPartition
    from kreassign.planning.pipeline import BalanceRequest
    from tests.unit.test_traffic import _writing

    sim = SimulatedCluster([Broker(b, rack="a" if b % 2 else "b") for b in range(1, 5)])
    sim.add_topic("hot", [(1, 2)] * 4, size=100_000, messages=1000)
    sim.add_topic("cold", [(3, 4), (4, 3)] * 4, size=100_000, messages=1000)
    hot = [TopicPartition("hot", p) for p in range(4)]
    windows = []

    def sampled(port, partitions, window_s, **_):
        windows.append(window_s)
        return traffic_sample(port, partitions, window_s, sleep=_writing(sim, dict.fromkeys(hot, 1_000_000)))

    traffic_sample = partial(traffic.sample_rates, clock=sim.clock)
    monkeypatch.setattr(traffic, "sample_rates", sampled)
    topics = '{"version":1,"topics":[{"topic":"hot"},{"topic":"cold"}]}'
    printed: list[str] = []
    _, quality, _ = generate_balanced(sim, BalanceRequest(topics, "1,2,3,4", sample_rates=3), printed.append)
    assert windows == [3] and quality.traffic is not None
    assert quality.traffic.in_before[1] == pytest.approx(4_000_000)  # broker 1 holds every hot partition
    assert quality.traffic.out_before[1] == pytest.approx(4_000_000)  # and leads them: one follower each
    assert quality.traffic.spread("out") < quality.traffic.spread("out", after=False)
    _, plain, _ = generate_balanced(sim, BalanceRequest(topics, "1,2,3,4"), printed.append)
    assert windows == [3] and plain.traffic is None
