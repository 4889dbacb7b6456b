"""Shaping calls for confluent-kafka (librdkafka): its limits (one broker resource per config call, topic
names as C strings), its config values and error texts. confluent-kafka is imported inside functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kreassign.cluster.kafka_errors import INVALID_TOPIC, error_for, java_exception
from kreassign.cluster.port import ConfigResource, ResourceType


def librdkafka_config_batches(resources: Sequence[ConfigResource]) -> list[list[ConfigResource]]:
    """librdkafka takes at most one BROKER resource per call (it sends it to that broker): topics
    (and the cluster-wide broker default) go in one call, each broker in its own."""
    shared = [r for r in resources if r.type is not ResourceType.BROKER or r.name == ""]
    brokers = [[r] for r in resources if r.type is ResourceType.BROKER and r.name != ""]
    return ([shared] if shared else []) + brokers


def librdkafka_resource(resource: ConfigResource) -> Any:
    from confluent_kafka.admin import ConfigResource as NativeResource
    from confluent_kafka.admin import ResourceType as NativeType

    kind = NativeType.BROKER if resource.type is ResourceType.BROKER else NativeType.TOPIC
    return NativeResource(kind, resource.name)


def missing_partition_codes() -> tuple[int, ...]:
    from confluent_kafka import KafkaError

    return (
        KafkaError._NOENT,
        KafkaError._UNKNOWN_PARTITION,
        KafkaError._UNKNOWN_TOPIC,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
    )


def source_value(source: Any) -> int:
    return int(getattr(source, "value", source))


def without_librdkafka_prefix(text: str) -> str:
    """``<broker>: SASL authentication error: <broker text> (after 12ms in state AUTH_REQ)`` -> ``<broker text>``."""
    _, separator, tail = text.partition("SASL authentication error: ")
    text = tail if separator else text
    marker = text.rfind(" (after ")
    return text[:marker] if marker > 0 else text


def refuse_names_librdkafka_would_cut(topics: Iterable[str], configs: bool = False) -> None:
    """librdkafka takes topic names as C strings: ``a\\0b`` would go out as ``a``, another topic (whose
    throttles a --cancel would then clear). Java sends the whole name and the broker refuses it: give
    the broker's error without asking (for config requests the broker names the topic)."""
    for name in topics:
        if "\0" in name:
            detail = None
            if configs:
                detail = (
                    f"Topic name is invalid: '{name}' contains one or more characters other than "
                    "ASCII alphanumerics, '.', '_' and '-'"
                )
            raise error_for(java_exception(INVALID_TOPIC, detail))


def scrub_secrets(text: str, conf: Mapping[str, Any]) -> str:
    for key, value in conf.items():
        if isinstance(value, str) and value and ("password" in key or key.endswith(".pem")):
            text = text.replace(value, "****")
    return text
