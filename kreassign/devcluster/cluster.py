"""A real multi-node Apache Kafka on 127.0.0.1, started from the Maven-resolved jars: KRaft
(:class:`LocalKafkaCluster`, the pinned release) or ZooKeeper mode (:class:`ZooKeeperKafkaCluster`, the
newest 3.9.x, for the legacy ``--zookeeper`` path).

Used by the test suite (session fixtures), by the demo and by ``python -m kreassign.devcluster``.
It starts only processes it owns, remembers their pids, and stops exactly those.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.devcluster.jars import (
    HarnessError,
    classpath,
    log4j_options,
    pinned_kafka_version,
    zookeeper_kafka_version,
)
from kreassign.devcluster.processes import die_with_parent, free_port
from kreassign.devcluster.security import ClusterSecurity

# Small heaps so that 4 to 6 brokers fit on a 2-core machine; C1 only and the serial collector make
# start-up fast and keep the thread count low. Throughput is not what these brokers are for.
NODE_HEAP = "384m"
NODE_JVM_OPTS = (
    "-Xms64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


def tiered_storage(remote_dir: Path, version: str) -> tuple[dict[str, str], dict[str, str]]:
    """(broker, controller) properties of a cluster whose topics may keep their old segments in remote storage
    (KIP-405): Kafka's ``LocalTieredStorage`` on ``remote_dir``, shared by the brokers; the metadata topic of one
    partition; segments uploaded and local retention applied every second. A topic uses it with
    ``remote.storage.enable=true`` (the controller checks that the cluster allows it)."""
    from kreassign.devcluster.jars import tiered_storage_jar

    broker = {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": "org.apache.kafka.server.log.remote.storage.LocalTieredStorage",
        "remote.log.storage.manager.class.path": str(tiered_storage_jar(version)),
        "rsm.config.dir": str(remote_dir),
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.num.partitions": "1",
        "remote.log.manager.task.interval.ms": "1000",
        "log.retention.check.interval.ms": "1000",
    }
    return broker, {"remote.log.storage.system.enable": "true"}


def random_cluster_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@dataclass
class Node:
    """One Kafka process: a broker, a controller, or both (combined mode)."""

    node_id: int
    roles: tuple[str, ...]
    directory: Path
    rack: str | None = None
    broker_port: int | None = None
    controller_port: int | None = None
    log_dir_count: int = 2
    #: a ZooKeeper server's client port (roles ``("zookeeper",)``)
    client_port: int | None = None
    #: the broker-to-broker listener of a secure cluster (clients use ``broker_port``)
    internal_port: int | None = None
    #: the other client listeners of a secure cluster (``ClusterSecurity.extra_listeners``): name -> port
    listener_ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def is_zookeeper(self) -> bool:
        return "zookeeper" in self.roles

    @property
    def log_dirs(self) -> list[Path]:
        return [self.directory / f"data-{i}" for i in range(self.log_dir_count)]

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    @property
    def config_file(self) -> Path:
        return self.directory / "server.properties"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class LocalKafkaCluster:
    """N brokers (ids 1..N, racks alternating) and dedicated or combined KRaft controllers.

    ``controllers`` dedicated controller nodes get ids 101, 102, ...; with ``combined=True`` the
    first ``controllers`` brokers are also the controllers and no extra process is started.
    With ``security`` (a :class:`ClusterSecurity`) clients connect over SASL_SSL with SCRAM users and
    ACLs apply; see ``kreassign.devcluster.security``.
    """

    base_dir: Path
    brokers: int = 3
    controllers: int = 1
    combined: bool = False
    racks: tuple[str, ...] = ("rack-a", "rack-b")
    log_dirs_per_broker: int = 2
    broker_config: Mapping[str, str] = field(default_factory=dict)
    #: properties of the controller nodes (a combined node gets both)
    controller_config: Mapping[str, str] = field(default_factory=dict)
    security: ClusterSecurity | None = None
    start_timeout: float = 90.0
    #: each node's -Xmx: the default fits 4 to 6 nodes on a small machine; thousands of partitions per broker
    #: (the benchmarks) need more
    heap: str = NODE_HEAP
    #: stop the nodes when the Python process that started them dies (off for a background cluster)
    die_with_parent: bool = True
    nodes: list[Node] = field(default_factory=list)
    cluster_id: str = field(default_factory=random_cluster_id)
    kafka_version: str = field(default_factory=pinned_kafka_version)

    #: what a broker logs once it serves (KRaft's BrokerServer; ZooKeeper mode's KafkaServer differs)
    STARTED_MARKER = "Kafka Server started"
    #: what the nodes get when the Python process that started them dies. SIGKILL: all nodes get it at
    #: once, and a broker told to stop (SIGTERM) after its controller has gone waits for a controlled
    #: shutdown that never ends (issue 26 item 17). A killed broker recovers its logs on the next start.
    PARENT_DEATH_SIGNAL = signal.SIGKILL

    # ----------------------------------------------------------------- layout
    def __post_init__(self) -> None:
        self.base_dir = Path(self.base_dir).resolve()
        if self.brokers < 1 or self.controllers < 1:
            raise HarnessError("a cluster needs at least one broker and one controller")
        if self.combined and self.controllers > self.brokers:
            raise HarnessError("combined mode needs at least as many brokers as controllers")
        if not self.nodes:
            self.nodes = self._plan_nodes()

    def _plan_nodes(self) -> list[Node]:
        nodes = []
        for i in range(1, self.brokers + 1):
            combined_controller = self.combined and i <= self.controllers
            nodes.append(
                Node(
                    node_id=i,
                    roles=("broker", "controller") if combined_controller else ("broker",),
                    directory=self.base_dir / f"node-{i}",
                    rack=self.racks[(i - 1) % len(self.racks)] if self.racks else None,
                    broker_port=free_port(),
                    controller_port=free_port() if combined_controller else None,
                    log_dir_count=self.log_dirs_per_broker,
                    internal_port=free_port() if self.security else None,
                    listener_ports={name: free_port() for name in self.security.extra_listeners()}
                    if self.security
                    else {},
                )
            )
        if not self.combined:
            for j in range(self.controllers):
                nodes.append(
                    Node(
                        node_id=101 + j,
                        roles=("controller",),
                        directory=self.base_dir / f"node-{101 + j}",
                        controller_port=free_port(),
                        log_dir_count=1,
                    )
                )
        return nodes

    @property
    def broker_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.is_broker]

    @property
    def controller_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.is_controller]

    @property
    def broker_ids(self) -> list[int]:
        return [n.node_id for n in self.broker_nodes]

    @property
    def broker_racks(self) -> dict[int, str | None]:
        return {n.node_id: n.rack for n in self.broker_nodes}

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.broker_port}" for n in self.broker_nodes)

    @property
    def bootstrap_controllers(self) -> str:
        return ",".join(f"127.0.0.1:{n.controller_port}" for n in self.controller_nodes)

    def bootstrap_for(self, listener: str) -> str:
        """The bootstrap address of another client listener of a secure cluster (``SASL_PLAINTEXT``, ``UNSECURED``)."""
        return ",".join(f"127.0.0.1:{n.listener_ports[listener]}" for n in self.broker_nodes)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise HarnessError(f"no node {node_id} in this cluster")

    def _quorum_voters(self) -> str:
        return ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.controller_nodes)

    def _broker_listeners(self, node: Node) -> list[str]:
        if self.security is None:
            return [f"PLAINTEXT://127.0.0.1:{node.broker_port}"]
        extra = [f"{name}://127.0.0.1:{port}" for name, port in node.listener_ports.items()]
        return [f"SASL_SSL://127.0.0.1:{node.broker_port}", f"INTERNAL://127.0.0.1:{node.internal_port}", *extra]

    def _properties(self, node: Node) -> dict[str, str]:
        listeners, protocol_map = [], ["CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"]
        if self.security is not None:
            protocol_map = ["CONTROLLER:SASL_PLAINTEXT", "INTERNAL:SASL_PLAINTEXT", "SASL_SSL:SASL_SSL"]
            protocol_map += [f"{name}:{protocol}" for name, protocol in self.security.extra_listeners().items()]
        if node.is_broker:
            listeners += self._broker_listeners(node)
        if node.is_controller:
            listeners.append(f"CONTROLLER://127.0.0.1:{node.controller_port}")
        props = {
            "process.roles": ",".join(node.roles),
            "node.id": str(node.node_id),
            "controller.quorum.voters": self._quorum_voters(),
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners),
            "listener.security.protocol.map": ",".join(protocol_map),
            **self._small_node_properties(node),
            "share.coordinator.state.topic.replication.factor": str(min(3, self.brokers)),
            "share.coordinator.state.topic.min.isr": "1",
        }
        if self.security is not None:
            props.update(self.security.node_properties(is_broker=node.is_broker))
        if node.is_broker:
            props.update(self._broker_properties(node))
        if node.is_controller:
            props.update(self.controller_config)
        return props

    def _small_node_properties(self, node: Node) -> dict[str, str]:
        """Log dirs, internal topics sized for this cluster, and few threads: shared by both modes."""
        replication = str(min(3, self.brokers))
        return {
            "log.dirs": ",".join(str(d) for d in node.log_dirs),
            "auto.create.topics.enable": "false",
            "num.partitions": "1",
            "offsets.topic.replication.factor": replication,
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.replica.fetchers": "1",
            "background.threads": "2",
            "log.cleaner.threads": "1",
            "log.cleaner.dedupe.buffer.size": "2097152",
        }

    def _broker_properties(self, node: Node) -> dict[str, str]:
        props = {
            "inter.broker.listener.name": "INTERNAL" if self.security else "PLAINTEXT",
            "advertised.listeners": ",".join(self._broker_listeners(node)),
        }
        if node.rack:
            props["broker.rack"] = node.rack
        props.update(self.broker_config)
        return props

    # ----------------------------------------------------------------- lifecycle
    def _java(self, main_class: str, *args: str, broker: bool = True) -> list[str]:
        """A node (``broker``: its logging to the node's log) or a Kafka tool (warnings on stderr)."""
        return [
            "java",
            *NODE_JVM_OPTS,
            f"-Xmx{self.heap}",
            *(self.security.jvm_options() if self.security else ()),
            *log4j_options(self.kafka_version, broker=broker),
            "-cp",
            classpath(self.kafka_version),
            main_class,
            *args,
        ]

    def _node_command(self, node: Node) -> list[str]:
        return self._java("kafka.Kafka", str(node.config_file))

    def _write_config(self, node: Node) -> None:
        node.directory.mkdir(parents=True, exist_ok=True)
        node.config_file.write_text("".join(f"{k}={v}\n" for k, v in self._properties(node).items()))

    def _format(self, node: Node) -> subprocess.Popen:
        self._write_config(node)
        cmd = self._java(
            "kafka.tools.StorageTool",
            "format",
            "--ignore-formatted",
            f"--cluster-id={self.cluster_id}",  # an id may start with "-": keep it attached to its option
            "-c",
            str(node.config_file),
            *(self.security.format_arguments() if self.security and node.is_controller else ()),
        )
        out = open(node.directory / "format.log", "w")  # noqa: SIM115 - closed by _wait_format
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)

    def start(self) -> LocalKafkaCluster:
        """Prepare every node, start them, and wait until every broker is registered and serving."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        if self.security is not None:
            self.security.prepare(self.base_dir)
            self.security.start_services(self.base_dir)
        try:
            self._prepare()
            if self.security is not None:
                self.security.wait_for_services()
            self._start_processes(deadline=started + self.start_timeout)
        except BaseException:
            self.stop()
            raise
        self.write_state()
        return self

    def _prepare(self) -> None:
        """KRaft: write each node's configuration and format its storage."""
        formats = [(n, self._format(n)) for n in self.nodes]
        for node, proc in formats:
            if proc.wait(timeout=120) != 0:
                raise HarnessError(
                    f"formatting node {node.node_id} failed:\n{(node.directory / 'format.log').read_text()[-3000:]}"
                )

    def _start_processes(self, deadline: float) -> None:
        for node in self.controller_nodes + [n for n in self.broker_nodes if not n.is_controller]:
            self._spawn(node)
        self.wait_until_ready(self.broker_ids, deadline=deadline)

    def _spawn(self, node: Node) -> None:
        if node.running():
            return
        log = open(node.log_file, "ab")  # noqa: SIM115 - the child owns it
        node.process = subprocess.Popen(
            self._node_command(node),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent(self.PARENT_DEATH_SIGNAL) if self.die_with_parent else None,
        )
        log.close()

    def wait_until_ready(self, broker_ids: Iterable[int], deadline: float) -> None:
        """Poll until each broker logs that it started and accepts TCP connections."""
        pending = set(broker_ids)
        while pending:
            for node_id in sorted(pending):
                node = self.node(node_id)
                if node.process is not None and node.process.poll() is not None:
                    raise HarnessError(
                        f"broker {node_id} exited with {node.process.returncode} while starting:\n"
                        + self.log_tail(node_id, 40)
                    )
                if self._broker_started(node):
                    pending.discard(node_id)
            if not pending:
                break
            if time.monotonic() > deadline:
                tails = "\n".join(self.log_tail(i, 30) for i in sorted(pending))
                raise HarnessError(f"brokers {sorted(pending)} did not start in time:\n{tails}")
            time.sleep(0.2)

    def _broker_started(self, node: Node) -> bool:
        try:
            text = node.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return False
        marker = text.rfind(self.STARTED_MARKER)
        if marker < 0:
            return False
        try:
            with socket.create_connection(("127.0.0.1", node.broker_port), timeout=1):
                return True
        except OSError:
            return False

    def stop_node(self, node_id: int, *, hard: bool = False, timeout: float = 30.0) -> None:
        """Stop one node (SIGTERM, or SIGKILL with ``hard``) and wait for it to exit."""
        node = self.node(node_id)
        if not node.running():
            return
        assert node.process is not None
        node.process.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
        try:
            node.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait(timeout=10)
        # Kafka rewrites markers on restart; keep the log but mark where this run ended.
        with open(node.log_file, "a") as log:
            log.write(f"\n----- harness stopped node {node_id} -----\n")

    def start_node(self, node_id: int, timeout: float = 60.0) -> None:
        node = self.node(node_id)
        if node.running():
            return
        # A restart must log a fresh "Kafka Server started" after the marker written by stop_node.
        self._spawn(node)
        if node.is_broker:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                text = node.log_file.read_text(errors="replace")
                tail = text[text.rfind("----- harness stopped node") :]
                if self.STARTED_MARKER in tail:
                    break
                if not node.running():
                    raise HarnessError(f"node {node_id} exited on restart:\n{self.log_tail(node_id, 40)}")
                time.sleep(0.2)
            else:
                raise HarnessError(f"node {node_id} did not restart in {timeout}s:\n{self.log_tail(node_id, 40)}")

    def active_controller(self) -> int:
        """The id of the KRaft quorum leader (Kafka's kafka-metadata-quorum describe --status)."""
        cmd = self._java(
            "org.apache.kafka.tools.MetadataQuorumCommand",
            "--bootstrap-controller",
            self.bootstrap_controllers,
            "describe",
            "--status",
            broker=False,
        )
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
        match = re.search(r"^LeaderId:\s+(\d+)", out, flags=re.M)
        if match is None:
            raise HarnessError(f"no LeaderId in kafka-metadata-quorum output:\n{out}")
        return int(match.group(1))

    def stop(self) -> None:
        """Stop every node this object started: brokers first, then controllers."""
        for node in self.broker_nodes + [n for n in self.controller_nodes if not n.is_broker]:
            with contextlib.suppress(Exception):
                self.stop_node(node.node_id, timeout=20)
        state = self.base_dir / "cluster.json"
        with contextlib.suppress(FileNotFoundError):
            state.unlink()
        if self.security is not None:
            with contextlib.suppress(Exception):
                self.security.stop_services()

    def __enter__(self) -> LocalKafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- diagnostics
    def log_tail(self, node_id: int, lines: int = 50) -> str:
        node = self.node(node_id)
        try:
            text = node.log_file.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return f"--- node {node_id}: no log yet ---"
        return f"--- node {node_id} ({node.log_file}), last {lines} lines ---\n" + "\n".join(text[-lines:])

    def describe(self) -> dict:
        return {
            "kafka_version": self.kafka_version,
            "cluster_id": self.cluster_id,
            "bootstrap_servers": self.bootstrap_servers,
            "bootstrap_controllers": self.bootstrap_controllers,
            "base_dir": str(self.base_dir),
            "nodes": [
                {
                    "id": n.node_id,
                    "roles": list(n.roles),
                    "rack": n.rack,
                    "broker_port": n.broker_port,
                    "controller_port": n.controller_port,
                    "client_port": n.client_port,
                    "log_dirs": [str(d) for d in n.log_dirs],
                    "pid": n.process.pid if n.process else None,
                }
                for n in self.nodes
            ],
        }

    def write_state(self) -> Path:
        state = self.base_dir / "cluster.json"
        state.write_text(json.dumps(self.describe(), indent=2) + "\n")
        return state


