"""One ETA for one run (issue 33): the live panel of a batched run at a real terminal and --progress from a second
shell say the same ETA (within 25 %), and it is the time the run then takes (within 25 %). Before, the panel said
``ETA 0:01:24`` while --progress said ``ETA 7s``: the panel divided the plan's bytes left by a rate that swung
between polls, --progress only the copies in flight by their rate over one second."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
import uuid

import pytest

from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_ours
from tests.integration.waiting import wait_until
from tests.terminal.screen import Terminal, remove_throttles

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]

THROTTLE = 500_000
PANEL_ETA = re.compile(r"│\s*ETA\s+~?(\d+):(\d\d):(\d\d)")


def panel_eta(terminal: Terminal) -> float | None:
    """The ETA of the panel's frame on the screen now, in seconds."""
    for line in terminal.display():
        found = PANEL_ETA.search(line)
        if found:
            h, m, s = (int(g) for g in found.groups())
            return 3600 * h + 60 * m + s
    return None


def panel_and_progress(terminal: Terminal, bootstrap: str, plan, frames: list[tuple[float, float]]):
    """Once the panel shows an ETA and Kafka's first burst is over, --progress --output json from a second shell;
    the panel's frames meanwhile go to ``frames`` (when, ETA). Returns when --progress was asked, and its summary."""

    def watch_panel(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            terminal.pause(0.25)
            eta = panel_eta(terminal)
            if eta is not None:
                frames.append((time.monotonic(), eta))

    terminal.wait_for(lambda t: panel_eta(t) is not None, 60, "the panel's ETA")
    # Kafka's quota lets about 10 s of the throttle's rate through at once: measure once that burst is over
    # and the panel's window holds only the throttled copy
    watch_panel(15)
    second_shell = subprocess.Popen(
        [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, "--progress", "--output", "json",
         "--reassignment-json-file", str(plan)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    asked = time.monotonic()
    watch_panel(2)
    return asked, json.loads(second_shell.communicate(timeout=60)[0])["summary"]


def test_the_panel_and_progress_from_a_second_shell_give_the_same_eta_and_it_holds(
    kafka_cluster, port, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # defaults: the default journal, no option
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"eta-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2]] * 6, messages=24_000, size=1000)  # 6 partitions of 4 MB
    wait_until(lambda: topic in port.list_topic_names())
    plan = tmp_path / "plan.json"
    partitions = [{"topic": topic, "partition": p, "replicas": [3, 2]} for p in range(6)]
    plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
    args = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan),
            "--max-partition-movements", "2", "--throttle", str(THROTTLE)]  # fmt: skip
    terminal = Terminal(args, cols=140, stdout_to=tmp_path / "out.txt")
    frames: list[tuple[float, float]] = []  # (when, the panel's ETA then)
    try:
        asked, summary = panel_and_progress(terminal, bootstrap, plan, frames)
        status = terminal.wait(timeout=300)
        took = time.monotonic() - asked
    finally:
        terminal.kill()
        if terminal.child.exitstatus != 0:
            run_ours(["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", str(plan)])
            remove_throttles(port, (1, 2, 3), [topic])
    assert status == 0, terminal.text()
    # the panel's frames while --progress sampled (it reads the cluster twice, a second apart)
    around = sorted(eta + (when - asked) for when, eta in frames if asked <= when <= asked + 2)
    assert around, terminal.text()
    panel = statistics.median(around)
    cli = summary["eta_s"]
    shown = [round(eta) for when, eta in frames]
    print(f"ETA: panel {panel:.1f}s ({around}), --progress {cli}s, the run took {took:.1f}s more; panel: {shown}")
    assert cli is not None and cli > 10, summary
    assert abs(panel - cli) <= 0.25 * max(panel, cli), (panel, cli)
    assert abs(panel - took) <= 0.25 * took, (panel, took)
    assert abs(cli - took) <= 0.25 * took, (cli, took)
