"""kreassign's own text at a real terminal of 80 and 140 columns wraps at word boundaries and its tables fit,
while in a pipe or a file each of its lines stays one line (grep works) and Apache's text is never wrapped
(issue 33: a newcomer's trial at an 80-column terminal found lines cut mid-word, ``at most 2 part`` / ``itions``).

A word cut across two rows of the screen reads as two words once the rows are joined with a blank: that is
what ``shown_whole`` catches."""

from __future__ import annotations

import json
import re
import sys
import uuid

import pytest

from kreassign.devcluster.topics import create_topic
from kreassign.planning.steps import Limits
from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from tests.integration.differential import run_ours
from tests.integration.waiting import wait_until
from tests.terminal.screen import Terminal, remove_throttles
from tests.terminal.test_help_and_pipes import run_pipeline

KREASSIGN = f"{sys.executable} -m kreassign"
COLUMNS = [80, 140]


def joined(lines: list[str]) -> str:
    """The screen's rows read as one text, blanks squeezed: a word cut across rows reads as two words."""
    return " ".join(" ".join(lines).split())


def shown_whole(lines: list[str], text: str) -> bool:
    return " ".join(text.split()) in joined(lines)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def written_lines_below_the_panel(raw: str) -> list[str]:
    """The lines the program itself wrote below the panel's last frame (not as the terminal folds them)."""
    tail = ANSI.sub("", raw).rsplit("╰", 1)[-1]
    return re.split(r"\r?\n", tail)[1:]


@pytest.fixture(autouse=True)
def fresh_state(tmp_path, monkeypatch):
    """Defaults first: a fresh state folder for each test (the default journal goes there), no --journal-file."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


# ---------------------------------------------------------------------------------------------- plan reports
@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """4 brokers on racks a/b, 400 partitions of uneven sizes led by brokers 1 and 2 only: the bytes per broker
    differ by some hundred bytes, so the report's cells read like ``1.2 MiB..1.3 MiB (std 952 B)``."""
    path = tmp_path_factory.mktemp("snapshot") / "c.jsonl"
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 3 + p % 2), ("/d1", "/d1"), 3000 + (p * 7919) % 4001, 1 + p % 2)
        for p in range(400)
    )
    brokers = tuple(SnapshotBroker(b, "ab"[b % 2], ("/d1",)) for b in (1, 2, 3, 4))
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path))
    return path


@pytest.mark.parametrize("cols", COLUMNS)
@pytest.mark.parametrize(
    "strategy", [["--strategy", "leaders"], ["--replace-broker", "1=4,2=3"]], ids=["leaders", "replace"]
)
def test_plan_reports_fit_the_terminal_without_cutting_a_cell(snapshot, tmp_path, cols, strategy):
    """The report's tables fit the width: no cell is split across rows (``(std 952`` / ``B)``), the per-broker
    table's header is one row; the headline wraps at word boundaries."""
    args = ["--generate", "--cluster-snapshot-file", str(snapshot), "--topics-regex", "orders", *strategy]
    terminal = Terminal(args, cols=cols, stdout_to=tmp_path / "plan.txt")
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = [line for line in terminal.lines() if line.strip()]
    screen = "\n".join(lines)
    assert all(len(line) <= cols for line in lines), screen
    assert "(std" in screen and all(line.count("(") == line.count(")") for line in lines), screen
    [header] = [line for line in lines if line.split()[:1] == ["broker"]]
    assert header.split() == ["broker", "replicas", "leaders", "bytes"], screen
    after = lines[lines.index(header) + 1]
    assert re.match(r"\s*\d", after), screen  # the brokers' rows come right after the header
    # the headline, as a pipe gets it (one line), shown whole
    status, _, err = run_pipeline(" ".join([KREASSIGN, *args, "| cat"]))
    assert status == 0, err
    headline = err.splitlines()[0]
    assert headline.endswith("partition(s).") and shown_whole(lines, headline), screen


