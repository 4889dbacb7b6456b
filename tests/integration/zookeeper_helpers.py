"""Observing a ZooKeeper-mode cluster in tests: znodes through kazoo, configs through the admin API."""

from __future__ import annotations

import json
import uuid
from contextlib import contextmanager

from kreassign.devcluster.cluster import ZooKeeperKafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES

THROTTLE_KEYS = BROKER_LEVEL_THROTTLES + TOPIC_LEVEL_THROTTLES


@contextmanager
def zookeeper(cluster: ZooKeeperKafkaCluster):
    from kazoo.client import KazooClient

    client = KazooClient(hosts=cluster.zookeeper_connect)
    client.start(timeout=30)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def znode_json(cluster: ZooKeeperKafkaCluster, path: str) -> dict | None:
    with zookeeper(cluster) as client:
        if not client.exists(path):
            return None
        return json.loads(client.get(path)[0])


def znode_throttles(cluster: ZooKeeperKafkaCluster, topics: list[str]) -> dict[str, dict[str, str]]:
    """Throttle entries of the config znodes of brokers 1-3 and of ``topics`` (empty ones left out)."""
    result = {}
    with zookeeper(cluster) as client:
        paths = [f"/config/brokers/{b}" for b in cluster.broker_ids] + [f"/config/topics/{t}" for t in topics]
        for path in paths:
            if client.exists(path):
                config = json.loads(client.get(path)[0]).get("config", {})
                found = {k: v for k, v in config.items() if k in THROTTLE_KEYS}
                if found:
                    result[path] = found
    return result


def config_changes(cluster: ZooKeeperKafkaCluster) -> list[dict]:
    with zookeeper(cluster) as client:
        children = sorted(client.get_children("/config/changes"))
        return [json.loads(client.get(f"/config/changes/{c}")[0]) for c in children]


def described_throttles(cluster: ZooKeeperKafkaCluster, topics: list[str]) -> dict[str, dict[str, str]]:
    """Throttles the brokers report (DescribeConfigs), i.e. what they applied from the znodes."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in cluster.broker_ids]
    resources += [ConfigResource(ResourceType.TOPIC, t) for t in topics]
    result = {}
    for resource in resources:  # librdkafka: one BROKER resource per call
        for res, future in admin.describe_configs([resource]).items():
            entries = future.result(timeout=20)
            found = {k: e.value for k, e in entries.items() if k in THROTTLE_KEYS and e.value and not e.is_default}
            if found:
                result[f"{res.restype_int}:{res.name}"] = found
    return result


def replicas(cluster: ZooKeeperKafkaCluster, topic: str) -> dict[int, list[int]]:
    """Replicas as the topic znode holds them (ZooKeeper is the source of truth in this mode)."""
    data = znode_json(cluster, f"/brokers/topics/{topic}") or {"partitions": {}}
    return {int(p): r for p, r in data["partitions"].items()}


def new_topic(cluster: ZooKeeperKafkaCluster, prefix: str, layout: list[list[int]], messages: int = 0) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    create_topic(cluster.bootstrap_servers, name, layout, messages=messages, size=1000)
    return name


def plan_json(topic: str, layout: dict[int, list[int]]) -> str:
    return json.dumps(
        {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]}
    )
