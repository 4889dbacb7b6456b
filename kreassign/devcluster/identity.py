"""A local OAuth 2 identity provider for the secure test cluster: a client credentials token endpoint that signs
real RS256 JWTs, and the JWKS endpoint Kafka's own broker validator (``OAuthBearerValidatorCallbackHandler``)
checks them against.

``POST /token`` takes ``grant_type=client_credentials`` with HTTP Basic authentication (``client_id:secret``),
as Kafka's ``OAuthBearerLoginCallbackHandler`` sends it, and answers ``{"access_token": <JWT>, "token_type":
"Bearer", "expires_in": ...}``; a wrong secret gets 401 ``invalid_client``. ``GET /jwks`` gives the public key.
The key is made with ``openssl``; tokens are signed here (RSASSA-PKCS1-v1_5 with SHA-256, computed with Python's
integers). It serves from a daemon thread of the process that started it, so it ends with that process.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from kreassign.devcluster.jars import HarnessError

AUDIENCE = "kafka-cluster"
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def _der_integers(der: bytes) -> list[int]:
    """The INTEGERs of a DER SEQUENCE of INTEGERs (an RSAPrivateKey, PKCS #1)."""

    def length(at: int) -> tuple[int, int]:
        first = der[at]
        if first < 0x80:
            return first, at + 1
        count = first & 0x7F
        return int.from_bytes(der[at + 1 : at + 1 + count], "big"), at + 1 + count

    if der[0] != 0x30:
        raise HarnessError("not a DER sequence")
    _, at = length(1)
    values = []
    while at < len(der):
        if der[at] != 0x02:
            raise HarnessError("not a DER integer")
        size, at = length(at + 1)
        values.append(int.from_bytes(der[at : at + size], "big"))
        at += size
    return values


class RsaKey:
    """A 2048-bit RSA key made by ``openssl``, with RS256 signatures."""

    def __init__(self, directory: Path) -> None:
        pem = directory / "idp-key.pem"
        for command in (
            ["openssl", "genrsa", "-out", str(pem), "2048"],
            ["openssl", "rsa", "-in", str(pem), "-outform", "DER", "-traditional", "-out", str(pem) + ".der"],
        ):
            proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
            if proc.returncode != 0:
                raise HarnessError(f"openssl failed: {proc.stderr.strip()[-500:]}")
        integers = _der_integers(Path(str(pem) + ".der").read_bytes())
        self.n, self.e, self.d = integers[1], integers[2], integers[3]
        self.size = (self.n.bit_length() + 7) // 8
        self.kid = _b64url(hashlib.sha256(_int_bytes(self.n)).digest()[:12])

    def sign(self, message: bytes) -> bytes:
        digest = _SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
        encoded = b"\x00\x01" + b"\xff" * (self.size - len(digest) - 3) + b"\x00" + digest
        return pow(int.from_bytes(encoded, "big"), self.d, self.n).to_bytes(self.size, "big")

    def jwk(self) -> dict[str, str]:
        return {
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "kid": self.kid,
            "n": _b64url(_int_bytes(self.n)),
            "e": _b64url(_int_bytes(self.e)),
        }

    def jwt(self, claims: Mapping[str, object]) -> str:
        header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": self.kid}).encode())
        payload = _b64url(json.dumps(dict(claims)).encode())
        signature = self.sign(f"{header}.{payload}".encode())
        return f"{header}.{payload}.{_b64url(signature)}"


class IdentityProvider:
    """``clients``: client id -> (secret, subject of its tokens)."""

    def __init__(self, directory: Path, clients: Mapping[str, tuple[str, str]], lifetime_s: int = 3600) -> None:
        self.key = RsaKey(directory)
        self.clients = dict(clients)
        self.lifetime_s = lifetime_s
        self.issued: list[str] = []
        self.requests = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def start(self) -> IdentityProvider:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                return

            def _answer(self, code: int, body: Mapping[str, object]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/jwks":
                    self._answer(200, {"keys": [provider.key.jwk()]})
                else:
                    self._answer(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                provider.requests += 1
                if self.path != "/token" or form.get("grant_type") != ["client_credentials"]:
                    self._answer(
                        400, {"error": "unsupported_grant_type", "error_description": "client_credentials only"}
                    )
                    return
                client = provider.authenticated(self.headers.get("Authorization", ""))
                if client is None:
                    self._answer(401, {"error": "invalid_client", "error_description": "Invalid client credentials"})
                    return
                token = provider.token(client, form.get("scope", [""])[0])
                self._answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": provider.lifetime_s})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="identity-provider", daemon=True).start()
        return self

    def authenticated(self, header: str) -> str | None:
        if not header.startswith("Basic "):
            return None
        try:
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return None
        known = self.clients.get(client_id)
        return client_id if known is not None and known[0] == secret else None

    def token(self, client_id: str, scope: str = "") -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": self.clients[client_id][1],
            "iat": now,
            "exp": now + self.lifetime_s,
        }
        if scope:
            claims["scope"] = scope
        token = self.key.jwt(claims)
        self.issued.append(token)
        return token

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
