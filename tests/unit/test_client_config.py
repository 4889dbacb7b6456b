"""--command-config: validation and the translation for both clients (the parsing of the properties file
and of sasl.jaas.config: test_java_properties.py, test_jaas.py; keystore conversion: test_keystores.py)."""

from __future__ import annotations

import pytest

from kreassign.cluster.client_config import (
    DEFAULT_CLIENT_ID,
    FAILED_TO_CREATE_ADMIN,
    ClientConfig,
)
from kreassign.errors import ConfigError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
SECRET = "s3cr3t-Value"


def sasl(mechanism: str = "PLAIN", module: str = PLAIN, protocol: str = "SASL_PLAINTEXT") -> dict[str, str]:
    return {
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f'{module} required username="alice" password="{SECRET}";',
    }


TRANSLATIONS = [
    pytest.param(
        {},
        {"client.id": DEFAULT_CLIENT_ID, "security.protocol": "plaintext", "socket.timeout.ms": 30000},
        {"client_id": DEFAULT_CLIENT_ID, "security_protocol": "PLAINTEXT", "request_timeout_ms": 30000},
        id="defaults",
    ),
    pytest.param(
        {"client.id": "ops", "request.timeout.ms": "5000", "retry.backoff.ms": "250", "retries": "3"},
        {"client.id": "ops", "socket.timeout.ms": 5000, "retry.backoff.ms": 250},
        {"client_id": "ops", "request_timeout_ms": 5000, "retry_backoff_ms": 250},
        id="client-id-and-timeouts",
    ),
    pytest.param(
        {
            "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "PLAIN",
            **{"sasl.jaas.config": sasl()["sasl.jaas.config"]},
        },
        {
            "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": SECRET,
        },
        {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_plain_password": SECRET},
        id="sasl-plain-protocol-any-case",
    ),
    pytest.param(
        sasl("SCRAM-SHA-512", SCRAM),
        {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice"},
        {"sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "alice"},
        id="sasl-scram",
    ),
    pytest.param(
        sasl("SCRAM-SHA-256", PLAIN),
        {"sasl.mechanism": "SCRAM-SHA-256"},
        {"sasl_mechanism": "SCRAM-SHA-256"},
        id="java-takes-either-module-for-either-mechanism",
    ),
    pytest.param(
        {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem"},
        {"security.protocol": "ssl", "ssl.ca.location": "/ca.pem", "ssl.endpoint.identification.algorithm": "https"},
        {"ssl_cafile": "/ca.pem", "ssl_check_hostname": True},
        id="pem-truststore",
    ),
    pytest.param(
        {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""},
        {"ssl.endpoint.identification.algorithm": "none"},
        {"ssl_check_hostname": False},
        id="hostname-check-off",
    ),
    pytest.param(
        {
            "security.protocol": "SSL",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/client.pem",
            "ssl.key.password": SECRET,
        },
        {"ssl.key.location": "/client.pem", "ssl.certificate.location": "/client.pem", "ssl.key.password": SECRET},
        {"ssl_certfile": "/client.pem", "ssl_keyfile": "/client.pem", "ssl_password": SECRET},
        id="pem-keystore",
    ),
    pytest.param(
        {
            "security.protocol": "SSL",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": "/ks.p12",
            "ssl.keystore.password": SECRET,
        },
        {"ssl.keystore.location": "/ks.p12", "ssl.keystore.password": SECRET},
        None,
        id="pkcs12-keystore-as-is-for-librdkafka",
    ),
    pytest.param(
        {"ssl.truststore.location": "/missing.jks", "sasl.mechanism": "GSSAPI"},
        {"security.protocol": "plaintext"},
        {"security_protocol": "PLAINTEXT"},
        id="ssl-and-sasl-ignored-on-plaintext-as-in-java",
    ),
    pytest.param(
        {"metrics.num.samples": "3", "ssl.protocol": "TLSv1.2", "client.dns.lookup": "use_all_dns_ips"},
        {"client.dns.lookup": "use_all_dns_ips"},
        {"client_dns_lookup": "use_all_dns_ips"},
        id="harmless-accepted",
    ),
    pytest.param(
        {"receive.buffer.bytes": "-1", "send.buffer.bytes": "262144", "request.timeout.ms": "900000"},
        {"socket.send.buffer.bytes": 262144, "socket.timeout.ms": 300000},
        {"send_buffer_bytes": 262144, "request_timeout_ms": 900000},
        id="os-default-buffer-and-librdkafka-range",
    ),
]


@pytest.mark.parametrize(("properties", "librdkafka", "kafka_python"), TRANSLATIONS)
def test_translation(properties: dict[str, str], librdkafka: dict, kafka_python: dict | None) -> None:
    config = ClientConfig(properties)
    assert config.librdkafka_config().items() >= librdkafka.items()
    if kafka_python is not None:
        assert config.kafka_python_config().items() >= kafka_python.items()


def test_os_default_buffer_is_left_out() -> None:
    config = ClientConfig({"receive.buffer.bytes": "-1"})
    assert "socket.receive.buffer.bytes" not in config.librdkafka_config()
    assert "receive_buffer_bytes" not in config.kafka_python_config()


REFUSED = [
    pytest.param(
        {"security.protocol": "FOO"},
        "Invalid value FOO for configuration security.protocol: String must be one of (case insensitive): "
        "SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT",
        id="bad-protocol-java-text",
    ),
    pytest.param(
        {"security.protocol": "SASL_SSL", "sasl.jaas.config": sasl()["sasl.jaas.config"]},
        f"sasl.jaas.config login module {PLAIN} is not supported by kreassign for SASL/GSSAPI",
        id="gssapi-default-with-a-plain-login",
    ),
    pytest.param(
        {**sasl("OAUTHBEARER"), "sasl.jaas.config": f"{OAUTH} required;"},
        "sasl.jaas.config gives no unsecuredLoginStringClaim_sub",
        id="oauthbearer-unsecured-without-claims",
    ),
    pytest.param(
        {"request.timeout.ms": "abc"},
        "Invalid value abc for configuration request.timeout.ms: Not a number of type INT",
        id="not-int",
    ),
    pytest.param(
        {"retry.backoff.ms": "-5"},
        "Invalid value -5 for configuration retry.backoff.ms: Value must be at least 0",
        id="negative",
    ),
    pytest.param(
        {"config.providers": "vault", "config.providers.vault.class": "com.example.VaultConfigProvider"},
        "Invalid value com.example.VaultConfigProvider for configuration config.providers.vault.class: Could not load "
        "config provider class or one of its dependencies",
        id="unknown-config-provider",
    ),
    pytest.param(
        {"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
        "ssl.cipher.suites is not supported by kreassign",
        id="cipher-suites",
    ),
    pytest.param(
        {**sasl("OAUTHBEARER"), "sasl.jaas.config": f"{OAUTH} required;", "sasl.login.callback.handler.class": "x.Y"},
        "sasl.login.callback.handler.class x.Y is not supported",
        id="callback-class",
    ),
    pytest.param(
        {"client.dns.lookup": "default"},
        "Invalid value default for configuration client.dns.lookup",
        id="dns-lookup",
    ),
    pytest.param(
        {**sasl(), "sasl.jaas.config": f'com.example.Custom required username="a" password="{SECRET}";'},
        "sasl.jaas.config login module com.example.Custom is not supported by kreassign",
        id="other-login-module",
    ),
    pytest.param(
        {
            **sasl("SCRAM-SHA-256", SCRAM),
            "sasl.jaas.config": f'{SCRAM} required username="a" password="p" tokenauth="true";',
        },
        "sasl.jaas.config tokenauth=true (delegation tokens) is not supported",
        id="delegation-token",
    ),
    pytest.param(
        {**sasl(), "sasl.jaas.config": f'{PLAIN} required username="alice";'},
        "sasl.jaas.config gives no password for SASL/PLAIN",
        id="no-password",
    ),
    pytest.param(
        {"security.protocol": "SSL", "ssl.truststore.type": "BCFKS", "ssl.truststore.location": "/x"},
        "ssl.truststore.type=BCFKS is not supported by kreassign",
        id="truststore-type",
    ),
    pytest.param(
        {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps"},
        "ssl.endpoint.identification.algorithm=ldaps is not supported",
        id="endpoint-algorithm",
    ),
]


@pytest.mark.parametrize(("properties", "message"), REFUSED)
def test_refused_with_one_clear_line(properties: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as failure:
        ClientConfig(properties)
    assert failure.value.message.startswith(message)
    assert "\n" not in failure.value.message
    assert SECRET not in failure.value.message


JAVA_CREATION_FAILURES = [
    pytest.param(
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"},
        "Could not find a 'KafkaClient' entry",
        id="no-jaas",
    ),
    pytest.param(
        {**sasl(), "sasl.jaas.config": f'{PLAIN} required password="{SECRET}"'}, "semi-colon", id="jaas-syntax"
    ),
    pytest.param(
        {
            **sasl(),
            "sasl.jaas.config": f'{PLAIN} required username="a" password="b"; {PLAIN} required username="c" password="d";',
        },
        "contains 2 login modules, should be 1 module",
        id="two-modules",
    ),
    pytest.param(
        {**sasl(), "sasl.mechanism": "DIGEST-MD5"}, "Unexpected SASL mechanism: DIGEST-MD5", id="unknown-mechanism"
    ),
    pytest.param(
        {"request.timeout.ms": "40000", "default.api.timeout.ms": "30000"},
        "default.api.timeout.ms must be no smaller than the value of request.timeout.ms",
        id="api-timeout-below-request-timeout",
    ),
]


@pytest.mark.parametrize(("properties", "detail"), JAVA_CREATION_FAILURES)
def test_failures_java_reports_as_failed_admin_creation(properties: dict[str, str], detail: str) -> None:
    """The Apache tool prints ``Error: Failed to create new KafkaAdminClient`` (the cause is only in
    its stack trace): same message, the cause in a note."""
    with pytest.raises(ConfigError) as failure:
        ClientConfig(properties)
    assert failure.value.message == FAILED_TO_CREATE_ADMIN
    assert any(detail in note for note in failure.value.__notes__)
    assert all(SECRET not in note for note in failure.value.__notes__)


@pytest.mark.parametrize(
    ("properties", "using_controllers"),
    [
        pytest.param({"bootstrap.servers": "h:9092"}, True, id="servers-in-file-with-controller-option"),
        pytest.param({"bootstrap.controllers": "h:9093"}, False, id="controllers-in-file-with-server-option"),
    ],
)
def test_both_bootstrap_kinds_fail_like_java(properties: dict[str, str], using_controllers: bool) -> None:
    with pytest.raises(ConfigError) as failure:
        ClientConfig(properties).check_bootstrap(using_controllers)
    assert failure.value.message == FAILED_TO_CREATE_ADMIN
    assert "You cannot set both bootstrap.servers and bootstrap.controllers" in failure.value.__notes__


def test_bootstrap_servers_in_file_is_overridden_by_the_command_line() -> None:
    config = ClientConfig({"bootstrap.servers": "elsewhere:9092"})
    config.check_bootstrap(using_controllers=False)
    assert "bootstrap.servers" not in config.librdkafka_config()
    assert "bootstrap_servers" not in config.kafka_python_config()


def test_unknown_property_is_a_java_style_warning() -> None:
    config = ClientConfig({"acks": "all", "client.id": "x"})
    assert config.warnings == ("The configuration 'acks' was supplied but isn't a known config.",)


def test_api_timeout() -> None:
    assert ClientConfig().api_timeout_ms == 60000
    assert ClientConfig({"default.api.timeout.ms": "90000"}).api_timeout_ms == 90000
    assert ClientConfig({"request.timeout.ms": "120000"}).api_timeout_ms == 120000  # Java's override


def test_secrets_stay_out_of_repr() -> None:
    config = ClientConfig(
        {
            **sasl(protocol="SASL_SSL"),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/k.pem",
            "ssl.key.password": SECRET,
        }
    )
    assert SECRET not in repr(config)
    assert SECRET not in repr(config.sasl)
    assert SECRET not in repr(config.ssl)
