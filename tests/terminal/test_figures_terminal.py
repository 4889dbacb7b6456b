"""Figures that hold (issue 39, blocker 4): a copy that cannot overtake the writes to its partition says so on every
surface. A producer writes 170 kB/s into a partition moved by the Apache form under a throttle of 100,000 B/s: the
leader's throttle also carries the replication of those writes to the in-sync follower, which leaves the copy
nothing. The one-off --progress at a real terminal (80 columns), its JSON and --watch at the terminal all say the
copy never ends at this throttle. Before, the one-off terminal view and the JSON summary dropped the copy's share
of 0 and divided by a rate measured over one second: ``ETA unknown`` or ``not at this rate`` beside a row that
said ``never``, and ``eta_bound_by_throttle: false``."""

from __future__ import annotations

import json
import uuid

import pytest

from kreassign.cli import app
from kreassign.devcluster.topics import create_topic
from tests.integration.waiting import wait_until
from tests.terminal.screen import Terminal, remove_throttles
from tests.terminal.test_eta_writes_terminal import Writer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

WRITES = 170_000
THROTTLE = 100_000


def cli(argv: list[str]) -> tuple[int, str]:
    """kreassign in this process (a process of its own costs seconds of start-up on a loaded machine)."""
    out: list[str] = []
    code = app.run([str(a) for a in argv], out=out.append, err=lambda text: None)
    return code, "".join(out)


def test_a_copy_slower_than_its_writes_never_ends_on_every_surface(kafka_cluster, port, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(app, "_stderr", lambda text: None)
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"hot-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2]])  # the writer fills it
    wait_until(lambda: topic in port.list_topic_names())
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [3, 2]}]}))
    common = ["--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan)]
    writer = Writer(bootstrap, topic, rate=WRITES)
    writer.start()
    terminals: list[Terminal] = []
    try:
        wait_until(lambda: writer.written >= WRITES, timeout=30)  # the writes are under way
        assert cli([*common, "--execute", "--throttle", str(THROTTLE)])[0] == 0
        once = Terminal([*common, "--progress"], cols=80)  # the one-off view and --watch, side by side
        watch = Terminal([*common, "--progress", "--watch", "1"], cols=80)
        terminals += [once, watch]
        code, piped = cli([*common, "--progress", "--output", "json"])
        assert code == 0, piped
        assert once.wait(timeout=60) == 0, once.text()

        # the first frame has one sample (the writes are not measured yet: ETA unknown); the next ones have two.
        # A frame is drawn a line at a time: the screen is read once the third frame's header and its last line
        # (the under-replicated line) are on it, not at the header alone
        def shown(t: Terminal) -> str:
            return " ".join(" ".join(t.display()).split())

        watch.wait_for(
            lambda t: t.raw.count("Reassignment progress, every") >= 3 and "Under-replicated only because" in shown(t),
            60,
            "three frames of --watch",
        )
        watched = shown(watch)
        watch.ctrl_c()
        watch.wait(timeout=30)
    finally:
        writer.stop.set()
        writer.join(15)
        for terminal in terminals:
            terminal.kill()
        cli([*common, "--cancel"])
        remove_throttles(port, (1, 2, 3), [topic])
    screen = " ".join(once.text().split())  # the summary wraps at 80 columns
    row = next(line for line in once.lines() if line.startswith(f"{topic}-0") and " copying " in line)
    document = json.loads(piped)
    summary = document["summary"]
    [copying] = [r for p in document["partitions"] for r in p["replicas"] if r["status"] == "behind"]
    print(f"terminal: {row!r}; {screen[screen.index('partitions done') :][:80]!r}; JSON summary {summary}")
    assert row.split()[-3:] == ["~0", "B/s", "never"], row
    assert "ETA not at this throttle" in screen, once.text()
    assert (summary["eta_s"], summary["copy_slower_than_writes"], summary["eta_bound_by_throttle"]) == (
        None,
        True,
        True,
    )
    assert summary["write_bytes_per_s"] == pytest.approx(WRITES, rel=0.5)
    assert (copying["eta_s"], copying["copy_slower_than_writes"], copying["eta_bound_by_throttle"]) == (
        None,
        True,
        True,
    )
    assert copying["throttle_bytes_per_s"] == 0
    assert "ETA not at this throttle" in watched, watch.text()
