"""The ClusterPort over a real Kafka cluster.

confluent-kafka (librdkafka) describes the cluster and topics, reads and alters configs, elects
leaders and lists offsets. librdkafka has no AlterPartitionReassignments, ListPartitionReassignments,
DescribeLogDirs or AlterReplicaLogDirs, so those four go through kafka-python, whose client is made
only when one of them is first needed. With ``--bootstrap-controller`` (KRaft controllers, which
librdkafka cannot talk to) kafka-python also carries DescribeCluster and the config calls, exactly the
calls Java's admin client supports against controllers; the others fail like Java's do.

Both clients are imported inside methods, so importing this module stays cheap.

Errors carry the text the Apache tool prints after ``Error: ``: Java's exception class and
``getMessage()``, which is the broker's error message when it sent one, else the default message
of the Kafka error code (``KAFKA_ERRORS``, taken from ``org.apache.kafka.common.protocol.Errors`` of
the pinned release). Where Java would wait for a broker that is not in the cluster metadata until its
deadline, the same error is raised at once.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.port import ConfigOp, ConfigResource, LogDirUsage, OpType, ReplicaLogDirInfo, ResourceType
from kreassign.errors import (
    TRANSIENT_JAVA_EXCEPTIONS,
    AuthorizationError,
    ClusterError,
    ClusterTimeoutError,
    CommandError,
    ConfigError,
    KreassignError,
    TransientClusterError,
    UnknownTopicOrPartitionError,
)
from kreassign.model import Broker, PartitionInfo, PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.javaorder import java_int_hash, java_string_hash

LOG = logging.getLogger(__name__)
LOG.addHandler(logging.NullHandler())
# librdkafka's own log lines (connection refused, ...) go to this logger; the CLI decides whether to show them.
LIBRDKAFKA_LOG = logging.getLogger(f"{__name__}.librdkafka")

ERRORS_PACKAGE = "org.apache.kafka.common.errors."
TIMEOUT_EXCEPTION = ERRORS_PACKAGE + "TimeoutException"
UNKNOWN_TOPIC_EXCEPTION = ERRORS_PACKAGE + "UnknownTopicOrPartitionException"
UNSUPPORTED_WITH_CONTROLLERS = (
    ERRORS_PACKAGE + "UnsupportedEndpointTypeException: This Admin API is not yet supported when "
    "communicating directly with the controller quorum."
)
RF_CHANGE_UNSUPPORTED = (
    "The broker does not support the AllowReplicationFactorChange option for the "
    "AlterPartitionReassignments API. Consider re-sending the request without the option or updating "
    "the server version"
)

# Kafka protocol error codes this module acts on.
REPLICA_NOT_AVAILABLE = 9
NOT_CONTROLLER = 41
KAFKA_STORAGE_ERROR = 56
ELECTION_NOT_NEEDED = 84
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC = 17
# LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH: Java retries these.
_LEADERSHIP_MOVED = frozenset({5, 6, 74, 75})

# DescribeConfigs / IncrementalAlterConfigs wire values.
_RESOURCE_TYPE_CODES = {ResourceType.TOPIC: 2, ResourceType.BROKER: 4}
_DYNAMIC_SOURCES = {ResourceType.TOPIC: 1, ResourceType.BROKER: 2}  # DYNAMIC_TOPIC / DYNAMIC_BROKER
_OPERATION_CODES = {OpType.SET: 0, OpType.DELETE: 1}
_DESCRIBE_CLUSTER_CONTROLLERS = 2  # DescribeCluster EndpointType.CONTROLLER
# ListOffsets: the replica id of debugging tools (the broker answers from its local log, leader or
# follower, without isolation: the log end offset) and the LATEST timestamp.
_DEBUGGING_REPLICA_ID = -2
_LATEST_TIMESTAMP = -1

_GRACE_S = 5.0  # on top of the client's own deadline, before giving up waiting on a future
_POLL_INTERVAL_S = 0.05  # how often librdkafka's error callback is served while waiting
_RETRY_BACKOFF_S = 0.1

T = TypeVar("T")


# ------------------------------------------------------------------------------ Java error texts
@dataclass(frozen=True)
class JavaException:
    """A Java exception as the Apache tool prints it: ``<class>: <getMessage()>``."""

    class_name: str
    message: str

    def __str__(self) -> str:
        return f"{self.class_name}: {self.message}"


def java_exception(code: int, server_message: str | None = None) -> JavaException:
    """What Java's ``ApiError(code, message).exception()`` is: the server's message when it sent one,
    else the default message of the error code. Unknown codes are UNKNOWN_SERVER_ERROR, as in Java."""
    name, default = KAFKA_ERRORS.get(code, KAFKA_ERRORS[-1])
    class_name = name if "." in name else ERRORS_PACKAGE + name
    return JavaException(class_name, default if server_message is None else server_message)


def error_for(java: JavaException) -> ClusterError:
    """The kreassign error type for a Java exception, with the Java text as its message."""
    text = str(java)
    if java.class_name.endswith("AuthorizationException"):
        return AuthorizationError(text)
    if java.class_name == UNKNOWN_TOPIC_EXCEPTION:
        return UnknownTopicOrPartitionError(text)
    if java.class_name == TIMEOUT_EXCEPTION:
        return ClusterTimeoutError(text)
    if java.class_name.removeprefix(ERRORS_PACKAGE) in TRANSIENT_JAVA_EXCEPTIONS:
        return TransientClusterError(text)
    return ClusterError(text)


def java_message(error: KreassignError) -> str:
    """``getMessage()`` of the Java exception behind one of our errors (its text without the class)."""
    head, separator, tail = error.message.partition(": ")
    if separator and (head.startswith("org.apache.kafka.") or head.startswith("java.")):
        return tail
    return error.message


# ------------------------------------------------------------------------------ Java HashMap order
def java_hash_map_order(items: Iterable[T], hash_fn: Callable[[T], int], initial_capacity: int = 16) -> list[T]:
    """Iteration order of a ``java.util.HashMap`` filled with ``items`` (distinct keys) in order.

    Bucket ``(h ^ (h >>> 16)) & (n - 1)``, then insertion order within a bucket; the table doubles
    past a 0.75 load and when a bucket passes 8 entries below 64 buckets. Bins Java turns into trees
    (more than 8 colliding keys in a table of 64 or more) keep insertion order here.
    """
    capacity = _table_size_for(initial_capacity)
    table: list[list[tuple[int, T]]] = [[] for _ in range(capacity)]
    for size, item in enumerate(items, start=1):
        h = hash_fn(item) & 0xFFFFFFFF
        h ^= h >> 16
        bucket = table[h & (capacity - 1)]
        bucket.append((h, item))
        if (len(bucket) > 8 and capacity < 64) or size > capacity * 0.75:
            capacity *= 2
            resized: list[list[tuple[int, T]]] = [[] for _ in range(capacity)]
            for old in table:
                for entry in old:
                    resized[entry[0] & (capacity - 1)].append(entry)
            table = resized
    return [item for bucket in table for _, item in bucket]


def copied_map_capacity(size: int) -> int:
    """Table size of ``new HashMap<>(map)`` for a map of ``size`` entries."""
    return _table_size_for(int(size / 0.75 + 1.0))


def _table_size_for(capacity: int) -> int:
    n = 1
    while n < capacity:
        n <<= 1
    return n


def java_replica_hash(replica: TopicPartitionReplica) -> int:
    """``org.apache.kafka.common.TopicPartitionReplica.hashCode()``."""
    result = 31 + java_string_hash(replica.topic)
    result = 31 * result + replica.partition
    return 31 * result + replica.broker_id


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
        self._admin: Any = None  # confluent_kafka.admin.AdminClient
        self._legacy: Any = None  # kafka.admin.KafkaAdminClient
        self._quorum: _ControllerQuorum | None = None
        self._fatal_errors: list[Any] = []  # librdkafka authentication / TLS errors (KafkaError)

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

    # -------------------------------------------------------------------------- errors
    def timeout_error(self, call: str) -> ClusterTimeoutError:
        """Java's text for a call that found no node before its deadline; a note names the address."""
        error = ClusterTimeoutError(f"{TIMEOUT_EXCEPTION}: Timed out waiting for a node assignment. Call: {call}")
        kind = "bootstrap controllers" if self.using_controllers else "bootstrap servers"
        option = "--bootstrap-controller" if self.using_controllers else "--bootstrap-server"
        error.add_note(f"No answer from the {kind} {self.address} within {self.api_timeout_s:g} s.")
        error.add_note(
            f"Check that {option} names a listener reachable from this host (host, port, firewall) and that "
            f"its security protocol is {self.config.security_protocol} (else set security.protocol in the "
            "--command-config file)."
        )
        return error

    def _sasl_failure(self, detail: str) -> ClusterError:
        error = ClusterError(f"{ERRORS_PACKAGE}SaslAuthenticationException: {detail}")
        error.add_note(
            f"The cluster at {self.address} refused the SASL login: check sasl.mechanism and the username and "
            "password in sasl.jaas.config of the --command-config file, and that the user exists for that "
            "mechanism (kafka-configs --describe --entity-type users for SCRAM)."
        )
        return error

    def _librdkafka_error(self, error: Any, call: str) -> ClusterError:
        """A ``confluent_kafka.KafkaError`` as the Java exception the Apache tool would report."""
        from confluent_kafka import KafkaError

        code = error.code()
        if code > 0:
            text = error.str()
            generic = KafkaError(code).str()
            return error_for(java_exception(code, None if text == generic else text))
        if code in (
            KafkaError._TIMED_OUT,
            KafkaError._TIMED_OUT_QUEUE,
            KafkaError._TRANSPORT,
            KafkaError._ALL_BROKERS_DOWN,
            KafkaError._RESOLVE,
        ):
            return self.timeout_error(call)
        if code == KafkaError._AUTHENTICATION:
            return self._sasl_failure(_without_librdkafka_prefix(error.str()))
        if code == KafkaError._SSL:
            failure = ClusterError(f"{ERRORS_PACKAGE}SslAuthenticationException: SSL handshake failed")
            failure.add_note(error.str())
            failure.add_note(
                f"The TLS handshake with {self.address} failed: check that the listener speaks "
                f"{self.config.security_protocol}, that ssl.truststore.* in the --command-config file holds the "
                "CA that signed the broker certificate, that the broker's certificate matches the host name "
                "(or set ssl.endpoint.identification.algorithm= to skip that check), and ssl.keystore.* if "
                "the broker requires client certificates."
            )
            return failure
        return ClusterError(f"org.apache.kafka.common.KafkaException: {error.str()}")

    def _kafka_python_error(self, exc: BaseException, call: str) -> KreassignError:
        import kafka.errors as errors

        if isinstance(exc, KreassignError):
            return exc
        if isinstance(exc, _retriable_kafka_python_errors()):
            return self.timeout_error(call)
        if isinstance(exc, errors.IncompatibleBrokerVersion):
            return ClusterError(f"{ERRORS_PACKAGE}UnsupportedVersionException: {exc}")
        if isinstance(exc, errors.SaslAuthenticationFailedError):
            return self._sasl_failure(str(exc).split(": ", 1)[-1])
        if isinstance(exc, errors.BrokerResponseError) and getattr(exc, "errno", None) is not None:
            return error_for(java_exception(exc.errno))
        if isinstance(exc, errors.KafkaConfigurationError | ValueError | TypeError):
            return ConfigError(f"the Kafka client (kafka-python) refused the client configuration: {exc}")
        return ClusterError(f"org.apache.kafka.common.KafkaException: {exc}")

    def _unsupported_with_controllers(self) -> ClusterError:
        return ClusterError(UNSUPPORTED_WITH_CONTROLLERS)

    # -------------------------------------------------------------------------- clients
    def _librdkafka(self) -> Any:
        """confluent-kafka's AdminClient (brokers only: librdkafka cannot talk to controllers)."""
        if self.using_controllers:
            raise self._unsupported_with_controllers()
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
                    + _scrub(str(exc), self.config.librdkafka_config())
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
                raise self._kafka_python_error(exc, call) from exc
        return self._legacy

    def _controller_quorum(self) -> _ControllerQuorum:
        if self._quorum is None:
            self._quorum = _ControllerQuorum(str(self.bootstrap_controllers), self._kafka_python_config())
        return self._quorum

    def _kafka_python_config(self) -> dict[str, Any]:
        conf = self.config.kafka_python_config()
        conf["request_timeout_ms"] = int(min(conf["request_timeout_ms"], self.api_timeout_s * 1000))
        return conf

    def _deadline(self) -> float:
        return time.monotonic() + self.api_timeout_s

    def _outcome(self, future: Any, call: str, timeout_s: float | None = None) -> Any:
        """Wait for a confluent-kafka future; its ``KafkaException`` is raised as is.

        librdkafka reports authentication and TLS failures only through ``error_cb``, served by
        ``poll()``, and keeps retrying: poll while waiting, and fail at the first such error as Java does.
        """
        import concurrent.futures

        deadline = time.monotonic() + (self.api_timeout_s if timeout_s is None else timeout_s) + _GRACE_S
        while True:
            try:
                return future.result(timeout=_POLL_INTERVAL_S)
            except concurrent.futures.TimeoutError:
                self._admin.poll(0)
                if self._fatal_errors:
                    raise self._librdkafka_error(self._fatal_errors[0], call) from None
                if time.monotonic() >= deadline:
                    raise self.timeout_error(call) from None

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
            raise self._librdkafka_error(error, call) from exc

    def _run_kafka_python(self, call: str, coroutine: Callable[..., Any], *args: Any) -> Any:
        """Run a coroutine on kafka-python's I/O thread; its errors become Java-like errors."""
        runner = self._controller_quorum() if self.using_controllers else self._kafka_python_admin(call)._manager
        try:
            return runner.run(coroutine, *args)
        except _CallTimedOut:
            raise self.timeout_error(call) from None
        except Exception as exc:
            raise self._kafka_python_error(exc, call) from exc

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
            except _retriable_kafka_python_errors() as exc:
                # kafka-python keeps the controller id it found first; if that broker went away, find the
                # current one (in KRaft any live broker forwards to the quorum) instead of waiting for it
                admin._controller_id = None
                await _pause_or_time_out(admin._net, deadline, exc)

    async def _send_to_broker(self, broker_id: int, build: Callable[[], Any], deadline: float) -> Any:
        manager = self._legacy._manager
        while True:
            try:
                return await manager.send(build(), node_id=broker_id)
            except _retriable_kafka_python_errors() as exc:
                await _pause_or_time_out(manager._net, deadline, exc)

    def _partitions_by_broker(
        self, replicas: Sequence[TopicPartitionReplica], call: str
    ) -> dict[int, dict[str, list[int]]]:
        """The replicas grouped by broker then topic, for one kafka-python request per broker (which
        controllers do not serve)."""
        if self.using_controllers:
            raise self._unsupported_with_controllers()
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
        return java_hash_map_order(nodes, lambda b: java_int_hash(b.id))

    def describe_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        """One request for all topics. A failure is reported for the topic Java's tool checks first
        (``describeTopics(...).topicNameValues()`` order); an unknown topic reads
        ``...UnknownTopicOrPartitionException: Topic <t> not found.`` as the tool rewords it."""
        from confluent_kafka import KafkaError, KafkaException, TopicCollection

        names = list(dict.fromkeys(topics))
        if not names:
            return {}
        _refuse_names_librdkafka_would_cut(names)
        call = "listNodes"  # Java describes the cluster first; a dead cluster times out there
        admin = self._librdkafka()
        sendable = [name for name in names if name]  # Java fails "" without asking, librdkafka refuses the call
        futures = (
            admin.describe_topics(TopicCollection(sendable), request_timeout=self.api_timeout_s) if sendable else {}
        )
        described: dict[str, list[PartitionInfo]] = {}
        for name in java_hash_map_order(names, java_string_hash, copied_map_capacity(len(names))):
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
                raise self._librdkafka_error(error, call) from exc
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
    ) -> dict[TopicPartition, str]:
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

            message = java_message(failure)
            if not allow_replication_factor_change and isinstance(failure.__cause__, errors.IncompatibleBrokerVersion):
                message = RF_CHANGE_UNSUPPORTED
            return dict.fromkeys(targets, message)
        if response.error_code:
            whole = java_exception(response.error_code, response.error_message).message
            return dict.fromkeys(targets, whole)
        failures: dict[TopicPartition, str] = {}
        answered: set[TopicPartition] = set()
        for topic in response.responses:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                answered.add(tp)
                if p.error_code:
                    failures[tp] = java_exception(p.error_code, p.error_message).message
        for tp in targets:
            if tp not in answered:
                failures[tp] = f"The controller response did not contain a result for partition {tp}"
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
        return {
            r: ReplicaLogDirInfo(current=current.get(r), future=future.get(r))
            for r in wanted
            if r in current or r in future
        }

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """One AlterReplicaLogDirs per broker, all in flight at once. The failure reported is the one
        the Apache tool meets first, iterating Java's ``alterReplicaLogDirs(...).values()`` map."""
        from kafka.protocol.admin import AlterReplicaLogDirsRequest

        call = "alterReplicaLogDirs"
        if not moves:
            return set()
        java_order = java_hash_map_order(list(moves), java_replica_hash, copied_map_capacity(len(moves)))
        failures: dict[TopicPartitionReplica, JavaException | KreassignError] = {}
        accepted: set[TopicPartitionReplica] = set()
        if self.using_controllers:
            failures = dict.fromkeys(moves, self._unsupported_with_controllers())
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
            else:
                failures[replica] = self.timeout_error(call)
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
        self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartitionReplica, int]:
        """One DescribeLogDirs (all topics, or only ``partitions``) per broker, all in flight at once. A
        replica moving between log dirs counts its current log only; offline log dirs and brokers missing
        from the metadata are left out."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeLogDirs"
        wanted = set(broker_ids)
        if not wanted:
            return {}
        if self.using_controllers:
            raise self._unsupported_with_controllers()
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
        responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline())
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
            raise self._unsupported_with_controllers()
        self._kafka_python_admin(call)
        if self._known_brokers(requests, call) != set(requests):
            raise self.timeout_error(call)
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
            return self._describe_configs_on_controllers(wanted, call)
        from confluent_kafka.admin import ConfigSource

        _refuse_names_librdkafka_would_cut([r.name for r in wanted if r.type is ResourceType.TOPIC], configs=True)
        self._check_brokers_known([r for r in wanted if r.type is ResourceType.BROKER], call)
        admin = self._librdkafka()
        submitted: dict[ConfigResource, Any] = {}
        for batch in _librdkafka_config_batches(wanted):
            futures = admin.describe_configs(
                [_librdkafka_resource(r) for r in batch], request_timeout=self.api_timeout_s
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
                if _source_value(entry.source) == dynamic[resource.type] and entry.value is not None
            }
        return result

    def incremental_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
        call = "incrementalAlterConfigs"
        wanted = [r for r in dict.fromkeys(changes) if changes[r]]
        if not wanted:
            return
        if self.using_controllers:
            self._alter_configs_on_controllers({r: changes[r] for r in wanted}, call)
            return
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

        _refuse_names_librdkafka_would_cut([r.name for r in wanted if r.type is ResourceType.TOPIC], configs=True)
        self._check_brokers_known([r for r in wanted if r.type is ResourceType.BROKER], call)
        admin = self._librdkafka()
        operations = {OpType.SET: AlterConfigOpType.SET, OpType.DELETE: AlterConfigOpType.DELETE}
        submitted: dict[ConfigResource, Any] = {}
        for batch in _librdkafka_config_batches(wanted):
            natives = []
            for resource in batch:
                native = _librdkafka_resource(resource)
                native.incremental_configs = [
                    ConfigEntry(op.name, op.value, incremental_operation=operations[op.op]) for op in changes[resource]
                ]
                natives.append(native)
            futures = admin.incremental_alter_configs(natives, request_timeout=self.api_timeout_s)
            submitted.update(zip(batch, futures.values(), strict=True))
        for resource in wanted:
            self._wait(submitted[resource], call)

    def _check_brokers_known(self, broker_resources: Sequence[ConfigResource], call: str) -> None:
        """Java waits until its deadline for a broker id missing from the metadata; fail at once instead."""
        ids = {r.name for r in broker_resources if r.name != ""}
        if not ids:
            return
        live = {str(b.id) for b in self.describe_brokers()}
        if not ids <= live:
            raise self.timeout_error(call)

    def _describe_configs_on_controllers(
        self, wanted: list[ConfigResource], call: str
    ) -> dict[ConfigResource, dict[str, str]]:
        from kafka.protocol.admin import DescribeConfigsRequest

        quorum = self._controller_quorum()
        described = self._run_kafka_python(call, quorum.describe, self._deadline())
        controller_ids = {str(node.id) for node in described.nodes}
        targets: dict[int | None, list[ConfigResource]] = defaultdict(list)  # None: the active controller
        for resource in wanted:
            if resource.type is ResourceType.BROKER and resource.name != "":
                if resource.name not in controller_ids:
                    raise self.timeout_error(call)
                targets[int(resource.name)].append(resource)
            else:
                targets[None].append(resource)
        resource_type = DescribeConfigsRequest.DescribeConfigsResource
        result: dict[ConfigResource, dict[str, str]] = {}
        for node_id, batch in targets.items():

            def build(batch: list[ConfigResource] = batch) -> Any:
                return DescribeConfigsRequest(
                    resources=[
                        resource_type(
                            resource_type=_RESOURCE_TYPE_CODES[r.type], resource_name=r.name, configuration_keys=None
                        )
                        for r in batch
                    ],
                    include_synonyms=False,
                    include_documentation=False,
                )

            send = quorum.send_to_active if node_id is None else _bind_node(quorum.send_to_node, node_id)
            response = self._run_kafka_python(call, send, build, self._deadline())
            by_key = {(r.resource_type, r.resource_name): r for r in response.results}
            for resource in batch:
                answer = by_key.get((_RESOURCE_TYPE_CODES[resource.type], resource.name))
                if answer is None:
                    raise ClusterError(f"org.apache.kafka.common.KafkaException: no result for {resource}")
                if answer.error_code:
                    raise error_for(java_exception(answer.error_code, answer.error_message))
                result[resource] = {
                    c.name: c.value
                    for c in answer.configs
                    if c.config_source == _DYNAMIC_SOURCES[resource.type] and c.value is not None
                }
        return {resource: result[resource] for resource in wanted}

    def _alter_configs_on_controllers(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]], call: str) -> None:
        """With bootstrap controllers Java sends every resource to the active controller."""
        from kafka.protocol.admin import IncrementalAlterConfigsRequest

        resource_type = IncrementalAlterConfigsRequest.AlterConfigsResource
        config_type = resource_type.AlterableConfig

        def build() -> Any:
            return IncrementalAlterConfigsRequest(
                resources=[
                    resource_type(
                        resource_type=_RESOURCE_TYPE_CODES[resource.type],
                        resource_name=resource.name,
                        configs=[
                            config_type(name=op.name, config_operation=_OPERATION_CODES[op.op], value=op.value)
                            for op in ops
                        ],
                    )
                    for resource, ops in changes.items()
                ],
                validate_only=False,
            )

        quorum = self._controller_quorum()
        response = self._run_kafka_python(call, quorum.send_to_active, build, self._deadline())
        by_key = {(r.resource_type, r.resource_name): r for r in response.responses}
        for resource in changes:
            answer = by_key.get((_RESOURCE_TYPE_CODES[resource.type], resource.name))
            if answer is not None and answer.error_code:
                raise error_for(java_exception(answer.error_code, answer.error_message))

    # -------------------------------------------------------------------------- leaders and offsets
    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, str]:
        """Per-partition ``getMessage()`` of failed elections; ELECTION_NOT_NEEDED is not a failure."""
        from confluent_kafka import ElectionType, KafkaError
        from confluent_kafka import TopicPartition as NativeTopicPartition

        call = "electLeaders"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}  # an empty list would mean "every partition" to librdkafka
        _refuse_names_librdkafka_would_cut([tp.topic for tp in wanted])
        admin = self._librdkafka()
        # confluent-kafka 2.16 cannot take request_timeout here (its C wrapper rejects keyword
        # arguments); the deadline is socket.timeout.ms, i.e. request.timeout.ms.
        future = admin.elect_leaders(
            ElectionType.PREFERRED, [NativeTopicPartition(tp.topic, tp.partition) for tp in wanted]
        )
        results = self._wait(future, call)
        failures: dict[TopicPartition, str] = {}
        for native, outcome in results.items():
            if outcome is None:
                continue
            error = outcome if isinstance(outcome, KafkaError) else outcome.args[0]
            if error.code() in (ELECTION_NOT_NEEDED, KafkaError.NO_ERROR):
                continue
            tp = TopicPartition(native.topic, native.partition)
            if error.code() > 0:
                failures[tp] = java_message(self._librdkafka_error(error, call))
            else:
                failures[tp] = error.str()
        return failures

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as NativeTopicPartition
        from confluent_kafka.admin import OffsetSpec

        call = "listOffsets(api=METADATA)"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
        _refuse_names_librdkafka_would_cut([tp.topic for tp in wanted])
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
                    if error.code() in _missing_partition_codes():
                        missing.append(tp)
                    elif (error.retriable() or error.code() in _LEADERSHIP_MOVED) and time.monotonic() < deadline:
                        retry.append(tp)  # leadership moved: ask the new leader, as Java does
                    else:
                        raise self._librdkafka_error(error, call) from exc
            pending = retry
            if pending:
                time.sleep(_RETRY_BACKOFF_S)
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
        try:
            metadata = admin.list_topics(timeout=self.api_timeout_s)
        except Exception as exc:
            error = exc.args[0] if exc.args else None
            if hasattr(error, "code"):
                raise self._librdkafka_error(error, "listTopics") from exc
            raise self.timeout_error("listTopics") from exc
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
                    )
                )
            result[broker_id] = sorted(dirs, key=lambda d: d.path)
        return result

    # -------------------------------------------------------------------------- lifecycle
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


# ------------------------------------------------------------------------------ kafka-python helpers
class _CallTimedOut(Exception):
    """Raised inside kafka-python coroutines when a call's deadline passes."""


