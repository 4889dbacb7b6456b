"""A real multi-node Apache Kafka (KRaft) on 127.0.0.1, started from the Maven-resolved jars.

Used by the test suite (session fixtures), by the demo and by ``python -m kreassign.devcluster``.
It starts only processes it owns, remembers their pids, and stops exactly those.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.devcluster.jars import (
    BROKER_LOG4J,
    HarnessError,
    classpath,
    pinned_kafka_version,
)
from kreassign.devcluster.security import ClusterSecurity

# Small heaps so that 4 to 6 brokers fit on a 2-core machine; C1 only and the serial collector make
# start-up fast and keep the thread count low. Throughput is not what these brokers are for.
NODE_JVM_OPTS = (
    "-Xms64m",
    "-Xmx384m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM it when the process that started it dies, so a
    killed test run never leaves brokers behind."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    #: the broker-to-broker listener of a secure cluster (clients use ``broker_port``)
    internal_port: int | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

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
    security: ClusterSecurity | None = None
    start_timeout: float = 90.0
    #: stop the nodes when the Python process that started them dies (off for a background cluster)
    die_with_parent: bool = True
    nodes: list[Node] = field(default_factory=list)
    cluster_id: str = field(default_factory=random_cluster_id)

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
        return [f"SASL_SSL://127.0.0.1:{node.broker_port}", f"INTERNAL://127.0.0.1:{node.internal_port}"]

    def _properties(self, node: Node) -> dict[str, str]:
        listeners, protocol_map = [], ["CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"]
        if self.security is not None:
            protocol_map = ["CONTROLLER:SASL_PLAINTEXT", "INTERNAL:SASL_PLAINTEXT", "SASL_SSL:SASL_SSL"]
        if node.is_broker:
            listeners += self._broker_listeners(node)
        if node.is_controller:
            listeners.append(f"CONTROLLER://127.0.0.1:{node.controller_port}")
        replication = str(min(3, self.brokers))
        props = {
            "process.roles": ",".join(node.roles),
            "node.id": str(node.node_id),
            "controller.quorum.voters": self._quorum_voters(),
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners),
            "listener.security.protocol.map": ",".join(protocol_map),
            "log.dirs": ",".join(str(d) for d in node.log_dirs),
            "auto.create.topics.enable": "false",
            "num.partitions": "1",
            "offsets.topic.replication.factor": replication,
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": replication,
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.replica.fetchers": "1",
            "background.threads": "2",
            "log.cleaner.threads": "1",
            "log.cleaner.dedupe.buffer.size": "2097152",
        }
        if self.security is not None:
            props.update(self.security.node_properties(is_broker=node.is_broker))
        if node.is_broker:
            props["inter.broker.listener.name"] = "INTERNAL" if self.security else "PLAINTEXT"
            props["advertised.listeners"] = ",".join(self._broker_listeners(node))
            if node.rack:
                props["broker.rack"] = node.rack
            props.update(self.broker_config)
        return props

    # ----------------------------------------------------------------- lifecycle
    def _java(self, main_class: str, *args: str, log4j: Path = BROKER_LOG4J) -> list[str]:
        return [
            "java",
            *NODE_JVM_OPTS,
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            classpath(),
            main_class,
            *args,
        ]

    def _format(self, node: Node) -> subprocess.Popen:
        node.directory.mkdir(parents=True, exist_ok=True)
        node.config_file.write_text("".join(f"{k}={v}\n" for k, v in self._properties(node).items()))
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
        """Format every node, start them, and wait until every broker is registered and serving."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        if self.security is not None:
            self.security.prepare(self.base_dir)
        formats = [(n, self._format(n)) for n in self.nodes]
        for node, proc in formats:
            if proc.wait(timeout=120) != 0:
                raise HarnessError(
                    f"formatting node {node.node_id} failed:\n{(node.directory / 'format.log').read_text()[-3000:]}"
                )
        try:
            for node in self.controller_nodes + [n for n in self.broker_nodes if not n.is_controller]:
                self._spawn(node)
            self.wait_until_ready(self.broker_ids, deadline=started + self.start_timeout)
        except BaseException:
            self.stop()
            raise
        self.write_state()
        return self

    def _spawn(self, node: Node) -> None:
        if node.running():
            return
        log = open(node.log_file, "ab")  # noqa: SIM115 - the child owns it
        node.process = subprocess.Popen(
            self._java("kafka.Kafka", str(node.config_file)),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
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

    @staticmethod
    def _broker_started(node: Node) -> bool:
        try:
            text = node.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return False
        marker = text.rfind("Kafka Server started")
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
                if "Kafka Server started" in tail:
                    break
                if not node.running():
                    raise HarnessError(f"node {node_id} exited on restart:\n{self.log_tail(node_id, 40)}")
                time.sleep(0.2)
            else:
                raise HarnessError(f"node {node_id} did not restart in {timeout}s:\n{self.log_tail(node_id, 40)}")

    def stop(self) -> None:
        """Stop every node this object started: brokers first, then controllers."""
        for node in self.broker_nodes + [n for n in self.controller_nodes if not n.is_broker]:
            with contextlib.suppress(Exception):
                self.stop_node(node.node_id, timeout=20)
        state = self.base_dir / "cluster.json"
        with contextlib.suppress(FileNotFoundError):
            state.unlink()

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
            "kafka_version": pinned_kafka_version(),
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
    """Only signal a pid whose command line is a kafka.Kafka of this cluster's folder."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    text = [c.decode(errors="replace") for c in cmdline]
    return "kafka.Kafka" in text and any(str(Path(base_dir).resolve()) in c for c in text)