@dataclass
class ZooKeeperKafkaCluster(LocalKafkaCluster):
    """N ZooKeeper-mode brokers (ids 1..N, racks alternating) and one standalone ZooKeeper server, from
    the newest Kafka 3.9.x (the last line with ZooKeeper) and the ZooKeeper it depends on.

    ``zookeeper_connect`` is ``127.0.0.1:<port>`` plus ``chroot`` (default none). The ZooKeeper node is
    node 0 with the role ``zookeeper``; it is started first and stopped last.
    """

    kafka_version: str = field(default_factory=zookeeper_kafka_version)
    chroot: str = ""

    STARTED_MARKER = "started (kafka.server.KafkaServer)"

    def _plan_nodes(self) -> list[Node]:
        zookeeper = Node(0, ("zookeeper",), self.base_dir / "zookeeper", log_dir_count=1, client_port=free_port())
        return [zookeeper] + [
            Node(
                node_id=i,
                roles=("broker",),
                directory=self.base_dir / f"node-{i}",
                rack=self.racks[(i - 1) % len(self.racks)] if self.racks else None,
                broker_port=free_port(),
                log_dir_count=self.log_dirs_per_broker,
            )
            for i in range(1, self.brokers + 1)
        ]

    @property
    def zookeeper_node(self) -> Node:
        return next(n for n in self.nodes if n.is_zookeeper)

    @property
    def zookeeper_connect(self) -> str:
        return f"127.0.0.1:{self.zookeeper_node.client_port}{self.chroot}"

    @property
    def bootstrap_controllers(self) -> str:
        return ""

    def _zoo_cfg(self, node: Node) -> dict[str, str]:
        return {
            "dataDir": str(node.log_dirs[0]),
            "clientPort": str(node.client_port),
            "clientPortAddress": "127.0.0.1",
            "tickTime": "2000",
            "maxClientCnxns": "0",
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "ruok",
        }

    def _properties(self, node: Node) -> dict[str, str]:
        if node.is_zookeeper:
            return self._zoo_cfg(node)
        return {
            "broker.id": str(node.node_id),
            "zookeeper.connect": self.zookeeper_connect,
            "zookeeper.connection.timeout.ms": "30000",
            "listeners": f"PLAINTEXT://127.0.0.1:{node.broker_port}",
            **self._small_node_properties(node),
            **self._broker_properties(node),
        }

    def _node_command(self, node: Node) -> list[str]:
        if node.is_zookeeper:
            return self._java("org.apache.zookeeper.server.quorum.QuorumPeerMain", str(node.config_file))
        return super()._node_command(node)

    def _prepare(self) -> None:
        """ZooKeeper mode has no storage to format: write the configurations only."""
        for node in self.nodes:
            self._write_config(node)

    def _start_processes(self, deadline: float) -> None:
        """ZooKeeper first (creating the chroot), then the brokers."""
        self._spawn(self.zookeeper_node)
        self._wait_for_zookeeper(deadline)
        for node in self.broker_nodes:
            self._spawn(node)
        self.wait_until_ready(self.broker_ids, deadline=deadline)

    def _wait_for_zookeeper(self, deadline: float) -> None:
        node = self.zookeeper_node
        while True:
            if not node.running():
                raise HarnessError(f"ZooKeeper exited while starting:\n{self.log_tail(node.node_id, 40)}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", node.client_port), 1) as sock:
                sock.sendall(b"ruok")
                if sock.recv(4) == b"imok":
                    break
            if time.monotonic() > deadline:
                raise HarnessError(f"ZooKeeper did not start in time:\n{self.log_tail(node.node_id, 40)}")
            time.sleep(0.2)
        if self.chroot:
            from kazoo.client import KazooClient

            from kreassign.zookeeper.store import quiet_logger

            client = KazooClient(hosts=f"127.0.0.1:{node.client_port}", logger=quiet_logger())
            client.start(timeout=30)
            try:
                client.ensure_path(self.chroot)
            finally:
                client.stop()
                client.close()

    def stop(self) -> None:
        """Stop the brokers, then ZooKeeper."""
        super().stop()
        with contextlib.suppress(Exception):
            self.stop_node(self.zookeeper_node.node_id, timeout=20)

    def describe(self) -> dict:
        return {**super().describe(), "zookeeper_connect": self.zookeeper_connect}


def stop_from_state(base_dir: Path, timeout: float = 30.0) -> list[int]:
    """Stop a cluster started by another process (``python -m kreassign.devcluster start``)."""
    state_file = Path(base_dir) / "cluster.json"
    if not state_file.exists():
        return []
    state = json.loads(state_file.read_text())
    stopped = []
    # brokers first, then controllers
    for node in sorted(state["nodes"], key=lambda n: "broker" not in n["roles"]):
        pid = node.get("pid")
        if not pid or not _is_our_kafka(pid, base_dir):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        stopped.append(node["id"])
    state_file.unlink()
    return stopped


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not alive
    with contextlib.suppress(FileNotFoundError):
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return False
    return True


def _is_our_kafka(pid: int, base_dir: Path) -> bool:
    """Only signal a pid whose command line is a kafka.Kafka (or the ZooKeeper server of a ZooKeeper-mode
    cluster) of this cluster's folder."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    text = [c.decode(errors="replace") for c in cmdline]
    ours = "kafka.Kafka" in text or "org.apache.zookeeper.server.quorum.QuorumPeerMain" in text
    return ours and any(str(Path(base_dir).resolve()) in c for c in text)
