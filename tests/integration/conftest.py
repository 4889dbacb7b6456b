"""Fixtures shared by the integration modules: a Kafka adapter on the 3-broker cluster, and topics
with an explicit layout that are deleted after the module."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka.admin import AdminClient

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.errors import UnknownTopicOrPartitionError
from tests.integration.waiting import wait_until


@pytest.fixture(scope="module")
def adapter(kafka_cluster) -> Iterator[KafkaCluster]:
    cluster = KafkaCluster(kafka_cluster.bootstrap_servers)
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def topics(kafka_cluster, adapter) -> Iterator[Callable[..., str]]:
    """Creates uniquely named topics with an explicit layout; deletes them after the module."""
    created: list[str] = []

    def known(name: str, partitions: int) -> bool:
        try:
            return len(adapter.describe_topics([name])[name]) == partitions
        except UnknownTopicOrPartitionError:
            return False

    def create(layout: list[list[int]], messages: int = 0, size: int = 100) -> str:
        name = f"adapter-{uuid.uuid4().hex[:10]}"
        create_topic(kafka_cluster.bootstrap_servers, name, layout, messages=messages, size=size)
        created.append(name)
        # every broker must know the topic (metadata reaches them one by one)
        wait_until(lambda: all(known(name, len(layout)) for _ in range(5)))
        return name

    yield create
    if created:
        admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
        for future in admin.delete_topics(created, operation_timeout=30).values():
            future.result(timeout=60)
