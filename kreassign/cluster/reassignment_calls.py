"""The adapter's reassignment calls: ListPartitionReassignments and AlterPartitionReassignments, through
kafka-python to the controller (brokers forward them in KRaft)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kreassign.cluster.broker_releases import replication_factor_change_refused
from kreassign.cluster.kafka_clients import KafkaClients
from kreassign.cluster.kafka_errors import error_for, java_exception, partition_error, partition_error_of_call
from kreassign.errors import ClusterError, PartitionError
from kreassign.model import PartitionReassignment, TopicPartition


class ReassignmentCalls(KafkaClients):
    """List and alter partition reassignments of a ``KafkaCluster``."""

    def list_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        call = "listPartitionReassignments"
        wanted = None if partitions is None else list(dict.fromkeys(partitions))
        if wanted is not None and not wanted:
            return {}
        topic_type = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        timeout_ms = int(self.api_timeout_s * 1000)

        def build() -> Any:
            if wanted is None:
                return ListPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=None)
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in wanted:
                by_topic[tp.topic].append(tp.partition)
            topics = [topic_type(name=t, partition_indexes=p) for t, p in by_topic.items()]
            return ListPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=topics)

        response = self._run_kafka_python(call, self._send_to_controller, build, self._deadline())
        if response.error_code:
            raise error_for(java_exception(response.error_code, response.error_message))
        return {
            TopicPartition(topic.name, p.partition_index): PartitionReassignment(
                replicas=tuple(p.replicas), adding=tuple(p.adding_replicas), removing=tuple(p.removing_replicas)
            )
            for topic in response.topics
            for p in topic.partitions
        }

    def alter_reassignments(
        self,
        targets: Mapping[TopicPartition, Sequence[int] | None],
        allow_replication_factor_change: bool = True,
    ) -> dict[TopicPartition, PartitionError]:
        """One AlterPartitionReassignments request. As in Java, every failure is per partition, with
        ``getMessage()`` of the partition's exception, including failures of the whole call."""
        from kafka.protocol.admin import AlterPartitionReassignmentsRequest

        call = "alterPartitionReassignments"
        if not targets:
            return {}
        topic_type = AlterPartitionReassignmentsRequest.ReassignableTopic
        partition_type = topic_type.ReassignablePartition
        timeout_ms = int(self.api_timeout_s * 1000)

        def build() -> Any:
            by_topic: dict[str, list[Any]] = defaultdict(list)
            for tp, replicas in targets.items():
                by_topic[tp.topic].append(
                    partition_type(partition_index=tp.partition, replicas=None if replicas is None else list(replicas))
                )
            fields: dict[str, Any] = {
                "timeout_ms": timeout_ms,
                "topics": [topic_type(name=t, partitions=p) for t, p in by_topic.items()],
            }
            if not allow_replication_factor_change:  # KIP-860, AlterPartitionReassignments v1
                fields.update(allow_replication_factor_change=False, min_version=1)
            return AlterPartitionReassignmentsRequest(**fields)

        try:
            response = self._run_kafka_python(call, self._send_to_controller, build, self._deadline())
        except ClusterError as failure:  # Java fails every partition's future with the call's exception
            refused = None if allow_replication_factor_change else replication_factor_change_refused(failure)
            return dict.fromkeys(targets, refused or partition_error_of_call(failure))
        if response.error_code:
            return dict.fromkeys(targets, partition_error(java_exception(response.error_code, response.error_message)))
        failures: dict[TopicPartition, PartitionError] = {}
        answered: set[TopicPartition] = set()
        for topic in response.responses:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                answered.add(tp)
                if p.error_code:
                    failures[tp] = partition_error(java_exception(p.error_code, p.error_message))
        for tp in targets:
            if tp not in answered:
                failures[tp] = PartitionError(f"The controller response did not contain a result for partition {tp}")
        return failures
