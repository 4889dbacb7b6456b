"""--generate --strategy leaders, --replace-broker and topic selection by pattern: the planners (properties) and
the command line on a snapshot (exact output and exit codes)."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kreassign.cli.app as app
from kreassign.cli.app import run
from kreassign.model import TopicPartition
from kreassign.planning.leaders import plan_leaders
from kreassign.planning.quality import measure_plan
from kreassign.planning.replace import ReplaceError, parse_replacements, plan_replacement, rack_breaks
from kreassign.planning.steps import plan_partition, tier
from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot

# ---- the planners


@st.composite
def clusters(draw):
    """Small random clusters: 2-7 brokers, 1-4 topics of 1-12 partitions, replica sets of 1-3 distinct brokers
    (sometimes crowded on the first few brokers, so that not every balance is reachable)."""
    brokers = draw(st.integers(2, 7))
    rows = []
    for t in range(draw(st.integers(1, 4))):
        rf = draw(st.integers(1, min(3, brokers)))
        pool = list(range(1, brokers + 1))
        if draw(st.booleans()):
            pool = pool[: max(rf, draw(st.integers(1, brokers)))]
        for p in range(draw(st.integers(1, 12))):
            replicas = draw(st.permutations(pool))[:rf]
            rows.append((f"t{t}", p, tuple(replicas), draw(st.integers(0, 10_000))))
    return rows


def best_spread(rows):
    """The least max - min of leaders per broker any choice of leaders reaches (brute force), over the brokers
    holding a replica."""
    import itertools

    brokers = sorted({b for r in rows for b in r[2]})
    best = None
    for choice in itertools.product(*(r[2] for r in rows)):
        counts = Counter(choice)
        spread = max(counts[b] for b in brokers) - min(counts[b] for b in brokers)
        best = spread if best is None else min(best, spread)
    return best


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_leaders_copy_nothing_and_keep_every_replica_set(rows):
    plan = plan_leaders(rows)
    assert set(plan) == {(t, p) for t, p, _, _ in rows}
    for topic, partition, replicas, _ in rows:
        after = plan[(topic, partition)]
        assert sorted(after) == sorted(replicas)
        assert after[1:] == [r for r in replicas if r != after[0]]  # only the leader moved to the front
    quality = measure_plan(rows, plan, sorted({b for r in rows for b in r[2]}), minimum=(0, 0))
    assert quality.replicas_moved == 0 and quality.bytes_moved == 0
    assert plan == plan_leaders(list(rows))  # deterministic
    for topic, partition, replicas, _ in rows:  # the batched executor: one step that copies nothing, an election
        steps = plan_partition(TopicPartition(topic, partition), replicas, plan[(topic, partition)], 1)
        assert all(not step.adding and not step.removing and tier(step) == 0 for step in steps)
        assert len(steps) == (plan[(topic, partition)] != list(replicas))
        assert all(step.moves_leader for step in steps)


@settings(max_examples=150, deadline=None)
@given(clusters().filter(lambda rows: len(rows) <= 9))
def test_leaders_per_broker_as_even_as_any_choice(rows):
    """The leaders per broker spread as little as the brute-force best (so within one wherever that is
    reachable); each topic's leaders no less even than before."""
    plan = plan_leaders(rows)
    brokers = sorted({b for r in rows for b in r[2]})
    counts = Counter(plan[(t, p)][0] for t, p, _, _ in rows)
    assert max(counts[b] for b in brokers) - min(counts[b] for b in brokers) == best_spread(rows)


@settings(max_examples=150, deadline=None)
@given(clusters().filter(lambda rows: len({r[0] for r in rows}) == 1 and len(rows) <= 9))
def test_one_topic_leaders_as_even_as_any_choice(rows):
    """One topic: its leaders (which are the brokers' leaders) as even as the brute-force best. With several
    topics the brokers come first: a topic's leaders are as even as that leaves them (best effort)."""
    plan = plan_leaders(rows)
    brokers = sorted({b for r in rows for b in r[2]})
    counts = Counter(plan[(t, p)][0] for t, p, _, _ in rows)
    assert max(counts[b] for b in brokers) - min(counts[b] for b in brokers) == best_spread(rows)


def test_leaders_balanced_cluster_is_left_alone():
    rows = [("t", p, ((p % 3) + 1, ((p + 1) % 3) + 1), 5) for p in range(9)]
    plan = plan_leaders(rows)
    assert all(plan[("t", p)] == list(r) for _, p, r, _ in rows)


