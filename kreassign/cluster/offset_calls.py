"""The adapter's offset calls: log end offsets of partitions (their leaders) and of replicas (each broker's own
log, for --progress), log start offsets and consumer groups' committed offsets (traffic sampling)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kreassign.cluster.kafka_errors import (
    LEADERSHIP_MOVED,
    UNKNOWN_TOPIC_EXCEPTION,
    UNKNOWN_TOPIC_OR_PARTITION,
    java_exception,
)
from kreassign.cluster.kafka_python_calls import RETRY_BACKOFF_S
from kreassign.cluster.librdkafka_calls import missing_partition_codes, refuse_names_librdkafka_would_cut
from kreassign.cluster.topic_calls import TopicCalls
from kreassign.errors import KreassignError, UnknownTopicOrPartitionError
from kreassign.model import TopicPartition, TopicPartitionReplica

# ListOffsets: the replica id of debugging tools (the broker answers from its local log, leader or
# follower, without isolation: the log end offset) and the LATEST timestamp.
_DEBUGGING_REPLICA_ID = -2
_LATEST_TIMESTAMP = -1


class OffsetCalls(TopicCalls):
    """ListOffsets and consumer group offsets of a ``KafkaCluster``."""

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as NativeTopicPartition
        from confluent_kafka.admin import OffsetSpec

        call = "listOffsets(api=METADATA)"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
        if not self.config.librdkafka_can_connect:

            def fail(missing: list[TopicPartition]) -> None:
                raise self._missing_partition_error(min(missing, key=wanted.index))

            return self._kp_list_offsets(wanted, earliest=False, on_missing=fail)
        refuse_names_librdkafka_would_cut([tp.topic for tp in wanted])
        admin = self._librdkafka()
        deadline = self._deadline()
        ends: dict[TopicPartition, int] = {}
        missing: list[TopicPartition] = []
        pending = wanted
        while pending:
            natives = {NativeTopicPartition(tp.topic, tp.partition): tp for tp in pending}
            remaining = max(deadline - time.monotonic(), 0.001)
            futures = admin.list_offsets(dict.fromkeys(natives, OffsetSpec.latest()), request_timeout=remaining)
            retry: list[TopicPartition] = []
            for native, future in futures.items():
                tp = natives.get(native) or TopicPartition(native.topic, native.partition)
                try:
                    ends[tp] = self._outcome(future, call, remaining).offset
                except KafkaException as exc:
                    error = exc.args[0]
                    if error.code() in missing_partition_codes():
                        missing.append(tp)
                    elif (error.retriable() or error.code() in LEADERSHIP_MOVED) and time.monotonic() < deadline:
                        retry.append(tp)  # leadership moved: ask the new leader, as Java does
                    else:
                        raise self.errors.from_librdkafka(error, call) from exc
            pending = retry
            if pending:
                time.sleep(RETRY_BACKOFF_S)
        if missing:
            raise self._missing_partition_error(min(missing, key=wanted.index))
        return {tp: ends[tp] for tp in wanted}

    def _missing_partition_error(self, tp: TopicPartition) -> UnknownTopicOrPartitionError:
        """Java's texts: an unknown topic names the partition; for a missing partition of a known topic
        Java retries until its deadline, here the error code's own message is given at once."""
        try:
            self.describe_topics([tp.topic])
        except UnknownTopicOrPartitionError:
            return UnknownTopicOrPartitionError(
                f"{UNKNOWN_TOPIC_EXCEPTION}: Failed to fetch metadata for partition {tp} because metadata "
                f"for topic `{tp.topic}` could not be found"
            )
        return UnknownTopicOrPartitionError(str(java_exception(UNKNOWN_TOPIC_OR_PARTITION)))

    def replica_log_end_offsets(self, replicas: Iterable[TopicPartitionReplica]) -> dict[TopicPartitionReplica, int]:
        """One ListOffsets (LATEST) per broker, sent as the debugging replica (id -2): the broker then
        answers from its own log, leader or follower, with the log end offset (not the high watermark).
        Partition errors (not hosted, not available ...) and brokers missing from the metadata leave the
        replica out."""
        from kafka.protocol.consumer.offsets import ListOffsetsRequest

        call = "listOffsets"
        wanted = list(dict.fromkeys(replicas))
        if not wanted:
            return {}
        by_broker = self._partitions_by_broker(wanted, call)
        known = self._known_brokers(by_broker, call)
        topic_type = ListOffsetsRequest.ListOffsetsTopic
        partition_type = topic_type.ListOffsetsPartition

        def builder(topics: Mapping[str, list[int]]) -> Callable[[], Any]:
            return lambda: ListOffsetsRequest(
                replica_id=_DEBUGGING_REPLICA_ID,
                isolation_level=0,
                topics=[
                    topic_type(
                        name=t,
                        partitions=[
                            partition_type(partition_index=p, timestamp=_LATEST_TIMESTAMP, current_leader_epoch=-1)
                            for p in parts
                        ],
                    )
                    for t, parts in topics.items()
                ],
                timeout_ms=int(self.api_timeout_s * 1000),
                min_version=1,
            )

        requests = {b: builder(topics) for b, topics in by_broker.items() if b in known}
        responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline())
        ends: dict[TopicPartitionReplica, int] = {}
        for broker_id, response in responses.items():
            for topic in response.topics:
                for p in topic.partitions:
                    if p.error_code == 0 and p.offset >= 0:
                        ends[TopicPartitionReplica(topic.name, p.partition_index, broker_id)] = p.offset
        return {r: ends[r] for r in wanted if r in ends}

    def log_start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The log start offset of each partition (ListOffsets, earliest); a partition that cannot be read now
        is left out."""
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as NativeTopicPartition
        from confluent_kafka.admin import OffsetSpec

        call = "listOffsets(api=METADATA)"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
        if not self.config.librdkafka_can_connect:
            try:
                return self._kp_list_offsets(wanted, earliest=True, on_missing=lambda _missing: None)
            except KreassignError:
                return {}  # cannot be read now: left out
        admin = self._librdkafka()
        natives = {NativeTopicPartition(tp.topic, tp.partition): tp for tp in wanted}
        futures = admin.list_offsets(dict.fromkeys(natives, OffsetSpec.earliest()), request_timeout=self.api_timeout_s)
        starts: dict[TopicPartition, int] = {}
        for native, future in futures.items():
            tp = natives.get(native) or TopicPartition(native.topic, native.partition)
            try:
                starts[tp] = self._outcome(future, call).offset
            except KafkaException:
                continue
        return {tp: starts[tp] for tp in wanted if tp in starts}

    def committed_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        """Per partition, the offset each consumer group committed (groups without a commit on it left out):
        ListGroups, then OffsetFetch group by group."""
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

        wanted = set(partitions)
        if not wanted:
            return {}
        if not self.config.librdkafka_can_connect:
            return self._kp_committed_offsets(wanted)
        admin = self._librdkafka()
        listed = self._wait(admin.list_consumer_groups(request_timeout=self.api_timeout_s), "listConsumerGroups")
        groups = sorted(g.group_id for g in listed.valid)
        committed: dict[TopicPartition, dict[str, int]] = {}
        deadline = time.monotonic() + self.api_timeout_s
        for group in groups:
            if time.monotonic() >= deadline:
                break
            futures = admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group)], request_timeout=self.api_timeout_s
            )
            for future in futures.values():
                try:
                    answer = self._outcome(future, "listConsumerGroupOffsets")
                except KafkaException:
                    continue  # a group that went away or cannot be read now: not counted
                for native in answer.topic_partitions or []:
                    tp = TopicPartition(native.topic, native.partition)
                    if tp in wanted and native.offset >= 0 and not native.error:
                        committed.setdefault(tp, {})[group] = native.offset
        return committed
