"""The ground holds: a real multi-broker KRaft cluster, started from the pinned Maven jars."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kreassign.devcluster.jars import apache_tool_command, pinned_kafka_version

pytestmark = pytest.mark.integration


def test_cluster_has_three_brokers_with_alternating_racks(kafka_cluster):
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    nodes = admin.describe_cluster(request_timeout=15).result(timeout=20).nodes
    assert sorted((n.id, n.rack) for n in nodes) == [(1, "rack-a"), (2, "rack-b"), (3, "rack-a")]


def _describe_when_visible(admin: AdminClient, topic: str, timeout: float = 30):
    """A new topic reaches every broker's metadata a moment after CreateTopics returns."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return admin.describe_topics(TopicCollection([topic]), request_timeout=15)[topic].result(timeout=20)
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_rf3_topic_produce_and_consume(kafka_cluster):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"foundation-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=3)])[topic].result(timeout=30)
    described = _describe_when_visible(admin, topic)
    assert [len(p.replicas) for p in described.partitions] == [3, 3, 3]

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    delivered: list[int] = []
    for i in range(300):
        producer.produce(
            topic,
            key=str(i),
            value=f"m{i}",
            partition=i % 3,
            on_delivery=lambda err, msg: delivered.append(0 if err else 1),
        )
    assert producer.flush(30) == 0
    assert sum(delivered) == 300

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
    seen: dict[int, int] = {0: 0, 1: 0, 2: 0}
    for _ in range(200):
        for msg in consumer.consume(num_messages=500, timeout=0.5):
            assert msg.error() is None
            seen[msg.partition()] += 1
        if sum(seen.values()) >= 300:
            break
    consumer.close()
    assert seen == {0: 100, 1: 100, 2: 100}


def test_apache_tool_runs_from_the_same_jars(kafka_cluster):
    proc = subprocess.run(
        [*apache_tool_command(), "--bootstrap-server", kafka_cluster.bootstrap_servers, "--list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "No partition reassignments found.\n"
    version = subprocess.run([*apache_tool_command(), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == pinned_kafka_version()


def test_stop_and_restart_one_broker(kafka_cluster, restartable_broker):
    restartable_broker(3)
    assert not kafka_cluster.node(3).running()
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    nodes = admin.describe_cluster(request_timeout=15).result(timeout=20).nodes
    assert sorted(n.id for n in nodes) == [1, 2]
