"""SASL/GSSAPI (Kerberos) as the Java client does it, over the GSS-API binding (``gssapi_binding``).

The login is Java's ``Krb5LoginModule`` line of ``sasl.jaas.config`` (or the ``KafkaClient`` section of the
JAAS file named by ``-Djava.security.auth.login.config`` in ``KAFKA_OPTS``): ``useKeyTab=true keyTab=...
principal=...`` logs in from a keytab, into a private in-memory ticket cache (the user's own cache is never
touched); ``useTicketCache=true`` reads the ticket cache (``ticketCache=...``, else ``KRB5CCNAME``, else the
default), falling back to the keytab when both are set, as Java does. The Kerberos configuration is Java's:
``-Djava.security.krb5.conf`` in ``KAFKA_OPTS`` if set, else ``KRB5_CONFIG``, else ``/etc/krb5.conf``.

The brokers' principal is ``<sasl.kerberos.service.name>/<host>``, where ``host`` is the broker's host name as
Java gets it (an address is looked up in reverse, like ``InetAddress.getHostName``). librdkafka's wheel has
no GSSAPI, so with this mechanism every call of the adapter goes through kafka-python, whose ``GSSAPI``
mechanism is replaced by :class:`KerberosSasl` (kafka-python's own needs the ``gssapi`` package, which must
be compiled).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kreassign.errors import ConfigError

KRB5_LOGIN_MODULES = ("com.sun.security.auth.module.Krb5LoginModule", "com.ibm.security.auth.module.Krb5LoginModule")
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"


def _true(options: Mapping[str, str], name: str) -> bool:
    return options.get(name, "false").strip().lower() == "true"


@dataclass(frozen=True)
class KerberosLogin:
    """Who logs in, from where, to which service."""

    service_name: str
    principal: str | None
    keytab: str | None
    use_ticket_cache: bool
    ticket_cache: str | None
    krb5_conf: str | None

    @classmethod
    def from_jaas(cls, options: Mapping[str, str], service_name: str | None, krb5_conf: str | None) -> KerberosLogin:
        use_keytab = _true(options, "useKeyTab")
        use_cache = _true(options, "useTicketCache")
        if not use_keytab and not use_cache:
            raise ConfigError(
                "sasl.jaas.config: Krb5LoginModule without useKeyTab=true or useTicketCache=true asks for a password, "
                "which neither the Apache tool nor kreassign can give: use a keytab or the ticket cache"
            )
        keytab = options.get("keyTab") if use_keytab else None
        if use_keytab and not keytab:
            raise ConfigError("sasl.jaas.config: useKeyTab=true needs keyTab=<path of the keytab>")
        principal = options.get("principal")
        if use_keytab and not use_cache and not principal:
            raise ConfigError("sasl.jaas.config: useKeyTab=true needs principal=<user@REALM>")
        if not service_name or not service_name.strip():
            raise ConfigError(
                "Failed to create SaslClient with mechanism GSSAPI: No serviceName defined in either JAAS or Kafka "
                "config (set sasl.kerberos.service.name, e.g. kafka)"
            )
        return cls(
            service_name=service_name.strip(),
            principal=principal.strip() if principal else None,
            keytab=keytab,
            use_ticket_cache=use_cache,
            ticket_cache=options.get("ticketCache"),
            krb5_conf=krb5_conf,
        )

    def apply_krb5_conf(self) -> None:
        """Java reads ``java.security.krb5.conf``; the MIT library reads ``KRB5_CONFIG`` when it starts a context."""
        if self.krb5_conf:
            os.environ["KRB5_CONFIG"] = self.krb5_conf

    def credentials(self) -> Any:
        """Log in (as Java does when it makes its admin client); a failure reads as Java's."""
        from kreassign.cluster.gssapi_binding import GssCredentials, GssError, load_gssapi_library

        load_gssapi_library()
        self.apply_krb5_conf()
        attempts: list[tuple[str, dict[str, str]]] = []
        if self.use_ticket_cache:
            cache = self.ticket_cache or os.environ.get("KRB5CCNAME")
            attempts.append(("the ticket cache " + (cache or "(the default)"), {"ccache": cache} if cache else {}))
        if self.keytab:
            private_cache = f"MEMORY:kreassign-{os.getpid()}-{id(self)}"
            attempts.append((f"the keytab {self.keytab}", {"client_keytab": self.keytab, "ccache": private_cache}))
        failures = []
        for where, store in attempts:
            if "client_keytab" in store:
                problem = _keytab_problem(self.keytab or "")
                if problem:
                    failures.append(f"{where}: {problem}")
                    continue
            try:
                credentials = GssCredentials(self.principal, store)
                credentials.principal()
                return credentials
            except GssError as exc:
                failures.append(f"{where}: {exc}")
        error = ConfigError(FAILED_TO_CREATE_ADMIN)
        who = self.principal or "the ticket cache's principal"
        error.add_note(f"The Kerberos login of {who} failed: " + "; ".join(failures) + ".")
        error.add_note(
            "Check keyTab and principal (or useTicketCache and KRB5CCNAME: kinit first) in sasl.jaas.config, and "
            "the Kerberos configuration (-Djava.security.krb5.conf in KAFKA_OPTS, KRB5_CONFIG or /etc/krb5.conf)."
        )
        raise error