def _retriable_kafka_python_errors() -> tuple[type[BaseException], ...]:
    import kafka.errors as errors

    return (
        errors.NodeNotReadyError,
        errors.KafkaConnectionError,
        errors.RequestTimedOutError,
        errors.KafkaTimeoutError,
        errors.UnknownBrokerIdError,
    )


async def _pause_or_time_out(net: Any, deadline: float, exc: BaseException) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _CallTimedOut() from exc
    LOG.debug("retrying after %s", exc)
    await net.sleep(min(_RETRY_BACKOFF_S, remaining))


def _bind_node(send_to_node: Callable[..., Any], node_id: int) -> Callable[..., Any]:
    async def send(build: Callable[[], Any], deadline: float) -> Any:
        return await send_to_node(node_id, build, deadline)

    return send


@dataclass(frozen=True)
class _DescribedQuorum:
    active_controller: int
    nodes: list[Broker]


class _ControllerQuorum:
    """kafka-python connections to KRaft controllers, as Java's admin client uses them with
    ``bootstrap.controllers``: DescribeCluster (endpoint type CONTROLLER) to a bootstrap controller
    finds the controllers and the active one; requests then go to a controller by id. Controllers do
    not answer Metadata, so kafka-python's bootstrap is not used."""

    def __init__(self, bootstrap: str, config: Mapping[str, Any]) -> None:
        from kafka.net.manager import KafkaConnectionManager
        from kafka.net.selector import NetworkSelector

        self._manager_type = KafkaConnectionManager
        self._config = dict(config)
        self._net = NetworkSelector(**self._config)
        self._net.start()
        self._bootstrap = KafkaConnectionManager(self._net, bootstrap_servers=bootstrap, **self._config)
        self._by_address: dict[tuple[str, int], Any] = {}
        self._described: _DescribedQuorum | None = None

    def run(self, coroutine: Callable[..., Any], *args: Any) -> Any:
        return self._net.run(coroutine, *args)

    async def describe(self, deadline: float) -> _DescribedQuorum:
        from kafka.protocol.admin import DescribeClusterRequest

        while True:
            for node in self._bootstrap.cluster.bootstrap_brokers():
                request = DescribeClusterRequest(
                    include_cluster_authorized_operations=False,
                    endpoint_type=_DESCRIBE_CLUSTER_CONTROLLERS,
                    min_version=1,
                )
                try:
                    response = await self._bootstrap.send(request, node_id=node.node_id)
                except _retriable_kafka_python_errors():
                    continue
                if response.error_code:
                    raise error_for(java_exception(response.error_code, response.error_message))
                nodes = [Broker(b.broker_id, b.rack, b.host, b.port) for b in response.brokers]
                self._described = _DescribedQuorum(response.controller_id, nodes)
                return self._described
            await _pause_or_time_out(self._net, deadline, TimeoutError("no bootstrap controller answered"))

    async def send_to_active(self, build: Callable[[], Any], deadline: float) -> Any:
        while True:
            described = self._described or await self.describe(deadline)
            if described.active_controller < 0:
                self._described = None
                await _pause_or_time_out(self._net, deadline, TimeoutError("no active controller"))
                continue
            response = await self.send_to_node(described.active_controller, build, deadline)
            if getattr(response, "error_code", 0) == NOT_CONTROLLER:
                self._described = None
                await _pause_or_time_out(self._net, deadline, TimeoutError("controller moved"))
                continue
            return response

    async def send_to_node(self, node_id: int, build: Callable[[], Any], deadline: float) -> Any:
        while True:
            described = self._described or await self.describe(deadline)
            node = next((n for n in described.nodes if n.id == node_id), None)
            if node is None:
                self._described = None
                await _pause_or_time_out(self._net, deadline, TimeoutError(f"controller {node_id} unknown"))
                continue
            manager, manager_node = self._manager_for(node.host, node.port)
            try:
                return await manager.send(build(), node_id=manager_node)
            except _retriable_kafka_python_errors() as exc:
                await _pause_or_time_out(self._net, deadline, exc)

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


