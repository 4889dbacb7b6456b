"""``--command-config``: Java client properties, translated once for both Kafka clients.

The file is read like ``java.util.Properties.load`` reads it, then every property is sorted into one of:

* translated: it has an equivalent in librdkafka (confluent-kafka) and in kafka-python
  (see ``TRANSLATED_PROPERTIES``);
* accepted without effect: Java-only tuning that cannot change what the tool does
  (``HARMLESS_PROPERTIES``, each with the reason);
* refused: a ``ConfigError`` that names the property and says why (``UNSUPPORTED_PROPERTIES``, and the
  GSSAPI / OAUTHBEARER SASL mechanisms);
* unknown to Java's admin client: Java logs ``The configuration 'x' was supplied but isn't a known
  config.`` and goes on; so do we, the text is kept in ``ClientConfig.warnings`` for the CLI.

Where the Java tool itself rejects a file, the error message is the one it prints after ``Error: ``;
when that text is vague (``Failed to create new KafkaAdminClient``) the detail is added as an exception
note. Java keystores and truststores (JKS, PKCS12) are converted with ``keytool``/``openssl`` into a
private temporary folder (mode 0700, files 0600) removed when the config object goes away.
Secrets never appear in messages or reprs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kreassign.errors import ConfigError

DEFAULT_CLIENT_ID = "reassign-partitions-tool"
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_API_TIMEOUT_MS = 60_000
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"

TRANSLATED_PROPERTIES = frozenset(
    {
        "bootstrap.servers",  # the command line wins, as in the Apache tool
        "bootstrap.controllers",
        "client.id",
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
        "ssl.truststore.certificates",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.type",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "request.timeout.ms",
        "default.api.timeout.ms",
        "retries",
        "retry.backoff.ms",
        "retry.backoff.max.ms",
        "reconnect.backoff.ms",
        "reconnect.backoff.max.ms",
        "socket.connection.setup.timeout.ms",
        "socket.connection.setup.timeout.max.ms",
        "connections.max.idle.ms",
        "metadata.max.age.ms",
        "client.dns.lookup",
        "receive.buffer.bytes",
        "send.buffer.bytes",
    }
)

# Properties of Java's AdminClientConfig that are accepted and have no effect here, with the reason.
HARMLESS_PROPERTIES: Mapping[str, str] = {
    "metric.reporters": "client metrics are not exported",
    "metrics.num.samples": "client metrics are not exported",
    "metrics.recording.level": "client metrics are not exported",
    "metrics.sample.window.ms": "client metrics are not exported",
    "enable.metrics.push": "client metrics are not exported",
    "metadata.recovery.strategy": "the clients re-bootstrap on their own",
    "metadata.recovery.rebootstrap.trigger.ms": "the clients re-bootstrap on their own",
    "ssl.protocol": "OpenSSL negotiates TLS 1.2 or 1.3, as Java's defaults do",
    "ssl.enabled.protocols": "OpenSSL negotiates TLS 1.2 or 1.3, as Java's defaults do",
    "ssl.keymanager.algorithm": "a JVM key manager factory, OpenSSL has none",
    "ssl.trustmanager.algorithm": "a JVM trust manager factory, OpenSSL does the standard PKIX checks",
    "ssl.secure.random.implementation": "a JVM random source, OpenSSL uses its own",
    "sasl.login.refresh.window.factor": "only for token-based (OAUTHBEARER/GSSAPI) logins",
    "sasl.login.refresh.window.jitter": "only for token-based (OAUTHBEARER/GSSAPI) logins",
    "sasl.login.refresh.min.period.seconds": "only for token-based (OAUTHBEARER/GSSAPI) logins",
    "sasl.login.refresh.buffer.seconds": "only for token-based (OAUTHBEARER/GSSAPI) logins",
    "sasl.login.connect.timeout.ms": "only for token-based (OAUTHBEARER) logins",
    "sasl.login.read.timeout.ms": "only for token-based (OAUTHBEARER) logins",
    "sasl.login.retry.backoff.ms": "only for token-based (OAUTHBEARER) logins",
    "sasl.login.retry.backoff.max.ms": "only for token-based (OAUTHBEARER) logins",
    "sasl.kerberos.service.name": "only for GSSAPI, which is refused",
    "sasl.kerberos.kinit.cmd": "only for GSSAPI, which is refused",
    "sasl.kerberos.min.time.before.relogin": "only for GSSAPI, which is refused",
    "sasl.kerberos.ticket.renew.jitter": "only for GSSAPI, which is refused",
    "sasl.kerberos.ticket.renew.window.factor": "only for GSSAPI, which is refused",
}

# Properties of Java's AdminClientConfig that cannot be honoured: a ConfigError with this reason.
UNSUPPORTED_PROPERTIES: Mapping[str, str] = {
    "config.providers": "Java config providers cannot run here; put the resolved values in the file",
    "security.providers": "Java security providers cannot run here",
    "ssl.engine.factory.class": "a Java SSL engine factory cannot run here",
    "ssl.provider": "Java security providers cannot run here",
    "ssl.cipher.suites": "Java cipher suite names cannot be passed to OpenSSL; remove it to use the defaults",
    "sasl.client.callback.handler.class": "a Java callback handler cannot run here",
    "sasl.login.callback.handler.class": "a Java callback handler cannot run here",
    "sasl.login.class": "a Java login class cannot run here",
}

# OAUTHBEARER settings: refused with the mechanism, but harmless when another mechanism is used.
_OAUTH_PREFIX = "sasl.oauthbearer."

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
# keytool is a short-lived JVM: skip the optimizing compiler, English output for parsing.
_KEYTOOL_JVM_OPTIONS = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Duser.language=en")


# --------------------------------------------------------------------------------- properties files
def parse_java_properties(text: str) -> dict[str, str]:
    """``java.util.Properties.load``: ``key=value``, ``key:value`` or ``key value``; ``#``/``!``
    comment lines; a line ending in an odd number of backslashes continues on the next one (whose
    leading blanks are dropped); ``\\uXXXX``, ``\\t``, ``\\n``, ``\\r``, ``\\f`` escapes, any other
    escaped character stands for itself. The last of duplicate keys wins."""
    properties: dict[str, str] = {}
    for line in _logical_lines(text):
        key_end, value_start, has_separator, escaped = len(line), len(line), False, False
        for index, char in enumerate(line):
            if char in "=:" and not escaped:
                key_end, value_start, has_separator = index, index + 1, True
                break
            if char in " \t\f" and not escaped:
                key_end, value_start = index, index + 1
                break
            escaped = not escaped if char == "\\" else False
        while value_start < len(line):
            char = line[value_start]
            if char not in " \t\f":
                if has_separator or char not in "=:":
                    break
                has_separator = True
            value_start += 1
        properties[_unescape(line[:key_end])] = _unescape(line[value_start:])
    return properties


def _logical_lines(text: str) -> list[str]:
    natural = re.split(r"\r\n|\r|\n", text)
    logical: list[str] = []
    index = 0
    while index < len(natural):
        line = natural[index].lstrip(" \t\f")
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if index >= len(natural):
                break
            line += natural[index].lstrip(" \t\f")
            index += 1
        logical.append(line)
    return logical


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char != "\\" or index >= len(text):
            out.append(char)
            continue
        char = text[index]
        index += 1
        if char == "u":
            digits = text[index : index + 4]
            if len(digits) < 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(char, char))
    return "".join(out)


def load_client_config(path: str | os.PathLike[str] | None) -> ClientConfig:
    """Read ``--command-config`` like the Apache tool: ISO-8859-1 text; a missing or unreadable file
    fails with its path as the whole message (Java's ``NoSuchFileException``)."""
    if path is None:
        return ClientConfig()
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("latin-1")
    except OSError as exc:
        raise ConfigError(_java_file_error(str(path), exc)) from exc
    return ClientConfig(parse_java_properties(text))


def _java_file_error(path: str, exc: OSError) -> str:
    """``getMessage()`` of the exception Java's ``Files.newInputStream`` and ``read`` throw: the path
    alone for a missing or forbidden file, ``Is a directory`` for a folder (opened, then read), else
    the path and the system's text (``UnixException.translateToIOException``)."""
    import errno

    if exc.errno in (errno.ENOENT, errno.EACCES, errno.EPERM, None):
        return path
    if exc.errno == errno.EISDIR:
        return "Is a directory"
    if exc.errno == errno.ELOOP:
        return f"{path}: {exc.strerror} or unable to access attributes of symbolic link"
    return f"{path}: {exc.strerror}"


# --------------------------------------------------------------------------------- JAAS
@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    control_flag: str
    options: Mapping[str, str] = field(repr=False)


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """``sasl.jaas.config`` as Kafka's ``JaasConfig`` reads it with ``java.io.StreamTokenizer``:
    ``<LoginModule> <flag> key=value ... ;``. Values are words or quoted strings; an unquoted value
    that starts with a digit is a number token, which Java rejects ("Value not specified ...")."""
    tokens = _JaasTokenizer(text)
    entries = []
    while tokens.next() != _EOF:
        module = tokens.sval
        if tokens.next() == _EOF:
            raise ValueError("Login module control flag not specified in JAAS config")
        flag = tokens.sval
        if flag is None:
            raise ValueError("Login module control flag is not available in the JAAS config")
        if flag.upper() not in ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL"):
            raise ValueError(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        while tokens.next() != _EOF and tokens.ttype != ";":
            key = "null" if tokens.sval is None else tokens.sval  # Java formats a missing key as null
            if tokens.next() != "=" or tokens.next() == _EOF or tokens.sval is None:
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = tokens.sval
        if tokens.ttype != ";":
            raise ValueError("JAAS config entry not terminated by semi-colon")
        if not module:
            raise ValueError("Login module name not specified in JAAS config")
        entries.append(JaasEntry(module, flag.upper(), options))
    if not entries:
        raise ValueError("Login module not specified in JAAS config")
    return entries


_EOF = "<EOF>"
_WORD = "<WORD>"
_NUMBER = "<NUMBER>"
_QUOTE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _JaasTokenizer:
    """The parts of ``java.io.StreamTokenizer``'s default syntax that Kafka's JaasConfig relies on,
    with ``//`` and ``/* */`` comments and ``-``, ``_``, ``$`` as word characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ttype: str = ""
        self.sval: str | None = None

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    @staticmethod
    def _is_alpha(char: str) -> bool:
        code = ord(char)
        return (char.isascii() and char.isalpha()) or char in "_$-" or code >= 160

    @staticmethod
    def _is_digit(char: str) -> bool:
        return char in "0123456789.-"

    def next(self) -> str:
        self.sval = None
        while True:
            char = self._peek()
            if not char:
                self.ttype = _EOF
                return self.ttype
            if ord(char) <= 32:
                self.pos += 1
                continue
            if self._is_digit(char):
                return self._number()
            if self._is_alpha(char):
                start = self.pos
                while self._peek() and (self._is_alpha(self._peek()) or self._is_digit(self._peek())):
                    self.pos += 1
                self.sval = self.text[start : self.pos]
                self.ttype = _WORD
                return self.ttype
            if char in "\"'":
                return self._quoted(char)
            if char == "/":
                self.pos += 1
                if self._peek() == "*":
                    end = self.text.find("*/", self.pos + 1)
                    self.pos = len(self.text) if end < 0 else end + 2
                else:  # "//" and a lone "/" (a comment character by default) both end the line
                    while self._peek() and self._peek() not in "\r\n":
                        self.pos += 1
                continue
            self.pos += 1
            self.ttype = char
            return self.ttype

    def _number(self) -> str:
        if self._peek() == "-":
            self.pos += 1
            if not self._peek() or self._peek() not in "0123456789.":
                self.ttype = "-"
                return self.ttype
        seen_dot = False
        while self._peek() and ((self._peek().isdigit() and self._peek().isascii()) or self._peek() == "."):
            if self._peek() == ".":
                if seen_dot:
                    break
                seen_dot = True
            self.pos += 1
        self.ttype = _NUMBER
        return self.ttype

    def _quoted(self, quote: str) -> str:
        self.pos += 1
        out: list[str] = []
        while self._peek() and self._peek() not in (quote, "\n", "\r"):
            char = self._peek()
            self.pos += 1
            if char == "\\" and self._peek():
                char = self._peek()
                self.pos += 1
                if char in "01234567":
                    digits = char
                    limit = 3 if char <= "3" else 2
                    while len(digits) < limit and self._peek() and self._peek() in "01234567":
                        digits += self._peek()
                        self.pos += 1
                    char = chr(int(digits, 8))
                else:
                    char = _QUOTE_ESCAPES.get(char, char)
            out.append(char)
        if self._peek() == quote:
            self.pos += 1
        self.sval = "".join(out)
        self.ttype = quote
        return self.ttype


# --------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class SaslCredentials:
    mechanism: str
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class StoreSettings:
    """One Java keystore or truststore as configured (``location`` or inline PEM ``pem``)."""

    kind: str  # "truststore" or "keystore"
    store_type: str
    location: str | None = None
    password: str | None = field(default=None, repr=False)
    pem: str | None = field(default=None, repr=False)  # truststore certificates, or keystore chain
    key_pem: str | None = field(default=None, repr=False)  # keystore key (inline PEM)
    key_password: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class SslSettings:
    truststore: StoreSettings | None
    keystore: StoreSettings | None
    check_hostname: bool = True


class ClientConfig:
    """Validated ``--command-config`` settings, and their translation for each client.

    ``librdkafka_config`` and ``kafka_python_config`` give the settings without the bootstrap
    address: the adapter adds the command-line one, which wins over a ``bootstrap.servers`` here
    (the Apache tool puts the command-line value into the properties).
    """

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        props = dict(properties or {})
        self._properties = props
        self.warnings: tuple[str, ...] = tuple(
            f"The configuration '{name}' was supplied but isn't a known config."
            for name in props
            if not _known_admin_property(name)
        )
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
        self.sasl = _sasl_credentials(props, self.security_protocol)
        self.ssl = _ssl_settings(props) if self.security_protocol in ("SSL", "SASL_SSL") else None
        self._store_files: _StoreFiles | None = None

    def __repr__(self) -> str:
        sasl = f", sasl_mechanism={self.sasl.mechanism!r}" if self.sasl else ""
        return f"ClientConfig(client_id={self.client_id!r}, security_protocol={self.security_protocol!r}{sasl})"

    def secrets(self) -> list[str]:
        """Every secret value of the file (SASL and store passwords, inline PEM keys), longest first,
        so that output can be scrubbed of them."""
        found = [self.sasl.password] if self.sasl else []
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
        if self.sasl:
            conf.update(
                {
                    "sasl.mechanism": self.sasl.mechanism,
                    "sasl.username": self.sasl.username,
                    "sasl.password": self.sasl.password,
                }
            )
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
        if self.sasl:
            conf.update(
                {
                    "sasl_mechanism": self.sasl.mechanism,
                    "sasl_plain_username": self.sasl.username,
                    "sasl_plain_password": self.sasl.password,
                }
            )
        if self.ssl:
            conf["ssl_check_hostname"] = self.ssl.check_hostname
            conf.update(self._files().kafka_python())
        return conf

    def _files(self) -> _StoreFiles:
        assert self.ssl is not None
        if self._store_files is None:
            self._store_files = _StoreFiles(self.ssl)
        return self._store_files


def _known_admin_property(name: str) -> bool:
    return (
        name in TRANSLATED_PROPERTIES
        or name in HARMLESS_PROPERTIES
        or name in UNSUPPORTED_PROPERTIES
        or name.startswith(_OAUTH_PREFIX)
    )


def _refuse_unsupported(props: Mapping[str, str]) -> None:
    for name, reason in UNSUPPORTED_PROPERTIES.items():
        if name not in props:
            continue
        value = props[name].strip()
        if name == "ssl.cipher.suites" and value == _JAVA_DEFAULT_CIPHER_SUITES:
            continue
        raise ConfigError(f"{name} is not supported by kreassign: {reason}")


def _failed_to_create(detail: str) -> ConfigError:
    """Java wraps these in ``KafkaException: Failed to create new KafkaAdminClient``; the detail,
    which Java prints in its stack trace, goes into a note."""
    error = ConfigError(FAILED_TO_CREATE_ADMIN)
    error.add_note(detail)
    return error


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


def _sasl_credentials(props: Mapping[str, str], protocol: str) -> SaslCredentials | None:
    if not protocol.startswith("SASL_"):
        return None
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip()
    if mechanism in ("GSSAPI", "OAUTHBEARER"):
        default = " (the default when sasl.mechanism is not set)" if "sasl.mechanism" not in props else ""
        raise ConfigError(
            f"sasl.mechanism {mechanism}{default} is not supported by kreassign: "
            f"use one of {', '.join(SASL_MECHANISMS)}"
        )
    if mechanism not in SASL_MECHANISMS:
        raise _failed_to_create(f"Unexpected SASL mechanism: {mechanism}")
    jaas = props.get("sasl.jaas.config", "").strip()
    if not jaas:
        raise _failed_to_create(
            "sasl.jaas.config is not set; a JAAS file (java.security.auth.login.config) is not supported "
            "by kreassign: put the login module into sasl.jaas.config"
        )
    try:
        entries = parse_jaas_config(jaas)
    except ValueError as exc:
        raise _failed_to_create(f"sasl.jaas.config: {exc}") from None
    if len(entries) != 1:
        raise _failed_to_create(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    entry = entries[0]
    if entry.login_module not in (PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE):
        raise ConfigError(
            f"sasl.jaas.config login module {entry.login_module} is not supported by kreassign: "
            f"use {PLAIN_LOGIN_MODULE} or {SCRAM_LOGIN_MODULE}"
        )
    if entry.options.get("tokenauth", "false").lower() == "true":
        raise ConfigError("sasl.jaas.config tokenauth=true (delegation tokens) is not supported by kreassign")
    missing = [key for key in ("username", "password") if key not in entry.options]
    if missing:
        raise ConfigError(f"sasl.jaas.config gives no {' and no '.join(missing)} for SASL/{mechanism}")
    return SaslCredentials(mechanism, entry.options["username"], entry.options["password"])


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


# --------------------------------------------------------------------------------- key material
def _pem_blocks(text: str) -> str:
    """The certificates of an ``openssl``/``keytool`` listing, without their attribute lines."""
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", text, re.S)
    return "".join(block + "\n" for block in blocks)


class _StoreFiles:
    """PEM / PKCS12 files for the two OpenSSL-based clients, made from the Java stores on first use."""

    def __init__(self, settings: SslSettings) -> None:
        self.settings = settings
        self._folder: str | None = None
        self._cache: dict[str, Any] = {}
        self.secrets = [
            s
            for store in (settings.truststore, settings.keystore)
            if store
            for s in (store.password, store.key_password)
            if s
        ]

    # -- the two clients
    def librdkafka(self) -> dict[str, Any]:
        conf: dict[str, Any] = {}
        trust = self.settings.truststore
        if trust is not None:
            if trust.pem is not None:
                conf["ssl.ca.pem"] = trust.pem
            else:
                conf["ssl.ca.location"] = str(self._truststore_pem())
        keys = self.settings.keystore
        if keys is not None:
            if keys.store_type == "PEM":
                if keys.key_pem is not None:
                    conf["ssl.key.pem"] = keys.key_pem
                    conf["ssl.certificate.pem"] = keys.pem
                else:
                    conf["ssl.key.location"] = keys.location
                    conf["ssl.certificate.location"] = keys.location
                if keys.key_password:
                    conf["ssl.key.password"] = keys.key_password
            else:
                pkcs12, password = self._keystore_pkcs12()
                conf["ssl.keystore.location"] = str(pkcs12)
                if password:
                    conf["ssl.keystore.password"] = password
        return conf

    def kafka_python(self) -> dict[str, Any]:
        conf: dict[str, Any] = {}
        if self.settings.truststore is not None:
            conf["ssl_cafile"] = str(self._truststore_pem())
        keys = self.settings.keystore
        if keys is not None:
            certfile, keyfile, password = self._keystore_pem()
            conf.update({"ssl_certfile": str(certfile), "ssl_keyfile": str(keyfile)})
            if password:
                conf["ssl_password"] = password
        return conf

    # -- conversions
    def _truststore_pem(self) -> str:
        if "truststore" in self._cache:
            return self._cache["truststore"]
        trust = self.settings.truststore
        assert trust is not None
        if trust.pem is not None:
            path = self._write("truststore.pem", trust.pem)
        elif trust.store_type == "PEM":
            path = str(trust.location)
        else:
            listing = self._keytool(
                trust,
                ["-list", "-rfc", "-keystore", str(trust.location), "-storetype", trust.store_type],
                {"-storepass": trust.password},
            )
            certificates = _pem_blocks(listing)
            if not certificates:
                raise ConfigError(f"ssl.truststore.location {trust.location} holds no certificate")
            path = self._write("truststore.pem", certificates)
        self._cache["truststore"] = path
        return path

    def _keystore_pkcs12(self) -> tuple[str, str | None]:
        """librdkafka reads PKCS12 with one password: use the file as is when it is PKCS12 with no
        separate key password, else convert with keytool."""
        if "pkcs12" in self._cache:
            return self._cache["pkcs12"]
        keys = self.settings.keystore
        assert keys is not None and keys.location is not None
        if keys.store_type == "PKCS12" and keys.key_password in (None, keys.password):
            result: tuple[str, str | None] = (keys.location, keys.password)
        else:
            import secrets

            password = secrets.token_urlsafe(24)
            self.secrets.append(password)
            target = os.path.join(self._folder_path(), "keystore.p12")
            source = ["-srckeystore", keys.location, "-srcstoretype", keys.store_type]
            common = ["-importkeystore", "-noprompt", *source, "-destkeystore", str(target), "-deststoretype", "PKCS12"]
            if keys.key_password in (None, keys.password):
                self._keytool(keys, common, {"-srcstorepass": keys.password, "-deststorepass": password})
            else:  # keytool takes a separate key password only entry by entry
                for alias in self._private_key_aliases(keys):
                    self._keytool(
                        keys,
                        [*common, "-srcalias", alias, "-destalias", alias],
                        {"-srcstorepass": keys.password, "-srckeypass": keys.key_password, "-deststorepass": password},
                    )
            os.chmod(target, 0o600)
            result = (target, password)
        self._cache["pkcs12"] = result
        return result

    def _keystore_pem(self) -> tuple[str, str, str | None]:
        """kafka-python (Python's ssl module) loads a PEM certificate chain and PEM private key."""
        if "pem" in self._cache:
            return self._cache["pem"]
        keys = self.settings.keystore
        assert keys is not None
        if keys.store_type == "PEM":
            if keys.key_pem is not None:
                certfile = self._write("keystore-chain.pem", str(keys.pem))
                keyfile = self._write("keystore-key.pem", keys.key_pem)
            else:
                certfile = keyfile = str(keys.location)
            result: tuple[str, str, str | None] = (certfile, keyfile, keys.key_password)
        else:
            pkcs12, password = self._keystore_pkcs12()
            certfile = os.path.join(self._folder_path(), "keystore-chain.pem")
            keyfile = os.path.join(self._folder_path(), "keystore-key.pem")
            env = {"KREASSIGN_PKCS12_PASSWORD": password or ""}
            common = ["pkcs12", "-in", str(pkcs12), "-passin", "env:KREASSIGN_PKCS12_PASSWORD"]
            # Python's ssl wants the certificate of the key first, then the rest of the chain.
            leaf = self._openssl([*common, "-nokeys", "-clcerts"], env)
            others = self._openssl([*common, "-nokeys", "-cacerts"], env)
            self._write(os.path.basename(certfile), _pem_blocks(leaf) + _pem_blocks(others))
            if password:
                self._openssl(
                    [*common, "-nocerts", "-out", str(keyfile), "-passout", "env:KREASSIGN_PKCS12_PASSWORD"], env
                )
            else:
                self._openssl([*common, "-nocerts", "-nodes", "-out", str(keyfile)], env)
            os.chmod(keyfile, 0o600)
            result = (certfile, keyfile, password)
        self._cache["pem"] = result
        return result

    def _private_key_aliases(self, keys: StoreSettings) -> list[str]:
        listing = self._keytool(
            keys,
            ["-list", "-keystore", str(keys.location), "-storetype", keys.store_type],
            {"-storepass": keys.password},
        )
        aliases = [line.split(",")[0] for line in listing.splitlines() if ", PrivateKeyEntry" in line]
        if not aliases:
            raise ConfigError(f"ssl.keystore.location {keys.location} holds no private key")
        return aliases

    # -- helpers
    def _folder_path(self) -> str:
        if self._folder is None:
            import shutil
            import tempfile
            import weakref

            self._folder = tempfile.mkdtemp(prefix="kreassign-tls-")  # mode 0700
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        return self._folder

    def _write(self, name: str, text: str) -> str:
        path = os.path.join(self._folder_path(), name)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        return path

    def _keytool(self, store: StoreSettings, args: list[str], passwords: Mapping[str, str | None]) -> str:
        import shutil

        keytool = shutil.which("keytool")
        if keytool is None:
            raise ConfigError(
                f"ssl.{store.kind}.type={store.store_type} needs Java's keytool on PATH to be converted: "
                f"install a JDK, or convert ssl.{store.kind}.location to PEM and set ssl.{store.kind}.type=PEM"
            )
        env = dict(os.environ)
        command = [keytool, *_KEYTOOL_JVM_OPTIONS, *args]
        for option, secret in passwords.items():
            if secret:
                variable = "KREASSIGN_" + option.strip("-").upper()
                env[variable] = secret
                command += [f"{option}:env", variable]
        return self._run(command, env, f"ssl.{store.kind}.location {store.location}")

    def _openssl(self, args: list[str], extra_env: Mapping[str, str]) -> str:
        import shutil

        openssl = shutil.which("openssl")
        if openssl is None:
            raise ConfigError(
                "ssl.keystore.type JKS/PKCS12 needs the openssl command to give kafka-python a PEM key: "
                "install openssl, or convert ssl.keystore.location to PEM and set ssl.keystore.type=PEM"
            )
        return self._run([openssl, *args], {**os.environ, **extra_env}, "ssl.keystore.location")

    def _run(self, command: list[str], env: Mapping[str, str], what: str) -> str:
        import subprocess

        process = subprocess.run(
            command, capture_output=True, text=True, env=dict(env), stdin=subprocess.DEVNULL, timeout=120
        )
        if process.returncode != 0:
            lines = [line for line in (process.stdout + "\n" + process.stderr).splitlines() if line.strip()]
            errors = [line for line in lines if "error" in line.lower()]
            detail = (errors or lines or [f"exit status {process.returncode}"])[-1]
            message = self._scrub(detail.strip())
            raise ConfigError(f"cannot read {what}: {message}")
        return process.stdout

    def _scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "****")
        return text
