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

from kreassign.cluster.jwt_assertions import b64url, pem_body, pkcs1_sha256, rsa_numbers, signed_jwt
from kreassign.devcluster.jars import HarnessError

AUDIENCE = "kafka-cluster"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


class RsaKey:
    """A 2048-bit RSA key made by ``openssl``, with RS256 signatures."""

    def __init__(self, directory: Path, name: str = "idp-key") -> None:
        self.pem = directory / f"{name}.pem"  # PKCS #8, as OpenSSL 3 writes it
        proc = subprocess.run(["openssl", "genrsa", "-out", str(self.pem), "2048"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise HarnessError(f"openssl failed: {proc.stderr.strip()[-500:]}")
        self.n, self.e, self.d = rsa_numbers(pem_body(self.pem.read_text()))
        self.kid = b64url(hashlib.sha256(_int_bytes(self.n)).digest()[:12])

    def jwk(self) -> dict[str, str]:
        return {
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "kid": self.kid,
            "n": b64url(_int_bytes(self.n)),
            "e": b64url(_int_bytes(self.e)),
        }

    def jwt(self, claims: Mapping[str, object]) -> str:
        return signed_jwt(self.n, self.d, {"alg": "RS256", "typ": "JWT", "kid": self.kid}, claims)

    def verifies(self, token: str) -> bool:
        """Whether ``token`` is an RS256 JWT signed with this key (checked with the public key)."""
        try:
            head, payload, signature = token.split(".")
            given = int.from_bytes(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)), "big")
        except ValueError:
            return False
        return pow(given, self.e, self.n) == pkcs1_sha256(self.n, f"{head}.{payload}".encode())


class IdentityProvider:
    """``clients``: client id -> (secret, subject of its tokens). ``assertion_clients`` (names): clients that
    authenticate with JWT assertions signed by a key of their own (``assertion_keys[name]``, made here), for the
    client credentials grant with ``client_assertion`` and for the jwt-bearer grant (the assertion's ``iss``);
    their tokens' subject is the assertion's ``sub``."""

    def __init__(
        self,
        directory: Path,
        clients: Mapping[str, tuple[str, str]],
        lifetime_s: int = 3600,
        assertion_clients: tuple[str, ...] = (),
    ) -> None:
        self.key = RsaKey(directory)
        self.assertion_keys = {name: RsaKey(directory, f"client-{name}") for name in assertion_clients}
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
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                provider.requests += 1
                if self.path != "/token":
                    self._answer(404, {"error": "not_found"})
                    return
                if form.get("grant_type") == JWT_BEARER:
                    subject = provider.asserted(form.get("assertion", ""))
                elif form.get("grant_type") == "client_credentials" and "client_assertion" in form:
                    ok = form.get("client_assertion_type") == CLIENT_ASSERTION
                    subject = provider.asserted(form["client_assertion"]) if ok else None
                elif form.get("grant_type") == "client_credentials":
                    client = provider.authenticated(self.headers.get("Authorization", ""))
                    subject = None if client is None else provider.clients[client][1]
                else:
                    self._answer(400, {"error": "unsupported_grant_type", "error_description": "not supported"})
                    return
                if subject is None:
                    self._answer(401, {"error": "invalid_client", "error_description": "Invalid client credentials"})
                    return
                token = provider.token(subject, form.get("scope", ""))
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

    def asserted(self, assertion: str) -> str | None:
        """The subject of a JWT assertion signed by a known client's key (its ``iss``), unexpired; else None."""
        try:
            claims = json.loads(base64.urlsafe_b64decode(assertion.split(".")[1] + "=="))
        except (ValueError, IndexError):
            return None
        key = self.assertion_keys.get(claims.get("iss", ""))
        if key is None or not key.verifies(assertion) or claims.get("exp", 0) < time.time():
            return None
        return claims.get("sub")

    def token(self, subject: str, scope: str = "") -> str:
        """A token for ``subject`` (a client id of ``clients`` stands for its subject)."""
        subject = self.clients[subject][1] if subject in self.clients else subject
        now = int(time.time())
        claims = {"iss": self.url, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + self.lifetime_s}
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