# ------------------------------------------------------------------------------ librdkafka helpers
def _librdkafka_config_batches(resources: Sequence[ConfigResource]) -> list[list[ConfigResource]]:
    """librdkafka takes at most one BROKER resource per call (it sends it to that broker): topics
    (and the cluster-wide broker default) go in one call, each broker in its own."""
    shared = [r for r in resources if r.type is not ResourceType.BROKER or r.name == ""]
    brokers = [[r] for r in resources if r.type is ResourceType.BROKER and r.name != ""]
    return ([shared] if shared else []) + brokers


def _librdkafka_resource(resource: ConfigResource) -> Any:
    from confluent_kafka.admin import ConfigResource as NativeResource
    from confluent_kafka.admin import ResourceType as NativeType

    kind = NativeType.BROKER if resource.type is ResourceType.BROKER else NativeType.TOPIC
    return NativeResource(kind, resource.name)


def _missing_partition_codes() -> tuple[int, ...]:
    from confluent_kafka import KafkaError

    return (
        KafkaError._NOENT,
        KafkaError._UNKNOWN_PARTITION,
        KafkaError._UNKNOWN_TOPIC,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
    )


def _source_value(source: Any) -> int:
    return int(getattr(source, "value", source))


def _without_librdkafka_prefix(text: str) -> str:
    """``<broker>: SASL authentication error: <broker text> (after 12ms in state AUTH_REQ)`` -> ``<broker text>``."""
    _, separator, tail = text.partition("SASL authentication error: ")
    text = tail if separator else text
    marker = text.rfind(" (after ")
    return text[:marker] if marker > 0 else text


