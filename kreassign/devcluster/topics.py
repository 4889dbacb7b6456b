"""Create topics with an explicit replica layout and fill them with data (tests and the demo)."""

from __future__ import annotations

from typing import Any


def _client_settings(security: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(librdkafka, kafka-python) settings: none for a plain cluster, a super user's for a secure one
    (a ``ClusterSecurity``)."""
    if security is None:
        return {}, {}
    user = security.super_users[0]
    return security.librdkafka_config(user), security.kafka_python_config(user)


def create_topic(
    bootstrap: str, name: str, layout: list[list[int]], messages: int = 0, size: int = 100, security: Any = None
) -> None:
    """``layout[p]`` is partition p's replica list; ``messages`` records of ``size`` bytes, acks=all.
    On a secure cluster pass its ``ClusterSecurity``: a super user creates and fills the topic.

    (kafka-python creates the topic: confluent-kafka 2.16 rejects explicit replica assignments.)
    """
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient, NewTopic

    rdkafka, kafka_python = _client_settings(security)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **kafka_python)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=dict(enumerate(layout)))])
    finally:
        admin.close()
    _wait_until_visible(bootstrap, name, len(layout), rdkafka)
    if messages:
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20, **rdkafka})
        payload = b"v" * size
        for i in range(messages):
            producer.produce(name, value=payload, partition=i % len(layout))
            if i % 5000 == 0:
                producer.poll(0)
        if producer.flush(120) != 0:
            raise RuntimeError(f"could not produce {messages} messages to {name}")


def _wait_until_visible(
    bootstrap: str, name: str, partitions: int, rdkafka: dict[str, Any], timeout: float = 30.0
) -> None:
    """CreateTopics returns before every broker's metadata has the topic; wait for it."""
    import time

    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, **rdkafka})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        topic = admin.list_topics(name, timeout=10).topics.get(name)
        if topic is not None and topic.error is None and len(topic.partitions) == partitions:
            return
        time.sleep(0.2)
    raise RuntimeError(f"topic {name} did not appear in the metadata within {timeout}s")


def count_messages(
    bootstrap: str, topic: str, partitions: int, timeout: float = 60.0, client: dict[str, Any] | None = None
) -> dict[int, int]:
    """Consume every partition from the beginning to its high watermark; the count per partition.
    ``client``: extra librdkafka settings (security)."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"count-{topic}", "enable.auto.commit": False, **(client or {})}
    )
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions) if ends[p] > 0])
        counts = dict.fromkeys(range(partitions), 0)
        positions = dict.fromkeys(range(partitions), 0)
        deadline = time.monotonic() + timeout
        while any(positions[p] < ends[p] for p in range(partitions)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not read {topic} to its end within {timeout}s")
            for message in consumer.consume(500, timeout=1.0):
                if message.error() is None:
                    counts[message.partition()] += 1
                    positions[message.partition()] = message.offset() + 1
        return counts
    finally:
        consumer.close()
