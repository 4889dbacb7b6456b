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


@pytest.fixture(scope="module")
def jbod(tmp_path_factory):
    """Brokers 1-3 hold everything on one volume each; broker 4, just added, has /a (70 % used) and /b (10 %)."""
    from kreassign.snapshot import SnapshotLogDir

    path = tmp_path_factory.mktemp("jbod")
    gb = 1 << 30
    parts = tuple(SnapshotPartition(p, (1 + p % 3, 1 + (p + 1) % 3), ("/d", "/d"), gb * (1 + p % 5)) for p in range(60))
    one = (SnapshotLogDir("/d", "/d", 2000 * gb, 1500 * gb, 0),)
    two = (SnapshotLogDir("/a", "/a", 1000 * gb, 300 * gb, 0), SnapshotLogDir("/b", "/b", 1000 * gb, 900 * gb, 0))
    brokers = (*(SnapshotBroker(b, None, ("/d",), 2000 * gb, one) for b in (1, 2, 3)),)
    brokers += (SnapshotBroker(4, None, ("/a", "/b"), 2000 * gb, two),)
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", parts)}), str(path / "c.jsonl"))
    (path / "topics.json").write_text('{"version":1,"topics":[{"topic":"orders"}]}')
    return path


def balanced_at_terminal(snapshot, tmp_path, cols: int, brokers: str, *extra: str):
    """The balanced --generate of the snapshot ``c.jsonl`` and ``topics.json`` in the directory ``snapshot`` at a
    terminal of ``cols`` columns (no line wider): the words on the screen, one space apart, and the proposal's
    partitions."""
    plan = tmp_path / "plan.txt"
    argv = ["--generate", "--cluster-snapshot-file", str(snapshot / "c.jsonl"), "--topics-to-move-json-file"]
    argv += [str(snapshot / "topics.json"), "--broker-list", brokers, "--strategy", "balanced", *extra]
    terminal = Terminal(argv, cols=cols, stdout_to=plan)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = terminal.lines()
    assert all(len(line) <= cols for line in lines)
    return " ".join(" ".join(lines).split()), json.loads(plan.read_text().splitlines()[4])["partitions"]


@pytest.mark.parametrize("cols", [80, 140])
def test_the_log_dirs_line_at_the_terminal(jbod, tmp_path, cols):
    """The report's `Log dirs:` line says how many new replicas got a dir and the fullest volume after, every
    word on the screen; the plan names /b (the emptier volume) for broker 4's new replicas."""
    text, proposal = balanced_at_terminal(jbod, tmp_path, cols, "1,2,3,4")
    named = [d for p in proposal for b, d in zip(p["replicas"], p["log_dirs"], strict=True) if b == 4]
    assert named and set(named) == {"/b"}
    found = re.search(r"Log dirs: (\d+) new replica\(s\) given a dir on 1 broker\(s\) with several volumes; "
                      r"fullest volume after: /a of broker 4, 70\.0%\.", text)  # fmt: skip
    assert found and int(found.group(1)) == len(named), text


@pytest.fixture(scope="module")
def full_volume(tmp_path_factory):
    """Broker 4 holds topic 'logs' (10 to 100 GiB a partition) on /a, 85 % used; /b is 10 % used."""
    from kreassign.snapshot import SnapshotLogDir

    path = tmp_path_factory.mktemp("full")
    gb = 1 << 30
    parts = tuple(SnapshotPartition(p, (4,), ("/a",), gb * 10 * (p + 1)) for p in range(10))
    two = (SnapshotLogDir("/a", "/a", 1000 * gb, 150 * gb, 0), SnapshotLogDir("/b", "/b", 1000 * gb, 900 * gb, 0))
    brokers = (SnapshotBroker(4, None, ("/a", "/b"), 2000 * gb, two),)
    save_snapshot(ClusterSnapshot(brokers, {"logs": SnapshotTopic("logs", parts)}), str(path / "c.jsonl"))
    (path / "topics.json").write_text('{"version":1,"topics":[{"topic":"logs"}]}')
    return path


@pytest.mark.parametrize("cols", [80, 140])
def test_a_full_volume_relieved_within_its_broker_at_the_terminal(full_volume, tmp_path, cols):
    """A volume above --max-disk-usage gives replicas the plan keeps on its broker to the other volume: the
    report says how many and their bytes, and names the volume still above the limit, every word on the
    screen."""
    text, proposal = balanced_at_terminal(full_volume, tmp_path, cols, "4", "--max-disk-usage", "0.3")
    # /b has 200 GiB of room below 30 %: the largest that fit go there, 100, 90 and 10 GiB
    assert {p["partition"]: p["log_dirs"] for p in proposal if p["log_dirs"] != ["any"]} == {
        9: ["/b"],
        8: ["/b"],
        0: ["/b"],
    }
    assert (
        "Log dirs: 3 replica(s) (200.0 GiB) moved to another volume of their broker; fullest volume after: /a of "
        "broker 4, 65.0%. Log dirs above --max-disk-usage after the plan: /a of broker 4, 65.0% (no room on the "
        "broker's other volumes for the replicas of the listed topics)." in text
    ), text
