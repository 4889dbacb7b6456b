"""Fixtures shared by the terminal tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def port(kafka_cluster):
    """A client of the session's 3-broker cluster."""
    from kreassign.cluster.kafka import KafkaCluster

    port = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    yield port
    port.close()
