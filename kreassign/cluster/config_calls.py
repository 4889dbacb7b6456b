"""The adapter's config calls: DescribeConfigs (dynamic values only) and IncrementalAlterConfigs, through
librdkafka to the brokers, or kafka-python to the controllers with ``--bootstrap-controller``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kreassign.cluster.kafka_errors import UNKNOWN_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION, java_exception
from kreassign.cluster.kafka_python_routes import KafkaPythonRoutes
from kreassign.cluster.librdkafka_calls import (
    librdkafka_config_batches,
    librdkafka_resource,
    refuse_names_librdkafka_would_cut,
    source_value,
)
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.errors import UnknownTopicOrPartitionError


class ConfigCalls(KafkaPythonRoutes):
    """DescribeConfigs and IncrementalAlterConfigs of a ``KafkaCluster``."""

    def describe_configs(self, resources: Iterable[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        """Dynamic values only: DYNAMIC_TOPIC_CONFIG for topics, DYNAMIC_BROKER_CONFIG (per broker) for brokers."""
        call = "describeConfigs"
        wanted = list(dict.fromkeys(resources))
        if not wanted:
            return {}
        if self.using_controllers:
            return self._run_kafka_python(call, self._controller_quorum().describe_configs, wanted, self._deadline())
        if not self.config.librdkafka_can_connect:
            unknown = self._unknown_broker_resources(wanted)
            if unknown:
                raise self._unknown_brokers_error(call, [r.name for r in unknown])
            return self._kp_describe_configs(wanted)
        from confluent_kafka.admin import ConfigSource

        refuse_names_librdkafka_would_cut([r.name for r in wanted if r.type is ResourceType.TOPIC], configs=True)
        unknown = self._unknown_broker_resources(wanted)
        if unknown:
            raise self._unknown_brokers_error(call, [r.name for r in unknown])
        admin = self._librdkafka()
        submitted: dict[ConfigResource, Any] = {}
        for batch in librdkafka_config_batches(wanted):
            futures = admin.describe_configs(
                [librdkafka_resource(r) for r in batch], request_timeout=self.api_timeout_s
            )
            submitted.update(zip(batch, futures.values(), strict=True))
        dynamic = {
            ResourceType.TOPIC: ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
            ResourceType.BROKER: ConfigSource.DYNAMIC_BROKER_CONFIG.value,
        }
        result: dict[ConfigResource, dict[str, str]] = {}
        for resource in wanted:
            try:
                entries = self._wait(submitted[resource], call)
            except UnknownTopicOrPartitionError as exc:
                if exc.message != str(java_exception(UNKNOWN_TOPIC_OR_PARTITION)):
                    raise
                # The broker's message is empty here; librdkafka shows its own text instead.
                raise UnknownTopicOrPartitionError(f"{UNKNOWN_TOPIC_EXCEPTION}: ") from exc.__cause__
            result[resource] = {
                name: entry.value
                for name, entry in entries.items()
                if source_value(entry.source) == dynamic[resource.type] and entry.value is not None
            }
        return result

    def incremental_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
        call = "incrementalAlterConfigs"
        wanted = [r for r in dict.fromkeys(changes) if changes[r]]
        if not wanted:
            return
        if self.using_controllers:
            targets = {r: changes[r] for r in wanted}
            self._run_kafka_python(call, self._controller_quorum().alter_configs, targets, self._deadline())
            return
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

        refuse_names_librdkafka_would_cut([r.name for r in wanted if r.type is ResourceType.TOPIC], configs=True)
        # Java alters every resource it can reach and times out on a broker missing from the metadata:
        # alter the others, then fail for the missing ones (at once, where Java waits until its deadline).
        unknown = self._unknown_broker_resources(wanted)
        sendable = [r for r in wanted if r not in unknown]
        if not self.config.librdkafka_can_connect:
            self._kp_alter_configs({r: changes[r] for r in sendable})
            if unknown:
                raise self._unknown_brokers_error(call, [r.name for r in unknown])
            return
        admin = self._librdkafka()
        operations = {OpType.SET: AlterConfigOpType.SET, OpType.DELETE: AlterConfigOpType.DELETE}
        submitted: dict[ConfigResource, Any] = {}
        for batch in librdkafka_config_batches(sendable):
            natives = []
            for resource in batch:
                native = librdkafka_resource(resource)
                native.incremental_configs = [
                    ConfigEntry(op.name, op.value, incremental_operation=operations[op.op]) for op in changes[resource]
                ]
                natives.append(native)
            futures = admin.incremental_alter_configs(natives, request_timeout=self.api_timeout_s)
            submitted.update(zip(batch, futures.values(), strict=True))
        for resource in sendable:
            self._wait(submitted[resource], call)
        if unknown:
            raise self._unknown_brokers_error(call, [r.name for r in unknown])

    def _unknown_broker_resources(self, resources: Sequence[ConfigResource]) -> list[ConfigResource]:
        """The broker resources naming an id the cluster does not report (Java waits for them until its
        deadline)."""
        named = [r for r in resources if r.type is ResourceType.BROKER and r.name != ""]
        if not named:
            return []
        live = {str(b.id) for b in self.describe_brokers()}
        return [r for r in named if r.name not in live]
