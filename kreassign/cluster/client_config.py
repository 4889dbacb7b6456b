"""``--command-config``: the Java client properties, validated and translated once for both Kafka clients.

The file is read like ``java.util.Properties.load`` reads it (``java_properties``), then every property
is sorted into one of:

* translated, accepted without effect or refused, as ``admin_properties`` lists every property of Java's
  admin client (a refusal is a ``ConfigError`` that names the property and says why);
* unknown to Java's admin client: Java logs ``The configuration 'x' was supplied but isn't a known
  config.`` and goes on; so do we, the text is kept in ``ClientConfig.warnings``, which the CLI prints once each on
  stderr (``kreassign: warning: ...``; stdout stays the Apache text).

Where the Java tool itself rejects a file, the error message is the one it prints after ``Error: ``;
when that text is vague (``Failed to create new KafkaAdminClient``) the detail is added as an exception
note. Config providers (``${file:path:key}`` ...) are resolved first (``config_providers``); the SASL login
(PLAIN, SCRAM, GSSAPI, OAUTHBEARER, AWS MSK IAM) is read by ``sasl_logins``; ``sasl.jaas.config`` is parsed by ``jaas``; Java keystores and truststores are converted by
``keystores``. Secrets never appear in messages or reprs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from kreassign.cluster.admin_properties import REFUSED_PROPERTIES, is_admin_property
from kreassign.cluster.config_providers import resolve_config_providers
from kreassign.cluster.java_properties import read_java_properties_file
from kreassign.cluster.java_system import AUTOMATIC_CONFIG_PROVIDERS, java_system_properties
from kreassign.cluster.keystores import SslSettings, StoreFiles, StoreSettings
from kreassign.cluster.oauth_tokens import TokenSource
from kreassign.cluster.sasl_logins import SASL_MECHANISMS, SaslCredentials, failed_to_create, sasl_login
from kreassign.errors import ConfigError

__all__ = ["SASL_MECHANISMS", "ClientConfig", "SaslCredentials", "load_client_config"]

DEFAULT_CLIENT_ID = "reassign-partitions-tool"
#: Java's PASSWORD-type properties of the admin client, other than sasl.jaas.config
PASSWORD_PROPERTIES = frozenset(
    {
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "sasl.oauthbearer.client.credentials.client.secret",
        "ssl.key.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.password",
        "ssl.truststore.certificates",
        "ssl.truststore.password",
    }
)
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_API_TIMEOUT_MS = 60_000
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# Java's own defaults for the SSL settings the OpenSSL-based clients cannot vary.
_JAVA_DEFAULT_CIPHER_SUITES = ""

# Numeric properties: (Java type, librdkafka name and range, kafka-python name). librdkafka rejects
# values outside its ranges, so they are clamped into them.
_NUMERIC: dict[str, tuple[str, str | None, tuple[int, int], str | None]] = {
    "request.timeout.ms": ("INT", "socket.timeout.ms", (10, 300_000), "request_timeout_ms"),
    "default.api.timeout.ms": ("INT", None, (0, 0), None),
    "retries": ("INT", None, (0, 0), None),
    "retry.backoff.ms": ("LONG", "retry.backoff.ms", (1, 300_000), "retry_backoff_ms"),
    "retry.backoff.max.ms": ("LONG", "retry.backoff.max.ms", (1, 300_000), None),
    "reconnect.backoff.ms": ("LONG", "reconnect.backoff.ms", (0, 3_600_000), "reconnect_backoff_ms"),
    "reconnect.backoff.max.ms": ("LONG", "reconnect.backoff.max.ms", (0, 3_600_000), "reconnect_backoff_max_ms"),
    "socket.connection.setup.timeout.ms": (
        "LONG",
        "socket.connection.setup.timeout.ms",
        (1000, 2_147_483_647),
        None,
    ),
    "socket.connection.setup.timeout.max.ms": ("LONG", None, (0, 0), None),
    "connections.max.idle.ms": ("LONG", "connections.max.idle.ms", (0, 2_147_483_647), "connections_max_idle_ms"),
    "metadata.max.age.ms": ("LONG", "metadata.max.age.ms", (1, 86_400_000), "metadata_max_age_ms"),
    "receive.buffer.bytes": ("INT", "socket.receive.buffer.bytes", (0, 100_000_000), "receive_buffer_bytes"),
    "send.buffer.bytes": ("INT", "socket.send.buffer.bytes", (0, 100_000_000), "send_buffer_bytes"),
}
# Java validators: every numeric property here must be at least this (buffers accept -1, "OS default").
_AT_LEAST = {"receive.buffer.bytes": -1, "send.buffer.bytes": -1}
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
_DNS_LOOKUPS = ("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only")


def load_client_config(path: str | os.PathLike[str] | None) -> ClientConfig:
    """``--command-config`` as the Apache tool reads it (see ``read_java_properties_file``)."""
    if path is None:
        return ClientConfig()
    return ClientConfig(read_java_properties_file(path))


# --------------------------------------------------------------------------------- settings
class ClientConfig:
    """Validated ``--command-config`` settings, and their translation for each client.

    ``librdkafka_config`` and ``kafka_python_config`` give the settings without the bootstrap
    address: the adapter adds the command-line one, which wins over a ``bootstrap.servers`` here
    (the Apache tool puts the command-line value into the properties).
    """

    def __init__(self, properties: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> None:
        raw = dict(properties or {})
        self.system_properties = java_system_properties(environ)
        resolution = resolve_config_providers(raw, environ, self.system_properties.get(AUTOMATIC_CONFIG_PROVIDERS))
        props = resolution.properties
        # values read through config providers into Java's PASSWORD properties (those of sasl.jaas.config are
        # known from the login itself: a username there is no secret)
        self._provided = [value for name, value in resolution.provided if name in PASSWORD_PROPERTIES]
        self._properties = props
        self.warnings: tuple[str, ...] = tuple(
            f"The configuration '{name}' was supplied but isn't a known config."
            for name in props
            if not is_admin_property(name)
        ) + tuple(resolution.notes)
        #: config provider placeholders left as they are: named in the hints of a failed login
        self.placeholder_notes: tuple[str, ...] = tuple(resolution.notes)
        _refuse_unsupported(props)
        self.client_id = props.get("client.id", DEFAULT_CLIENT_ID).strip()
        self.security_protocol = _security_protocol(props)
        self._numbers = {name: _number(props, name) for name in _NUMERIC if name in props}
        _check_dns_lookup(props)
        self.request_timeout_ms = self._numbers.get("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS)
        self.default_api_timeout_ms: int | None = self._numbers.get("default.api.timeout.ms")
        if self.default_api_timeout_ms is not None and self.default_api_timeout_ms < self.request_timeout_ms:
            raise _failed_to_create(
                "The specified value of default.api.timeout.ms must be no smaller than the value of request.timeout.ms."
            )
        self.sasl = sasl_login(props, self.security_protocol, self.system_properties)
        self.ssl = _ssl_settings(props) if self.security_protocol in ("SSL", "SASL_SSL") else None
        self._store_files: StoreFiles | None = None
        self._kerberos: Any = None  # the KerberosSession, once logged in

    def __repr__(self) -> str:
        sasl = f", sasl_mechanism={self.mechanism!r}" if self.sasl else ""
        return f"ClientConfig(client_id={self.client_id!r}, security_protocol={self.security_protocol!r}{sasl})"

    @property
    def mechanism(self) -> str | None:
        """The SASL mechanism the clients use (AWS MSK IAM goes as OAUTHBEARER)."""
        if self.sasl is None:
            return None
        if isinstance(self.sasl, SaslCredentials):
            return self.sasl.mechanism
        return "OAUTHBEARER" if isinstance(self.sasl, TokenSource) else "GSSAPI"

    @property
    def librdkafka_can_connect(self) -> bool:
        """librdkafka's wheel has no GSSAPI: with Kerberos every call goes through kafka-python."""
        return self.mechanism != "GSSAPI"

    def log_in(self, bootstrap: str) -> None:
        """Log in as Java does when it makes its admin client (a token fetched, Kerberos credentials acquired):
        a failure is Java's ``Failed to create new KafkaAdminClient``, with notes."""
        if isinstance(self.sasl, TokenSource):
            if hasattr(self.sasl, "for_bootstrap"):
                self.sasl.for_bootstrap(bootstrap)
            if hasattr(self.sasl, "trust") and self.ssl is not None and self.ssl.truststore is not None:
                # Java reaches an https token endpoint with the client's ssl.truststore.* too
                self.sasl.trust(self._files().kafka_python()["ssl_cafile"])
            self.sasl.token()
        elif self.mechanism == "GSSAPI" and self._kerberos is None:
            from kreassign.cluster.kerberos import KerberosSession, register_kerberos_mechanism

            register_kerberos_mechanism()
            self._kerberos = KerberosSession(self.sasl)

    def secrets(self) -> list[str]:
        """Every secret value of the file (SASL and store passwords, inline PEM keys, client secrets, tokens,
        values read through config providers), longest first, so that output can be scrubbed of them."""
        found = list(self._provided)
        if isinstance(self.sasl, SaslCredentials):
            found.append(self.sasl.password)
        elif isinstance(self.sasl, TokenSource):
            found += self.sasl.secrets()
        if self.ssl is not None:
            for store in (self.ssl.truststore, self.ssl.keystore):
                if store is not None:
                    found += [store.password or "", store.key_password or "", store.key_pem or ""]
        if self._store_files is not None:
            found += self._store_files.secrets
        return sorted({s for s in found if s}, key=len, reverse=True)

    @property
    def api_timeout_ms(self) -> int:
        """Java's per-call deadline: ``default.api.timeout.ms``, at least ``request.timeout.ms``."""
        if self.default_api_timeout_ms is not None:
            return self.default_api_timeout_ms
        return max(DEFAULT_API_TIMEOUT_MS, self.request_timeout_ms)

    def property(self, name: str) -> str | None:
        """A raw property value (for checks such as ``bootstrap.servers`` with ``--bootstrap-controller``)."""
        return self._properties.get(name)

    def check_bootstrap(self, using_controllers: bool) -> None:
        """The Apache tool puts the command-line address under ``bootstrap.servers`` or
        ``bootstrap.controllers``; Java refuses a file that also sets the other one."""
        other = "bootstrap.servers" if using_controllers else "bootstrap.controllers"
        if self._properties.get(other, "").strip():
            raise _failed_to_create("You cannot set both bootstrap.servers and bootstrap.controllers")

    # ----------------------------------------------------------------------- librdkafka
    def librdkafka_config(self) -> dict[str, Any]:
        conf: dict[str, Any] = {
            "client.id": self.client_id,
            "security.protocol": self.security_protocol.lower(),
            "socket.timeout.ms": _clamp(self.request_timeout_ms, (10, 300_000)),
        }
        for name, value in self._numbers.items():
            _, native, bounds, _ = _NUMERIC[name]
            if native and not (name.endswith("buffer.bytes") and value < 0):
                conf[native] = _clamp(value, bounds)
        if "client.dns.lookup" in self._properties:
            conf["client.dns.lookup"] = self._properties["client.dns.lookup"].strip()
        if isinstance(self.sasl, SaslCredentials):
            conf.update(
                {
                    "sasl.mechanism": self.sasl.mechanism,
                    "sasl.username": self.sasl.username,
                    "sasl.password": self.sasl.password,
                }
            )
        elif isinstance(self.sasl, TokenSource):
            conf.update({"sasl.mechanism": "OAUTHBEARER", "oauth_cb": self.sasl.librdkafka_callback()})
        if self.ssl:
            conf["ssl.endpoint.identification.algorithm"] = "https" if self.ssl.check_hostname else "none"
            conf.update(self._files().librdkafka())
        return conf

    # ----------------------------------------------------------------------- kafka-python
    def kafka_python_config(self) -> dict[str, Any]:
        conf: dict[str, Any] = {
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": self.request_timeout_ms,
        }
        for name, value in self._numbers.items():
            _, _, _, native = _NUMERIC[name]
            if native and not (name.endswith("buffer.bytes") and value < 0):
                conf[native] = value
        if "client.dns.lookup" in self._properties:
            conf["client_dns_lookup"] = self._properties["client.dns.lookup"].strip()
        if isinstance(self.sasl, SaslCredentials):
            conf.update(
                {
                    "sasl_mechanism": self.sasl.mechanism,
                    "sasl_plain_username": self.sasl.username,
                    "sasl_plain_password": self.sasl.password,
                }
            )
        elif isinstance(self.sasl, TokenSource):
            conf.update(
                {"sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": self.sasl.kafka_python_provider()}
            )
        elif self.sasl is not None:  # Kerberos: the session logged in by log_in()
            conf.update(
                {
                    "sasl_mechanism": "GSSAPI",
                    "sasl_kerberos_service_name": self.sasl.service_name,
                    "sasl_kerberos_name": self._kerberos,
                }
            )
        if self.ssl:
            conf["ssl_check_hostname"] = self.ssl.check_hostname
            conf.update(self._files().kafka_python())
        return conf

    def _files(self) -> StoreFiles:
        assert self.ssl is not None
        if self._store_files is None:
            self._store_files = StoreFiles(self.ssl)
        return self._store_files


