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

    @property
    def passwords(self) -> list[str]:
        """Every secret of the cluster (tests grep outputs for these)."""
        return [*self.users.values(), self.store_password, self.internal_password]

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