@pytest.mark.parametrize("cols", COLUMNS)
def test_the_balanced_report_with_rates_shows_bytes_in_and_out_per_broker_at_the_terminal(tmp_path, cols):
    """A snapshot with rates (``--write-cluster-snapshot --sample-rates``): the per-broker table at a terminal
    has bars for bytes in and out per second beside replicas, leaders and bytes, and fits the width."""
    path = tmp_path / "rated.jsonl"
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 3 + p % 2), ("/d1", "/d1"), 3000 + (p * 7919) % 4001, 1 + p % 2, (),
                          float(1000 * (1 + p % 7)), float(500 * (p % 3)))
        for p in range(200)
    )  # fmt: skip
    brokers = tuple(SnapshotBroker(b, "ab"[b % 2], ("/d1",)) for b in (1, 2, 3, 4))
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path))
    args = ["--generate", "--cluster-snapshot-file", str(path), "--topics-regex", "orders", "--strategy", "balanced",
            "--broker-list", "1,2,3,4"]  # fmt: skip
    terminal = Terminal(args, cols=cols, stdout_to=tmp_path / "plan.txt")
    assert terminal.wait(timeout=120) == 0, terminal.text()
    lines = [line for line in terminal.lines() if line.strip()]
    screen = "\n".join(lines)
    assert all(len(line) <= cols for line in lines), screen
    [header] = [line for line in lines if line.split()[:1] == ["broker"]]
    assert header.split() == ["broker", "replicas", "leaders", "bytes", "in", "/s", "out", "/s"], screen
    rows = lines[lines.index(header) + 1 :]
    # each broker: two rows (before, after), each with its replicas, leaders, bytes, in and out
    assert len(rows) >= 8 and all(len(re.findall(r"\d+(?:\.\d+)? ?[KMG]?i?B|\b\d+\b", row)) >= 5 for row in rows[:8])
    assert shown_whole(lines, "Bytes in per broker:") and shown_whole(lines, "Bytes out per broker:"), screen


# ---------------------------------------------------------------------------------------------- live cluster
@pytest.fixture
def topic_and_plan(kafka_cluster, port, tmp_path):
    """A topic of 6 partitions on brokers 1,2 (3 MB) with a long name, and the plan that moves each of them to
    [3,2]. Afterwards: whatever moves is cancelled, the throttles are removed."""
    yield from _topic_and_plan(kafka_cluster, port, tmp_path, messages=3000)


@pytest.fixture
def large_topic_and_plan(kafka_cluster, port, tmp_path):
    """As ``topic_and_plan``, 2 MB a partition: a throttled copy of it stays in progress for minutes (a follower
    fetches up to 1 MB of a partition at once whatever the throttle, and the throttle is a rate over about
    10 s: 3 MB of small partitions were copied in about 5 s at a throttle of 20 kB/s)."""
    yield from _topic_and_plan(kafka_cluster, port, tmp_path, messages=12000)


def _topic_and_plan(kafka_cluster, port, tmp_path, messages: int):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"payments-eu-west-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2]] * 6, messages=messages, size=1000)
    wait_until(lambda: topic in port.list_topic_names())
    plan = tmp_path / "plan.json"
    partitions = [{"topic": topic, "partition": p, "replicas": [3, 2]} for p in range(6)]
    plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
    terminals: list[Terminal] = []
    yield topic, plan, terminals
    for terminal in terminals:
        terminal.kill()
    run_ours(["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", str(plan)], timeout=120)
    remove_throttles(port, (1, 2, 3), [topic])


def batched(bootstrap: str, plan, *extra: str) -> list[str]:
    return ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan),
            "--max-partition-movements", "2", "--max-replica-movements", "1", *extra]  # fmt: skip


