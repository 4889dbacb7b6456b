"""One honest ETA under writes (issue 35, "Done when": the ETA of a move under a known throttle within 25 % of the
time it took). A producer writes into the partition a batched run copies under a known throttle: the panel at a real
terminal shows the writes, and its ETA, and --progress's from a second shell, net them out (bytes behind / (copy
rate - write rate)) and are the time the run then takes, within 25 %. Before, both divided by the throttle alone
and promised the end about 35 % too soon."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
import uuid

import pytest

from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_ours
from tests.integration.waiting import wait_until
from tests.terminal.screen import Terminal, remove_throttles
from tests.terminal.test_eta_terminal import panel_and_progress

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]

THROTTLE = 800_000
WRITES = 150_000  # bytes/s the producer writes into the partition being copied
RECORD = 1000


class Writer(threading.Thread):
    """Appends ``rate`` bytes/s of incompressible records to partition 0 of the topic until stopped."""

    def __init__(self, bootstrap: str, topic: str, rate: int = WRITES) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": 1})
        self.topic, self.rate = topic, rate
        self.stop = threading.Event()
        self.written = 0

    def run(self) -> None:
        began = time.monotonic()
        while not self.stop.is_set():
            while self.written + RECORD <= (time.monotonic() - began) * self.rate:
                self.producer.produce(self.topic, value=os.urandom(RECORD), partition=0)
                self.written += RECORD
            self.producer.poll(0)
            time.sleep(0.05)
        self.producer.flush(10)


def test_the_eta_of_a_move_under_writes_is_the_time_it_takes(kafka_cluster, port, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"eta-writes-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2]], messages=20_000, size=RECORD)  # 20 MB
    wait_until(lambda: topic in port.list_topic_names())
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [3, 2]}]}))
    writer = Writer(bootstrap, topic)
    writer.start()
    time.sleep(3)  # the writes are under way before the copy starts
    args = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan),
            "--max-partition-movements", "1", "--throttle", str(THROTTLE)]  # fmt: skip
    terminal = Terminal(args, cols=140, stdout_to=tmp_path / "out.txt")
    frames: list[tuple[float, float]] = []
    try:
        asked, summary = panel_and_progress(terminal, bootstrap, plan, frames)
        writes_row = terminal.shows("into the partitions being copied")
        status = terminal.wait(timeout=300)
        took = time.monotonic() - asked
    finally:
        writer.stop.set()
        writer.join(15)
        terminal.kill()
        if terminal.child.exitstatus != 0:
            run_ours(["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", str(plan)])
            remove_throttles(port, (1, 2, 3), [topic])
    assert status == 0, terminal.text()
    assert writes_row, terminal.text()
    panel = statistics.median(eta + (when - asked) for when, eta in frames if asked <= when <= asked + 2)
    cli = summary["eta_s"]
    print(
        f"ETA under {WRITES} B/s of writes at a {THROTTLE} B/s throttle: panel {panel:.1f}s, --progress {cli}s "
        f"(writes measured {summary['write_bytes_per_s']} B/s); the run took {took:.1f}s more"
    )
    assert summary["write_bytes_per_s"] == pytest.approx(WRITES, rel=0.25), summary
    assert summary["copy_slower_than_writes"] is False
    assert cli is not None and cli > 10, summary
    assert abs(panel - took) <= 0.25 * took, (panel, took)
    assert abs(cli - took) <= 0.25 * took, (cli, took)
