"""Bootstrap address checks done before any connection, with the Java admin client's outcome."""

from __future__ import annotations

import socket

from kreassign.errors import CommandError

# The Java tool wraps every bootstrap ConfigException in this KafkaException message.
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"


def parse_bootstrap_addresses(value: str | None, option: str = "--bootstrap-server") -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` as Java's ClientUtils.parseAndValidateAddresses accepts it.

    Entries are trimmed and empty ones skipped; an entry without a valid port, or a list with no
    resolvable host, fails the way Admin.create fails: ``Failed to create new KafkaAdminClient``, with a
    note that names the entry of ``option`` and what is wrong with it.
    """
    if value is None:
        raise CommandError(FAILED_TO_CREATE_ADMIN)
    addresses = []
    for entry in value.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, sep, port_text = entry.rpartition(":")
        host = host.strip("[]")
        if not sep or not host:
            raise _failed(f"{option} entry '{entry}' has no port: write host:port (e.g. {entry}:9092).")
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise _failed(f"{option} entry '{entry}' has no valid port ('{port_text}'): write host:port.")
        addresses.append((host, int(port_text)))
    resolvable = []
    unresolved = []
    for host, port in addresses:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            unresolved.append(f"'{host}' ({exc.strerror or exc})" if isinstance(exc, socket.gaierror) else f"'{host}'")
            continue
        resolvable.append((host, port))
    if not resolvable:
        if not addresses:
            raise _failed(f"{option} '{value}' names no host:port.")
        raise _failed(
            f"No host of {option} {value} resolves: {', '.join(unresolved)}. Check the host name "
            "(a typo, a name only known inside the cluster's network, DNS)."
        )
    return addresses


def _failed(note: str) -> CommandError:
    error = CommandError(FAILED_TO_CREATE_ADMIN)
    error.add_note(note)
    return error


def refused_everywhere(addresses: list[tuple[str, int]], timeout_s: float = 1.0) -> bool:
    """Whether every address actively refuses a TCP connection (nothing listens there). An address that
    accepts, times out (a firewall drops) or does not resolve counts as maybe reachable: False."""
    if not addresses:
        return False
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return False
        except ConnectionRefusedError:
            continue
        except OSError:
            return False
    return True
