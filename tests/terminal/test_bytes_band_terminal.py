"""The bytes band at a real terminal (a pseudo-terminal rendered by pyte): `--generate --strategy balanced` on a
cluster with a partition larger than the band says at 80 columns which broker stays outside and why, every word
on the screen (wrapped, never cut), and the plan it prints puts every other broker within the band."""

from __future__ import annotations

import json
import re

import pytest

from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.terminal.screen import Terminal

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def lopsided(tmp_path_factory):
    """Brokers 1-3 hold everything, broker 4 was just added; one partition of 'big' is larger than the mean bytes per broker."""
    path = tmp_path_factory.mktemp("band")
    small = tuple(
        SnapshotPartition(p, (1 + p % 3, 1 + (p + 1) % 3), ("/d", "/d"), 1_000_000 * (1 + p % 7)) for p in range(300)
    )
    share = sum(p.size_bytes * 2 for p in small) // 4
    big = (SnapshotPartition(0, (1, 2), ("/d", "/d"), share * 3),)  # more than the mean bytes per broker
    brokers = tuple(SnapshotBroker(b, None, ("/d",)) for b in (1, 2, 3, 4))
    topics = {"orders": SnapshotTopic("orders", small), "big": SnapshotTopic("big", big)}
    save_snapshot(ClusterSnapshot(brokers, topics), str(path / "c.jsonl"))
    (path / "topics.json").write_text('{"version":1,"topics":[{"topic":"orders"},{"topic":"big"}]}')
    return path


@pytest.mark.parametrize("cols", [80, 140])
def test_the_band_and_the_broker_left_outside_at_the_terminal(lopsided, tmp_path, cols):
    plan = tmp_path / "plan.txt"
    argv = [
        "--generate",
        "--cluster-snapshot-file",
        str(lopsided / "c.jsonl"),
        "--topics-to-move-json-file",
        str(lopsided / "topics.json"),
        "--broker-list",
        "1,2,3,4",
        "--strategy",
        "balanced",
    ]
    terminal = Terminal(argv, cols=cols, stdout_to=plan)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = terminal.lines()
    assert all(len(line) <= cols for line in lines)
    text = " ".join(" ".join(lines).split())  # the report's words, however the terminal wrapped them
    assert re.search(r"copied \(lower bound [0-9.]+ [KMGT]?i?B\)", text), text
    found = re.search(
        r"Bytes per broker: within 5% of the mean \(([^)]*)\) but (\d) broker\(s\): (.*?)\. Balancedness", text
    )
    assert found, text
    outside = re.findall(r"(\d) \([0-9.]+ [KMGT]?i?B: holds a replica of ([0-9.]+ [KMGT]?i?B)\)", found.group(3))
    assert outside, found.group(0)
    proposal = json.loads(plan.read_text().splitlines()[4])
    holders = next(p["replicas"] for p in proposal["partitions"] if p["topic"] == "big")
    assert outside and {int(b) for b, _ in outside} <= set(holders), (outside, holders)
