"""--command-config: Java properties parsing, JAAS parsing and the translation for both clients.

Expected values of the parsing tables were produced by java.util.Properties.load and Kafka's
JaasContext.loadClientContext (Kafka 4.3.1) on the same inputs.
"""

from __future__ import annotations

import shutil
import ssl
import stat
import subprocess
from pathlib import Path

import pytest

from kreassign.cluster.client_config import (
    DEFAULT_CLIENT_ID,
    FAILED_TO_CREATE_ADMIN,
    ClientConfig,
    load_client_config,
    parse_jaas_config,
    parse_java_properties,
)
from kreassign.errors import ConfigError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
SECRET = "s3cr3t-Value"

PROPERTIES_CASES = [
    pytest.param("a=b\n", {"a": "b"}, id="equals"),
    pytest.param("a:b\n", {"a": "b"}, id="colon"),
    pytest.param("a b\n", {"a": "b"}, id="space"),
    pytest.param("a = b\n", {"a": "b"}, id="spaced-equals"),
    pytest.param("a\t:\tb\n", {"a": "b"}, id="tabs"),
    pytest.param("# x=y\n! z=w\n   # indented=1\na=b\n", {"a": "b"}, id="comments"),
    pytest.param("a=b\\\n   c\n", {"a": "bc"}, id="continuation"),
    pytest.param("a=b\\\\\nc=d\n", {"a": "b\\", "c": "d"}, id="even-backslashes"),
    pytest.param("a\\:b=c\nd\\=e=f\ng\\ h=i\n", {"a:b": "c", "d=e": "f", "g h": "i"}, id="escaped-key"),
    pytest.param("a=\\u0041\\u00e9\n", {"a": "Aé"}, id="unicode-escape"),
    pytest.param("a=x\\ty\\nz\\rw\\fv\n", {"a": "x\ty\nz\rw\fv"}, id="control-escapes"),
    pytest.param("a\n", {"a": ""}, id="key-only"),
    pytest.param("a=\n", {"a": ""}, id="empty-value"),
    pytest.param("a=b  \n", {"a": "b  "}, id="trailing-spaces-kept"),
    pytest.param("a=1\na=2\n", {"a": "2"}, id="last-duplicate-wins"),
    pytest.param("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}, id="crlf-and-cr"),
    pytest.param("a=b\\", {"a": "b"}, id="continuation-at-eof"),
    pytest.param("# c\\\na=b\n", {"a": "b"}, id="comment-never-continues"),
    pytest.param("a==b\n", {"a": "=b"}, id="double-equals"),
    pytest.param("a b=c\n", {"a": "b=c"}, id="space-separator-then-equals"),
    pytest.param("a = = b\n", {"a": "= b"}, id="second-equals-is-value"),
    pytest.param("a=\\q\\\\\\#\n", {"a": "q\\#"}, id="other-escapes"),
    pytest.param("a=b\\\n\nc=d\n", {"a": "b", "c": "d"}, id="continuation-then-blank"),
    pytest.param("a=b\\\n# not comment\n", {"a": "b# not comment"}, id="continuation-is-not-comment"),
    pytest.param("a=   b\n", {"a": "b"}, id="leading-blanks-of-value"),
    pytest.param("a=b:c=d\n", {"a": "b:c=d"}, id="separators-in-value"),
    pytest.param("   \n\t\n a=b\n", {"a": "b"}, id="blank-lines"),
    pytest.param(
        f'sasl.jaas.config={PLAIN} required \\\n    username="alice" \\\n    password="alice-secret";\n',
        {"sasl.jaas.config": f'{PLAIN} required username="alice" password="alice-secret";'},
        id="multi-line-jaas",
    ),
]


@pytest.mark.parametrize(("text", "expected"), PROPERTIES_CASES)
def test_properties_like_java(text: str, expected: dict[str, str]) -> None:
    assert parse_java_properties(text) == expected


def test_malformed_unicode_escape_fails_like_java() -> None:
    with pytest.raises(ConfigError) as failure:
        parse_java_properties("a=\\u00zz\n")
    assert failure.value.message == "Malformed \\uxxxx encoding."


def test_file_is_read_as_iso_8859_1(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_bytes("client.id=caf\u00e9\n".encode("latin-1"))
    assert load_client_config(path).client_id == "café"


def test_missing_file_fails_with_its_path_like_java() -> None:
    with pytest.raises(ConfigError) as failure:
        load_client_config("/nonexistent/client.properties")
    assert failure.value.message == "/nonexistent/client.properties"


JAAS_CASES = [
    pytest.param(f'{PLAIN} required username="alice" password="alice-secret";', ("alice", "alice-secret"), id="plain"),
    pytest.param(f'{SCRAM} required username="bob" password="b0b";', ("bob", "b0b"), id="scram"),
    pytest.param(f"{PLAIN} required username='alice' password='pw';", ("alice", "pw"), id="single-quotes"),
    pytest.param(f'{PLAIN} required username="alice" password="p\\"w\\\\x";', ("alice", 'p"w\\x'), id="escapes"),
    pytest.param(f"{PLAIN} required username=alice password=secret123;", ("alice", "secret123"), id="unquoted"),
    pytest.param(f'{PLAIN} /* c */ required // line\n username="a" password="b";', ("a", "b"), id="comments"),
    pytest.param(f'{PLAIN} Optional username="a" password="b";', ("a", "b"), id="any-flag-case"),
    pytest.param(f'{PLAIN} required username="a\\101" password="\\t";', ("aA", "\t"), id="octal-escape"),
    pytest.param(f'{PLAIN} required username=\u00e9l\u00e8ve password="c";', ("élève", "c"), id="latin-word"),
]


@pytest.mark.parametrize(("text", "expected"), JAAS_CASES)
def test_jaas_like_kafka(text: str, expected: tuple[str, str]) -> None:
    (entry,) = parse_jaas_config(text)
    assert (entry.options["username"], entry.options["password"]) == expected


JAAS_ERRORS = [
    pytest.param(
        f"{PLAIN} required username=alice password=123;", "Value not specified for key 'password'", id="number"
    ),
    pytest.param(f'{PLAIN} required username="a" password="b"', "not terminated by semi-colon", id="no-semicolon"),
    pytest.param(f'{PLAIN} mandatory username="a";', "Invalid login module control flag 'mandatory'", id="bad-flag"),
    pytest.param("   ", "Login module not specified in JAAS config", id="empty"),
    pytest.param(PLAIN, "Login module control flag not specified in JAAS config", id="no-flag"),
    pytest.param(f"{PLAIN} required username=;", "Value not specified for key 'username'", id="no-value"),
    pytest.param(f'{PLAIN} required username=alice@x.org password="x";', "for key 'null'", id="unquoted-at-sign"),
    pytest.param(f'{PLAIN} required username="a" path=/tmp/x password="b";', "for key 'path'", id="slash-comment"),
    pytest.param(f'{PLAIN} required username="a\nb" password="c";', "for key 'b'", id="newline-ends-quote"),
]


@pytest.mark.parametrize(("text", "message"), JAAS_ERRORS)
def test_jaas_errors_like_kafka(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_jaas_config(text)


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
        {"security.protocol": "SASL_SSL"},
        "sasl.mechanism GSSAPI (the default when sasl.mechanism is not set) is not supported by kreassign: "
        "use one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512",
        id="gssapi-default",
    ),
    pytest.param(
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"},
        "sasl.mechanism OAUTHBEARER is not supported by kreassign",
        id="oauthbearer",
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
    pytest.param({"config.providers": "file"}, "config.providers is not supported by kreassign", id="config-providers"),
    pytest.param(
        {"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"},
        "ssl.cipher.suites is not supported by kreassign",
        id="cipher-suites",
    ),
    pytest.param(
        {"sasl.login.callback.handler.class": "x.Y"},
        "sasl.login.callback.handler.class is not supported",
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
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config is not set", id="no-jaas"
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


# ------------------------------------------------------------------------------ Java keystores
PASSWORD = "storepass1"


def keytool(*args: str) -> None:
    fast_start = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")
    subprocess.run(["keytool", *fast_start, *args], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def java_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA, a JKS and a PKCS12 truststore with it, and a JKS client keystore whose key has its own password."""
    if shutil.which("keytool") is None or shutil.which("openssl") is None:
        pytest.fail("keytool (Java) and openssl are needed to test keystore conversion")
    folder = tmp_path_factory.mktemp("stores")
    ca, ca_pem = folder / "ca.p12", folder / "ca.pem"
    keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-dname", "CN=test-ca", "-ext", "bc:c",
            "-keystore", str(ca), "-storetype", "PKCS12", "-storepass", PASSWORD)  # fmt: skip
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", str(ca), "-storepass", PASSWORD, "-file", str(ca_pem))
    stores = {"ca": ca_pem}
    for store_type in ("JKS", "PKCS12"):
        path = folder / f"truststore.{store_type.lower()}"
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem), "-keystore", str(path),
                "-storetype", store_type, "-storepass", PASSWORD)  # fmt: skip
        stores[f"truststore-{store_type}"] = path
    client, csr, crt = folder / "client.jks", folder / "client.csr", folder / "client.crt"
    keytool("-genkeypair", "-alias", "client", "-keyalg", "RSA", "-dname", "CN=client", "-keystore", str(client),
            "-storetype", "JKS", "-storepass", PASSWORD, "-keypass", "keypass2")  # fmt: skip
    keytool("-certreq", "-alias", "client", "-keystore", str(client), "-storepass", PASSWORD, "-keypass", "keypass2",
            "-file", str(csr))  # fmt: skip
    keytool("-gencert", "-alias", "ca", "-keystore", str(ca), "-storepass", PASSWORD, "-infile", str(csr),
            "-outfile", str(crt))  # fmt: skip
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem), "-keystore", str(client),
            "-storepass", PASSWORD)  # fmt: skip
    keytool("-importcert", "-noprompt", "-alias", "client", "-file", str(crt), "-keystore", str(client),
            "-storepass", PASSWORD, "-keypass", "keypass2")  # fmt: skip
    stores["keystore-JKS"] = client
    return stores


@pytest.mark.parametrize("store_type", ["JKS", "PKCS12"])
def test_java_truststore_becomes_private_pem(java_stores: dict[str, Path], store_type: str) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(java_stores[f"truststore-{store_type}"]),
            "ssl.truststore.type": store_type,
            "ssl.truststore.password": PASSWORD,
        }
    )
    pem = Path(config.librdkafka_config()["ssl.ca.location"])
    assert pem.read_text().strip() == java_stores["ca"].read_text().strip()
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert stat.S_IMODE(pem.parent.stat().st_mode) == 0o700
    assert config.kafka_python_config()["ssl_cafile"] == str(pem)
    ssl.create_default_context(cafile=str(pem))


def test_jks_keystore_with_its_own_key_password_serves_both_clients(java_stores: dict[str, Path]) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.keystore.location": str(java_stores["keystore-JKS"]),
            "ssl.keystore.password": PASSWORD,
            "ssl.key.password": "keypass2",
        }
    )
    librdkafka = config.librdkafka_config()
    assert Path(librdkafka["ssl.keystore.location"]).suffix == ".p12"
    assert librdkafka["ssl.keystore.password"] not in (PASSWORD, "keypass2")  # a fresh random one
    kafka_python = config.kafka_python_config()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(kafka_python["ssl_certfile"], kafka_python["ssl_keyfile"], kafka_python["ssl_password"])
    chain = Path(kafka_python["ssl_certfile"]).read_text()
    assert chain.count("BEGIN CERTIFICATE") == 2  # the client's own certificate first, then the CA
    from confluent_kafka.admin import AdminClient

    AdminClient({**librdkafka, "bootstrap.servers": "127.0.0.1:1"})  # librdkafka loads the PKCS12 file


def test_wrong_store_password_is_clear_and_secret_free(java_stores: dict[str, Path]) -> None:
    config = ClientConfig(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(java_stores["truststore-PKCS12"]),
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.password": SECRET,
        }
    )
    with pytest.raises(ConfigError) as failure:
        config.librdkafka_config()
    assert failure.value.message.startswith(f"cannot read ssl.truststore.location {java_stores['truststore-PKCS12']}")
    assert SECRET not in failure.value.message
