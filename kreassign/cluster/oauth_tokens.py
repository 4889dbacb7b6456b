"""SASL/OAUTHBEARER tokens for both Kafka clients, from one source per run.

The sources are those of the Java client:

* unsecured tokens (KIP-255, ``OAuthBearerUnsecuredLoginCallbackHandler``, the default): an ``alg: none`` JWT
  built from the ``unsecuredLogin*`` options of ``sasl.jaas.config``;
* an OAuth 2 token endpoint (KIP-768, ``OAuthBearerLoginCallbackHandler``): the client credentials grant with
  ``clientId``/``clientSecret``/``scope`` (JAAS options, or the ``sasl.oauthbearer.client.credentials.*`` and
  ``sasl.oauthbearer.scope`` properties, which win), Basic authentication, retried with the
  ``sasl.login.retry.backoff.*`` backoff; or a ``file:`` URL that holds the token;
* AWS MSK IAM (``aws_iam``): a signed URL from the AWS signer library.

A token is fetched when the adapter makes its first client (as Java logs in when it makes its admin
client: a failure there is ``Failed to create new KafkaAdminClient``, with a note that names what to check),
and again when the refresh time passes (``sasl.login.refresh.*``, Java's rule: 80 % of the lifetime, never
later than the buffer before expiry). librdkafka gets it through ``oauth_cb``, kafka-python through a token
provider; every token fetched is a secret of the run, scrubbed from what kreassign prints.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kreassign.errors import ConfigError

UNSECURED_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)
LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True)
class Token:
    value: str = field(repr=False)
    expires_at: float  # seconds since the epoch
    principal: str
    extensions: Mapping[str, str] = field(default_factory=dict)


class TokenSource:
    """A token, fetched on first use and again at its refresh time; thread-safe (librdkafka calls ``oauth_cb``
    from its own thread)."""

    what = "OAuth token"

    def __init__(self, refresh: Mapping[str, float] | None = None) -> None:
        self._lock = threading.Lock()
        self._token: Token | None = None
        self._refresh_at = 0.0
        self._issued: list[str] = []
        refresh = refresh or {}
        self._factor = refresh.get("window.factor", 0.8)
        self._buffer_s = refresh.get("buffer.seconds", 300)
        self._min_period_s = refresh.get("min.period.seconds", 60)

    def token(self) -> Token:
        with self._lock:
            now = time.time()
            if self._token is None or now >= self._refresh_at:
                token = self._fetch()
                self._issued.append(token.value)
                self._token = token
                self._refresh_at = self._refresh_time(now, token.expires_at)
            return self._token

    def _refresh_time(self, now: float, expires_at: float) -> float:
        lifetime = max(expires_at - now, 0.0)
        at = now + lifetime * self._factor
        if expires_at - at < self._buffer_s:  # Java keeps the buffer where the lifetime allows it
            at = max(now + self._min_period_s, expires_at - self._buffer_s) if lifetime > self._buffer_s else at
        return min(at, expires_at - 1)

    def _fetch(self) -> Token:
        raise NotImplementedError

    def secrets(self) -> list[str]:
        """Every token handed out so far (and whatever secrets the source holds)."""
        return list(self._issued)

    # ------------------------------------------------------------------------------- for the two clients
    def librdkafka_callback(self) -> Callable[[Any], tuple[str, float, str, dict[str, str]]]:
        """confluent-kafka's ``oauth_cb``: (token, expiry in epoch seconds, principal, extensions)."""

        def oauth_cb(_config: Any) -> tuple[str, float, str, dict[str, str]]:
            token = self.token()
            return token.value, token.expires_at, token.principal, dict(token.extensions)

        return oauth_cb

    def kafka_python_provider(self) -> Any:
        from kafka.net.sasl.oauth import AbstractTokenProvider

        source = self

        class Provider(AbstractTokenProvider):
            def token(self) -> str:
                return source.token().value

            def extensions(self) -> dict[str, str]:
                return dict(source.token().extensions)

        return Provider()


def login_failure(detail: str, hint: str) -> ConfigError:
    """Java logs in while it makes its admin client: any failure reads ``Failed to create new KafkaAdminClient``."""
    error = ConfigError(FAILED_TO_CREATE_ADMIN)
    error.add_note(detail)
    error.add_note(hint)
    return error