def test_leaders_skewed_cluster_within_one():
    rows = [("t", p, (1, 2, 3), 5) for p in range(10)] + [("u", p, (1, 3, 2), 5) for p in range(5)]
    plan = plan_leaders(rows)
    counts = Counter(v[0] for v in plan.values())
    assert sorted(counts.values()) == [5, 5, 5]
    assert sorted(Counter(plan[("t", p)][0] for p in range(10)).values()) == [3, 3, 4]


def test_leaders_on_a_12_broker_cluster():
    """20 topics x 100 partitions, RF 3 at random over 12 brokers, half the replica lists sorted (low ids lead):
    leaders per broker 67..357 before, within one after, and every topic's leaders within one too."""
    import random

    rng = random.Random(7)
    rows = []
    for t in range(20):
        for p in range(100):
            replicas = tuple(rng.sample(range(12), 3))
            rows.append((f"t{t}", p, tuple(sorted(replicas)) if rng.random() < 0.5 else replicas, 1))
    plan = plan_leaders(rows)
    counts = Counter(v[0] for v in plan.values())
    assert (min(counts.values()), max(counts.values())) == (166, 167)
    for t in range(20):
        mine = [r for r in rows if r[0] == f"t{t}"]
        held = {b for r in mine for b in r[2]}
        led = Counter(plan[(r[0], r[1])][0] for r in mine)
        assert max(led[b] for b in held) - min(led[b] for b in held) <= 1
    assert sum(plan[(t, p)][0] != r[0] for t, p, r, _ in rows) == 527  # of 2,000 (the brokers alone need 453)


@settings(max_examples=300, deadline=None)
@given(clusters(), st.data())
def test_replace_broker_moves_only_the_retired_brokers_replicas(rows, data):
    brokers = sorted({b for r in rows for b in r[2]})
    olds = data.draw(st.lists(st.sampled_from(brokers), unique=True, min_size=1, max_size=2))
    pairs = {old: 100 + i for i, old in enumerate(olds)}
    plan = plan_replacement(rows, pairs)
    moved = 0
    for topic, partition, replicas, _ in rows:
        after = plan[(topic, partition)]
        assert len(after) == len(replicas)
        for before_r, after_r in zip(replicas, after, strict=True):
            assert after_r == pairs.get(before_r, before_r)  # same place, only a retired broker's replica changes
        moved += sum(r in pairs for r in replicas)
    quality = measure_plan(rows, plan, brokers, minimum=(0, 0))
    assert quality.replicas_moved == moved


def test_replace_broker_refuses_a_partition_new_holds():
    rows = [("t", 0, (1, 2), 0), ("t", 1, (1, 3), 0)]
    with pytest.raises(ReplaceError, match=r"^Broker 3 already holds a replica of t-1 \(replicas \[1,3\]\)"):
        plan_replacement(rows, {1: 3})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1=1", "broker 1 would replace itself"),
        ("1=4,1=5", "broker 1 is replaced twice"),
        ("1=4,2=4", "broker 4 replaces two brokers"),
        ("1=4,4=5", "broker 4 is both replaced and replacing"),
        ("1-4", "expected OLD=NEW broker ids"),
        ("a=4", "expected OLD=NEW broker ids"),
        ("1=", "expected OLD=NEW broker ids"),
    ],
)
def test_replace_broker_pairs_errors(text, message):
    with pytest.raises(ReplaceError, match=message):
        parse_replacements(text)


def test_rack_breaks_counts_partitions_that_lose_the_rack_rule():
    rows = [("t", 0, (1, 2), 0), ("t", 1, (1, 3), 0), ("t", 2, (2, 3), 0)]
    racks = {1: "a", 2: "b", 3: "c", 4: "b"}
    (gap,) = rack_breaks(rows, {1: 4}, racks)
    assert (gap.old, gap.new, gap.old_rack, gap.new_rack, gap.partitions) == (1, 4, "a", "b", 1)


# ---- the command line, on a snapshot


@pytest.fixture
def snapshot_file(tmp_path):
    """Brokers 1-4 on racks a, b, c, b; broker 1 leads every partition of 'orders' (6 on 1,2,3) and 'audit'
    (3 on 1,2); '__consumer_offsets' 2 partitions; broker 4 holds nothing."""
    topics = {
        "orders": SnapshotTopic(
            "orders", tuple(SnapshotPartition(p, (1, 2, 3), ("/d",) * 3, 1000 * (p + 1)) for p in range(6))
        ),
        "audit": SnapshotTopic("audit", tuple(SnapshotPartition(p, (1, 2), ("/d",) * 2, 10) for p in range(3))),
        "__consumer_offsets": SnapshotTopic(
            "__consumer_offsets", tuple(SnapshotPartition(p, (1, 2, 3), ("/d",) * 3, 5) for p in range(2))
        ),
    }
    brokers = tuple(SnapshotBroker(b, r, ("/d",)) for b, r in ((1, "a"), (2, "b"), (3, "c"), (4, "b")))
    path = tmp_path / "cluster.jsonl"
    save_snapshot(ClusterSnapshot(brokers, topics), str(path))
    return path


