"""Small values used by :mod:`kreassign.planning.placement`. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.errors import CommandError


@dataclass(frozen=True)
class UsableBroker:
    """A broker the placer may use, like Kafka's ``org.apache.kafka.metadata.placement.UsableBroker``.

    ``rack`` is ``None`` for a broker without a rack, or when rack awareness is disabled.
    """

    id: int
    rack: str | None = None
    fenced: bool = False


class InvalidReplicationFactorError(CommandError):
    """Kafka's ``InvalidReplicationFactorException`` from the placer; the Apache tool prints
    ``Error: <message>`` and exits 1."""
