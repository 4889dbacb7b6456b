"""--throttle auto on the real cluster (issue 35): a producer writes 500 kB/s into t-0 (leader 1, follower 2); with
2 MB/s brokers and the default ceiling of 0.8, the throttle each broker gets is 1.6 MB/s less the traffic it serves:
brokers 1 and 2 about 1.1 MB/s, broker 3, which hosts nothing busy, about 1.6 MB/s; the rates the run sets on the
brokers are those it says on stderr."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import uuid

import pytest

from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.humanize import format_bytes
from tests.integration.waiting import wait_until
from tests.terminal.test_eta_writes_terminal import Writer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

CAPACITY = 2_000_000
WRITES = 500_000
RATES = re.compile(r"Throttle per broker \(--throttle auto\): (.*)")


def test_each_broker_gets_the_headroom_its_measured_traffic_leaves(kafka_cluster, adapter, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"auto-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2], [2, 1]], messages=20_000, size=1000)  # t-1: 10 MB to move
    wait_until(lambda: topic in adapter.list_topic_names())
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 1, "replicas": [3, 1]}]}))
    writer = Writer(bootstrap, topic, WRITES)
    writer.start()
    run = subprocess.Popen(
        [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, "--execute",
         "--reassignment-json-file", str(plan), "--max-partition-movements", "1", "--throttle", "auto",
         "--broker-capacity", str(CAPACITY), "--sample-rates", "5", "--allow-slow-moves",
         "--journal-file", str(tmp_path / "journal.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        said = None
        deadline = time.monotonic() + 120
        stderr = []
        while said is None and time.monotonic() < deadline:
            line = run.stderr.readline()
            if not line:
                break
            stderr.append(line)
            said = RATES.search(line)
        assert said is not None, "".join(stderr)
        # the run's first line fits 80 columns (was 84 with four brokers: `... of broker(s) 1,2,3,4 over 10 s ...`)
        assert stderr[0] == "kreassign: --throttle auto: measuring traffic on brokers 1-3 for 5 s ...\n"
        rates: dict[int, tuple[int, int]] = {}

        def set_on_brokers():
            """The brokers' rates once they show the line's (the brokers learn a config change from the
            controller within moments)."""
            configs = adapter.describe_configs([ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3)])
            for b in (1, 2, 3):
                values = configs[ConfigResource(ResourceType.BROKER, str(b))]
                rates[b] = (
                    int(values["leader.replication.throttled.rate"]),
                    int(values["follower.replication.throttled.rate"]),
                )
            shown = ", ".join(f"{b}: {format_bytes(rates[b][0])}/s" for b in (1, 2, 3))
            return shown == said.group(1).split(";")[0]

        wait_until(set_on_brokers, timeout=15)
    finally:
        writer.stop.set()
        writer.join(15)
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=120)
    print(f"--throttle auto: {said.group(1)}; set on the brokers: {rates}")
    for b in (1, 2):  # 0.8 x 2 MB/s less 500 kB/s of writes (in), and of replication out for the leader
        assert rates[b][0] == rates[b][1] == pytest.approx(0.8 * CAPACITY - WRITES, abs=0.2 * WRITES), rates
    assert rates[3][0] == rates[3][1] == pytest.approx(0.8 * CAPACITY, abs=0.1 * WRITES), rates
    assert run.returncode == 128 + signal.SIGTERM, (out, err)  # interrupted: reverted, throttles restored

    def restored():
        after = adapter.describe_configs([ConfigResource(ResourceType.BROKER, str(b)) for b in rates])
        return not any("follower.replication.throttled.rate" in values for values in after.values())

    wait_until(restored, timeout=15)
