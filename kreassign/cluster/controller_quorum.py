"""The KRaft controller quorum as Java's admin client uses it with ``bootstrap.controllers``
(``--bootstrap-controller``), over kafka-python connections: DescribeCluster (endpoint type CONTROLLER)
to a bootstrap controller finds the controllers and the active one; requests then go to a controller by
id. Controllers serve DescribeCluster, the config calls and the reassignment calls (sent to the active
controller); they do not answer Metadata, so kafka-python's bootstrap is not used."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kreassign.cluster.kafka_errors import NOT_CONTROLLER, error_for, java_exception
from kreassign.cluster.kafka_python_calls import UnknownNodes, pause_or_time_out, retriable_kafka_python_errors
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.errors import ClusterError
from kreassign.model import Broker

DESCRIBE_CLUSTER_CONTROLLERS = 2  # DescribeCluster EndpointType.CONTROLLER
# DescribeConfigs / IncrementalAlterConfigs wire values.
RESOURCE_TYPE_CODES = {ResourceType.TOPIC: 2, ResourceType.BROKER: 4}
DYNAMIC_SOURCES = {ResourceType.TOPIC: 1, ResourceType.BROKER: 2}  # DYNAMIC_TOPIC / DYNAMIC_BROKER
OPERATION_CODES = {OpType.SET: 0, OpType.DELETE: 1}


@dataclass(frozen=True)
class DescribedQuorum:
    active_controller: int
    nodes: list[Broker]
    cluster_id: str | None = None


class ControllerQuorum:
    """kafka-python connections to the controllers: one to the bootstrap controllers, one per other
    controller address, all on one network thread (``run`` executes a coroutine there)."""

    def __init__(self, bootstrap: str, config: Mapping[str, Any]) -> None:
        from kafka.net.manager import KafkaConnectionManager
        from kafka.net.selector import NetworkSelector

        self._manager_type = KafkaConnectionManager
        self._config = dict(config)
        self._net = NetworkSelector(**self._config)
        self._net.start()
        self._bootstrap = KafkaConnectionManager(self._net, bootstrap_servers=bootstrap, **self._config)
        self._by_address: dict[tuple[str, int], Any] = {}
        self._described: DescribedQuorum | None = None

    def run(self, coroutine: Callable[..., Any], *args: Any) -> Any:
        return self._net.run(coroutine, *args)

    async def describe(self, deadline: float) -> DescribedQuorum:
        from kafka.protocol.admin import DescribeClusterRequest

        while True:
            for node in self._bootstrap.cluster.bootstrap_brokers():
                request = DescribeClusterRequest(
                    include_cluster_authorized_operations=False,
                    endpoint_type=DESCRIBE_CLUSTER_CONTROLLERS,
                    min_version=1,
                )
                try:
                    response = await self._bootstrap.send(request, node_id=node.node_id)
                except retriable_kafka_python_errors():
                    continue
                if response.error_code:
                    raise error_for(java_exception(response.error_code, response.error_message))
                nodes = [Broker(b.broker_id, b.rack, b.host, b.port) for b in response.brokers]
                self._described = DescribedQuorum(response.controller_id, nodes, response.cluster_id or None)
                return self._described
            await pause_or_time_out(self._net, deadline, TimeoutError("no bootstrap controller answered"))

    async def send_to_active(self, build: Callable[[], Any], deadline: float) -> Any:
        while True:
            described = self._described or await self.describe(deadline)
            if described.active_controller < 0:
                self._described = None
                await pause_or_time_out(self._net, deadline, TimeoutError("no active controller"))
                continue
            response = await self.send_to_node(described.active_controller, build, deadline)
            if getattr(response, "error_code", 0) == NOT_CONTROLLER:
                self._described = None
                await pause_or_time_out(self._net, deadline, TimeoutError("controller moved"))
                continue
            return response

    async def send_to_node(self, node_id: int, build: Callable[[], Any], deadline: float) -> Any:
        while True:
            described = self._described or await self.describe(deadline)
            node = next((n for n in described.nodes if n.id == node_id), None)
            if node is None:
                self._described = None
                await pause_or_time_out(self._net, deadline, TimeoutError(f"controller {node_id} unknown"))
                continue
            manager, manager_node = self._manager_for(node.host, node.port)
            try:
                return await manager.send(build(), node_id=manager_node)
            except retriable_kafka_python_errors() as exc:
                await pause_or_time_out(self._net, deadline, exc)

    # -------------------------------------------------------------------------- configs
    async def describe_configs(
        self, wanted: Sequence[ConfigResource], deadline: float
    ) -> dict[ConfigResource, dict[str, str]]:
        """Dynamic values only. A broker resource goes to that controller (an unknown id ends the call
        with ``UnknownNodes``), the others to the active controller, as Java does."""
        described = await self.describe(deadline)
        controller_ids = {str(node.id) for node in described.nodes}
        targets: dict[int | None, list[ConfigResource]] = defaultdict(list)  # None: the active controller
        for resource in wanted:
            if resource.type is ResourceType.BROKER and resource.name != "":
                if resource.name not in controller_ids:
                    raise UnknownNodes([resource.name], controller_ids)
                targets[int(resource.name)].append(resource)
            else:
                targets[None].append(resource)
        result: dict[ConfigResource, dict[str, str]] = {}
        for node_id, batch in targets.items():
            build = describe_configs_request(batch)
            if node_id is None:
                response = await self.send_to_active(build, deadline)
            else:
                response = await self.send_to_node(node_id, build, deadline)
            result.update(dynamic_config_values(response, batch))
        return {resource: result[resource] for resource in wanted}

    async def alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]], deadline: float) -> None:
        """With bootstrap controllers Java sends every resource to the active controller."""
        response = await self.send_to_active(alter_configs_request(changes), deadline)
        raise_alter_config_errors(response, changes)

    # -------------------------------------------------------------------------- connections
    def _manager_for(self, host: str, port: int) -> tuple[Any, str]:
        for node in self._bootstrap.cluster.bootstrap_brokers():
            if (node.host, node.port) == (host, port):
                return self._bootstrap, node.node_id
        if (host, port) not in self._by_address:
            self._by_address[(host, port)] = self._manager_type(
                self._net, bootstrap_servers=f"{host}:{port}", **self._config
            )
        manager = self._by_address[(host, port)]
        return manager, manager.cluster.bootstrap_brokers()[0].node_id

    def close(self) -> None:
        for manager in [self._bootstrap, *self._by_address.values()]:
            with contextlib.suppress(Exception):
                manager.close()
        self._net.stop()


# ------------------------------------------------------------------------------ config requests (any node)
def describe_configs_request(batch: Sequence[ConfigResource]) -> Callable[[], Any]:
    """A builder of the DescribeConfigs request for ``batch`` (no synonyms, no documentation)."""
    from kafka.protocol.admin import DescribeConfigsRequest

    resource_type = DescribeConfigsRequest.DescribeConfigsResource

    def build() -> Any:
        return DescribeConfigsRequest(
            resources=[
                resource_type(resource_type=RESOURCE_TYPE_CODES[r.type], resource_name=r.name, configuration_keys=None)
                for r in batch
            ],
            include_synonyms=False,
            include_documentation=False,
        )

    return build


def dynamic_config_values(response: Any, batch: Sequence[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
    """The dynamic values of each resource of a DescribeConfigs answer; its first error raised as Java's."""
    by_key = {(r.resource_type, r.resource_name): r for r in response.results}
    result: dict[ConfigResource, dict[str, str]] = {}
    for resource in batch:
        answer = by_key.get((RESOURCE_TYPE_CODES[resource.type], resource.name))
        if answer is None:
            raise ClusterError(f"org.apache.kafka.common.KafkaException: no result for {resource}")
        if answer.error_code:
            raise error_for(java_exception(answer.error_code, answer.error_message))
        result[resource] = {
            c.name: c.value
            for c in answer.configs
            if c.config_source == DYNAMIC_SOURCES[resource.type] and c.value is not None
        }
    return result


def alter_configs_request(changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> Callable[[], Any]:
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    resource_type = IncrementalAlterConfigsRequest.AlterConfigsResource
    config_type = resource_type.AlterableConfig

    def build() -> Any:
        return IncrementalAlterConfigsRequest(
            resources=[
                resource_type(
                    resource_type=RESOURCE_TYPE_CODES[resource.type],
                    resource_name=resource.name,
                    configs=[
                        config_type(name=op.name, config_operation=OPERATION_CODES[op.op], value=op.value) for op in ops
                    ],
                )
                for resource, ops in changes.items()
            ],
            validate_only=False,
        )

    return build


def raise_alter_config_errors(response: Any, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
    by_key = {(r.resource_type, r.resource_name): r for r in response.responses}
    for resource in changes:
        answer = by_key.get((RESOURCE_TYPE_CODES[resource.type], resource.name))
        if answer is not None and answer.error_code:
            raise error_for(java_exception(answer.error_code, answer.error_message))
