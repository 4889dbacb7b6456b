"""Shared fixtures. The real Kafka cluster is started once per session from the Maven-resolved jars.

If Kafka cannot be started the fixture raises: integration tests fail loudly, they are never skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from kreassign.devcluster.cluster import LocalKafkaCluster, ZooKeeperKafkaCluster
from kreassign.devcluster.security import ClusterSecurity
from tests.integration.clusters import discard

_CLUSTERS: list[LocalKafkaCluster] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    """Resolve the pinned Kafka jars once, and tell tests that run Java programs where they are. A run started in
    the background of a shell script (``./scripts/test``) has SIGINT and SIGQUIT ignored, and the processes the
    tests start would inherit that (a Ctrl-C test's kreassign would not see its Ctrl-C): Python's own handling
    is put back."""
    import signal

    from kreassign.devcluster.jars import classpath

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)

    os.environ.setdefault("KREASSIGN_KAFKA_CLASSPATH", classpath())


def _start(
    tmp_path_factory: pytest.TempPathFactory, name: str, cluster_class: type = LocalKafkaCluster, **kwargs
) -> LocalKafkaCluster:
    cluster = cluster_class(tmp_path_factory.mktemp(name), **kwargs)
    _CLUSTERS.append(cluster)
    cluster.start()
    return cluster


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaCluster]:
    """3 brokers (ids 1-3, racks rack-a/rack-b alternating) and one dedicated KRaft controller."""
    cluster = _start(tmp_path_factory, "kafka3", brokers=3)
    yield cluster
    discard(cluster)


@pytest.fixture(scope="session")
def kafka_cluster5(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaCluster]:
    """5 brokers over 3 racks, for batched moves and failure tests."""
    cluster = _start(tmp_path_factory, "kafka5", brokers=5, racks=("rack-a", "rack-b", "rack-c"))
    yield cluster
    discard(cluster)


@pytest.fixture(scope="session")
def zk_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperKafkaCluster]:
    """ZooKeeper mode for the deprecated --zookeeper path: Kafka 3.9.x, one ZooKeeper server and 3 brokers
    (ids 1-3, racks rack-a/rack-b alternating), connected under the chroot ``/kafka``."""
    cluster = _start(tmp_path_factory, "zk3", ZooKeeperKafkaCluster, brokers=3, chroot="/kafka")
    yield cluster
    discard(cluster)


@pytest.fixture(scope="session")
def secure_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaCluster]:
    """3 brokers whose clients must use SASL and ACLs (StandardAuthorizer), one cluster for every mechanism:
    SASL_SSL (SCRAM-SHA-512 and GSSAPI over TLS, a CA made for the run), SASL_PLAINTEXT (GSSAPI, and
    OAUTHBEARER tokens of a local identity provider checked by Kafka's validator) and UNSECURED (KIP-255
    tokens); a KDC and the identity provider start with it and end with the test process. SCRAM users:
    ``admin`` (super user), ``operator`` and ``nobody`` (only the ACLs a test grants); ``cluster.security``
    has their passwords, the truststores, the KDC and the identity provider."""
    security = ClusterSecurity(
        users={"admin": _secret(), "operator": _secret(), "nobody": _secret()}, kerberos=True, oauth=True
    )
    # a follower fetches at most 64 kB at once: a throttled move of small batches then stays in progress (a
    # throttle is a rate over an 11 s window, and one fetch of up to 1 MB always goes through)
    cluster = _start(
        tmp_path_factory,
        "kafka3-secure",
        brokers=3,
        security=security,
        broker_config={"replica.fetch.max.bytes": "65536"},
        start_timeout=180,  # the KDC starts first; generous, it costs nothing when the machine is idle
    )
    yield cluster
    discard(cluster)


def _secret() -> str:
    import secrets

    return secrets.token_hex(12)


@pytest.fixture(scope="session")
def bootstrap(kafka_cluster: LocalKafkaCluster) -> str:
    return kafka_cluster.bootstrap_servers


@pytest.fixture
def restartable_broker(kafka_cluster: LocalKafkaCluster):
    """Returns stop(broker_id); every broker stopped through it is started again after the test."""
    stopped: list[int] = []

    def stop(broker_id: int, hard: bool = False) -> None:
        kafka_cluster.stop_node(broker_id, hard=hard)
        stopped.append(broker_id)

    yield stop
    for broker_id in stopped:
        kafka_cluster.start_node(broker_id)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """On a failure, attach the tail of every broker log of the running clusters to the report."""
    report = yield
    if report.failed and _CLUSTERS:
        tails = []
        for cluster in _CLUSTERS:
            tails.extend(cluster.log_tail(n.node_id, 25) for n in cluster.nodes)
        report.sections.append(("kafka node logs (tail)", "\n".join(tails)))
    return report