def _refuse_unsupported(props: Mapping[str, str]) -> None:
    for name, reason in REFUSED_PROPERTIES.items():
        if name not in props or name.startswith("sasl.oauthbearer.assertion."):  # refused with OAUTHBEARER only
            continue
        value = props[name].strip()
        if name == "ssl.cipher.suites" and value == _JAVA_DEFAULT_CIPHER_SUITES:
            continue
        raise ConfigError(f"{name} is not supported by kreassign: {reason}")


_failed_to_create = failed_to_create


def _security_protocol(props: Mapping[str, str]) -> str:
    value = props.get("security.protocol", "PLAINTEXT").strip()
    if value.upper() not in SECURITY_PROTOCOLS:
        raise ConfigError(
            f"Invalid value {value} for configuration security.protocol: String must be one of "
            "(case insensitive): SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT"
        )
    return value.upper()


def _number(props: Mapping[str, str], name: str) -> int:
    java_type = _NUMERIC[name][0]
    raw = props[name].strip()
    low, high = _INT_RANGE if java_type == "INT" else _LONG_RANGE
    if not re.fullmatch(r"[+-]?[0-9]+", raw) or not low <= int(raw) <= high:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type {java_type}")
    value = int(raw)
    minimum = _AT_LEAST.get(name, 0)
    if value < minimum:
        raise ConfigError(f"Invalid value {value} for configuration {name}: Value must be at least {minimum}")
    return value


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def _check_dns_lookup(props: Mapping[str, str]) -> None:
    if "client.dns.lookup" not in props:
        return
    value = props["client.dns.lookup"].strip()
    if value not in _DNS_LOOKUPS:
        raise ConfigError(
            f"Invalid value {value} for configuration client.dns.lookup: String must be one of: "
            + ", ".join(_DNS_LOOKUPS)
        )


