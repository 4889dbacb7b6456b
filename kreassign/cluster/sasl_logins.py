"""The SASL login of ``--command-config``: ``sasl.mechanism``, the login module of ``sasl.jaas.config`` (or of the
``KafkaClient`` section of a JAAS file named in ``KAFKA_OPTS``) and the callback handlers, as Java's client reads
them, made into what kreassign's clients need:

* PLAIN, SCRAM-SHA-256/512: a username and password (:class:`SaslCredentials`);
* GSSAPI: a Kerberos login (``kerberos.KerberosLogin``);
* OAUTHBEARER: a token source (``oauth_tokens``): unsecured, an OAuth token endpoint or a token file;
* AWS MSK IAM (``AWS_MSK_IAM``, or OAUTHBEARER with AWS's handlers): an AWS-signed token (``aws_iam``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kreassign.cluster.jaas import JaasEntry, parse_jaas_config, parse_jaas_file
from kreassign.cluster.java_system import ALLOWED_FILES, ALLOWED_URLS, JAAS_FILE, KRB5_CONF, allowed_list
from kreassign.errors import ConfigError

PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_MECHANISMS = (*PASSWORD_MECHANISMS, "GSSAPI", "OAUTHBEARER", "AWS_MSK_IAM")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"
#: Kafka's own login classes (sasl.login.class): the default for each mechanism, nothing to run
KAFKA_LOGIN_CLASSES = (
    "org.apache.kafka.common.security.authenticator.DefaultLogin",
    "org.apache.kafka.common.security.kerberos.KerberosLogin",
    "org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerRefreshingLogin",
)
JWT_BEARER_RETRIEVER = "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"
_RETRIEVERS = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
    "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever",
    "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever",
    JWT_BEARER_RETRIEVER,
}
_VALIDATORS = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator",
    "org.apache.kafka.common.security.oauthbearer.ClientJwtValidator",
}


@dataclass(frozen=True)
class SaslCredentials:
    mechanism: str
    username: str
    password: str = field(repr=False)


def failed_to_create(detail: str) -> ConfigError:
    """Java wraps these in ``KafkaException: Failed to create new KafkaAdminClient``; the detail,
    which Java prints in its stack trace, goes into a note."""
    error = ConfigError(FAILED_TO_CREATE_ADMIN)
    error.add_note(detail)
    return error


def sasl_login(props: Mapping[str, str], protocol: str, system: Mapping[str, str]) -> Any:
    """The login of a SASL protocol (None for PLAINTEXT and SSL)."""
    if not protocol.startswith("SASL_"):
        return None
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip()
    if mechanism not in SASL_MECHANISMS:
        raise failed_to_create(f"Unexpected SASL mechanism: {mechanism}")
    entry = _jaas_entry(props, system)
    handler = (props.get("sasl.login.callback.handler.class") or "").strip()
    client_handler = (props.get("sasl.client.callback.handler.class") or "").strip()
    _check_login_class(props)
    from kreassign.cluster.aws_iam import IAM_HANDLERS, IAM_LOGIN_MODULE

    if mechanism == "AWS_MSK_IAM" or entry.login_module == IAM_LOGIN_MODULE or handler in IAM_HANDLERS:
        return _aws_login(mechanism, entry, handler, client_handler)
    for name, value in (("sasl.client.callback.handler.class", client_handler),):
        if value:
            raise ConfigError(f"{name} {value} is not supported by kreassign: a Java callback handler cannot run here")
    if mechanism == "GSSAPI":
        return _kerberos_login(props, entry, system, handler)
    if mechanism == "OAUTHBEARER":
        return _oauth_login(props, entry, system, handler)
    if handler:
        raise ConfigError(
            f"sasl.login.callback.handler.class {handler} is not supported by kreassign: a Java callback handler "
            "cannot run here"
        )
    if entry.login_module not in (PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE):
        raise ConfigError(
            f"sasl.jaas.config login module {entry.login_module} is not supported by kreassign for SASL/{mechanism}: "
            f"use {PLAIN_LOGIN_MODULE} or {SCRAM_LOGIN_MODULE}"
        )
    if entry.options.get("tokenauth", "false").lower() == "true":
        raise ConfigError("sasl.jaas.config tokenauth=true (delegation tokens) is not supported by kreassign")
    missing = [key for key in ("username", "password") if key not in entry.options]
    if missing:
        raise ConfigError(f"sasl.jaas.config gives no {' and no '.join(missing)} for SASL/{mechanism}")
    return SaslCredentials(mechanism, entry.options["username"], entry.options["password"])


def _jaas_entry(props: Mapping[str, str], system: Mapping[str, str]) -> JaasEntry:
    jaas = props.get("sasl.jaas.config", "").strip()
    if jaas:
        try:
            entries = parse_jaas_config(jaas)
        except ValueError as exc:
            raise failed_to_create(f"sasl.jaas.config: {exc}") from None
        if len(entries) != 1:
            raise failed_to_create(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
        return entries[0]
    path = system.get(JAAS_FILE)
    if not path:
        raise failed_to_create(
            "Could not find a 'KafkaClient' entry in the JAAS configuration: set sasl.jaas.config, or "
            "-Djava.security.auth.login.config=<JAAS file> in KAFKA_OPTS"
        )
    try:
        sections = parse_jaas_file(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise failed_to_create(
            f"The JAAS file {path} (java.security.auth.login.config) cannot be read: {exc.strerror}"
        ) from None
    except ValueError as exc:
        raise failed_to_create(f"The JAAS file {path}: {exc}") from None
    entries = sections.get("KafkaClient")
    if not entries:
        raise failed_to_create(f"Could not find a 'KafkaClient' entry in the JAAS configuration {path}")
    if len(entries) != 1:
        raise failed_to_create(f"The KafkaClient entry of {path} has {len(entries)} login modules, should be 1 module")
    return entries[0]


def _check_login_class(props: Mapping[str, str]) -> None:
    value = (props.get("sasl.login.class") or "").strip()
    if value and value not in KAFKA_LOGIN_CLASSES:
        raise ConfigError(f"sasl.login.class {value} is not supported by kreassign: a Java login class cannot run here")


def _refresh_settings(props: Mapping[str, str]) -> dict[str, float]:
    names = {
        "window.factor": "sasl.login.refresh.window.factor",
        "buffer.seconds": "sasl.login.refresh.buffer.seconds",
        "min.period.seconds": "sasl.login.refresh.min.period.seconds",
    }
    settings = {}
    for key, name in names.items():
        raw = (props.get(name) or "").strip()
        if raw:
            try:
                settings[key] = float(raw)
            except ValueError:
                raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number") from None
    return settings


# ------------------------------------------------------------------------------------------------ GSSAPI
def _kerberos_login(props: Mapping[str, str], entry: JaasEntry, system: Mapping[str, str], handler: str) -> Any:
    from kreassign.cluster.kerberos import KRB5_LOGIN_MODULES, KerberosLogin

    if handler:
        raise ConfigError(f"sasl.login.callback.handler.class {handler} is not supported by kreassign for GSSAPI")
    if entry.login_module not in KRB5_LOGIN_MODULES:
        raise ConfigError(
            f"sasl.jaas.config login module {entry.login_module} is not supported by kreassign for SASL/GSSAPI: use "
            f"{KRB5_LOGIN_MODULES[0]}"
        )
    service = props.get("sasl.kerberos.service.name") or entry.options.get("serviceName")
    return KerberosLogin.from_jaas(entry.options, service, system.get(KRB5_CONF))


# ------------------------------------------------------------------------------------------------ OAUTHBEARER
def _oauth_login(props: Mapping[str, str], entry: JaasEntry, system: Mapping[str, str], handler: str) -> Any:
    from kreassign.cluster.oauth_tokens import LOGIN_HANDLERS, UNSECURED_HANDLER, UnsecuredTokens

    if entry.login_module != OAUTH_LOGIN_MODULE:
        raise ConfigError(
            f"sasl.jaas.config login module {entry.login_module} is not supported by kreassign for SASL/OAUTHBEARER: "
            f"use {OAUTH_LOGIN_MODULE}"
        )
    refresh = _refresh_settings(props)
    if not handler or handler == UNSECURED_HANDLER:
        return UnsecuredTokens(entry.options, refresh)
    if handler not in LOGIN_HANDLERS:
        raise ConfigError(
            f"sasl.login.callback.handler.class {handler} is not supported by kreassign: a Java callback handler "
            "cannot run here"
        )
    return _endpoint_tokens(props, entry, system, refresh)


def _endpoint_tokens(
    props: Mapping[str, str], entry: JaasEntry, system: Mapping[str, str], refresh: Mapping[str, float]
) -> Any:
    from kreassign.cluster.oauth_tokens import EndpointSettings, EndpointTokens

    for name, allowed in (
        ("sasl.oauthbearer.jwt.retriever.class", _RETRIEVERS),
        ("sasl.oauthbearer.jwt.validator.class", _VALIDATORS),
    ):
        value = (props.get(name) or "").strip()
        if value and value not in allowed:
            raise ConfigError(f"{name} {value} is not supported by kreassign: a Java class cannot run here")
    from kreassign.cluster.jwt_assertions import AssertionSettings

    jwt_bearer = (props.get("sasl.oauthbearer.jwt.retriever.class") or "").strip() == JWT_BEARER_RETRIEVER
    for kind in ("file", "private.key.file", "template.file"):  # Java reads only the files KAFKA_OPTS allows
        name = f"sasl.oauthbearer.assertion.{kind}"
        path = (props.get(name) or "").strip()
        if path and path not in allowed_list(system, ALLOWED_FILES):
            error = failed_to_create(
                f"Invalid value {path} for configuration {name}: The file cannot be accessed due to restrictions. "
                f"Update the system property '{ALLOWED_FILES}' to allow the file to be accessed."
            )
            error.add_note(
                f"As Kafka 4's Java client does, kreassign reads only the files that KAFKA_OPTS allows: "
                f'export KAFKA_OPTS="-D{ALLOWED_FILES}={path}" (the Apache tool needs the same).'
            )
            raise error
    assertion = AssertionSettings.from_properties(props)
    if jwt_bearer and assertion is None:
        raise failed_to_create(
            "The OAuth configuration option sasl.oauthbearer.assertion.private.key.file (or "
            "sasl.oauthbearer.assertion.file) is required for the jwt-bearer grant"
        )
    url = (props.get("sasl.oauthbearer.token.endpoint.url") or "").strip()
    name = "sasl.oauthbearer.token.endpoint.url"
    if not url:
        raise failed_to_create(f"The OAuth configuration option {name} is required")
    protocol = url.split(":", 1)[0].lower() if ":" in url else ""
    if protocol not in ("http", "https", "file"):
        raise failed_to_create(
            f"The OAuth configuration option {name} contains a URL ({url}) that contains an invalid protocol "
            f'({protocol}); only "http", "https", and "file" protocol are supported'
        )
    kind, allowed_name = ("file", ALLOWED_FILES) if protocol == "file" else ("URL", ALLOWED_URLS)
    target = url.split(":", 1)[1] if protocol == "file" else url
    allowed = allowed_list(system, allowed_name)
    if target not in allowed and url not in allowed:
        error = failed_to_create(
            f"Invalid value {url} for configuration {name}: The {kind} cannot be accessed due to restrictions. Update "
            f"the system property '{allowed_name}' to allow the {kind} to be accessed."
        )
        error.add_note(
            f"As Kafka 4's Java client does, kreassign reads only the token {kind}s that KAFKA_OPTS allows: "
            f'export KAFKA_OPTS="-D{allowed_name}={target}" (the Apache tool needs the same).'
        )
        raise error

    def option(prop: str, jaas: str) -> str | None:
        value = props.get(prop)
        return value if value is not None and value.strip() else entry.options.get(jaas)

    return EndpointTokens(
        EndpointSettings(
            url=url,
            client_id=option("sasl.oauthbearer.client.credentials.client.id", "clientId"),
            client_secret=option("sasl.oauthbearer.client.credentials.client.secret", "clientSecret"),
            scope=option("sasl.oauthbearer.scope", "scope"),
            urlencode_header=(props.get("sasl.oauthbearer.header.urlencode") or "false").strip().lower() == "true",
            connect_timeout_s=_millis(props, "sasl.login.connect.timeout.ms", 10_000),
            read_timeout_s=_millis(props, "sasl.login.read.timeout.ms", 10_000),
            retry_backoff_s=_millis(props, "sasl.login.retry.backoff.ms", 100),
            retry_backoff_max_s=_millis(props, "sasl.login.retry.backoff.max.ms", 10_000),
            sub_claim=(props.get("sasl.oauthbearer.sub.claim.name") or "sub").strip() or "sub",
            extensions={k[len("extension_") :]: v for k, v in entry.options.items() if k.startswith("extension_")},
            grant="jwt-bearer" if jwt_bearer else "client_credentials",
            assertion=assertion,
        ),
        refresh,
    )


def _millis(props: Mapping[str, str], name: str, default: int) -> float:
    raw = (props.get(name) or "").strip()
    if not raw:
        return default / 1000.0
    if not raw.lstrip("+-").isdigit():
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type LONG")
    return int(raw) / 1000.0


# ------------------------------------------------------------------------------------------------ AWS MSK IAM
def _aws_login(mechanism: str, entry: JaasEntry, handler: str, client_handler: str) -> Any:
    from kreassign.cluster.aws_iam import IAM_HANDLERS, IAM_LOGIN_MODULE, AwsIamTokens

    if mechanism not in ("AWS_MSK_IAM", "OAUTHBEARER"):
        raise ConfigError(f"AWS MSK IAM's login needs sasl.mechanism AWS_MSK_IAM or OAUTHBEARER, not {mechanism}")
    for name, value in (
        ("sasl.login.callback.handler.class", handler),
        ("sasl.client.callback.handler.class", client_handler),
    ):
        if value and value not in IAM_HANDLERS:
            raise ConfigError(f"{name} {value} is not supported by kreassign: a Java callback handler cannot run here")
    if entry.login_module not in (IAM_LOGIN_MODULE, OAUTH_LOGIN_MODULE):
        raise ConfigError(
            f"sasl.jaas.config login module {entry.login_module} is not supported by kreassign for AWS MSK IAM: use "
            f"{IAM_LOGIN_MODULE}"
        )
    return AwsIamTokens(entry.options)
