"""Bootstrap address checks done before any connection, with the Java admin client's outcome."""

from __future__ import annotations

import socket

from kreassign.errors import CommandError

# The Java tool wraps every bootstrap ConfigException in this KafkaException message.
FAILED_TO_CREATE_ADMIN = "Failed to create new KafkaAdminClient"


def parse_bootstrap_addresses(value: str | None) -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` as Java's ClientUtils.parseAndValidateAddresses accepts it.

    Entries are trimmed and empty ones skipped; an entry without a valid port, or a list with no
    resolvable host, fails the way Admin.create fails: ``Failed to create new KafkaAdminClient``.
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
        if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise CommandError(FAILED_TO_CREATE_ADMIN)
        addresses.append((host, int(port_text)))
    resolvable = []
    for host, port in addresses:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            continue
        resolvable.append((host, port))
    if not resolvable:
        raise CommandError(FAILED_TO_CREATE_ADMIN)
    return addresses
