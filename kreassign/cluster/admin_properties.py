"""Every property of the Java admin client (``AdminClientConfig`` of Kafka 4.4.0) and what kreassign does with it.

Each is one of:

* ``translated``: it changes what kreassign's clients do, as it changes the Java client;
* ``no effect``: accepted and without effect, for the reason given (Java-only tuning, or a broker-side setting);
* ``refused``: a one-line error naming the property and the reason.

``docs/command-line.md`` holds the same table (``tests/unit/test_docs.py`` compares them), and
``tests/unit/test_admin_properties.py`` reads the property names out of the 4.4.0 jar, so that a property a
new release adds cannot go unnoticed. A property that is neither here nor a ``config.providers.*`` one is
unknown to Java's admin client too: Java logs a warning and goes on, and so does kreassign.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

TRANSLATED = "translated"
NO_EFFECT = "no effect"
REFUSED = "refused"


@dataclass(frozen=True)
class AdminProperty:
    kind: str
    note: str


def _t(note: str) -> AdminProperty:
    return AdminProperty(TRANSLATED, note)


def _n(note: str) -> AdminProperty:
    return AdminProperty(NO_EFFECT, note)


def _r(note: str) -> AdminProperty:
    return AdminProperty(REFUSED, note)


_METRICS = _n("client metrics are not exported")
_REBOOTSTRAP = _n("the clients re-bootstrap on their own")
_KERBEROS_RENEWAL = _n("Kerberos tickets are renewed by the GSS-API library from the keytab or ticket cache")
_BROKER_SIDE = _n("a setting of the brokers' token validator, not of a client")
_ASSERTION = _t("the JWT assertion of the jwt-bearer grant or of client assertion (RS256)")
_TLS_VERSIONS = _n("OpenSSL negotiates TLS 1.2 or 1.3, as Java's defaults do")

ADMIN_CLIENT_PROPERTIES: Mapping[str, AdminProperty] = {
    "bootstrap.controllers": _t("the command line's --bootstrap-controller wins, as in the Apache tool"),
    "bootstrap.resolve.timeout.ms": _n("host names are resolved once; none resolving is an error at once"),
    "bootstrap.servers": _t("the command line's --bootstrap-server wins, as in the Apache tool"),
    "client.dns.lookup": _t("use_all_dns_ips or resolve_canonical_bootstrap_servers_only"),
    "client.id": _t("both clients' client id"),
    "config.providers": _t("file, directory and env providers, ${provider:path:key} anywhere in the file"),
    "connections.max.idle.ms": _t("both clients"),
    "default.api.timeout.ms": _t("each call's deadline"),
    "enable.metrics.push": _METRICS,
    "metadata.cluster.check.enable": _n("the cluster id is read once per run and kept"),
    "metadata.max.age.ms": _t("both clients"),
    "metadata.recovery.rebootstrap.trigger.ms": _REBOOTSTRAP,
    "metadata.recovery.strategy": _REBOOTSTRAP,
    "metric.reporters": _METRICS,
    "metrics.num.samples": _METRICS,
    "metrics.recording.level": _METRICS,
    "metrics.sample.window.ms": _METRICS,
    "receive.buffer.bytes": _t("socket buffer (-1: the system's default)"),
    "reconnect.backoff.max.ms": _t("both clients"),
    "reconnect.backoff.ms": _t("both clients"),
    "request.timeout.ms": _t("each request's timeout"),
    "retries": _t("calls are retried until their deadline, as Java's admin client does"),
    "retry.backoff.max.ms": _t("librdkafka"),
    "retry.backoff.ms": _t("both clients"),
    "sasl.client.callback.handler.class": _t("AWS MSK IAM's handlers (the aws extra); any other class is refused"),
    "sasl.jaas.config": _t("PLAIN, SCRAM, Kerberos, OAUTHBEARER and AWS MSK IAM login modules"),
    "sasl.kerberos.kinit.cmd": _n("the ticket cache is read by the GSS-API library; kinit is not run"),
    "sasl.kerberos.min.time.before.relogin": _KERBEROS_RENEWAL,
    "sasl.kerberos.service.name": _t("the service part of the brokers' Kerberos principal"),
    "sasl.kerberos.ticket.renew.jitter": _KERBEROS_RENEWAL,
    "sasl.kerberos.ticket.renew.window.factor": _KERBEROS_RENEWAL,
    "sasl.login.callback.handler.class": _t(
        "OAuthBearerLoginCallbackHandler, the unsecured one, AWS MSK IAM's; any other class is refused"
    ),
    "sasl.login.class": _t("Kafka's own login classes; any other class is refused"),
    "sasl.login.connect.timeout.ms": _t("the token endpoint's connect timeout"),
    "sasl.login.read.timeout.ms": _t("the token endpoint's read timeout"),
    "sasl.login.refresh.buffer.seconds": _t("when a token is refreshed"),
    "sasl.login.refresh.min.period.seconds": _t("when a token is refreshed"),
    "sasl.login.refresh.window.factor": _t("when a token is refreshed"),
    "sasl.login.refresh.window.jitter": _t("when a token is refreshed"),
    "sasl.login.retry.backoff.max.ms": _t("retries of the token endpoint"),
    "sasl.login.retry.backoff.ms": _t("retries of the token endpoint"),
    "sasl.mechanism": _t("PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI, OAUTHBEARER, AWS_MSK_IAM"),
    "sasl.oauthbearer.allow.unverified.audience": _BROKER_SIDE,
    "sasl.oauthbearer.allow.unverified.issuer": _BROKER_SIDE,
    "sasl.oauthbearer.assertion.algorithm": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.aud": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.exp.seconds": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.iss": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.jti.include": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.nbf.seconds": _ASSERTION,
    "sasl.oauthbearer.assertion.claim.sub": _ASSERTION,
    "sasl.oauthbearer.assertion.file": _ASSERTION,
    "sasl.oauthbearer.assertion.private.key.file": _ASSERTION,
    "sasl.oauthbearer.assertion.private.key.passphrase": _r("an encrypted private key: give an unencrypted one"),
    "sasl.oauthbearer.assertion.template.file": _ASSERTION,
    "sasl.oauthbearer.client.credentials.client.id": _t("the client credentials grant's client id"),
    "sasl.oauthbearer.client.credentials.client.secret": _t("the client credentials grant's secret"),
    "sasl.oauthbearer.clock.skew.seconds": _BROKER_SIDE,
    "sasl.oauthbearer.expected.audience": _BROKER_SIDE,
    "sasl.oauthbearer.expected.issuer": _BROKER_SIDE,
    "sasl.oauthbearer.header.urlencode": _t("URL-encoded client id and secret in the Authorization header"),
    "sasl.oauthbearer.jwks.endpoint.refresh.ms": _BROKER_SIDE,
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": _BROKER_SIDE,
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": _BROKER_SIDE,
    "sasl.oauthbearer.jwks.endpoint.url": _BROKER_SIDE,
    "sasl.oauthbearer.jwt.retriever.class": _t(
        "Kafka's default, client credentials and file retrievers; jwt-bearer is refused"
    ),
    "sasl.oauthbearer.jwt.validator.class": _t("Kafka's client validator: the token's sub and exp claims are checked"),
    "sasl.oauthbearer.scope": _t("the scope asked of the token endpoint"),
    "sasl.oauthbearer.scope.claim.name": _t("the token's scope claim"),
    "sasl.oauthbearer.sub.claim.name": _t("the token's subject claim"),
    "sasl.oauthbearer.token.endpoint.url": _t("an http(s) token endpoint or a file:/ token"),
    "security.protocol": _t("PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    "security.providers": _r("Java security providers cannot run here"),
    "send.buffer.bytes": _t("socket buffer (-1: the system's default)"),
    "socket.connection.setup.timeout.max.ms": _t("calls end at their deadline"),
    "socket.connection.setup.timeout.ms": _t("librdkafka"),
    "ssl.cipher.suites": _r("Java cipher suite names cannot be passed to OpenSSL; remove it to use the defaults"),
    "ssl.enabled.protocols": _TLS_VERSIONS,
    "ssl.endpoint.identification.algorithm": _t("https (the default) or empty"),
    "ssl.engine.factory.class": _r("a Java SSL engine factory cannot run here"),
    "ssl.key.password": _t("the keystore's key"),
    "ssl.keymanager.algorithm": _n("a JVM key manager factory, OpenSSL has none"),
    "ssl.keystore.certificate.chain": _t("inline PEM"),
    "ssl.keystore.key": _t("inline PEM"),
    "ssl.keystore.location": _t("JKS, PKCS12 or PEM"),
    "ssl.keystore.password": _t("JKS, PKCS12 or PEM"),
    "ssl.keystore.type": _t("JKS, PKCS12 or PEM"),
    "ssl.protocol": _TLS_VERSIONS,
    "ssl.provider": _r("Java security providers cannot run here"),
    "ssl.secure.random.implementation": _n("a JVM random source, OpenSSL uses its own"),
    "ssl.trustmanager.algorithm": _n("a JVM trust manager factory, OpenSSL does the standard PKIX checks"),
    "ssl.truststore.certificates": _t("inline PEM"),
    "ssl.truststore.location": _t("JKS, PKCS12 or PEM"),
    "ssl.truststore.password": _t("JKS, PKCS12 or PEM"),
    "ssl.truststore.type": _t("JKS, PKCS12 or PEM"),
}

#: properties that are refused whatever their value (``ssl.cipher.suites`` is taken when empty)
REFUSED_PROPERTIES = {name: p.note for name, p in ADMIN_CLIENT_PROPERTIES.items() if p.kind == REFUSED}


def is_admin_property(name: str) -> bool:
    """A property Java's admin client knows (``config.providers.<name>.*`` belong to the providers)."""
    return name in ADMIN_CLIENT_PROPERTIES or name.startswith("config.providers.")


def markdown_table() -> str:
    """The table of docs/command-line.md."""
    lines = ["| property | kreassign | how, or why |", "| --- | --- | --- |"]
    lines += [f"| `{name}` | {p.kind} | {p.note} |" for name, p in ADMIN_CLIENT_PROPERTIES.items()]
    return "\n".join(lines) + "\n"