@pytest.mark.integration
@pytest.mark.parametrize("cols", COLUMNS)
def test_batched_dry_run_wraps_at_the_terminal_and_stays_one_line_in_a_pipe(kafka_cluster, topic_and_plan, cols):
    _topic, plan, terminals = topic_and_plan
    args = batched(kafka_cluster.bootstrap_servers, plan, "--dry-run")
    terminal = Terminal(args, cols=cols)
    terminals.append(terminal)
    assert terminal.wait(timeout=120) == 0, terminal.text()
    status, piped, err = run_pipeline(" ".join([KREASSIGN, *args, "| cat"]))
    assert status == 0, err
    lines = piped.splitlines()
    # in the pipe: Apache's text, then kreassign's lines, one line each
    apache_json = lines[2]
    assert apache_json.startswith('{"version":1,"partitions":[') and len(apache_json) > cols
    own = lines[lines.index("Save this to use as the --reassignment-json-file option during rollback") + 1 :]
    assert own[0].startswith("Batched plan (dry run, nothing changed): ") and len(own[0]) > 80, own
    # at the terminal: Apache's JSON written as one line (the terminal folds it), kreassign's lines wrapped whole
    assert apache_json in terminal.raw
    screen = terminal.lines()
    for line in own:
        assert shown_whole(screen, line), f"{line!r} not shown whole:\n" + "\n".join(screen)
    start = next(i for i, row in enumerate(screen) if row.startswith("Batched plan (dry run"))
    assert all(len(row) <= cols for row in screen[start:]), "\n".join(screen)


SUMMARY = re.compile(
    r"Batched reassignment complete: 6 partition\(s\) at their target after \d+ step\(s\), \d+(\.\d)? [KM]iB copied "
    r"in \S+\. Throttles restored\."
)


@pytest.mark.integration
@pytest.mark.parametrize("cols", COLUMNS)
def test_batched_run_lines_under_the_panel_wrap_at_word_boundaries(kafka_cluster, topic_and_plan, cols):
    """stdout on the same terminal: the run's own lines and the summary under the panel wrap whole."""
    _topic, plan, terminals = topic_and_plan
    terminal = Terminal(batched(kafka_cluster.bootstrap_servers, plan, "--throttle", "1000000"), cols=cols)
    terminals.append(terminal)
    assert terminal.wait(timeout=240) == 0, terminal.text()
    screen = terminal.lines()
    text = joined(screen)
    assert SUMMARY.search(text), "\n".join(screen)
    assert all(len(row) <= cols for row in written_lines_below_the_panel(terminal.raw)), terminal.raw
    moving = re.search(r"Moving 6 partition\(s\) in (\d+) step\(s\)", text)
    limits = Limits(partitions=2, replicas=1).describe()
    assert moving and f"{moving.group(0)}, {limits}." in text, "\n".join(screen)


@pytest.mark.integration
def test_batched_run_with_stdout_in_a_file_wraps_its_line_on_the_terminal(kafka_cluster, topic_and_plan, tmp_path):
    """``> out.txt``: the one line on stderr's terminal wraps whole at 80 columns; the file keeps one line each."""
    _topic, plan, terminals = topic_and_plan
    args = batched(kafka_cluster.bootstrap_servers, plan, "--throttle", "1000000")
    terminal = Terminal(args, cols=80, stdout_to=tmp_path / "out.txt")
    terminals.append(terminal)
    assert terminal.wait(timeout=240) == 0, terminal.text()
    screen = terminal.lines()
    line = re.compile(
        r"Batched reassignment complete: 6 partition\(s\) at their target after \d+ step\(s\); throttles restored\. "
        r"The summary is on stdout\."
    )
    assert line.search(joined(screen)), "\n".join(screen)
    assert all(len(row) <= 80 for row in written_lines_below_the_panel(terminal.raw)), terminal.raw
    out = (tmp_path / "out.txt").read_text().splitlines()
    assert any(SUMMARY.fullmatch(row) for row in out), out  # one line in the file


