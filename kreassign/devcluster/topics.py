"""Create topics with an explicit replica layout and fill them with data (tests and the demo)."""

from __future__ import annotations


def create_topic(bootstrap: str, name: str, layout: list[list[int]], messages: int = 0, size: int = 100) -> None:
    """``layout[p]`` is partition p's replica list; ``messages`` records of ``size`` bytes, acks=all.

    (kafka-python creates the topic: confluent-kafka 2.16 rejects explicit replica assignments.)
    """
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, replica_assignments=dict(enumerate(layout)))])
    finally:
        admin.close()
    if messages:
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
        payload = b"v" * size
        for i in range(messages):
            producer.produce(name, value=payload, partition=i % len(layout))
            if i % 5000 == 0:
                producer.poll(0)
        if producer.flush(120) != 0:
            raise RuntimeError(f"could not produce {messages} messages to {name}")