def _keytab_problem(path: str) -> str | None:
    """What is wrong with a keytab file before the library reads it (MIT's own message for these is "No
    credentials cache found")."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(2)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if head not in (b"\x05\x01", b"\x05\x02"):
        return "not a keytab (a Kerberos keytab file starts with the bytes 05 01 or 05 02)"
    return None


def java_host_name(host: str) -> str:
    """``InetAddress.getHostName()`` of a connection to ``host``: a name stays as given; an address is looked up
    in reverse, kept only if the name resolves back to it (else the address itself)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    try:
        name = socket.gethostbyaddr(str(address))[0]
        forward = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        return str(address)
    return name if str(address) in forward else str(address)


class KerberosSasl:
    """kafka-python's SASL mechanism interface (``kafka.net.sasl.abc.SaslMechanism``) for GSSAPI, RFC 4752:
    context tokens until the context is complete, then the server's wrapped security layer offer is answered
    with "no security layer", the server's maximum size and no authorization id (Java sends none)."""

    def __init__(self, **config: Any) -> None:
        from kreassign.cluster.gssapi_binding import GssContext

        login = config.get("sasl_kerberos_name")
        if not isinstance(login, KerberosSession):
            raise ConfigError("GSSAPI: kreassign's Kerberos login is missing")
        self.session = login
        self.target = f"{login.login.service_name}@{java_host_name(config['host'])}"
        self.context = GssContext(login.credentials, self.target)
        self._next = self.context.step(None)
        self._done = False
        self._authenticated = False

    def auth_bytes(self) -> bytes:
        if self._authenticated:
            self._done = True
        return self._next or b""

    def receive(self, auth_bytes: bytes) -> None:
        if not self.context.complete:
            self._next = self.context.step(auth_bytes)
            return
        if self._done:
            return
        offer = self.context.unwrap(auth_bytes)
        if len(offer) != 4:
            raise ValueError("GSSAPI: the broker's security layer offer is not 4 bytes")
        if not offer[0] & 1:
            raise ValueError("GSSAPI: the broker offers no 'no security layer' option")
        self._next = self.context.wrap(bytes([1]) + offer[1:4])
        self._authenticated = True

    def is_done(self) -> bool:
        return self._done

    def is_authenticated(self) -> bool:
        return self._authenticated

    def auth_details(self) -> str:
        return f"Authenticated via SASL / GSSAPI to {self.target}"


class KerberosSession:
    """One run's Kerberos login (credentials acquired once), handed to kafka-python as ``sasl_kerberos_name``."""

    def __init__(self, login: KerberosLogin) -> None:
        self.login = login
        self.credentials = login.credentials()

    def __repr__(self) -> str:
        return f"KerberosSession({self.login.principal!r}, service={self.login.service_name!r})"


def register_kerberos_mechanism() -> None:
    """kafka-python's ``GSSAPI`` mechanism becomes :class:`KerberosSasl` (its own needs the ``gssapi`` package)."""
    from kafka.net.sasl import register_sasl_mechanism
    from kafka.net.sasl.abc import SaslMechanism

    class Mechanism(KerberosSasl, SaslMechanism):
        pass

    register_sasl_mechanism("GSSAPI", Mechanism, overwrite=True)
