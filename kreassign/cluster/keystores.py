"""Java keystores and truststores (JKS, PKCS12, PEM) as the two OpenSSL-based clients need them.

JKS and PKCS12 stores are converted with ``keytool``/``openssl`` into a private temporary folder (mode
0700, files 0600) removed when the ``StoreFiles`` object goes away. Passwords reach those commands
through environment variables, never their command lines, and never appear in messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kreassign.errors import ConfigError

# keytool is a short-lived JVM: skip the optimizing compiler, English output for parsing.
_KEYTOOL_JVM_OPTIONS = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Duser.language=en")


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


def _pem_blocks(text: str) -> str:
    """The certificates of an ``openssl``/``keytool`` listing, without their attribute lines."""
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", text, re.S)
    return "".join(block + "\n" for block in blocks)


class StoreFiles:
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
