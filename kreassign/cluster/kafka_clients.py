"""The two Kafka clients of the adapter and how one call runs on them: confluent-kafka (librdkafka) and
kafka-python, each made on first use, the call's deadline, waiting for a future while serving librdkafka's
error callback, running kafka-python coroutines, sending to the controller, one broker or several, and the
Java-like errors of all of these (``client_errors``). The calls themselves are in the sibling modules
``topic_calls``, ``reassignment_calls``, ``log_dir_calls``, ``config_calls`` and ``offset_calls``, each a
subclass of :class:`KafkaClients`; :class:`~kreassign.cluster.kafka.KafkaCluster` joins them."""

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
from kreassign.cluster.kafka_python_calls import (
    CallTimedOut,
    UnknownNodes,
    pause_or_time_out,
    retriable_kafka_python_errors,
)
from kreassign.cluster.librdkafka_calls import scrub_secrets
from kreassign.errors import ClusterError, ClusterTimeoutError, CommandError, ConfigError, KreassignError
from kreassign.model import Broker, TopicPartitionReplica
from kreassign.planning.placement import describe_cluster_node_order

LOG = logging.getLogger("kreassign.cluster.kafka")
LOG.addHandler(logging.NullHandler())
# librdkafka's own log lines (connection refused, ...) go to this logger; the CLI decides whether to show them.
LIBRDKAFKA_LOG = logging.getLogger("kreassign.cluster.kafka.librdkafka")

_GRACE_S = 5.0  # on top of the client's own deadline, before giving up waiting on a future
_POLL_INTERVAL_S = 0.05  # how often librdkafka's error callback is served while waiting
_REFUSED_GRACE_S = 5.0  # how long every bootstrap address may refuse connections before a call fails
_REFUSED_PROBE_INTERVAL_S = 0.5


class KafkaClients:
    """The clients of one ``KafkaCluster`` (no connection until first use), and the plumbing its calls share.

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
            self.address,
            self.using_controllers,
            self.api_timeout_s,
            self.config.security_protocol,
            self.config.mechanism,
            self.config.placeholder_notes,
        )
        self._admin: Any = None  # confluent_kafka.admin.AdminClient
        self._legacy: Any = None  # kafka.admin.KafkaAdminClient
        self._quorum: ControllerQuorum | None = None
        self._fatal_errors: list[Any] = []  # librdkafka authentication / TLS errors (KafkaError)
        self._contacted = False  # the bootstrap addresses were probed once (see _check_listening)
        self._cluster_id: str | None = None  # DescribeCluster's clusterId, kept from the first answer

    def __repr__(self) -> str:
        where = f"bootstrap_servers={self.bootstrap_servers!r}"
        if self.bootstrap_controllers is not None:
            where = f"bootstrap_controllers={self.bootstrap_controllers!r}"
        return f"{type(self).__name__}({where}, {self.config!r})"

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
        if not self.config.librdkafka_can_connect:  # the routes of kafka_python_routes are taken before this
            raise ConfigError(f"sasl.mechanism {self.config.mechanism}: librdkafka cannot log in with it")
        if self._admin is None:
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient

            self.config.log_in(self.address)
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

            if self.config.librdkafka_can_connect:
                # kafka-python retries failed TLS handshakes until its deadline; librdkafka tells at once
                # whether the cluster answers and the credentials work (one DescribeCluster).
                self._wait(self._librdkafka().describe_cluster(request_timeout=self.api_timeout_s), call)
            else:  # GSSAPI: kafka-python carries every call
                self.config.log_in(self.address)
                self._check_listening(call)
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
            self.config.log_in(self.address)
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

    def _unknown_brokers_error(self, call: str, missing: Iterable[int | str]) -> ClusterTimeoutError:
        """``unknown_nodes_error`` for brokers, with the live brokers of the cluster."""
        try:
            live: list[int | str] = [b.id for b in self.describe_brokers()]
        except KreassignError:
            live = []
        unknown = UnknownNodes(missing, live)
        return self.errors.unknown_nodes(call, unknown.missing, unknown.known)

    # -------------------------------------------------------------------------- the brokers
    def describe_brokers(self) -> list[Broker]:
        """Live brokers (with ``--bootstrap-controller``: controllers) in the order of Java's
        ``describeCluster().nodes()``, the values of a HashMap keyed by node id."""
        call = "listNodes"
        if self.using_controllers:
            described = self._run_kafka_python(call, self._controller_quorum().describe, self._deadline())
            nodes = described.nodes
        elif not self.config.librdkafka_can_connect:
            described = self._run_kafka_python(call, self._describe_brokers_over_kafka_python, self._deadline())
            nodes = described.nodes
        else:
            admin = self._librdkafka()
            described = self._wait(admin.describe_cluster(request_timeout=self.api_timeout_s), call)
            nodes = [Broker(n.id, n.rack, n.host, n.port) for n in described.nodes]
        self._cluster_id = self._cluster_id or described.cluster_id or None
        return describe_cluster_node_order(nodes)

    async def _describe_brokers_over_kafka_python(self, deadline: float) -> Any:
        """DescribeCluster (brokers) to any broker, for logins librdkafka cannot make."""
        from kafka.protocol.admin import DescribeClusterRequest

        from kreassign.cluster.controller_quorum import DescribedQuorum
        from kreassign.cluster.kafka_errors import error_for, java_exception

        def build() -> Any:
            return DescribeClusterRequest(include_cluster_authorized_operations=False)

        response = await self._send_to_broker(None, build, deadline)
        if response.error_code:
            raise error_for(java_exception(response.error_code, response.error_message))
        nodes = [Broker(b.broker_id, b.rack, b.host, b.port) for b in response.brokers]
        return DescribedQuorum(response.controller_id, nodes, response.cluster_id or None)

    def cluster_id(self) -> str | None:
        """DescribeCluster's clusterId, from the first call that described the cluster (one call if none has)."""
        if self._cluster_id is None:
            self.describe_brokers()
        return self._cluster_id

    # -------------------------------------------------------------------------- lifecycle
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
