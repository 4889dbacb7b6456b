"""The znodes a ZooKeeper-mode Kafka keeps, and their JSON (pure, standard library only).

Layout as Kafka 2.8 reads and writes it (``kafka.zk.ZkData``):

* ``/brokers/ids/<id>``: a live broker's registration, ``{"rack": ..., ...}``
* ``/brokers/topics/<topic>``: ``{"version": ..., "partitions": {"0": [1, 2], ...}, ...}``
* ``/admin/reassign_partitions``: ``{"version": 1, "partitions": [{"topic", "partition", "replicas"}]}``,
  the legacy request the controller acts on and deletes once every listed partition is done
* ``/config/topics/<topic>``, ``/config/brokers/<id>``: ``{"version": 1, "config": {name: value}}``
* ``/config/changes/config_change_<sequence>``: ``{"version": 2, "entity_path": "topics/<topic>"}``,
  the notification that makes brokers reload an entity's configuration
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from kreassign.errors import ClusterError
from kreassign.model import Broker, TopicPartition

BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
CONFIG = "/config"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"
TOPIC_ENTITY = "topics"
BROKER_ENTITY = "brokers"


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def config_path(entity_type: str, name: str) -> str:
    return f"{CONFIG}/{entity_type}/{name}"


def _loads(data: bytes, path: str) -> dict:
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ClusterError(f"Unable to parse the JSON of znode {path}") from exc
    if not isinstance(value, dict):
        raise ClusterError(f"Unexpected JSON in znode {path}")
    return value


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def decode_broker(broker_id: int, data: bytes | None) -> Broker | None:
    if data is None:
        return None
    rack = _loads(data, broker_path(broker_id)).get("rack")
    return Broker(broker_id, rack if isinstance(rack, str) else None)


def decode_topic_assignment(topic: str, data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
    """Partition -> replicas of one topic; empty when the topic does not exist."""
    if data is None:
        return {}
    partitions = _loads(data, topic_path(topic)).get("partitions") or {}
    return {TopicPartition(topic, int(p)): tuple(int(r) for r in replicas) for p, replicas in partitions.items()}


def decode_reassignment(data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
    """The partitions of a pending legacy reassignment request; empty when there is none."""
    if data is None:
        return {}
    entries = _loads(data, REASSIGN_PARTITIONS).get("partitions") or []
    return {TopicPartition(e["topic"], int(e["partition"])): tuple(int(r) for r in e["replicas"]) for e in entries}


def encode_reassignment(partitions: Sequence[tuple[TopicPartition, Sequence[int]]]) -> bytes:
    return _dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                for tp, replicas in partitions
            ],
        }
    )


def decode_entity_config(path: str, data: bytes | None) -> dict[str, str]:
    if data is None:
        return {}
    config = _loads(data, path).get("config") or {}
    return {str(k): str(v) for k, v in config.items()}


def encode_entity_config(config: Mapping[str, str]) -> bytes:
    return _dumps({"version": 1, "config": dict(config)})


def encode_config_change(entity_type: str, name: str) -> bytes:
    return _dumps({"version": 2, "entity_path": f"{entity_type}/{name}"})