def _ssl_settings(props: Mapping[str, str]) -> SslSettings:
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip()
    if algorithm.lower() not in ("https", ""):
        raise ConfigError(
            f"ssl.endpoint.identification.algorithm={algorithm} is not supported by kreassign: "
            "use https (the default) or an empty value to disable hostname verification"
        )
    return SslSettings(
        truststore=_store(props, "truststore"),
        keystore=_store(props, "keystore"),
        check_hostname=algorithm != "",
    )


def _store(props: Mapping[str, str], kind: str) -> StoreSettings | None:
    def value(name: str) -> str | None:
        raw = props.get(f"ssl.{name}")
        return None if raw is None or raw.strip() == "" else raw.strip()

    location = value(f"{kind}.location")
    inline = value("truststore.certificates") if kind == "truststore" else value("keystore.certificate.chain")
    inline_key = value("keystore.key") if kind == "keystore" else None
    if location is None and inline is None and inline_key is None:
        return None
    store_type = (value(f"{kind}.type") or "JKS").upper()
    if inline is not None or inline_key is not None:
        if store_type != "PEM":
            raise _failed_to_create(f"SSL {kind} inline certificates need ssl.{kind}.type=PEM")
        if location is not None:
            raise _failed_to_create(f"SSL {kind} is set both as a file and inline PEM")
        if kind == "keystore" and (inline is None or inline_key is None):
            raise _failed_to_create("ssl.keystore.key and ssl.keystore.certificate.chain must both be set")
    if store_type not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError(f"ssl.{kind}.type={store_type} is not supported by kreassign: use PEM, JKS or PKCS12")
    return StoreSettings(
        kind=kind,
        store_type=store_type,
        location=location,
        password=value(f"{kind}.password"),
        pem=inline,
        key_pem=inline_key,
        key_password=value("key.password") if kind == "keystore" else None,
    )
