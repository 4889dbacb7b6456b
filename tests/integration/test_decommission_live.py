"""The README's decommission recipe on the real 5-broker cluster (issue 39): `--topics-regex '.*'` skips Kafka's
internal topics, so the report names what the leaving broker keeps of __consumer_offsets (read from the brokers);
the recipe's regex plans them too, and the Apache tool takes a reassignment of __consumer_offsets like any other
(nothing in it singles out internal topics)."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_apache, run_ours
from tests.integration.waiting import wait_until
from tests.unit.test_decommission_report import recipe_regex

pytestmark = pytest.mark.integration

OFFSETS = "__consumer_offsets"


def commit_an_offset(bootstrap: str, topic: str) -> None:
    """A consumer group's commit: the brokers create __consumer_offsets if no test has yet."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    finally:
        consumer.close()


def test_the_leaving_broker_keeps_consumer_offsets_and_the_recipe_moves_them(kafka_cluster5, tmp_path):
    bootstrap = kafka_cluster5.bootstrap_servers
    topic = f"decom-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, [[1, 2], [2, 3], [3, 4], [4, 5], [5, 1]], messages=10, size=100)
    port = KafkaCluster(bootstrap_servers=bootstrap)
    try:
        wait_until(lambda: commit_an_offset(bootstrap, topic) or OFFSETS in port.list_topic_names())
        offsets = {p.partition: tuple(p.replicas) for p in port.describe_topics([OFFSETS])[OFFSETS]}
    finally:
        port.close()
    leaving = min(b for replicas in offsets.values() for b in replicas)
    kept = sum(leaving in replicas for replicas in offsets.values())
    others = ",".join(str(b) for b in range(1, 6) if b != leaving)
    generate = ["--bootstrap-server", bootstrap, "--generate", "--strategy", "balanced", "--broker-list", others]

    skipped = run_ours([*generate, "--topics-regex", topic])
    assert skipped.code == 0, skipped.stdout + skipped.stderr
    warning = next(line for line in skipped.stderr.splitlines() if line.startswith("Warning:"))
    assert warning.startswith(f"Warning: broker {leaving} keeps ") and f"{OFFSETS}: {kept}" in warning
    row = next(line for line in skipped.stderr.splitlines() if line.split()[:1] == [str(leaving)])
    assert re.search(r"\(removed; keeps \d+ not planned\)$", row), row

    # the recipe's regex for Kafka's own topics (its '.*' is this test's topic: the cluster has others' topics)
    regex = recipe_regex()
    assert regex.startswith(".*|")
    recipe = run_ours([*generate, "--topics-regex", f"{topic}|{regex[3:]}", "--output", "json"])
    assert recipe.code == 0, recipe.stdout + recipe.stderr
    assert OFFSETS not in recipe.stderr  # the leaving broker keeps none of it
    proposed = json.loads(recipe.stdout)["proposed"]["partitions"]
    moved = [p for p in proposed if p["topic"] == OFFSETS]
    assert len(moved) == len(offsets) and all(leaving not in p["replicas"] for p in moved)

    # the Apache tool takes a reassignment of __consumer_offsets (here its current replicas: nothing moves)
    plan = tmp_path / "offsets.json"
    partition = {"topic": OFFSETS, "partition": 0, "replicas": list(offsets[0])}
    plan.write_text(json.dumps({"version": 1, "partitions": [partition]}))
    executed = run_apache(["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan)])
    assert executed.code == 0 and f"Successfully started partition reassignment for {OFFSETS}-0" in executed.stdout
