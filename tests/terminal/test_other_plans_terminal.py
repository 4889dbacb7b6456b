"""--generate --strategy leaders and --replace-broker where users meet them: the plan report on a real terminal
(80 and 140 columns, stdout to a file) and the plan into a real shell pipe whose reader leaves (``| head -1``)."""

from __future__ import annotations

import sys

import pytest

from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.terminal.screen import Terminal
from tests.terminal.test_help_and_pipes import run_pipeline

pytestmark = pytest.mark.integration

KREASSIGN = f"{sys.executable} -m kreassign"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """4 brokers on racks a/b, 2,500 partitions led by brokers 1 and 2 only (more than a pipe holds)."""
    path = tmp_path_factory.mktemp("snapshot")
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 3 + p % 2), ("/d1", "/d1"), 1000, 1 + p % 2) for p in range(2500)
    )
    brokers = tuple(SnapshotBroker(b, "ab"[b % 2], ("/d1",)) for b in (1, 2, 3, 4))
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path / "c.jsonl"))
    return path


def offline(snapshot, *extra: str) -> list[str]:
    return ["--generate", "--cluster-snapshot-file", str(snapshot / "c.jsonl"), "--topics-regex", "orders", *extra]


@pytest.mark.parametrize("cols", [80, 140])
def test_leaders_report_at_the_terminal(snapshot, tmp_path, cols):
    """``> plan.txt`` at a terminal: the leadership report on stderr within the terminal's width, the leaders
    per broker 1250/1250/0/0 -> 625 each, nothing copied; the plan in the file."""
    plan = tmp_path / "plan.txt"
    terminal = Terminal(offline(snapshot, "--strategy", "leaders"), cols=cols, stdout_to=plan)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = terminal.lines()
    text = "\n".join(lines)
    assert text.startswith("Leadership plan (engine local): 0 replica(s) moved (minimum 0), 0 B of 4.8 MiB"), text
    [leaders] = [line for line in lines if line.startswith("leaders / broker")]
    assert "0..1250 (std 625.0)" in leaders and leaders.endswith("625..625 (std 0.0)"), text
    assert "█" in text and all(len(line) <= cols for line in lines), text
    assert plan.read_text().startswith("Current partition replica assignment\n")


@pytest.mark.parametrize("strategy", [["--strategy", "leaders"], ["--replace-broker", "1=4,2=3"]])
def test_other_plans_into_head_exit_quietly(snapshot, strategy):
    """The reader leaves after the first line: exit 0, no traceback, the report (plain) on stderr."""
    command = f"{KREASSIGN} {' '.join(offline(snapshot, *strategy))} | head -1"
    status, out, err = run_pipeline(command)
    assert (status, out) == (0, "Current partition replica assignment\n"), err
    assert "Traceback" not in err and "\x1b[" not in err
    assert err.startswith("Leadership plan" if "leaders" in strategy else "Broker replacement")


@pytest.mark.parametrize("cols", [80, 140])
def test_a_regex_found_inside_names_gets_a_hint_at_the_terminal(snapshot, cols):
    """Issue 33: `--topics-regex 'ord'` matched nothing with no hint that the pattern must match the whole name.
    At the terminal: Apache's one Error line, then the hint, wrapped at word boundaries."""
    argv = ["--generate", "--cluster-snapshot-file", str(snapshot / "c.jsonl"), "--topics-regex", "ord"]
    terminal = Terminal([*argv, "--strategy", "leaders"], cols=cols)
    assert terminal.wait(timeout=60) == 1, terminal.text()
    lines = terminal.lines()
    assert lines[0] == "Error: --topics-regex 'ord' matches no topic of the cluster", lines
    hint = " ".join(line.strip() for line in lines[1:] if line.strip())
    assert hint == (
        "kreassign: --topics-regex must match the whole topic name; 'ord' is found inside orders: to take every "
        "topic that contains it, write '.*ord.*'"
    ), lines
    assert all(len(line) <= cols for line in lines)