def _refuse_names_librdkafka_would_cut(topics: Iterable[str], configs: bool = False) -> None:
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


def _scrub(text: str, conf: Mapping[str, Any]) -> str:
    for key, value in conf.items():
        if isinstance(value, str) and value and ("password" in key or key.endswith(".pem")):
            text = text.replace(value, "****")
    return text


# ------------------------------------------------------------------------------ Kafka error codes
# code -> (exception class, default message), from org.apache.kafka.common.protocol.Errors of Kafka
# 4.3.1 (generated with a few lines of Java over Errors.values()). Classes without a package are in
# org.apache.kafka.common.errors.
KAFKA_ERRORS: Mapping[int, tuple[str, str]] = {
    -1: ("UnknownServerException", "The server experienced an unexpected error when processing the request."),
    1: (
        "OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the server.",
    ),
    2: (
        "CorruptRecordException",
        (
            "This message has failed its CRC checksum, exceeds the valid size, has a null key for a "
            "compacted topic, or is otherwise corrupt."
        ),
    ),
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    4: ("InvalidFetchSizeException", "The requested fetch size is invalid."),
    5: (
        "LeaderNotAvailableException",
        ("There is no leader for this topic-partition as we are in the middle of a leadership election."),
    ),
    6: (
        "NotLeaderOrFollowerException",
        (
            "For requests intended only for the leader, this error indicates that the broker is not the"
            " current leader. For requests intended for any replica, this error indicates that the "
            "broker is not a replica of the topic partition."
        ),
    ),
    7: ("TimeoutException", "The request timed out."),
    8: ("BrokerNotAvailableException", "The broker is not available."),
    9: (
        "ReplicaNotAvailableException",
        (
            "The replica is not available for the requested topic-partition. Produce/Fetch requests and"
            " other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if "
            "the broker is not a replica of the topic-partition."
        ),
    ),
    10: (
        "RecordTooLargeException",
        "The request included a message larger than the max message size the server will accept.",
    ),
    11: ("ControllerMovedException", "The controller moved to another broker."),
    12: ("OffsetMetadataTooLarge", "The metadata field of the offset request was too large."),
    13: ("NetworkException", "The server disconnected before a response was received."),
    14: (
        "CoordinatorLoadInProgressException",
        "The coordinator is loading and hence can't process requests.",
    ),
    15: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    16: ("NotCoordinatorException", "This is not the correct coordinator."),
    17: ("InvalidTopicException", "The request attempted to perform an operation on an invalid topic."),
    18: (
        "RecordBatchTooLargeException",
        "The request included message batch larger than the configured segment size on the server.",
    ),
    19: (
        "NotEnoughReplicasException",
        "Messages are rejected since there are fewer in-sync replicas than required.",
    ),
    20: (
        "NotEnoughReplicasAfterAppendException",
        "Messages are written to the log, but to fewer in-sync replicas than required.",
    ),
    21: ("InvalidRequiredAcksException", "Produce request specified an invalid value for required acks."),
    22: ("IllegalGenerationException", "Specified group generation id is not valid."),
    23: (
        "InconsistentGroupProtocolException",
        (
            "The group member's supported protocols are incompatible with those of existing members or "
            "first group member tried to join with empty protocol type or empty protocol list."
        ),
    ),
    24: ("InvalidGroupIdException", "The group id is invalid."),
    25: ("UnknownMemberIdException", "The coordinator is not aware of this member."),
    26: (
        "InvalidSessionTimeoutException",
        (
            "The session timeout is not within the range allowed by the broker (as configured by "
            "group.min.session.timeout.ms and group.max.session.timeout.ms)."
        ),
    ),
    27: ("RebalanceInProgressException", "The group is rebalancing, so a rejoin is needed."),
    28: ("InvalidCommitOffsetSizeException", "The committing offset data size is not valid."),
    29: ("TopicAuthorizationException", "Topic authorization failed."),
    30: ("GroupAuthorizationException", "Group authorization failed."),
    31: ("ClusterAuthorizationException", "Cluster authorization failed."),
    32: ("InvalidTimestampException", "The timestamp of the message is out of acceptable range."),
    33: ("UnsupportedSaslMechanismException", "The broker does not support the requested SASL mechanism."),
    34: ("IllegalSaslStateException", "Request is not valid given the current SASL state."),
    35: ("UnsupportedVersionException", "The version of API is not supported."),
    36: ("TopicExistsException", "Topic with this name already exists."),
    37: ("InvalidPartitionsException", "Number of partitions is below 1."),
    38: (
        "InvalidReplicationFactorException",
        "Replication factor is below 1 or larger than the number of available brokers.",
    ),
    39: ("InvalidReplicaAssignmentException", "Replica assignment is invalid."),
    40: ("InvalidConfigurationException", "Configuration is invalid."),
    41: ("NotControllerException", "This is not the correct controller for this cluster."),
    42: (
        "InvalidRequestException",
        (
            "This most likely occurs because of a request being malformed by the client library or the "
            "message was sent to an incompatible broker. See the broker logs for more details."
        ),
    ),
    43: (
        "UnsupportedForMessageFormatException",
        "The message format version on the broker does not support the request.",
    ),
    44: ("PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    45: ("OutOfOrderSequenceException", "The broker received an out of order sequence number."),
    46: ("DuplicateSequenceException", "The broker received a duplicate sequence number."),
    47: ("InvalidProducerEpochException", "Producer attempted to produce with an old epoch."),
    48: ("InvalidTxnStateException", "The producer attempted a transactional operation in an invalid state."),
    49: (
        "InvalidPidMappingException",
        ("The producer attempted to use a producer id which is not currently assigned to its transactional id."),
    ),
    50: (
        "InvalidTxnTimeoutException",
        (
            "The transaction timeout is larger than the maximum value allowed by the broker (as "
            "configured by transaction.max.timeout.ms)."
        ),
    ),
    51: (
        "ConcurrentTransactionsException",
        (
            "The producer attempted to update a transaction while another concurrent operation on the "
            "same transaction was ongoing."
        ),
    ),
    52: (
        "TransactionCoordinatorFencedException",
        (
            "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the "
            "current coordinator for a given producer."
        ),
    ),
    53: ("TransactionalIdAuthorizationException", "Transactional Id authorization failed."),
    54: ("SecurityDisabledException", "Security features are disabled."),
    55: (
        "OperationNotAttemptedException",
        (
            "The broker did not attempt to execute this operation. This may happen for batched RPCs "
            "where some operations in the batch failed, causing the broker to respond without trying "
            "the rest."
        ),
    ),
    56: ("KafkaStorageException", "Disk error when trying to access log file on the disk."),
    57: ("LogDirNotFoundException", "The user-specified log directory is not found in the broker config."),
    58: ("SaslAuthenticationException", "SASL Authentication failed."),
    59: (
        "UnknownProducerIdException",
        (
            "This exception is raised by the broker if it could not locate the producer metadata "
            "associated with the producerId in question. This could happen if, for instance, the "
            "producer's records were deleted because their retention time had elapsed. Once the last "
            "records of the producerId are removed, the producer's metadata is removed from the broker,"
            " and future appends by the producer will return this exception."
        ),
    ),
    60: ("ReassignmentInProgressException", "A partition reassignment is in progress."),
    61: ("DelegationTokenDisabledException", "Delegation Token feature is not enabled."),
    62: ("DelegationTokenNotFoundException", "Delegation Token is not found on server."),
    63: ("DelegationTokenOwnerMismatchException", "Specified Principal is not valid Owner/Renewer."),
    64: (
        "UnsupportedByAuthenticationException",
        (
            "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
            "delegation token authenticated channels."
        ),
    ),
    65: ("DelegationTokenAuthorizationException", "Delegation Token authorization failed."),
    66: ("DelegationTokenExpiredException", "Delegation Token is expired."),
    67: ("InvalidPrincipalTypeException", "Supplied principalType is not supported."),
    68: ("GroupNotEmptyException", "The group is not empty."),
    69: ("GroupIdNotFoundException", "The group id does not exist."),
    70: ("FetchSessionIdNotFoundException", "The fetch session ID was not found."),
    71: ("InvalidFetchSessionEpochException", "The fetch session epoch is invalid."),
    72: (
        "ListenerNotFoundException",
        (
            "There is no listener on the leader broker that matches the listener on which metadata "
            "request was processed."
        ),
    ),
    73: ("TopicDeletionDisabledException", "Topic deletion is disabled."),
    74: (
        "FencedLeaderEpochException",
        "The leader epoch in the request is older than the epoch on the broker.",
    ),
    75: (
        "UnknownLeaderEpochException",
        "The leader epoch in the request is newer than the epoch on the broker.",
    ),
    76: (
        "UnsupportedCompressionTypeException",
        "The requesting client does not support the compression type of given partition.",
    ),
    77: ("StaleBrokerEpochException", "Broker epoch has changed."),
    78: (
        "OffsetNotAvailableException",
        (
            "The leader high watermark has not caught up from a recent leader election so the offsets "
            "cannot be guaranteed to be monotonically increasing."
        ),
    ),
    79: (
        "MemberIdRequiredException",
        ("The group member needs to have a valid member id before actually entering a consumer group."),
    ),
    80: ("PreferredLeaderNotAvailableException", "The preferred leader was not available."),
    81: ("GroupMaxSizeReachedException", "The group has reached its maximum size."),
    82: (
        "FencedInstanceIdException",
        (
            "The broker rejected this static consumer since another consumer with the same "
            "group.instance.id has registered with a different member.id."
        ),
    ),
    83: ("EligibleLeadersNotAvailableException", "Eligible topic partition leaders are not available."),
    84: ("ElectionNotNeededException", "Leader election not needed for topic partition."),
    85: ("NoReassignmentInProgressException", "No partition reassignment is in progress."),
    86: (
        "GroupSubscribedToTopicException",
        ("Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    ),
    87: (
        "org.apache.kafka.common.InvalidRecordException",
        "This record has failed the validation on broker and hence will be rejected.",
    ),
    88: ("UnstableOffsetCommitException", "There are unstable offsets that need to be cleared."),
    89: ("ThrottlingQuotaExceededException", "The throttling quota has been exceeded."),
    90: (
        "ProducerFencedException",
        "There is a newer producer with the same transactionalId which fences the current one.",
    ),
    91: ("ResourceNotFoundException", "A request illegally referred to a resource that does not exist."),
    92: ("DuplicateResourceException", "A request illegally referred to the same resource twice."),
    93: (
        "UnacceptableCredentialException",
        "Requested credential would not meet criteria for acceptability.",
    ),
    94: (
        "InconsistentVoterSetException",
        (
            "Indicates that the either the sender or recipient of a voter-only request is not one of "
            "the expected voters."
        ),
    ),
    95: ("InvalidUpdateVersionException", "The given update version was invalid."),
    96: (
        "FeatureUpdateFailedException",
        "Unable to update finalized features due to an unexpected server error.",
    ),
    97: (
        "PrincipalDeserializationException",
        (
            "Request principal deserialization failed during forwarding. This indicates an internal "
            "error on the broker cluster security setup."
        ),
    ),
    98: ("SnapshotNotFoundException", "Requested snapshot was not found."),
    99: (
        "PositionOutOfRangeException",
        ("Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    ),
    100: ("UnknownTopicIdException", "This server does not host this topic ID."),
    101: ("DuplicateBrokerRegistrationException", "This broker ID is already in use."),
    102: ("BrokerIdNotRegisteredException", "The given broker ID was not registered."),
    103: ("InconsistentTopicIdException", "The log's topic ID did not match the topic ID in the request."),
    104: (
        "InconsistentClusterIdException",
        "The clusterId in the request does not match that found on the server.",
    ),
    105: ("TransactionalIdNotFoundException", "The transactionalId could not be found."),
    106: ("FetchSessionTopicIdException", "The fetch session encountered inconsistent topic ID usage."),
    107: ("IneligibleReplicaException", "The new ISR contains at least one ineligible replica."),
    108: (
        "NewLeaderElectedException",
        ("The AlterPartition request successfully updated the partition state but the leader has changed."),
    ),
    109: ("OffsetMovedToTieredStorageException", "The requested offset is moved to tiered storage."),
    110: (
        "FencedMemberEpochException",
        ("The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin."),
    ),
    111: (
        "UnreleasedInstanceIdException",
        ("The instance ID is still used by another member in the consumer group. That member must leave first."),
    ),
    112: (
        "UnsupportedAssignorException",
        "The assignor or its version range is not supported by the consumer group.",
    ),
    113: (
        "StaleMemberEpochException",
        (
            "The member epoch is stale. The member must retry after receiving its updated member epoch "
            "via the ConsumerGroupHeartbeat API."
        ),
    ),
    114: ("MismatchedEndpointTypeException", "The request was sent to an endpoint of the wrong type."),
    115: ("UnsupportedEndpointTypeException", "This endpoint type is not supported yet."),
    116: ("UnknownControllerIdException", "This controller ID is not known."),
    117: (
        "UnknownSubscriptionIdException",
        "Client sent a push telemetry request with an invalid or outdated subscription ID.",
    ),
    118: (
        "TelemetryTooLargeException",
        "Client sent a push telemetry request larger than the maximum size the broker will accept.",
    ),
    119: (
        "InvalidRegistrationException",
        "The controller has considered the broker registration to be invalid.",
    ),
    120: (
        "TransactionAbortableException",
        (
            "The server encountered an error with the transaction. The client can abort the transaction"
            " to continue using this transactional ID."
        ),
    ),
    121: (
        "InvalidRecordStateException",
        "The record state is invalid. The acknowledgement of delivery could not be completed.",
    ),
    122: ("ShareSessionNotFoundException", "The share session was not found."),
    123: ("InvalidShareSessionEpochException", "The share session epoch is invalid."),
    124: (
        "FencedStateEpochException",
        ("The share coordinator rejected the request because the share-group state epoch did not match."),
    ),
    125: ("InvalidVoterKeyException", "The voter key doesn't match the receiving replica's key."),
    126: ("DuplicateVoterException", "The voter is already part of the set of voters."),
    127: ("VoterNotFoundException", "The voter is not part of the set of voters."),
    128: ("InvalidRegularExpression", "The regular expression is not valid."),
    129: (
        "RebootstrapRequiredException",
        "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
    ),
    130: ("StreamsInvalidTopologyException", "The supplied topology is invalid."),
    131: ("StreamsInvalidTopologyEpochException", "The supplied topology epoch is invalid."),
    132: ("StreamsTopologyFencedException", "The supplied topology epoch is outdated."),
    133: ("ShareSessionLimitReachedException", "The limit of share sessions has been reached."),
}