@pytest.mark.integration
@pytest.mark.parametrize("cols", COLUMNS)
def test_progress_names_every_partition_under_replicated_by_the_move(kafka_cluster, large_topic_and_plan, cols):
    """--progress while an Apache-style --execute copies: the line naming the partitions under-replicated only
    because of the reassignment wraps and names each (no ``…``); in a pipe it is one line."""
    topic, plan, terminals = large_topic_and_plan
    bootstrap = kafka_cluster.bootstrap_servers
    started = run_ours(["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan),
                        "--throttle", "20000"])  # fmt: skip
    assert started.code == 0, started.stdout + started.stderr
    progress = ["--bootstrap-server", bootstrap, "--progress", "--reassignment-json-file", str(plan)]
    named = ", ".join(f"{topic}-{p} (adding 3)" for p in range(6))
    # the pipe first, the terminal (the slower of the two under load) second: both while the copies move
    _status, piped, err = run_pipeline(" ".join([KREASSIGN, *progress, "| cat"]))
    assert f"Under-replicated only because of the reassignment: {named}" in piped.splitlines(), piped + err
    terminal = Terminal(progress, cols=cols)
    terminals.append(terminal)
    terminal.wait(timeout=120)
    screen = terminal.lines()
    assert shown_whole(screen, f"Under-replicated only because of the reassignment: {named}"), "\n".join(screen)
    assert all(len(row) <= cols for row in screen), "\n".join(screen)


@pytest.mark.integration
@pytest.mark.parametrize("cols", COLUMNS)
def test_watch_closing_line_wraps_at_the_terminal_and_is_one_line_in_a_pipe(kafka_cluster, topic_and_plan, cols):
    """--progress --watch of a plan nothing moves: it ends at once with a line naming the partitions."""
    topic, plan, terminals = topic_and_plan
    watch = ["--bootstrap-server", kafka_cluster.bootstrap_servers, "--progress", "--watch", "1",
             "--reassignment-json-file", str(plan)]  # fmt: skip
    terminal = Terminal(watch, cols=cols)
    terminals.append(terminal)
    assert terminal.wait(timeout=120) == 3, terminal.text()
    names = ", ".join(f"{topic}-{p}" for p in range(5))
    line = f"Not at target, and nothing is moving: {names} and 1 more."
    screen = terminal.lines()
    assert len(line) > 140 and shown_whole(screen, line), "\n".join(screen)
    assert all(len(row) <= cols for row in screen), "\n".join(screen)
    status, piped, err = run_pipeline(" ".join([KREASSIGN, *watch, "| cat"]))
    assert status == 3 and piped.splitlines()[-1].endswith(f" {line}"), piped + err


@pytest.mark.integration
@pytest.mark.parametrize("cols", COLUMNS)
def test_progress_says_why_a_partition_whose_replicas_only_change_order_is_not_done(
    kafka_cluster, port, tmp_path, cols
):
    """Issue 33: a partition that only needs its order changed showed every replica `in sync` and counted as not
    done, with no word saying why. --progress now says so, wrapped at the terminal, one line in a pipe."""
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"payments-eu-west-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2], [2, 3]])
    wait_until(lambda: topic in port.list_topic_names())
    plan = tmp_path / "plan.json"
    partitions = [
        {"topic": topic, "partition": 0, "replicas": [2, 1]},
        {"topic": topic, "partition": 1, "replicas": [2, 3]},
    ]
    plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
    progress = [
        "--bootstrap-server",
        bootstrap,
        "--progress",
        "--reassignment-json-file",
        str(plan),
        "--fail-if-incomplete",
    ]
    terminal = Terminal(progress, cols=cols)
    assert terminal.wait(timeout=120) == 3, terminal.text()
    screen = terminal.lines()
    note = (
        f"Only the order of the replicas differs: {topic}-0 [1,2] -> [2,1]. Every replica is in sync and nothing is "
        "copied; the new order and preferred leader take effect as soon as a reassignment submits it (--execute)."
    )
    assert shown_whole(screen, note), "\n".join(screen)
    assert all(len(row) <= cols for row in screen), "\n".join(screen)
    status, piped, err = run_pipeline(" ".join([KREASSIGN, *progress, "| cat"]))
    assert status == 3 and note in piped.splitlines(), piped + err
