"""--generate --strategy leaders on the real 3-broker cluster, executed by the batched executor as elections;
--replace-broker's live check of NEW."""

from __future__ import annotations

import json
import uuid
from collections import Counter

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_ours

pytestmark = pytest.mark.integration

LAYOUT = [[1, 2], [1, 3], [1, 2], [1, 3], [1, 2], [1, 3]]  # broker 1 leads all six


def replicas_and_leaders(port: KafkaCluster, topic: str) -> dict[int, tuple[tuple[int, ...], int | None]]:
    return {p.partition: (tuple(p.replicas), p.leader) for p in port.describe_topics([topic])[topic]}


def test_leaders_plan_generated_and_executed_as_elections(kafka_cluster, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"leaders-{uuid.uuid4().hex[:10]}"
    create_topic(bootstrap, topic, LAYOUT, messages=600, size=200)
    port = KafkaCluster(bootstrap)
    try:
        before = replicas_and_leaders(port, topic)
        assert Counter(leader for _, leader in before.values()) == {1: 6}

        generate = ["--bootstrap-server", bootstrap, "--generate", "--strategy", "leaders", "--topics-regex", topic]
        generated = run_ours([*generate, "--output", "json"])
        assert generated.code == 0, generated.stdout + generated.stderr
        document = json.loads(generated.stdout)
        report = document["report"]
        assert (report["strategy"], report["replicas_moved"], report["bytes_moved"]) == ("leaders", 0, 0)
        assert report["total_bytes"] > 0  # the sizes were read from the brokers
        assert generated.stderr.startswith("Leadership plan (engine local): 0 replica(s) moved (minimum 0), 0 B of ")
        proposed = {p["partition"]: p["replicas"] for p in document["proposed"]["partitions"]}
        assert {p: sorted(r) for p, r in proposed.items()} == {p: sorted(r) for p, r in enumerate(LAYOUT)}
        assert Counter(r[0] for r in proposed.values()) == {1: 2, 2: 2, 3: 2}

        plan = tmp_path / "leaders.json"
        plan.write_text(json.dumps(document["proposed"]))
        batched = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan)]
        batched += ["--journal-file", str(tmp_path / "journal.json"), "--poll-interval-ms", "200"]
        batched += ["--max-partition-movements", "6"]
        dry = run_ours([*batched, "--dry-run"])
        assert dry.code == 0, dry.stdout + dry.stderr
        steps = [line for line in dry.stdout.splitlines() if line.startswith(f"  {topic}-")]
        assert len(steps) == 4 and all(line.endswith(")") and "+" not in line for line in steps)  # nothing copied
        assert all("(leader 1->" in line for line in steps)

        executed = run_ours(batched, timeout=120)
        assert executed.code == 0, executed.stdout + executed.stderr
        after = replicas_and_leaders(port, topic)
        assert {p: r for p, (r, _) in after.items()} == {p: tuple(r) for p, r in proposed.items()}
        assert {p: leader for p, (_, leader) in after.items()} == {p: r[0] for p, r in proposed.items()}
        assert Counter(leader for _, leader in after.values()) == {1: 2, 2: 2, 3: 2}

        again = run_ours(
            ["--bootstrap-server", bootstrap, "--generate", "--strategy", "leaders", "--topics-regex", topic]
        )
        assert again.code == 0 and "0 leader(s) changed" in again.stderr  # balanced now: nothing to do

        unknown = run_ours(
            ["--bootstrap-server", bootstrap, "--generate", "--replace-broker", "2=99", "--topics-regex", topic]
        )
        assert (unknown.code, unknown.stderr) == (1, "")
        assert unknown.stdout == (
            "Error: --replace-broker: broker 99 is not a broker of the cluster; start it first (no plan was written)\n"
        )
    finally:
        port.close()
