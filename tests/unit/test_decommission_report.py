"""The decommission recipe of the README on a snapshot: --topics-regex '.*' skips Kafka's internal topics, so
the report says what the leaving broker keeps (its line, and a warning), and the recipe's '.*|__.*' moves them
too."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.schema_check import errors, load_schema
from tests.unit.test_generate_balanced_cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def leaving_broker_snapshot(path: Path) -> Path:
    """Brokers 1-4 on racks a/b; 'orders' (RF 2) and __consumer_offsets (RF 3, 3 partitions) on all four."""
    layouts = {"orders": [(1, 2), (3, 4), (2, 3), (4, 1)] * 2, "__consumer_offsets": [(1, 4, 2), (4, 3, 2), (3, 4, 1)]}
    topics = {
        name: SnapshotTopic(name, tuple(SnapshotPartition(p, r, ("/d",) * len(r), 1000) for p, r in enumerate(rows)))
        for name, rows in layouts.items()
    }
    snapshot = path / "cluster.jsonl"
    brokers = tuple(SnapshotBroker(b, "ab"[(b - 1) % 2], ("/d",)) for b in (1, 2, 3, 4))
    save_snapshot(ClusterSnapshot(brokers, topics), str(snapshot))
    return snapshot


def recipe_regex() -> str:
    """The --topics-regex of the README's decommission recipe."""
    section = README.read_text(encoding="utf-8").split("### Decommission a broker", 1)[1].split("\n### ", 1)[0]
    return re.search(r"--topics-regex '([^']*)'", section).group(1)


def decommission(snapshot: Path, regex: str, monkeypatch, *extra: str):
    argv = ["--cluster-snapshot-file", snapshot, "--generate", "--strategy", "balanced", "--topics-regex", regex]
    return cli([*argv, "--broker-list", "1,2,3", *extra], monkeypatch)


def test_a_leaving_broker_that_keeps_internal_replicas_is_named_on_its_line_and_warned_about(tmp_path, monkeypatch):
    """'.*' (the recipe before): broker 4 ends at 0 of the planned replicas but keeps 3 of __consumer_offsets;
    its line says so, and a warning says what stopping it would do (was: `4  4 -> 0 ... (removed)`, nothing
    else)."""
    code, _, err = decommission(leaving_broker_snapshot(tmp_path), ".*", monkeypatch)
    assert code == 0, err
    lines = err.splitlines()
    assert (
        "Warning: broker 4 keeps 3 replica(s) of topics this plan does not move (__consumer_offsets: 3); stopping "
        "it would leave those under-replicated: plan them too (--topics-regex '.*|__.*' takes Kafka's internal "
        "topics as well)." in lines
    )
    row = next(line for line in lines if line.split()[:1] == ["4"])
    assert row.split()[1:4] == ["4", "->", "0"] and row.endswith("(removed; keeps 3 not planned)")


def test_the_json_report_counts_what_stays(tmp_path, monkeypatch):
    code, out, _ = decommission(leaving_broker_snapshot(tmp_path), ".*", monkeypatch, "--output", "json")
    assert code == 0, out
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    brokers = {b["broker"]: b for b in document["report"]["brokers"]}
    assert brokers[4]["replicas_after"] == 0 and brokers[4]["replicas_not_planned"] == {"__consumer_offsets": 3}
    assert all("replicas_not_planned" not in brokers[b] for b in (1, 2, 3))


def test_the_readme_recipe_moves_internal_topics_too(tmp_path, monkeypatch):
    """The README's --topics-regex takes __consumer_offsets: the plan moves its replicas off broker 4, which
    then keeps nothing; no warning."""
    regex = recipe_regex()
    assert re.fullmatch(regex, "__consumer_offsets") and "__" in regex
    code, out, err = decommission(leaving_broker_snapshot(tmp_path), regex, monkeypatch)
    assert code == 0, err
    assert "Warning" not in err
    row = next(line for line in err.splitlines() if line.split()[:1] == ["4"])
    assert row.split()[1:4] == ["7", "->", "0"] and row.endswith("(removed)")
    proposed = json.loads(out.splitlines()[4])["partitions"]
    assert {p["topic"] for p in proposed} == {"orders", "__consumer_offsets"}
    assert all(4 not in p["replicas"] for p in proposed)


def test_a_replaced_broker_that_keeps_replicas_of_other_topics_is_warned_about(tmp_path, monkeypatch):
    snapshot = leaving_broker_snapshot(tmp_path)
    argv = ["--cluster-snapshot-file", snapshot, "--generate", "--replace-broker", "4=5", "--topics-regex", "orders"]
    code, _, err = cli(argv, monkeypatch)
    assert code == 0, err
    assert "Warning: broker 4 keeps 3 replica(s) of topics this plan does not move (__consumer_offsets: 3)" in err
