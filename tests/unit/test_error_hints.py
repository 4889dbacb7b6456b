"""Errors an operator can act on: the Apache text stays the message, the hints (exception notes, printed on
stderr by the CLI) name what was wrong and what to do. No Kafka needed: the adapter is not connected."""

from __future__ import annotations

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kafka import KafkaCluster


@pytest.fixture
def adapter():
    cluster = KafkaCluster("broker-a:9093,broker-b:9093", client_config=ClientConfig({"security.protocol": "SSL"}))
    yield cluster
    cluster.close()


def test_timeout_names_the_address_the_option_and_the_protocol(adapter):
    error = adapter.errors.timeout("listPartitionReassignments")
    assert error.message.endswith("Timed out waiting for a node assignment. Call: listPartitionReassignments")
    assert "broker-a:9093,broker-b:9093" in error.__notes__[0]
    assert "--bootstrap-server" in error.__notes__[1] and "SSL" in error.__notes__[1]


def test_ssl_failure_says_which_properties_to_check(adapter):
    from confluent_kafka import KafkaError

    error = adapter.errors.from_librdkafka(
        KafkaError(KafkaError._SSL, "SSL handshake failed: certificate verify failed"), "x"
    )
    assert error.message.endswith("SslAuthenticationException: SSL handshake failed")
    assert "certificate verify failed" in error.__notes__[0]
    assert "ssl.truststore" in error.__notes__[1] and "broker-a:9093" in error.__notes__[1]


def test_sasl_failure_says_which_properties_to_check(adapter):
    from confluent_kafka import KafkaError

    failure = KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error: Authentication failed")
    error = adapter.errors.from_librdkafka(failure, "x")
    assert "SaslAuthenticationException" in error.message
    assert "sasl.jaas.config" in error.__notes__[0] and "sasl.mechanism" in error.__notes__[0]

    import kafka.errors

    error = adapter.errors.from_kafka_python(kafka.errors.SaslAuthenticationFailedError("denied: bad password"), "x")
    assert "SaslAuthenticationException" in error.message and "bad password" in error.message
    assert "sasl.jaas.config" in error.__notes__[0]