# ----------------------------------------------------------------------------------------- JWT helpers
def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwt_claims(token: str) -> dict[str, Any]:
    """The payload of a compact JWS (not verified: the brokers verify it)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError(f"a JWT has 3 parts separated by '.', this one has {len(parts)}")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"its payload is not base64url JSON ({exc.__class__.__name__})") from None
    if not isinstance(claims, dict):
        raise ValueError("its payload is not a JSON object")
    return claims


def validated_token(value: str, sub_claim: str = "sub") -> Token:
    """``ClientJwtValidator``: a JWT whose ``exp`` is a number and whose subject claim is a non-blank string."""
    try:
        claims = jwt_claims(value.strip())
    except ValueError as exc:
        raise ValueError(f"Could not validate the access token: {exc}") from None
    expires = claims.get("exp")
    subject = claims.get(sub_claim)
    if not isinstance(expires, int | float) or isinstance(expires, bool):
        raise ValueError("Could not validate the access token: the exp claim is missing or not a number")
    if not isinstance(subject, str) or not subject.strip():
        raise ValueError(f"Could not validate the access token: the {sub_claim} claim is missing or empty")
    return Token(value.strip(), float(expires), subject.strip())


# ----------------------------------------------------------------------------------------- unsecured
class UnsecuredTokens(TokenSource):
    """KIP-255: ``header.payload.`` with ``{"alg":"none"}``, the claims of the ``unsecuredLogin*`` options."""

    what = "unsecured OAUTHBEARER token"

    def __init__(self, options: Mapping[str, str], refresh: Mapping[str, float] | None = None) -> None:
        super().__init__(refresh)
        self.options = dict(options)
        if not self.options or all(k.startswith("unsecuredLoginExtension_") for k in self.options):
            raise ConfigError(
                "sasl.jaas.config gives no unsecuredLoginStringClaim_sub (or other claim) for an unsecured "
                "OAUTHBEARER token"
            )
        self.principal_claim = (self.options.get("unsecuredLoginPrincipalClaimName") or "sub").strip()
        lifetime = self.options.get("unsecuredLoginLifetimeSeconds", "3600").strip()
        try:
            self.lifetime_s = int(lifetime)
        except ValueError:
            raise ConfigError(f'For input string: "{lifetime}"') from None
        self.claims: dict[str, Any] = {}
        for key, value in self.options.items():
            for prefix, convert in (
                ("unsecuredLoginStringClaim_", str),
                ("unsecuredLoginNumberClaim_", _number),
                ("unsecuredLoginListClaim_", _list_claim),
            ):
                if key.startswith(prefix) and len(key) > len(prefix):
                    name = key[len(prefix) :]
                    if name in ("iat", "exp"):
                        raise ConfigError(f"Cannot explicitly set the '{name}' claim")
                    self.claims[name] = convert(value)
        principal = self.claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise ConfigError(f"Required claim missing: {self.principal_claim}")
        self.extensions = {
            k[len("unsecuredLoginExtension_") :]: v
            for k, v in self.options.items()
            if k.startswith("unsecuredLoginExtension_")
        }

    def _fetch(self) -> Token:
        now = time.time()
        claims = {"exp": now + self.lifetime_s, "iat": now, **self.claims}
        header = _b64url(b'{"alg":"none"}')
        payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
        return Token(f"{header}.{payload}.", claims["exp"], self.claims[self.principal_claim], self.extensions)


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f'For input string: "{value}"') from None


def _list_claim(value: str) -> list[str]:
    """The first character is the delimiter: ``,a,b`` is ``["a", "b"]``."""
    if len(value) <= 1:
        return []
    return [item for item in value[1:].split(value[0]) if item]


# ----------------------------------------------------------------------------------------- token endpoint
@dataclass(frozen=True)
class EndpointSettings:
    url: str
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scope: str | None = None
    urlencode_header: bool = False
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 10.0
    retry_backoff_s: float = 0.1
    retry_backoff_max_s: float = 10.0
    sub_claim: str = "sub"
    extensions: Mapping[str, str] = field(default_factory=dict)
    cafile: str | None = None
    #: ``jwt-bearer`` (KIP-1139's JwtBearerJwtRetriever) or ``client_credentials``
    grant: str = "client_credentials"
    #: the JWT assertion (jwt_assertions.AssertionSettings): the jwt-bearer grant's, or a client assertion
    assertion: Any = None


class EndpointTokens(TokenSource):
    """The client credentials grant against ``sasl.oauthbearer.token.endpoint.url``, or a ``file:`` token."""

    what = "OAuth token"

    def __init__(self, settings: EndpointSettings, refresh: Mapping[str, float] | None = None) -> None:
        super().__init__(refresh)
        self.settings = settings
        self._assertions: list[str] = []  # every assertion sent: credentials too

    def trust(self, cafile: str) -> None:
        """The CA certificates (PEM) an https token endpoint is checked against (the client's truststore)."""
        from dataclasses import replace

        self.settings = replace(self.settings, cafile=cafile)

    def secrets(self) -> list[str]:
        extra = [self.settings.client_secret] if self.settings.client_secret else []
        return [*extra, *self._assertions, *super().secrets()]

    def _fetch(self) -> Token:
        s = self.settings
        if s.url.lower().startswith("file:"):
            return self._from_file()
        body = self._post_with_retries()
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        value = None
        if isinstance(answer, dict):
            value = answer.get("access_token") or answer.get("id_token")
        if not isinstance(value, str) or not value.strip():
            raise login_failure(
                f"The token endpoint response did not contain a valid JWT (from {s.url}).",
                "Check sasl.oauthbearer.token.endpoint.url: it must be the identity provider's token endpoint.",
            )
        return self._checked(value)

    def _checked(self, value: str) -> Token:
        try:
            token = validated_token(value, self.settings.sub_claim)
        except ValueError as exc:
            raise login_failure(
                str(exc),
                "Check the identity provider's token: kreassign, like the Java client, needs the exp claim and "
                f"the subject claim {self.settings.sub_claim} (sasl.oauthbearer.sub.claim.name).",
            ) from None
        return Token(token.value, token.expires_at, token.principal, self.settings.extensions)

    def _from_file(self) -> Token:
        from urllib.parse import unquote, urlparse

        path = unquote(urlparse(self.settings.url).path)
        try:
            with open(path, encoding="utf-8") as handle:
                value = handle.read()
        except OSError as exc:
            raise login_failure(
                f"The token file {path} could not be read: {exc.strerror}.",
                "Check sasl.oauthbearer.token.endpoint.url (file:/path/to/token).",
            ) from None
        return self._checked(value)

    def _request(self) -> tuple[bytes, dict[str, str]]:
        from urllib.parse import quote, quote_plus

        s = self.settings
        headers = {
            "Accept": "application/json",
            "Cache-Control": "no-cache",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        scope = "&scope=" + quote(s.scope.strip(), safe="") if s.scope and s.scope.strip() else ""
        if s.assertion is not None:
            assertion = s.assertion.assertion()
            self._assertions.append(assertion)
            if s.grant == "jwt-bearer":
                body = f"grant_type={quote(JWT_BEARER_GRANT, safe='')}&assertion={assertion}{scope}"
            else:  # client credentials, authenticated by the assertion (private_key_jwt)
                body = (
                    f"client_assertion_type={quote(CLIENT_ASSERTION_TYPE, safe='')}&client_assertion={assertion}"
                    f"&grant_type=client_credentials&client_id={quote(s.client_id or '', safe='')}{scope}"
                )
            return body.encode(), headers
        if not s.client_id or not s.client_secret:
            missing = "clientId" if not s.client_id else "clientSecret"
            raise ConfigError(
                f"The OAuth configuration option {missing} value is required: set "
                f"sasl.oauthbearer.client.credentials.client.{'id' if missing == 'clientId' else 'secret'} "
                "or the JAAS option"
            )
        client_id, secret = s.client_id, s.client_secret
        if s.urlencode_header:
            client_id, secret = quote_plus(client_id), quote_plus(secret)
        basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
        return f"grant_type=client_credentials{scope}".encode(), {"Authorization": f"Basic {basic}", **headers}

    def _post_with_retries(self) -> str:
        import urllib.error

        s = self.settings
        body, headers = self._request()
        deadline_backoff = s.retry_backoff_max_s
        backoff, waited = s.retry_backoff_s, 0.0
        while True:
            try:
                return self._post(body, headers)
            except urllib.error.HTTPError as exc:
                detail = _error_text(exc)
                if 400 <= exc.code < 500:
                    raise login_failure(
                        f"The response code {exc.code} and error response {detail} was encountered reading the token "
                        f"endpoint response; will not attempt further retries",
                        "Check the client id and secret (sasl.oauthbearer.client.credentials.* or clientId/clientSecret "
                        "in sasl.jaas.config) and the scope with the identity provider.",
                    ) from None
                failure = f"The unexpected response code {exc.code} and error message {detail} was encountered"
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "reason", exc)
                failure = f"the token endpoint {s.url} could not be reached: {reason}"
            if waited >= deadline_backoff:
                raise login_failure(
                    failure[0].upper() + failure[1:] + ".",
                    f"Check sasl.oauthbearer.token.endpoint.url ({s.url}): that it is reachable from this host, "
                    "and the proxy and TLS settings.",
                )
            time.sleep(backoff)
            waited += backoff
            backoff = min(backoff * 2, s.retry_backoff_max_s)

    def _post(self, body: bytes, headers: Mapping[str, str]) -> str:
        import ssl
        import urllib.request

        s = self.settings
        request = urllib.request.Request(s.url, data=body, headers=dict(headers), method="POST")
        context = ssl.create_default_context(cafile=s.cafile) if s.url.lower().startswith("https:") else None
        # one timeout for urllib: the connect and the read timeouts are both bounds of it
        timeout = max(s.connect_timeout_s, s.read_timeout_s)
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.read().decode("utf-8", errors="replace")


def _error_text(exc: Any) -> str:
    """Java's ``formatErrorMessage``: ``{error - error_description}`` of a JSON error body, else the body."""
    try:
        raw = exc.read().decode("utf-8", errors="replace")
    except Exception:
        return "(none)"
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw[:200]
    if isinstance(parsed, dict) and ("error" in parsed or "errorCode" in parsed):
        error = parsed.get("error") or parsed.get("errorCode")
        return f"{{{json.dumps(error)} - {json.dumps(parsed.get('error_description', ''))}}}"
    return raw[:200]
