"""JWT assertions of an OAuth login (Kafka 4.1+, KIP-1139 and the client assertion of KIP-1258): the jwt-bearer
grant (``JwtBearerJwtRetriever``) and client credentials with ``private_key_jwt`` instead of a secret.

An assertion is read from ``sasl.oauthbearer.assertion.file``, or made and signed here, as Kafka's
``DefaultAssertionCreator`` makes it: header ``{"alg": "RS256", "typ": "JWT"}``; claims ``iat``, ``exp``
(``sasl.oauthbearer.assertion.claim.exp.seconds`` later, 300), ``nbf`` (``...nbf.seconds`` earlier, 60), ``jti``
(a random UUID with ``...jti.include=true``), ``aud``/``iss``/``sub`` from their properties, and the ``header`` and
``payload`` of ``sasl.oauthbearer.assertion.template.file``. The key is an unencrypted PKCS #8 PEM file (``BEGIN
PRIVATE KEY``), the algorithm RS256 (RSASSA-PKCS1-v1_5 with SHA-256, computed with Python's integers: nothing
to install); ES256 and encrypted keys are refused with one line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kreassign.errors import ConfigError

_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
_RSA_OID = bytes.fromhex("2a864886f70d010101")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def der_elements(der: bytes, at: int = 0, end: int | None = None) -> list[tuple[int, bytes]]:
    """The (tag, content) elements of a DER encoding between ``at`` and ``end``."""
    end = len(der) if end is None else end
    elements = []
    while at < end:
        tag, first = der[at], der[at + 1]
        at += 2
        if first < 0x80:
            length = first
        else:
            count = first & 0x7F
            length = int.from_bytes(der[at : at + count], "big")
            at += count
        elements.append((tag, der[at : at + length]))
        at += length
    return elements


def rsa_numbers(der: bytes) -> tuple[int, int, int]:
    """(n, e, d) of an RSAPrivateKey (PKCS #1) or of the PKCS #8 PrivateKeyInfo that wraps one."""
    (tag, body), *_ = der_elements(der)
    parts = der_elements(body)
    if tag != 0x30 or not parts:
        raise ValueError("not a DER sequence")
    if len(parts) >= 3 and parts[1][0] == 0x30:  # PKCS #8: version, algorithm, the key as an octet string
        algorithm = der_elements(parts[1][1])
        if not algorithm or algorithm[0][1] != _RSA_OID:
            raise ValueError("not an RSA key")
        return rsa_numbers(parts[2][1])
    integers = [int.from_bytes(content, "big") for kind, content in parts if kind == 0x02]
    return integers[1], integers[2], integers[3]


def pem_body(text: str) -> bytes:
    return base64.b64decode("".join(line for line in text.splitlines() if line and not line.startswith("-----")))


def pkcs1_sha256(n: int, message: bytes) -> int:
    """EMSA-PKCS1-v1_5 of ``message`` with SHA-256, for a key of modulus ``n``."""
    size = (n.bit_length() + 7) // 8
    digest = _SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    return int.from_bytes(b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest, "big")


def rs256_signature(n: int, d: int, message: bytes) -> bytes:
    """RSASSA-PKCS1-v1_5 with SHA-256."""
    return pow(pkcs1_sha256(n, message), d, n).to_bytes((n.bit_length() + 7) // 8, "big")


def signed_jwt(n: int, d: int, header: Mapping[str, Any], claims: Mapping[str, Any]) -> str:
    signing_input = f"{b64url(json.dumps(dict(header)).encode())}.{b64url(json.dumps(dict(claims)).encode())}"
    return f"{signing_input}.{b64url(rs256_signature(n, d, signing_input.encode()))}"


def read_private_key(path: str) -> tuple[int, int]:
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise ConfigError(
            f"sasl.oauthbearer.assertion.private.key.file {path} cannot be read: {exc.strerror}"
        ) from None
    if "BEGIN ENCRYPTED PRIVATE KEY" in text:
        raise ConfigError(
            "sasl.oauthbearer.assertion.private.key.file: an encrypted private key is not supported by kreassign: "
            "give an unencrypted PKCS #8 key (openssl pkcs8 -topk8 -nocrypt)"
        )
    try:
        n, _e, d = rsa_numbers(pem_body(text))
        return n, d
    except (ValueError, IndexError) as exc:
        raise ConfigError(
            f"sasl.oauthbearer.assertion.private.key.file {path} is not an RSA private key in PEM ({exc})"
        ) from None


@dataclass(frozen=True)
class AssertionSettings:
    """``sasl.oauthbearer.assertion.*``."""

    file: str | None = None
    key_file: str | None = None
    algorithm: str = "RS256"
    aud: str | None = None
    iss: str | None = None
    sub: str | None = None
    exp_s: int = 300
    nbf_s: int = 60
    jti: bool = False
    template_file: str | None = None
    key: tuple[int, int] | None = field(default=None, repr=False)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> AssertionSettings | None:
        def value(name: str) -> str | None:
            raw = props.get(f"sasl.oauthbearer.assertion.{name}")
            return raw.strip() if raw is not None and raw.strip() else None

        if value("file") is None and value("claim.iss") is None and value("private.key.file") is None:
            return None
        if value("private.key.passphrase") is not None:
            raise ConfigError(
                "sasl.oauthbearer.assertion.private.key.passphrase: an encrypted private key is not supported by "
                "kreassign: give an unencrypted PKCS #8 key"
            )
        algorithm = (value("algorithm") or "RS256").upper()
        if algorithm != "RS256":
            raise ConfigError(
                f"sasl.oauthbearer.assertion.algorithm {algorithm} is not supported by kreassign: use RS256"
            )
        settings = cls(
            file=value("file"),
            key_file=value("private.key.file"),
            algorithm=algorithm,
            aud=value("claim.aud"),
            iss=value("claim.iss"),
            sub=value("claim.sub"),
            exp_s=_seconds(value("claim.exp.seconds"), 300, "claim.exp.seconds"),
            nbf_s=_seconds(value("claim.nbf.seconds"), 60, "claim.nbf.seconds"),
            jti=(value("claim.jti.include") or "false").lower() == "true",
            template_file=value("template.file"),
        )
        if settings.file is None:
            if settings.key_file is None:
                raise ConfigError(
                    "The OAuth configuration option sasl.oauthbearer.assertion.private.key.file is required"
                )
            return AssertionSettings(**{**settings.__dict__, "key": read_private_key(settings.key_file)})
        return settings

    def assertion(self) -> str:
        """The assertion to send: the file's, or a new one signed with the private key."""
        if self.file is not None:
            try:
                return Path(self.file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(
                    f"sasl.oauthbearer.assertion.file {self.file} cannot be read: {exc.strerror}"
                ) from None
        assert self.key is not None
        header: dict[str, Any] = {}
        payload: dict[str, Any] = {}
        if self.template_file is not None:
            try:
                template = json.loads(Path(self.template_file).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"sasl.oauthbearer.assertion.template.file {self.template_file}: {exc}") from None
            header.update(template.get("header") or {})
            payload.update(template.get("payload") or {})
        payload.update({k: v for k, v in (("aud", self.aud), ("iss", self.iss), ("sub", self.sub)) if v is not None})
        now = int(time.time())
        payload.update({"iat": now, "exp": now + self.exp_s, "nbf": now - self.nbf_s})
        if self.jti:
            payload["jti"] = str(uuid.uuid4())
        header.update({"alg": self.algorithm, "typ": "JWT"})
        return signed_jwt(*self.key, header, payload)


def _seconds(raw: str | None, default: int, name: str) -> int:
    if raw is None:
        return default
    if not raw.lstrip("+-").isdigit():
        raise ConfigError(
            f"Invalid value {raw} for configuration sasl.oauthbearer.assertion.{name}: Not a number of type INT"
        )
    return int(raw)
