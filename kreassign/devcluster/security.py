"""SASL_SSL for the local cluster: a test CA, TLS key material, SCRAM users and the ACL authorizer.

``LocalKafkaCluster(..., security=ClusterSecurity())`` gives every broker a client listener
``SASL_SSL://127.0.0.1:<broker_port>`` (SCRAM-SHA-512 over TLS, certificate signed by a CA made for the
cluster, SAN ``IP:127.0.0.1`` and ``DNS:localhost``) and turns on KRaft's ``StandardAuthorizer`` with
``allow.everyone.if.no.acl.found=false``. Brokers talk to each other (listener ``INTERNAL``) and to the
controllers (listener ``CONTROLLER``) over SASL_PLAINTEXT with SASL/PLAIN as the principal ``broker``,
a super user with a random password that is never handed to clients. SCRAM credentials of ``users``
are written into the metadata at format time (``kafka-storage format --add-scram``); the users named
in ``super_users`` may do anything, the others only what ACLs allow.

The key material is made with ``openssl`` and ``keytool`` from the machine, in ``<base_dir>/tls``:
``ca.pem`` (the CA certificate, for PEM truststores) and ``truststore.jks`` / ``truststore.p12``
(the same certificate, with ``store_password``). ``client_properties`` writes the Java client
properties a user of the cluster gives to ``--command-config``.

With ``kerberos=True`` a KDC starts with the cluster (``kdc``: Apache Kerby, realm ``KREASSIGN.TEST``): the
brokers' principal is ``kafka/localhost`` and GSSAPI is enabled on the SASL_SSL listener and on a second client
listener, ``SASL_PLAINTEXT``; ``kerberos_user`` makes a client principal and its keytab. With ``oauth=True`` an
identity provider starts too (``identity``: a client credentials token endpoint signing RS256 JWTs, and its
JWKS): the ``SASL_PLAINTEXT`` listener takes OAUTHBEARER tokens checked by Kafka's own
``OAuthBearerValidatorCallbackHandler`` against that JWKS, and a third listener, ``UNSECURED``
(SASL_PLAINTEXT), takes unsecured OAUTHBEARER tokens (KIP-255). ``client_environment`` is the ``KAFKA_OPTS``
both tools need for them (the Kerberos configuration, the token endpoint allowed). Both services end with the
process that started them, like the brokers.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.devcluster.jars import HarnessError

KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
SERVICE_NAME = "kafka"
#: the identity provider's client that authenticates with JWT assertions (the jwt-bearer grant)
JWT_CLIENT = "kreassign-jwt"
#: client listeners besides SASL_SSL: name -> security protocol
EXTRA_LISTENERS = {"SASL_PLAINTEXT": "SASL_PLAINTEXT", "UNSECURED": "SASL_PLAINTEXT"}

SCRAM_MECHANISM = "SCRAM-SHA-512"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
INTERNAL_USER = "broker"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
TRUSTSTORE_TYPES = ("JKS", "PKCS12", "PEM")


def _password() -> str:
    # hex only: safe inside JAAS quotes, StorageTool's [name=..,password=..] and properties files
    return secrets.token_hex(12)


@dataclass
class ClusterSecurity:
    """What a secure local cluster needs; ``prepare`` makes the key material (once)."""

    users: Mapping[str, str] = field(default_factory=lambda: {"admin": _password()}, repr=False)
    super_users: tuple[str, ...] = ("admin",)
    store_password: str = field(default_factory=_password, repr=False)
    internal_password: str = field(default_factory=_password, repr=False)
    directory: Path | None = None
    #: a KDC and GSSAPI listeners
    kerberos: bool = False
    #: an identity provider, an OAUTHBEARER listener checked against its JWKS, and an unsecured one
    oauth: bool = False
    #: OAuth clients of the identity provider: client id -> (secret, subject)
    oauth_clients: Mapping[str, tuple[str, str]] = field(
        default_factory=lambda: {"kreassign-admin": (_password(), "admin")}, repr=False
    )
    kdc: object = field(default=None, repr=False)
    identity: object = field(default=None, repr=False)
    _kdc_ready: bool = field(default=True, init=False, repr=False)

    def extra_listeners(self) -> dict[str, str]:
        """The client listeners besides SASL_SSL (name -> protocol)."""
        names = (["SASL_PLAINTEXT"] if self.kerberos or self.oauth else []) + (["UNSECURED"] if self.oauth else [])
        return {name: EXTRA_LISTENERS[name] for name in names}

    @property
    def passwords(self) -> list[str]:
        """Every secret of the cluster (tests grep outputs for these): passwords, client secrets, tokens issued."""
        secrets_ = [*self.users.values(), self.store_password, self.internal_password]
        secrets_ += [secret for secret, _ in self.oauth_clients.values()] if self.oauth else []
        if self.identity is not None:
            secrets_ += self.identity.issued
        return secrets_

    # ------------------------------------------------------------------ services
    def start_services(self, base_dir: Path) -> None:
        """The KDC (launched: ``wait_for_services`` waits for it) and the identity provider, before the brokers,
        which need both at start."""
        from kreassign.devcluster.processes import free_port

        if self.kerberos and self.kdc is None:
            from kreassign.devcluster.kdc import KerberosKdc

            self.kdc = KerberosKdc(Path(base_dir) / "kdc", free_port()).launch()
            self._kdc_ready = False
        if self.oauth and self.identity is None:
            from kreassign.devcluster.identity import IdentityProvider

            assert self.directory is not None
            self.identity = IdentityProvider(
                self.directory, self.oauth_clients, assertion_clients=(JWT_CLIENT,)
            ).start()

    def wait_for_services(self) -> None:
        """The KDC serves and the brokers' keytab is written (before the brokers start)."""
        if self.kdc is not None and not self._kdc_ready:
            self.kdc.wait_ready()
            self.kdc.principal(f"{SERVICE_NAME}/localhost", self.kdc.directory / "broker.keytab")
            self._kdc_ready = True

    def stop_services(self) -> None:
        for service in (self.kdc, self.identity):
            if service is not None:
                service.stop()
        self.kdc = self.identity = None

    def jvm_options(self) -> list[str]:
        """System properties of the brokers' JVMs."""
        options = []
        if self.kdc is not None:
            options.append(f"-Djava.security.krb5.conf={self.kdc.krb5_conf}")
        if self.identity is not None:
            options.append(f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.identity.jwks_url}")
        return options

    def client_jvm_options(self) -> list[str]:
        """System properties a client JVM (the Apache tool) needs: the Kerberos configuration, the token endpoint."""
        options = []
        if self.kdc is not None:
            options.append(f"-Djava.security.krb5.conf={self.kdc.krb5_conf}")
        if self.identity is not None:
            options.append(f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.identity.token_url}")
            options.append(
                f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.files={self.identity.assertion_keys[JWT_CLIENT].pem}"
            )
        return options

    def client_environment(self) -> dict[str, str]:
        """``KAFKA_OPTS`` as an operator sets it for the Apache tool; kreassign reads the same."""
        return {"KAFKA_OPTS": " ".join(self.client_jvm_options())}

    # ------------------------------------------------------------------ key material
    def prepare(self, base_dir: Path) -> None:
        if self.directory is not None and (self.directory / "truststore.p12").exists():
            return
        self.directory = Path(base_dir) / "tls"
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        d = self.directory
        env = {**os.environ, "KREASSIGN_STORE_PASSWORD": self.store_password}
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        _run(["openssl", "req", "-x509", *ec, "-keyout", d / "ca.key", "-out", d / "ca.pem", "-days", "7",
              "-subj", "/CN=kreassign test CA"], env)  # fmt: skip
        _run(["openssl", "req", *ec, "-keyout", d / "broker.key", "-out", d / "broker.csr",
              "-subj", "/CN=localhost"], env)  # fmt: skip
        (d / "broker.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        _run(["openssl", "x509", "-req", "-in", d / "broker.csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key",
              "-CAcreateserial", "-days", "7", "-extfile", d / "broker.ext", "-out", d / "broker.pem"], env)  # fmt: skip
        _run(["openssl", "pkcs12", "-export", "-in", d / "broker.pem", "-inkey", d / "broker.key",
              "-certfile", d / "ca.pem", "-name", "broker", "-out", d / "broker.p12",
              "-passout", "env:KREASSIGN_STORE_PASSWORD"], env)  # fmt: skip
        for store_type, name in (("JKS", "truststore.jks"), ("PKCS12", "truststore.p12")):
            _run(["keytool", "-J-XX:TieredStopAtLevel=1", "-importcert", "-noprompt", "-alias", "ca",
                  "-file", d / "ca.pem", "-keystore", d / name, "-storetype", store_type,
                  "-storepass:env", "KREASSIGN_STORE_PASSWORD"], env)  # fmt: skip
        for path in d.iterdir():
            os.chmod(path, 0o600)

    def truststore(self, store_type: str) -> Path:
        assert self.directory is not None, "prepare() first"
        return self.directory / {"JKS": "truststore.jks", "PKCS12": "truststore.p12", "PEM": "ca.pem"}[store_type]

    # ------------------------------------------------------------------ broker side
    def format_arguments(self) -> list[str]:
        """``kafka-storage format`` arguments that create the SCRAM users."""
        args: list[str] = []
        for name, password in self.users.items():
            args += ["--add-scram", f"{SCRAM_MECHANISM}=[name={name},password={password}]"]
        return args

    def node_properties(self, *, is_broker: bool) -> dict[str, str]:
        assert self.directory is not None, "prepare() first"
        internal_jaas = (
            f'{_PLAIN_MODULE} required username="{INTERNAL_USER}" password="{self.internal_password}" '
            f'user_{INTERNAL_USER}="{self.internal_password}";'
        )
        props = {
            "authorizer.class.name": AUTHORIZER,
            "allow.everyone.if.no.acl.found": "false",
            "super.users": ";".join(f"User:{u}" for u in (INTERNAL_USER, *self.super_users)),
            "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": internal_jaas,
        }
        if is_broker:
            props.update(
                {
                    "sasl.mechanism.inter.broker.protocol": "PLAIN",
                    "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
                    "listener.name.internal.plain.sasl.jaas.config": internal_jaas,
                    "listener.name.sasl_ssl.sasl.enabled.mechanisms": SCRAM_MECHANISM,
                    f"listener.name.sasl_ssl.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": f"{_SCRAM_MODULE} required;",
                    "listener.name.sasl_ssl.ssl.keystore.type": "PKCS12",
                    "listener.name.sasl_ssl.ssl.keystore.location": str(self.directory / "broker.p12"),
                    "listener.name.sasl_ssl.ssl.keystore.password": self.store_password,
                    "listener.name.sasl_ssl.ssl.client.auth": "none",
                }
            )
            props.update(self._extra_listener_properties())
        return props

    def _extra_listener_properties(self) -> dict[str, str]:
        props: dict[str, str] = {}
        if self.kdc is not None:
            broker_jaas = (
                f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{self.kdc.directory / "broker.keytab"}" '
                f'principal="{SERVICE_NAME}/localhost@{self.kdc.realm}";'
            )
            props["sasl.kerberos.service.name"] = SERVICE_NAME
            props["listener.name.sasl_ssl.sasl.enabled.mechanisms"] = f"{SCRAM_MECHANISM},GSSAPI"
            props["listener.name.sasl_ssl.gssapi.sasl.jaas.config"] = broker_jaas
            props["listener.name.sasl_plaintext.gssapi.sasl.jaas.config"] = broker_jaas
        mechanisms = (["GSSAPI"] if self.kdc is not None else []) + (
            ["OAUTHBEARER"] if self.identity is not None else []
        )
        if mechanisms:
            props["listener.name.sasl_plaintext.sasl.enabled.mechanisms"] = ",".join(mechanisms)
        if self.identity is not None:
            props.update(
                {
                    "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": f"{OAUTH_MODULE} required;",
                    "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class": OAUTH_VALIDATOR,
                    "sasl.oauthbearer.jwks.endpoint.url": self.identity.jwks_url,
                    "sasl.oauthbearer.expected.audience": "kafka-cluster",
                    "sasl.oauthbearer.expected.issuer": self.identity.url,
                    "listener.name.unsecured.sasl.enabled.mechanisms": "OAUTHBEARER",
                    "listener.name.unsecured.oauthbearer.sasl.jaas.config": (
                        f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="{INTERNAL_USER}";'
                    ),
                }
            )
        return props

    # ------------------------------------------------------------------ client side
    def client_properties(self, user: str, truststore_type: str = "JKS", password: str | None = None) -> str:
        """Java client properties (``--command-config``) for ``user`` over SASL_SSL/SCRAM-SHA-512."""
        secret = self.users[user] if password is None else password
        lines = [
            "security.protocol=SASL_SSL",
            f"sasl.mechanism={SCRAM_MECHANISM}",
            f'sasl.jaas.config={_SCRAM_MODULE} required username="{user}" password="{secret}";',
            f"ssl.truststore.type={truststore_type}",
            f"ssl.truststore.location={self.truststore(truststore_type)}",
        ]
        if truststore_type != "PEM":
            lines.append(f"ssl.truststore.password={self.store_password}")
        return "\n".join(lines) + "\n"

    def kerberos_user(self, name: str) -> Path:
        """A client principal ``name@KREASSIGN.TEST`` and its keytab."""
        assert self.kdc is not None, "kerberos=True"
        return self.kdc.principal(name, self.kdc.directory / f"{name}.keytab")

    def kerberos_properties(
        self, name: str, *, keytab: Path | None = None, ticket_cache: bool = False, protocol: str = "SASL_PLAINTEXT"
    ) -> str:
        """``--command-config`` for a Kerberos login from a keytab or (``ticket_cache``) from ``KRB5CCNAME``."""
        assert self.kdc is not None, "kerberos=True"
        if ticket_cache:
            login = "useTicketCache=true"
        else:
            login = f'useKeyTab=true storeKey=true keyTab="{keytab}" principal="{name}@{self.kdc.realm}"'
        lines = [
            f"security.protocol={protocol}",
            "sasl.mechanism=GSSAPI",
            f"sasl.kerberos.service.name={SERVICE_NAME}",
            f"sasl.jaas.config={KRB5_MODULE} required {login};",
        ]
        if protocol == "SASL_SSL":
            lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={self.truststore('PEM')}"]
        return "\n".join(lines) + "\n"

    def oauth_properties(self, client_id: str, secret: str | None = None, token_url: str | None = None) -> str:
        """``--command-config`` for OAUTHBEARER with the client credentials of ``client_id`` (KIP-768)."""
        assert self.identity is not None, "oauth=True"
        secret = self.oauth_clients[client_id][0] if secret is None else secret
        return (
            "security.protocol=SASL_PLAINTEXT\n"
            "sasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={OAUTH_LOGIN_HANDLER}\n"
            f"sasl.oauthbearer.token.endpoint.url={token_url or self.identity.token_url}\n"
            f'sasl.jaas.config={OAUTH_MODULE} required clientId="{client_id}" clientSecret="{secret}" scope="kafka";\n'
        )

    def jwt_bearer_properties(self, subject: str) -> str:
        """``--command-config`` for the jwt-bearer grant: an assertion for ``subject`` signed with the key of the
        identity provider's assertion client (Kafka 4.1+)."""
        assert self.identity is not None, "oauth=True"
        prefix = "sasl.oauthbearer.assertion."
        return (
            "security.protocol=SASL_PLAINTEXT\n"
            "sasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={OAUTH_LOGIN_HANDLER}\n"
            "sasl.oauthbearer.jwt.retriever.class=org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever\n"
            f"sasl.oauthbearer.token.endpoint.url={self.identity.token_url}\n"
            f"{prefix}private.key.file={self.identity.assertion_keys[JWT_CLIENT].pem}\n"
            f"{prefix}claim.iss={JWT_CLIENT}\n{prefix}claim.sub={subject}\n{prefix}claim.aud={self.identity.url}\n"
            f"sasl.jaas.config={OAUTH_MODULE} required;\n"
        )

    @staticmethod
    def unsecured_properties(subject: str) -> str:
        """``--command-config`` for an unsecured OAUTHBEARER token (KIP-255)."""
        return (
            "security.protocol=SASL_PLAINTEXT\n"
            "sasl.mechanism=OAUTHBEARER\n"
            f'sasl.jaas.config={OAUTH_MODULE} required unsecuredLoginStringClaim_sub="{subject}";\n'
        )

    def librdkafka_config(self, user: str) -> dict[str, str]:
        """confluent-kafka settings for ``user`` (harness code: topics, ACLs)."""
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": SCRAM_MECHANISM,
            "sasl.username": user,
            "sasl.password": self.users[user],
            "ssl.ca.location": str(self.truststore("PEM")),
        }

    def kafka_python_config(self, user: str) -> dict[str, str]:
        return {
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": SCRAM_MECHANISM,
            "sasl_plain_username": user,
            "sasl_plain_password": self.users[user],
            "ssl_cafile": str(self.truststore("PEM")),
        }


def _run(command: list, env: Mapping[str, str]) -> None:
    if shutil.which(str(command[0])) is None:
        raise HarnessError(f"a secure cluster needs {command[0]} on PATH")
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=dict(env), timeout=120)
    if proc.returncode != 0:
        raise HarnessError(f"{command[0]} {command[1]} failed: {(proc.stdout + proc.stderr).strip()[-1500:]}")