@pytest.fixture
def topics_file(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text('{"version":1,"topics":[{"topic":"orders"},{"topic":"audit"}]}')
    return path


def cli(argv, monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    code = run([str(a) for a in argv], out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


def proposal_of(stdout: str) -> dict[tuple[str, int], list[int]]:
    lines = stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[3] == "Proposed partition reassignment configuration"
    return {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(lines[4])["partitions"]}


def test_cli_leaders_plan(snapshot_file, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--strategy", "leaders"], monkeypatch)
    assert code == 0, out
    plan = proposal_of(out)
    assert {k: sorted(v) for k, v in plan.items()} == {
        **{("orders", p): [1, 2, 3] for p in range(6)},
        **{("audit", p): [1, 2] for p in range(3)},
    }
    assert sorted(Counter(v[0] for v in plan.values()).values()) == [3, 3, 3]
    # broker 3 can lead only 'orders': three of its six, so 'orders' cannot be 2/2/2 with the brokers at 3/3/3
    assert Counter(plan[("orders", p)][0] for p in range(6))[3] == 3
    assert err.startswith(
        "Leadership plan (engine local): 0 replica(s) moved (minimum 0), 0 B of 61.6 KiB copied (lower bound 0 B), "
    )
    assert "leaders / broker" in err and "0..9 (std 4.2) -> 3..3 (std 0.0)" in err
    assert cli([*argv, "--strategy=leaders"], monkeypatch) == (code, out, err)


def test_cli_leaders_json(snapshot_file, topics_file, monkeypatch):
    from tests.schema_check import errors, load_schema

    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--strategy", "leaders", "--output", "json"], monkeypatch)
    assert code == 0, out
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    report = document["report"]
    assert (report["strategy"], report["replicas_moved"], report["bytes_moved"]) == ("leaders", 0, 0)
    assert report["leaders_changed"] == 6
    assert err.startswith("Leadership plan")


def test_cli_replace_broker(snapshot_file, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--replace-broker", "2=4", "--output", "json"], monkeypatch)
    assert code == 0, out
    document = json.loads(out)
    plan = {(p["topic"], p["partition"]): p["replicas"] for p in document["proposed"]["partitions"]}
    assert plan == {**{("orders", p): [1, 4, 3] for p in range(6)}, **{("audit", p): [1, 4] for p in range(3)}}
    report = document["report"]
    assert report["strategy"] == "replace-broker"
    assert report["replicas_moved"] == report["minimum_replicas_moved"] == 9
    assert err.startswith("Broker replacement (engine local): 9 replica(s) moved (minimum 9)")
    assert "replaces broker" not in err  # no rack warning
    # broker 2 holds __consumer_offsets too, which the listed topics leave where it is
    assert "Warning: broker 2 keeps 2 replica(s) of topics this plan does not move (__consumer_offsets: 2)" in err
    assert report["brokers"][1]["replicas_not_planned"] == {"__consumer_offsets": 2}


def test_cli_replace_broker_rack_warning(snapshot_file, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--replace-broker", "3=4"], monkeypatch)
    assert code == 0, out
    assert err.splitlines()[0] == (
        "Warning: broker 4 (rack b) replaces broker 3 (rack c): 6 partition(s) get two replicas in rack b."
    )


HELP = "Run with --help for the list of options.\n"


@pytest.mark.parametrize(
    ("extra", "stdout", "stderr"),
    [
        (
            ["--replace-broker", "1=3"],
            "Error: Broker 3 already holds a replica of orders-0 (replicas [1,2,3]), so it cannot take broker 1's; "
            "no plan was written.\n",
            "",
        ),
        (["--replace-broker", "2=2"], "", "Invalid --replace-broker '2=2': broker 2 would replace itself\n" + HELP),
        (
            ["--replace-broker", "2=4,2=5"],
            "",
            "Invalid --replace-broker '2=4,2=5': broker 2 is replaced twice\n" + HELP,
        ),
        (
            ["--replace-broker", "2=4", "--strategy", "leaders"],
            "",
            "--replace-broker is a plan of its own: don't give --strategy with it\n" + HELP,
        ),
        (
            ["--strategy", "leaders", "--broker-list", "1,2"],
            "",
            "--broker-list can't be used with --strategy leaders (replica sets do not change)\n" + HELP,
        ),
        (
            ["--replace-broker", "2=4", "--move-budget", "3"],
            "",
            "--move-budget can't be used with --replace-broker\n" + HELP,
        ),
        (
            ["--strategy", "best", "--broker-list", "1,2"],
            "",
            "Invalid value 'best' for --strategy: expected one of apache, balanced, leaders\n" + HELP,
        ),
    ],
    ids=["new-holds", "same", "twice", "with-strategy", "leaders-broker-list", "replace-budget", "strategy"],
)
def test_cli_plan_errors(snapshot_file, topics_file, monkeypatch, extra, stdout, stderr):
    """A plan that cannot be made: one Error: line on stdout; a bad option: the usage error on stderr. Exit 1,
    no plan printed."""
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    assert cli([*argv, *extra], monkeypatch) == (1, stdout, stderr)


def test_cli_replace_broker_unknown_new_on_a_snapshot_warns(snapshot_file, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--replace-broker", "2=9"], monkeypatch)
    assert code == 0, out
    assert err.splitlines()[0] == "Warning: broker 9 is not in the snapshot; its rack is unknown."


def test_cli_topics_regex(snapshot_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--strategy", "leaders"]
    code, out, _ = cli([*argv, "--topics-regex", ".*"], monkeypatch)
    assert code == 0, out
    assert {t for t, _ in proposal_of(out)} == {"orders", "audit"}  # internal topics only when named
    code, out, _ = cli([*argv, "--topics-regex", "__.*|audit"], monkeypatch)
    assert {t for t, _ in proposal_of(out)} == {"__consumer_offsets", "audit"}
    code, out, err = cli([*argv, "--topics-regex", "ord"], monkeypatch)  # a full match, not a search
    assert (code, out) == (1, "Error: --topics-regex 'ord' matches no topic of the cluster\n")
    assert err == (
        "kreassign: --topics-regex must match the whole topic name; 'ord' is found inside orders: to take every "
        "topic that contains it, write '.*ord.*'\n"
    )
    code, out, err = cli([*argv, "--topics-regex", "nothing"], monkeypatch)
    assert (code, err) == (1, "")
    code, out, _ = cli([*argv, "--topics-regex", ".*", "--exclude-topics", "aud.*"], monkeypatch)
    assert {t for t, _ in proposal_of(out)} == {"orders"}


def test_cli_exclude_topics_with_the_topics_file_and_the_apache_strategy(snapshot_file, topics_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-to-move-json-file", topics_file]
    code, out, err = cli([*argv, "--broker-list", "1,2,3", "--exclude-topics", "orders", "--seed", "1"], monkeypatch)
    assert (code, err) == (0, "")
    assert {t for t, _ in proposal_of(out)} == {"audit"}
    code, out, _ = cli([*argv, "--broker-list", "1,2,3", "--exclude-topics", "orders|audit"], monkeypatch)
    assert (code, out) == (1, "Error: --exclude-topics 'orders|audit' leaves no topic to plan\n")


def test_cli_topics_regex_with_apache_strategy_still_needs_broker_list(snapshot_file, monkeypatch):
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--topics-regex", "orders"]
    assert cli(argv, monkeypatch) == (
        1,
        "",
        'Missing required argument "[broker-list]"\nRun with --help for the list of options.\n',
    )
    code, out, err = cli([*argv, "--broker-list", "1,2,3", "--seed", "3"], monkeypatch)
    assert (code, err) == (0, "")
    assert {t for t, _ in proposal_of(out)} == {"orders"}


def test_cli_topic_selection_usage_errors(snapshot_file, topics_file, monkeypatch):
    """The missing topics name --topics-regex too on a kreassign command line (was the topics file alone)."""
    argv = ["--generate", "--cluster-snapshot-file", snapshot_file, "--strategy", "leaders"]
    missing = 'Missing required argument "[topics-to-move-json-file]" or --topics-regex REGEX\n' + HELP
    assert cli(argv, monkeypatch) == (1, "", missing)
    assert cli(["--bootstrap-server", "h:1", "--generate", "--replace-broker", "3=4"], monkeypatch) == (1, "", missing)
    apache = ["--bootstrap-server", "h:1", "--generate", "--broker-list", "1,2"]  # Apache's words, alone
    assert cli(apache, monkeypatch) == (1, "", 'Missing required argument "[topics-to-move-json-file]"\n' + HELP)
    assert cli([*argv, "--topics-regex", "a", "--topics-to-move-json-file", topics_file], monkeypatch) == (
        1,
        "",
        "--topics-regex and --topics-to-move-json-file are alternatives: give one\n"
        "Run with --help for the list of options.\n",
    )
    assert cli([*argv, "--topics-regex", "("], monkeypatch) == (
        1,
        "",
        "Invalid --topics-regex '(': missing ), unterminated subpattern at position 0\n" + HELP,
    )
