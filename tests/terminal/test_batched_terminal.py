"""A batched --execute at a real terminal (a pseudo-terminal of 80 or 140 columns, stdout redirected to a
file as an operator does), on the real 3-broker cluster: the live panel on stderr, the end of the run, and
Ctrl-C typed at the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest

from kreassign.devcluster.topics import create_topic
from tests.terminal.screen import Terminal, remove_throttles, throttles_once_applied

pytestmark = pytest.mark.integration

BROKERS = (1, 2, 3)
SOURCE = [1, 2]
TARGET = {p: [2, 3] if p % 2 == 0 else [3, 1] for p in range(6)}  # every partition copies one replica
PANEL_TITLE = "kreassign batched reassignment"


@pytest.fixture
def batched_run(kafka_cluster, port, tmp_path):
    """Makes a topic of 6 partitions on brokers 1,2 (3 MB) and the plan that moves each, and returns the
    arguments of a batched, throttled --execute of it. Whatever a failed test left (its run killed, a
    reassignment, throttles) is cleaned up afterwards."""
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"terminal-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [SOURCE] * len(TARGET), messages=3000, size=1000)
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in TARGET.items()]}
        )
    )
    terminals: list[Terminal] = []

    def make(throttle: int, cols: int) -> tuple[Terminal, str]:
        args = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan)]
        args += ["--max-partition-movements", "2", "--max-replica-movements", "1", "--throttle", str(throttle)]
        args += ["--journal-file", str(tmp_path / "j.json"), "--poll-interval-ms", "200"]
        terminal = Terminal(args, cols=cols, stdout_to=tmp_path / "out.txt", cwd=tmp_path)
        terminals.append(terminal)
        return terminal, topic

    yield make
    if any(t.child.isalive() for t in terminals):  # the test failed with its run still going
        for t in terminals:
            t.kill()
        cancel = ["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", str(plan)]
        cancel += ["--journal-file", str(tmp_path / "j.json")]
        subprocess.run([sys.executable, "-m", "kreassign", *cancel], capture_output=True, timeout=120)
        remove_throttles(port, BROKERS, [topic])


def replicas(port, topic: str) -> dict[int, list[int]]:
    return {p.partition: list(p.replicas) for p in port.describe_topics([topic])[topic]}


def moving(port, topic: str) -> dict:
    return {tp: r for tp, r in port.list_reassignments().items() if tp.topic == topic}


def after_panel(terminal: Terminal) -> str:
    """What is written below the panel's last frame, its screen rows joined and every blank left out (a row
    wrapped at a blank loses it on the screen), without the terminal's echo of Ctrl-C (^C)."""
    lines = terminal.lines()
    bottoms = [i for i, line in enumerate(lines) if line.lstrip().startswith("╰")]
    assert bottoms, f"no panel on the screen:\n{terminal.text()}\n--- written to the terminal:\n{terminal.raw!r}"
    bottom = bottoms[-1]
    return "".join("".join(line.replace("^C", "").split()) for line in lines[bottom + 1 :])


def squeezed(text: str) -> str:
    return "".join(text.split())


def test_batched_execute_shows_the_panel_and_completes(batched_run, port, tmp_path):
    started = time.monotonic()
    terminal, topic = batched_run(throttle=300_000, cols=80)
    terminal.wait_for(lambda t: PANEL_TITLE in t.raw and "moving" in t.raw, 60, "the live panel")
    status = terminal.wait(timeout=180)
    screen = terminal.text()
    assert status == 0, screen
    assert "Traceback" not in terminal.raw
    # the panel's last frame says how the run ended, and one line below it
    assert PANEL_TITLE in screen and "6 of 6 at their target" in screen and "9 of 9" in screen, screen
    assert after_panel(terminal) == squeezed(  # one line (wrapped at 80 columns)
        "Batched reassignment complete: 6 partition(s) at their target after 9 step(s); throttles restored. "
        "The summary is on stdout."
    ), screen
    out = (tmp_path / "out.txt").read_text()
    assert "Batched reassignment complete: 6 partition(s) at their target" in out and PANEL_TITLE not in out
    # the cluster: at the target, nothing moving, no throttle left
    assert replicas(port, topic) == TARGET
    assert moving(port, topic) == {}
    assert throttles_once_applied(port, BROKERS, [topic]) == {}
    print(f"batched run at an 80-column terminal: {time.monotonic() - started:.1f}s")


def test_ctrl_c_at_the_terminal_reverts_the_steps_in_flight(batched_run, port, tmp_path):
    terminal, topic = batched_run(throttle=60_000, cols=140)
    # a copy under way (a step that adds a replica), shown in the panel
    terminal.wait_for(
        lambda t: "(+3" in t.text() and PANEL_TITLE in t.text() and "moving" in t.raw and bool(moving(port, topic)),
        60,
        "a copy under way",
    )
    terminal.ctrl_c()
    terminal.pause(0.2)
    terminal.ctrl_c()  # impatient: a second Ctrl-C during the clean-up changes nothing
    status = terminal.wait(timeout=90)
    screen = terminal.text()
    assert status == 130, screen
    assert "Traceback" not in terminal.raw and "KeyboardInterrupt" not in terminal.raw, terminal.raw
    # one line at the terminal says what happened (it may wrap; ^C is the terminal's echo of the key)
    below = after_panel(terminal)
    assert below.startswith(squeezed("Batched reassignment interrupted by SIGINT: ")), screen
    assert squeezed("reverted the steps in flight of") in below, screen
    assert below.endswith(squeezed("throttles restored. The summary is on stdout.")), screen
    assert below.count("Batchedreassignment") == 1, screen
    out = (tmp_path / "out.txt").read_text()
    assert "Batched reassignment interrupted by SIGINT: " in out
    assert "Reverted the steps in flight of" in out
    # the cluster: nothing moving, no throttle left, no partition holding an extra replica
    assert moving(port, topic) == {}
    assert throttles_once_applied(port, BROKERS, [topic]) == {}
    assert all(len(r) == 2 for r in replicas(port, topic).values()), replicas(port, topic)
