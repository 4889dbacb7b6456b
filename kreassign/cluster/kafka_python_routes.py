"""Every call the adapter makes through librdkafka, made through kafka-python instead, for the logins librdkafka's
wheel cannot make (SASL/GSSAPI: it is built without Kerberos). The requests are the ones Java's admin client
sends, to the nodes it sends them to: DescribeCluster and Metadata to any broker, DescribeConfigs and
IncrementalAlterConfigs for a broker to that broker (the rest to any broker), ElectLeaders to the controller,
ListOffsets to each partition's leader, ListGroups and OffsetFetch through kafka-python's admin client. Errors
read as Java's (``kafka_errors``), like the librdkafka path's."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kreassign.cluster.controller_quorum import (
    alter_configs_request,
    describe_configs_request,
    dynamic_config_values,
    raise_alter_config_errors,
)
from kreassign.cluster.kafka_clients import KafkaClients
from kreassign.cluster.kafka_errors import (
    ELECTION_NOT_NEEDED,
    UNKNOWN_TOPIC_EXCEPTION,
    UNKNOWN_TOPIC_OR_PARTITION,
    error_for,
    java_exception,
    partition_error,
)
from kreassign.cluster.librdkafka_calls import librdkafka_config_batches
from kreassign.cluster.port import ConfigOp, ConfigResource, ResourceType
from kreassign.errors import PartitionError, UnknownTopicOrPartitionError
from kreassign.javacompat.hashes import java_string_compare, java_string_hash
from kreassign.javacompat.hashmap import DEFAULT_JAVA_VERSION, copy_capacity, iteration_order
from kreassign.model import PartitionInfo, TopicPartition

_PREFERRED = 0  # ElectLeaders election type


class KafkaPythonRoutes(KafkaClients):
    """The librdkafka calls over kafka-python (used when ``config.librdkafka_can_connect`` is false)."""

    def _kp_metadata(self, names: Sequence[str] | None, call: str) -> Any:
        from kafka.protocol.metadata import MetadataRequest

        self._kafka_python_admin(call)
        topic_type = MetadataRequest.MetadataRequestTopic

        def build() -> Any:
            topics = None if names is None else [topic_type(name=name) for name in names]
            return MetadataRequest(topics=topics, allow_auto_topic_creation=False)

        return self._run_kafka_python(call, self._send_to_broker, None, build, self._deadline())

    def _kp_describe_topics(self, names: list[str]) -> dict[str, list[PartitionInfo]]:
        """Metadata for ``names``; a failure is reported for the topic Java checks first (HashMap order)."""
        response = self._kp_metadata(names, "listNodes")
        answers = {topic.name: topic for topic in response.topics}
        capacity = copy_capacity(len(names), DEFAULT_JAVA_VERSION)
        described: dict[str, list[PartitionInfo]] = {}
        for name in iteration_order(names, java_string_hash, java_string_compare, initial_capacity=capacity):
            topic = answers.get(name)
            code = UNKNOWN_TOPIC_OR_PARTITION if topic is None else topic.error_code
            if code == UNKNOWN_TOPIC_OR_PARTITION:
                raise UnknownTopicOrPartitionError(f"{UNKNOWN_TOPIC_EXCEPTION}: Topic {name} not found.")
            if code:
                raise error_for(java_exception(code))
            described[name] = sorted(
                (
                    PartitionInfo(
                        partition=p.partition_index,
                        replicas=tuple(p.replica_nodes),
                        isr=tuple(p.isr_nodes),
                        leader=p.leader_id if p.leader_id >= 0 else None,
                    )
                    for p in topic.partitions
                ),
                key=lambda info: info.partition,
            )
        return {name: described[name] for name in names}

    def _kp_list_topic_names(self) -> list[str]:
        response = self._kp_metadata(None, "listTopics")
        return sorted(topic.name for topic in response.topics if not topic.error_code)

    # -------------------------------------------------------------------------- configs
    def _kp_describe_configs(self, wanted: Sequence[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        call = "describeConfigs"
        self._kafka_python_admin(call)
        result: dict[ConfigResource, dict[str, str]] = {}
        for batch in librdkafka_config_batches(wanted):  # a broker's own resource goes to that broker
            node = int(batch[0].name) if batch[0].type is ResourceType.BROKER and batch[0].name else None
            response = self._run_kafka_python(
                call, self._send_to_broker, node, describe_configs_request(batch), self._deadline()
            )
            result.update(dynamic_config_values(response, batch))
        return {resource: result[resource] for resource in wanted}

    def _kp_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
        call = "incrementalAlterConfigs"
        self._kafka_python_admin(call)
        for batch in librdkafka_config_batches(list(changes)):
            node = int(batch[0].name) if batch[0].type is ResourceType.BROKER and batch[0].name else None
            subset = {resource: changes[resource] for resource in batch}
            response = self._run_kafka_python(
                call, self._send_to_broker, node, alter_configs_request(subset), self._deadline()
            )
            raise_alter_config_errors(response, subset)

    # -------------------------------------------------------------------------- leaders
    def _kp_elect_preferred_leaders(self, wanted: list[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        from kafka.protocol.admin import ElectLeadersRequest

        call = "electLeaders"
        self._kafka_python_admin(call)
        by_topic: dict[str, list[int]] = {}
        for tp in wanted:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topic_type = ElectLeadersRequest.TopicPartitions
        timeout_ms = int(self.api_timeout_s * 1000)

        def build() -> Any:
            topics = [topic_type(topic=t, partitions=p) for t, p in by_topic.items()]
            return ElectLeadersRequest(
                election_type=_PREFERRED, topic_partitions=topics, timeout_ms=timeout_ms, min_version=1
            )

        response = self._run_kafka_python(call, self._send_to_controller, build, self._deadline())
        if getattr(response, "error_code", 0):
            failure = partition_error(java_exception(response.error_code))
            return dict.fromkeys(wanted, failure)
        failures: dict[TopicPartition, PartitionError] = {}
        for topic in response.replica_election_results:
            for p in topic.partition_result:
                if p.error_code and p.error_code != ELECTION_NOT_NEEDED:
                    failures[TopicPartition(topic.topic, p.partition_id)] = partition_error(
                        java_exception(p.error_code, p.error_message)
                    )
        return failures

    # -------------------------------------------------------------------------- offsets
    def _kp_list_offsets(
        self, wanted: list[TopicPartition], earliest: bool, on_missing: Callable[[list[TopicPartition]], Any]
    ) -> dict[TopicPartition, int]:
        """Offsets from each partition's leader (kafka-python follows leadership moves until the deadline);
        ``on_missing`` decides what a partition the cluster does not know becomes."""
        from kafka import TopicPartition as NativeTopicPartition
        from kafka.admin import OffsetSpec

        call = "listOffsets(api=METADATA)"
        admin = self._kafka_python_admin(call)
        spec = OffsetSpec.EARLIEST if earliest else OffsetSpec.LATEST
        natives = {NativeTopicPartition(tp.topic, tp.partition): tp for tp in wanted}
        known = self._kp_describe_known(wanted)
        asked = {native: spec for native, tp in natives.items() if tp in known}
        missing = [tp for tp in wanted if tp not in known]
        if missing:
            on_missing(missing)
        answers = self._run_kafka_python(
            call, admin._async_list_partition_offsets, asked, 0, int(self.api_timeout_s * 1000)
        )
        return {natives[native]: answer.offset for native, answer in answers.items()}

    def _kp_describe_known(self, wanted: Iterable[TopicPartition]) -> set[TopicPartition]:
        topics = sorted({tp.topic for tp in wanted})
        response = self._kp_metadata(topics, "listOffsets(api=METADATA)")
        known = set()
        for topic in response.topics:
            if not topic.error_code:
                known.update(TopicPartition(topic.name, p.partition_index) for p in topic.partitions)
        return known

    def _kp_committed_offsets(self, wanted: set[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        call = "listConsumerGroups"
        admin = self._kafka_python_admin(call)
        try:
            groups = sorted(g.group_id for g in admin.list_groups())
        except Exception as exc:
            raise self.errors.from_kafka_python(exc, call) from exc
        committed: dict[TopicPartition, dict[str, int]] = {}
        for group in groups:
            try:
                offsets = admin.list_group_offsets([group]).get(group, {})
            except Exception:
                continue  # a group that went away or cannot be read now: not counted
            for native, answer in offsets.items():
                tp = TopicPartition(native.topic, native.partition)
                if tp in wanted and answer.offset >= 0:
                    committed.setdefault(tp, {})[group] = answer.offset
        return committed
