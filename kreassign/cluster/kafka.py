"""The ClusterPort over a real Kafka cluster.

confluent-kafka (librdkafka) describes the cluster and topics, reads and alters configs, elects
leaders and lists offsets. librdkafka has no AlterPartitionReassignments, ListPartitionReassignments,
DescribeLogDirs or AlterReplicaLogDirs, so those four go through kafka-python, whose client is made
only when one of them is first needed. With ``--bootstrap-controller`` (KRaft controllers, which
librdkafka cannot talk to) kafka-python also carries DescribeCluster and the config calls, exactly the
calls Java's admin client supports against controllers; the others fail like Java's do. The batched
executor's reads of topic metadata in each poll (``read_topics``) are kafka-python Metadata requests too:
librdkafka's describeTopics took 3 to 8 times as long for a topic of 2,000 partitions.

Both clients are imported inside methods, so importing this module stays cheap.

Errors carry the text the Apache tool prints after ``Error: ``: Java's exception class and
``getMessage()``, which is the broker's error message when it sent one, else the default message
of the Kafka error code (``kafka_errors``); the clients' own failures read the same way
(``client_errors``). Where Java would wait for a broker that is not in the cluster metadata until its
deadline, the same error is raised at once, after the calls Java completes meanwhile.

Modules of this adapter: ``controller_quorum`` (``--bootstrap-controller``), ``kafka_python_calls`` and
``librdkafka_calls`` (shaping calls for each client), ``client_config`` (``--command-config``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.client_errors import ClientErrors
from kreassign.cluster.controller_quorum import ControllerQuorum
from kreassign.cluster.kafka_errors import (
    ELECTION_NOT_NEEDED,
    ERRORS_PACKAGE,
    INVALID_TOPIC,
    KAFKA_STORAGE_ERROR,
    LEADERSHIP_MOVED,
    UNKNOWN_TOPIC_EXCEPTION,
    UNKNOWN_TOPIC_OR_PARTITION,
    JavaException,
    error_for,
    java_exception,
    partition_error,
    partition_error_of_call,
)
from kreassign.cluster.kafka_python_calls import (
    RETRY_BACKOFF_S,
    CallTimedOut,
    UnknownNodes,
    pause_or_time_out,
    retriable_kafka_python_errors,
)
from kreassign.cluster.librdkafka_calls import (
    librdkafka_config_batches,
    librdkafka_resource,
    missing_partition_codes,
    refuse_names_librdkafka_would_cut,
    scrub_secrets,
    source_value,
)
from kreassign.cluster.port import (
    ConfigOp,
    ConfigResource,
    LogDirUsage,
    OpType,
    ReplicaLogDirInfo,
    ResourceType,
    read_topic_columns,
)
from kreassign.errors import (
    ClusterError,
    ClusterTimeoutError,
    CommandError,
    ConfigError,
    KreassignError,
    PartitionError,
    UnknownTopicOrPartitionError,
)
from kreassign.javacompat.hashes import java_replica_hash, java_string_compare, java_string_hash
from kreassign.javacompat.hashmap import DEFAULT_JAVA_VERSION, copy_capacity, iteration_order
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    TopicColumns,
    TopicPartition,
    TopicPartitionReplica,
)
from kreassign.planning.placement import describe_cluster_node_order

LOG = logging.getLogger(__name__)
LOG.addHandler(logging.NullHandler())
# librdkafka's own log lines (connection refused, ...) go to this logger; the CLI decides whether to show them.
LIBRDKAFKA_LOG = logging.getLogger(f"{__name__}.librdkafka")

RF_CHANGE_UNSUPPORTED = (
    "The broker does not support the AllowReplicationFactorChange option for the "
    "AlterPartitionReassignments API. Consider re-sending the request without the option or updating "
    "the server version"
)

# ListOffsets: the replica id of debugging tools (the broker answers from its local log, leader or
# follower, without isolation: the log end offset) and the LATEST timestamp.
_DEBUGGING_REPLICA_ID = -2
_LATEST_TIMESTAMP = -1

_GRACE_S = 5.0  # on top of the client's own deadline, before giving up waiting on a future
_POLL_INTERVAL_S = 0.05  # how often librdkafka's error callback is served while waiting
_REFUSED_GRACE_S = 5.0  # how long every bootstrap address may refuse connections before a call fails
_REFUSED_PROBE_INTERVAL_S = 0.5


# ------------------------------------------------------------------------------ the adapter
class KafkaCluster:
    """``ClusterPort`` over Kafka, like the Apache tool's ``Admin`` (no connection until first use).

    ``request_timeout_s`` is the per-call deadline (Java's ``default.api.timeout.ms``, 60 s); a
    ``default.api.timeout.ms`` in the client config takes precedence, as in Java.
    """

    def __init__(
        self,
        bootstrap_servers: str | None = None,
        bootstrap_controllers: str | None = None,
        client_config: ClientConfig | None = None,
        request_timeout_s: float = 60,
    ) -> None:
        if (bootstrap_servers is None) == (bootstrap_controllers is None):
            raise ValueError("KafkaCluster needs exactly one of bootstrap_servers and bootstrap_controllers")
        self.bootstrap_servers = bootstrap_servers
        self.bootstrap_controllers = bootstrap_controllers
        self.config = client_config or ClientConfig()
        self.config.check_bootstrap(using_controllers=bootstrap_controllers is not None)
        configured = self.config.default_api_timeout_ms
        if configured is not None:
            self.api_timeout_s = configured / 1000.0
        else:
            self.api_timeout_s = max(float(request_timeout_s), self.config.request_timeout_ms / 1000.0)
        self.errors = ClientErrors(
            self.address, self.using_controllers, self.api_timeout_s, self.config.security_protocol
        )
        self._admin: Any = None  # confluent_kafka.admin.AdminClient
        self._legacy: Any = None  # kafka.admin.KafkaAdminClient
        self._quorum: ControllerQuorum | None = None
        self._fatal_errors: list[Any] = []  # librdkafka authentication / TLS errors (KafkaError)
        self._contacted = False  # the bootstrap addresses were probed once (see _check_listening)

    def __repr__(self) -> str:
        where = f"bootstrap_servers={self.bootstrap_servers!r}"
        if self.bootstrap_controllers is not None:
            where = f"bootstrap_controllers={self.bootstrap_controllers!r}"
        return f"KafkaCluster({where}, {self.config!r})"

    @property
    def address(self) -> str:
        return self.bootstrap_servers or self.bootstrap_controllers or ""

    @property
    def using_controllers(self) -> bool:
        return self.bootstrap_controllers is not None

    # -------------------------------------------------------------------------- clients
    def _librdkafka(self) -> Any:
        """confluent-kafka's AdminClient (brokers only: librdkafka cannot talk to controllers)."""
        if self.using_controllers:
            raise self.errors.unsupported_with_controllers()
        if self._admin is None:
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient

            conf = {
                # librdkafka keeps using a stopped broker (as the controller, too) until its metadata is
                # refreshed, every 5 minutes by default: each admin call then hangs for the whole API timeout.
                # Measured on the local cluster: 60 s hangs with the default, none with 5 s.
                "topic.metadata.refresh.interval.ms": 5000,
                **self.config.librdkafka_config(),
                "bootstrap.servers": self.bootstrap_servers,
                "logger": LIBRDKAFKA_LOG,
                "error_cb": self._on_librdkafka_error,
            }
            try:
                self._admin = AdminClient(conf)
            except (KafkaException, ValueError, TypeError) as exc:
                raise ConfigError(
                    "the Kafka client (librdkafka) refused the client configuration: "
                    + scrub_secrets(str(exc), self.config.librdkafka_config())
                ) from None
        return self._admin

    def _kafka_python_admin(self, call: str) -> Any:
        """kafka-python's KafkaAdminClient, bootstrapped from the brokers on first use."""
        if self._legacy is None:
            from kafka.admin import KafkaAdminClient

            # kafka-python retries failed TLS handshakes until its deadline; librdkafka tells at once
            # whether the cluster answers and the credentials work (one DescribeCluster).
            self._wait(self._librdkafka().describe_cluster(request_timeout=self.api_timeout_s), call)
            conf = self._kafka_python_config()
            try:
                self._legacy = KafkaAdminClient(
                    bootstrap_servers=self.bootstrap_servers,
                    bootstrap_timeout_ms=int(self.api_timeout_s * 1000),
                    **conf,
                )
            except Exception as exc:
                raise self.errors.from_kafka_python(exc, call) from exc
        return self._legacy

    def _controller_quorum(self) -> ControllerQuorum:
        if self._quorum is None:
            self._quorum = ControllerQuorum(str(self.bootstrap_controllers), self._kafka_python_config())
        return self._quorum

    def _kafka_python_config(self) -> dict[str, Any]:
        conf = self.config.kafka_python_config()
        conf["request_timeout_ms"] = int(min(conf["request_timeout_ms"], self.api_timeout_s * 1000))
        return conf

    def _deadline(self, timeout_s: float | None = None) -> float:
        return time.monotonic() + (self.api_timeout_s if timeout_s is None else timeout_s)

    def _check_listening(self, call: str) -> None:
        """Before the first call's answer: when every bootstrap address refuses the TCP connection (nothing
        listens there) for :data:`_REFUSED_GRACE_S`, fail with Java's timeout error at once instead of
        after the whole deadline. A listener that accepts, a firewall that drops, anything else: no change."""
        if self._contacted:
            return
        self._contacted = True
        from kreassign.cluster.bootstrap import parse_bootstrap_addresses, refused_everywhere

        try:
            addresses = parse_bootstrap_addresses(self.address)
        except CommandError:
            return
        started = time.monotonic()
        while refused_everywhere(addresses):
            waited = time.monotonic() - started
            if waited >= _REFUSED_GRACE_S:
                raise self.errors.refused(call, round(waited))
            time.sleep(_REFUSED_PROBE_INTERVAL_S)

    def _outcome(self, future: Any, call: str, timeout_s: float | None = None) -> Any:
        """Wait for a confluent-kafka future; its ``KafkaException`` is raised as is.

        librdkafka reports authentication and TLS failures only through ``error_cb``, served by
        ``poll()``, and keeps retrying: poll while waiting, and fail at the first such error as Java does.
        """
        import concurrent.futures

        deadline = time.monotonic() + (self.api_timeout_s if timeout_s is None else timeout_s) + _GRACE_S
        while True:
            try:
                result = future.result(timeout=_POLL_INTERVAL_S)
                self._contacted = True
                return result
            except concurrent.futures.TimeoutError:
                self._check_listening(call)
                self._admin.poll(0)
                if self._fatal_errors:
                    raise self.errors.from_librdkafka(self._fatal_errors[0], call) from None
                if time.monotonic() >= deadline:
                    raise self.errors.timeout(call) from None

    def _on_librdkafka_error(self, error: Any) -> None:
        from confluent_kafka import KafkaError

        if error.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL):
            self._fatal_errors.append(error)
        LOG.debug("librdkafka: %s", error.str())

    def _wait(self, future: Any, call: str) -> Any:
        """The result of a confluent-kafka future, or the Java-like error."""
        from confluent_kafka import KafkaError, KafkaException

        try:
            return self._outcome(future, call)
        except KafkaException as exc:
            error = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
            if error is None:
                raise ClusterError(f"org.apache.kafka.common.KafkaException: {exc}") from exc
            raise self.errors.from_librdkafka(error, call) from exc

    def _run_kafka_python(self, call: str, coroutine: Callable[..., Any], *args: Any) -> Any:
        """Run a coroutine on kafka-python's I/O thread; its errors become Java-like errors."""
        if self.using_controllers:
            self._check_listening(call)
        runner = self._controller_quorum() if self.using_controllers else self._kafka_python_admin(call)._manager
        try:
            return runner.run(coroutine, *args)
        except UnknownNodes as unknown:
            raise self.errors.unknown_nodes(call, unknown.missing, unknown.known) from None
        except CallTimedOut:
            raise self.errors.timeout(call) from None
        except Exception as exc:
            raise self.errors.from_kafka_python(exc, call) from exc

    async def _send_to_controller(self, build: Callable[[], Any], deadline: float) -> Any:
        """Send to the controller (brokers forward it in KRaft), retrying until the deadline."""
        if self.using_controllers:
            return await self._controller_quorum().send_to_active(build, deadline)
        import kafka.errors as errors

        admin = self._legacy

        def errors_of(response: Any) -> Iterable[Any]:
            yield errors.for_code(getattr(response, "error_code", 0))

        while True:
            try:
                return await admin._send_request_to_controller(build(), errors_of, False)
            except retriable_kafka_python_errors() as exc:
                # kafka-python keeps the controller id it found first; if that broker went away, find the
                # current one (in KRaft any live broker forwards to the quorum) instead of waiting for it
                admin._controller_id = None
                await pause_or_time_out(admin._net, deadline, exc)

    async def _send_to_broker(self, broker_id: int | None, build: Callable[[], Any], deadline: float) -> Any:
        manager = self._legacy._manager
        while True:
            # one request never outlives the call's deadline (a broker stopped after the call began)
            remaining_ms = max(1, int((deadline - time.monotonic()) * 1000))
            try:
                return await manager.send(
                    build(), node_id=broker_id, request_timeout_ms=min(remaining_ms, self.config.request_timeout_ms)
                )
            except retriable_kafka_python_errors() as exc:
                await pause_or_time_out(manager._net, deadline, exc)

    def _partitions_by_broker(
        self, replicas: Sequence[TopicPartitionReplica], call: str
    ) -> dict[int, dict[str, list[int]]]:
        """The replicas grouped by broker then topic, for one kafka-python request per broker (which
        controllers do not serve)."""
        if self.using_controllers:
            raise self.errors.unsupported_with_controllers()
        self._kafka_python_admin(call)
        by_broker: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for replica in replicas:
            by_broker[replica.broker_id][replica.topic].append(replica.partition)
        return by_broker

    def _known_brokers(self, broker_ids: Iterable[int], call: str) -> set[int]:
        """The ids among ``broker_ids`` that kafka-python's metadata knows, refreshing it once when
        some are missing (a broker may have just restarted), as Java's admin client does."""
        wanted = set(broker_ids)
        cluster = self._legacy._manager.cluster
        if any(cluster.broker_metadata(b) is None for b in wanted):
            self._run_kafka_python(call, cluster.refresh_metadata)
        return {b for b in wanted if cluster.broker_metadata(b) is not None}

    # -------------------------------------------------------------------------- cluster and topics
    def describe_brokers(self) -> list[Broker]:
        """Live brokers (with ``--bootstrap-controller``: controllers) in the order of Java's
        ``describeCluster().nodes()``, the values of a HashMap keyed by node id."""
        call = "listNodes"
        if self.using_controllers:
            nodes = self._run_kafka_python(call, self._controller_quorum().describe, self._deadline()).nodes
        else:
            admin = self._librdkafka()
            described = self._wait(admin.describe_cluster(request_timeout=self.api_timeout_s), call)
            nodes = [Broker(n.id, n.rack, n.host, n.port) for n in described.nodes]
        return describe_cluster_node_order(nodes)

    def describe_topic_columns(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        return read_topic_columns(self, topics)

    def describe_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        """One request for all topics. A failure is reported for the topic Java's tool checks first
        (``describeTopics(...).topicNameValues()`` order); an unknown topic reads
        ``...UnknownTopicOrPartitionException: Topic <t> not found.`` as the tool rewords it."""
        from confluent_kafka import KafkaError, KafkaException, TopicCollection

        names = list(dict.fromkeys(topics))
        if not names:
            return {}
        refuse_names_librdkafka_would_cut(names)
        call = "listNodes"  # Java describes the cluster first; a dead cluster times out there
        admin = self._librdkafka()
        sendable = [name for name in names if name]  # Java fails "" without asking, librdkafka refuses the call
        futures = (
            admin.describe_topics(TopicCollection(sendable), request_timeout=self.api_timeout_s) if sendable else {}
        )
        described: dict[str, list[PartitionInfo]] = {}
        capacity = copy_capacity(len(names), DEFAULT_JAVA_VERSION)
        for name in iteration_order(names, java_string_hash, java_string_compare, initial_capacity=capacity):
            if not name:
                raise error_for(
                    java_exception(INVALID_TOPIC, "The given topic name '' cannot be represented in a request.")
                )
            try:
                description = self._outcome(futures[name], call)
            except KafkaException as exc:
                error = exc.args[0]
                if error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise UnknownTopicOrPartitionError(f"{UNKNOWN_TOPIC_EXCEPTION}: Topic {name} not found.") from exc
                raise self.errors.from_librdkafka(error, call) from exc
            described[name] = sorted(
                (
                    PartitionInfo(
                        partition=p.id,
                        replicas=tuple(n.id for n in p.replicas),
                        isr=tuple(n.id for n in p.isr),
                        leader=p.leader.id if p.leader is not None else None,
                    )
                    for p in description.partitions
                ),
                key=lambda info: info.partition,
            )
        return {name: described[name] for name in names}

    def read_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        """One Metadata request (any broker, never creating a topic) where ``describe_topics`` takes
        librdkafka's describeTopics: measured on the local cluster for a topic of 2,000 partitions, 7.6 to 15 ms
        against 33 to 117 ms, most of it the wait for librdkafka's answer. A topic the answer lacks or fails
        is described with ``describe_topics``, so the errors are the ones Java's tool prints."""
        from kafka.protocol.metadata import MetadataRequest

        names = list(dict.fromkeys(topics))
        if self.using_controllers or not all(names):  # controllers serve no topic metadata
            return self.describe_topics(names)
        if not names:
            return {}
        call = "describeTopics"
        self._kafka_python_admin(call)
        topic_type = MetadataRequest.MetadataRequestTopic

        def build() -> Any:
            return MetadataRequest(topics=[topic_type(name=name) for name in names], allow_auto_topic_creation=False)

        response = self._run_kafka_python(call, self._send_to_broker, None, build, self._deadline())
        wanted = set(names)
        read: dict[str, list[PartitionInfo]] = {}
        for topic in response.topics:
            if topic.error_code or topic.name not in wanted:
                continue
            read[topic.name] = sorted(
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
        missing = [name for name in names if name not in read]
        if missing:
            read.update(self.describe_topics(missing))
        return {name: read[name] for name in names}

    # -------------------------------------------------------------------------- reassignments
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
            import kafka.errors as errors

            error = partition_error_of_call(failure)
            if not allow_replication_factor_change and isinstance(failure.__cause__, errors.IncompatibleBrokerVersion):
                error = PartitionError(RF_CHANGE_UNSUPPORTED, "UnsupportedVersionException")
            return dict.fromkeys(targets, error)
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

    # -------------------------------------------------------------------------- log directories
    def describe_replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        """One DescribeLogDirs per broker, all in flight at once, like Java's describeReplicaLogDirs."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeReplicaLogDirs"
        wanted = list(dict.fromkeys(replicas))
        if not wanted:
            return {}
        by_broker = self._partitions_by_broker(wanted, call)
        topic_type = DescribeLogDirsRequest.DescribableLogDirTopic

        def builder(topics: Mapping[str, list[int]]) -> Callable[[], Any]:
            return lambda: DescribeLogDirsRequest(topics=[topic_type(topic=t, partitions=p) for t, p in topics.items()])

        requests = {broker_id: builder(topics) for broker_id, topics in by_broker.items()}
        responses = self._send_to_known_brokers(call, requests)
        current: dict[TopicPartitionReplica, str] = {}
        future: dict[TopicPartitionReplica, str] = {}
        for broker_id, response in responses.items():
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            for log_dir in response.results:
                if log_dir.error_code == KAFKA_STORAGE_ERROR:
                    continue  # an offline log directory lists no replicas
                if log_dir.error_code:
                    illegal = java_exception(log_dir.error_code).class_name
                    raise ClusterError(
                        f"java.lang.IllegalStateException: The error {illegal} for log directory "
                        f"{log_dir.log_dir} in the response from broker {broker_id} is illegal"
                    )
                for topic in log_dir.topics:
                    for p in topic.partitions:
                        replica = TopicPartitionReplica(topic.name, p.partition_index, broker_id)
                        (future if p.is_future_key else current)[replica] = log_dir.log_dir
        # As in Java, every replica asked of a broker has an answer: no current log dir when the broker
        # does not list the replica (not hosted, or in an offline log dir).
        return {r: ReplicaLogDirInfo(current=current.get(r), future=future.get(r)) for r in wanted}

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """One AlterReplicaLogDirs per broker, all in flight at once. The failure reported is the one
        the Apache tool meets first, iterating Java's ``alterReplicaLogDirs(...).values()`` map."""
        from kafka.protocol.admin import AlterReplicaLogDirsRequest

        call = "alterReplicaLogDirs"
        if not moves:
            return set()
        capacity = copy_capacity(len(moves), DEFAULT_JAVA_VERSION)
        java_order = iteration_order(list(moves), java_replica_hash, initial_capacity=capacity)
        failures: dict[TopicPartitionReplica, JavaException | KreassignError] = {}
        accepted: set[TopicPartitionReplica] = set()
        if self.using_controllers:
            failures = dict.fromkeys(moves, self.errors.unsupported_with_controllers())
        else:
            failures, accepted = self._alter_replica_log_dirs(moves, call, AlterReplicaLogDirsRequest)
        for replica in java_order:
            cause = failures.get(replica)
            if cause is None:
                continue
            if isinstance(cause, JavaException) and cause.class_name.endswith(".ReplicaNotAvailableException"):
                continue  # not on its broker yet: the tool retries
            error = CommandError(f"Failed to alter dir for {replica}")
            error.add_note(str(cause) if isinstance(cause, JavaException) else cause.message)
            raise error
        return accepted

    def _alter_replica_log_dirs(
        self, moves: Mapping[TopicPartitionReplica, str], call: str, request_type: Any
    ) -> tuple[dict[TopicPartitionReplica, JavaException | KreassignError], set[TopicPartitionReplica]]:
        failures: dict[TopicPartitionReplica, JavaException | KreassignError] = {}
        try:
            self._kafka_python_admin(call)
            known = self._known_brokers({r.broker_id for r in moves}, call)
        except KreassignError as exc:  # Java fails every replica's future with the call's exception
            return dict.fromkeys(moves, exc), set()
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for replica, path in moves.items():
            if replica.broker_id in known:
                by_broker[replica.broker_id][path][replica.topic].append(replica.partition)
        missing = {r.broker_id for r in moves} - known
        if missing:
            unknown = self._unknown_brokers_error(call, missing)
            failures.update({r: unknown for r in moves if r.broker_id in missing})
        dir_type = request_type.AlterReplicaLogDir
        topic_type = dir_type.AlterReplicaLogDirTopic

        def builder(dirs: Mapping[str, Mapping[str, list[int]]]) -> Callable[[], Any]:
            return lambda: request_type(
                dirs=[
                    dir_type(path=path, topics=[topic_type(name=t, partitions=p) for t, p in topics.items()])
                    for path, topics in dirs.items()
                ]
            )

        requests = {broker_id: builder(dirs) for broker_id, dirs in by_broker.items()}
        try:
            responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline())
        except KreassignError as exc:
            failures.update({r: exc for r in moves if r.broker_id in by_broker})
            return failures, set()
        accepted: set[TopicPartitionReplica] = set()
        for broker_id, response in responses.items():
            for topic in response.results:
                for p in topic.partitions:
                    replica = TopicPartitionReplica(topic.topic_name, p.partition_index, broker_id)
                    if replica not in moves:
                        continue
                    if p.error_code:
                        failures[replica] = java_exception(p.error_code)  # Java ignores any message here
                    else:
                        accepted.add(replica)
        for replica in moves:
            if replica.broker_id in by_broker and replica not in accepted and replica not in failures:
                failures[replica] = JavaException(
                    ERRORS_PACKAGE + "ApiException",
                    f"The response from broker {replica.broker_id} did not contain a result for replica {replica}",
                )
        return failures, accepted

    # -------------------------------------------------------------------------- replica state (--progress)
    def replica_sizes(
        self,
        broker_ids: Iterable[int],
        partitions: Iterable[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> dict[TopicPartitionReplica, int]:
        """One DescribeLogDirs (all topics, or only ``partitions``) per broker, all in flight at once,
        for at most ``timeout_s`` (default: the API timeout). A replica moving between log dirs counts its
        current log only; offline log dirs and brokers missing from the metadata are left out."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeLogDirs"
        wanted = set(broker_ids)
        if not wanted:
            return {}
        if self.using_controllers:
            raise self.errors.unsupported_with_controllers()
        self._kafka_python_admin(call)
        known = self._known_brokers(wanted, call)
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in dict.fromkeys(partitions):
                by_topic[tp.topic].append(tp.partition)
            if not by_topic:
                return {}
            topic_type = DescribeLogDirsRequest.DescribableLogDirTopic
            topics = [topic_type(topic=t, partitions=p) for t, p in sorted(by_topic.items())]
        requests = {broker_id: (lambda: DescribeLogDirsRequest(topics=topics)) for broker_id in sorted(known)}
        responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline(timeout_s))
        sizes: dict[TopicPartitionReplica, int] = {}
        for broker_id, response in responses.items():
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            for log_dir in response.results:
                if log_dir.error_code:
                    continue  # an offline log directory lists no replicas
                for topic in log_dir.topics:
                    for p in topic.partitions:
                        if not p.is_future_key:
                            sizes[TopicPartitionReplica(topic.name, p.partition_index, broker_id)] = p.partition_size
        return sizes

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

    def _send_to_known_brokers(self, call: str, requests: Mapping[int, Callable[[], Any]]) -> dict[int, Any]:
        """One kafka-python request per broker (not through controllers); an unknown broker times out."""
        if self.using_controllers:
            raise self.errors.unsupported_with_controllers()
        self._kafka_python_admin(call)
        missing = set(requests) - self._known_brokers(requests, call)
        if missing:
            raise self._unknown_brokers_error(call, missing)
        return self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline())

    async def _send_to_brokers(self, requests: Mapping[int, Callable[[], Any]], deadline: float) -> dict[int, Any]:
        """Send one request to each broker concurrently and wait for all of them."""
        manager = self._legacy._manager
        pending = {
            broker_id: manager.call_soon(self._send_to_broker, broker_id, build, deadline)
            for broker_id, build in requests.items()
        }
        return {broker_id: await future for broker_id, future in pending.items()}

    # -------------------------------------------------------------------------- configs
    def describe_configs(self, resources: Iterable[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        """Dynamic values only: DYNAMIC_TOPIC_CONFIG for topics, DYNAMIC_BROKER_CONFIG (per broker) for brokers."""
        call = "describeConfigs"
        wanted = list(dict.fromkeys(resources))
        if not wanted:
            return {}
        if self.using_controllers:
            return self._run_kafka_python(call, self._controller_quorum().describe_configs, wanted, self._deadline())
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

    def _unknown_brokers_error(self, call: str, missing: Iterable[int | str]) -> ClusterTimeoutError:
        """``unknown_nodes_error`` for brokers, with the live brokers of the cluster."""
        try:
            live: list[int | str] = [b.id for b in self.describe_brokers()]
        except KreassignError:
            live = []
        unknown = UnknownNodes(missing, live)
        return self.errors.unknown_nodes(call, unknown.missing, unknown.known)

    # -------------------------------------------------------------------------- leaders and offsets
    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        """Per-partition ``getMessage()`` of failed elections; ELECTION_NOT_NEEDED is not a failure."""
        from confluent_kafka import ElectionType, KafkaError
        from confluent_kafka import TopicPartition as NativeTopicPartition

        call = "electLeaders"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}  # an empty list would mean "every partition" to librdkafka
        refuse_names_librdkafka_would_cut([tp.topic for tp in wanted])
        admin = self._librdkafka()
        # confluent-kafka 2.16 cannot take request_timeout here (its C wrapper rejects keyword
        # arguments); the deadline is socket.timeout.ms, i.e. request.timeout.ms.
        future = admin.elect_leaders(
            ElectionType.PREFERRED, [NativeTopicPartition(tp.topic, tp.partition) for tp in wanted]
        )
        results = self._wait(future, call)
        failures: dict[TopicPartition, PartitionError] = {}
        for native, outcome in results.items():
            if outcome is None:
                continue
            error = outcome if isinstance(outcome, KafkaError) else outcome.args[0]
            if error.code() in (ELECTION_NOT_NEEDED, KafkaError.NO_ERROR):
                continue
            tp = TopicPartition(native.topic, native.partition)
            if error.code() > 0:
                failures[tp] = partition_error_of_call(self.errors.from_librdkafka(error, call))
            else:  # librdkafka's own (a timeout, the transport): no Java exception
                failures[tp] = PartitionError(error.str(), "", error.retriable())
        return failures

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as NativeTopicPartition
        from confluent_kafka.admin import OffsetSpec

        call = "listOffsets(api=METADATA)"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
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

    # -------------------------------------------------------------------------- offline snapshots
    def list_topic_names(self) -> list[str]:
        """Every topic name the metadata lists, sorted (for ``--write-cluster-snapshot``)."""
        admin = self._librdkafka()
        self._check_listening("listTopics")
        try:
            metadata = admin.list_topics(timeout=self.api_timeout_s)
        except Exception as exc:
            error = exc.args[0] if exc.args else None
            if hasattr(error, "code"):
                raise self.errors.from_librdkafka(error, "listTopics") from exc
            raise self.errors.timeout("listTopics") from exc
        return sorted(metadata.topics)

    def describe_log_dirs(self, broker_ids: Iterable[int]) -> dict[int, list[LogDirUsage]]:
        """Every log directory of each broker with the size of each replica in it (DescribeLogDirs
        for all topics, one request per broker, all in flight at once)."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeLogDirs"
        wanted = list(dict.fromkeys(broker_ids))
        if not wanted:
            return {}
        requests = {broker_id: (lambda: DescribeLogDirsRequest(topics=None)) for broker_id in wanted}
        responses = self._send_to_known_brokers(call, requests)
        result: dict[int, list[LogDirUsage]] = {}
        for broker_id in wanted:
            response = responses[broker_id]
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            dirs = []
            for log_dir in response.results:
                sizes = {
                    TopicPartition(topic.name, p.partition_index): p.partition_size
                    for topic in ([] if log_dir.error_code else log_dir.topics)
                    for p in topic.partitions
                    if not p.is_future_key
                }
                total = getattr(log_dir, "total_bytes", -1)
                usable = getattr(log_dir, "usable_bytes", -1)
                dirs.append(
                    LogDirUsage(
                        log_dir.log_dir,
                        sizes,
                        None if total is None or total < 0 else total,
                        None if usable is None or usable < 0 else usable,
                        cordoned=bool(getattr(log_dir, "is_cordoned", False)),
                    )
                )
            result[broker_id] = sorted(dirs, key=lambda d: d.path)
        return result

    # -------------------------------------------------------------------------- lifecycle
    def snapshot_file(self) -> str | None:
        return None

    def secrets(self) -> list[str]:
        """The secrets of the ``--command-config`` file (some made on first use, by keystore conversion)."""
        return self.config.secrets()

    def close(self) -> None:
        """Release both clients; never raises (closing must not mask the action's own outcome)."""
        if self._legacy is not None:
            with contextlib.suppress(Exception):
                self._legacy.close()
            self._legacy = None
        if self._quorum is not None:
            with contextlib.suppress(Exception):
                self._quorum.close()
            self._quorum = None
        self._admin = None

    # -------------------------------------------------------------------------- traffic sampling
    def log_start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        from kreassign.cluster import traffic_calls

        return traffic_calls.log_start_offsets(self, partitions)

    def committed_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        from kreassign.cluster import traffic_calls

        return traffic_calls.committed_offsets(self, partitions)

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        return {}  # a live cluster records no rates: --sample-rates measures them
