"""The Kafka adapter's calls for traffic sampling (log start offsets, consumer groups' committed offsets),
as functions of a :class:`~kreassign.cluster.kafka.KafkaCluster` (its thin methods delegate here).
confluent-kafka is imported inside the functions."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kreassign.model import TopicPartition


def log_start_offsets(cluster: Any, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """The log start offset of each partition (ListOffsets, earliest); a partition that cannot be read now
    is left out."""
    from confluent_kafka import KafkaException
    from confluent_kafka import TopicPartition as NativeTopicPartition
    from confluent_kafka.admin import OffsetSpec

    call = "listOffsets(api=METADATA)"
    wanted = list(dict.fromkeys(partitions))
    if not wanted:
        return {}
    admin = cluster._librdkafka()
    natives = {NativeTopicPartition(tp.topic, tp.partition): tp for tp in wanted}
    futures = admin.list_offsets(dict.fromkeys(natives, OffsetSpec.earliest()), request_timeout=cluster.api_timeout_s)
    starts: dict[TopicPartition, int] = {}
    for native, future in futures.items():
        tp = natives.get(native) or TopicPartition(native.topic, native.partition)
        try:
            starts[tp] = cluster._outcome(future, call).offset
        except KafkaException:
            continue
    return {tp: starts[tp] for tp in wanted if tp in starts}


def committed_offsets(cluster: Any, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
    """Per partition, the offset each consumer group committed (groups without a commit on it left out):
    ListGroups, then OffsetFetch group by group."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

    wanted = set(partitions)
    if not wanted:
        return {}
    admin = cluster._librdkafka()
    listed = cluster._wait(admin.list_consumer_groups(request_timeout=cluster.api_timeout_s), "listConsumerGroups")
    groups = sorted(g.group_id for g in listed.valid)
    committed: dict[TopicPartition, dict[str, int]] = {}
    deadline = time.monotonic() + cluster.api_timeout_s
    for group in groups:
        if time.monotonic() >= deadline:
            break
        futures = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=cluster.api_timeout_s
        )
        for future in futures.values():
            try:
                answer = cluster._outcome(future, "listConsumerGroupOffsets")
            except KafkaException:
                continue  # a group that went away or cannot be read now: not counted
            for native in answer.topic_partitions or []:
                tp = TopicPartition(native.topic, native.partition)
                if tp in wanted and native.offset >= 0 and not native.error:
                    committed.setdefault(tp, {})[group] = native.offset
    return committed
