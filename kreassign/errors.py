"""Typed errors. Core code raises these; only ``kreassign.cli`` turns them into output and exit codes.

Each error knows how the Apache tool would report it, so that stdout stays identical:

* ``UsageError``: the Apache tool prints the message (and its usage text) on stderr and exits 1.
* ``CommandError``: the Apache tool prints ``Error: <message>`` on stdout (plus a Java stack trace,
  which we never print) and exits 1.
* ``TerseError``: the Apache tool prints just ``<message>`` on stdout and exits 1.
"""

from __future__ import annotations


class KreassignError(Exception):
    """Base class. The command exits with status 1 after any of them (``kreassign.cli.exit_codes``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class UsageError(KreassignError):
    """Bad command line: message on stderr, exit 1 (the Apache tool also prints its usage)."""


class CommandError(KreassignError):
    """A failed action, reported as ``Error: <message>`` on stdout."""


class TerseError(KreassignError):
    """A failed action reported with its bare message on stdout (Apache's TerseException)."""


class ZooKeeperUsageError(UsageError):
    """A command line the deprecated ``--zookeeper`` path refuses. One line on stderr, exit 1, nothing
    done (Kafka 2.8 died with such messages as uncaught exceptions, without its usage text)."""


class InvalidJsonError(CommandError):
    """Input JSON that cannot be parsed or has the wrong shape."""


class ClusterError(CommandError):
    """The cluster refused or failed a request (unknown topic, authorization, timeout ...)."""


class ConfigError(CommandError):
    """A --command-config property that cannot be honoured."""


class UnknownTopicOrPartitionError(ClusterError):
    """Kafka's UnknownTopicOrPartitionException; the message is the Java getMessage() text."""


class AuthorizationError(ClusterError):
    """The principal lacks an ACL needed for the action."""


class TransientClusterError(ClusterError):
    """A failure Kafka calls retriable (no controller yet, leader moving, network): trying again later may work."""


class ClusterTimeoutError(TransientClusterError):
    """The cluster did not answer in time."""


TRANSIENT_JAVA_EXCEPTIONS = frozenset(
    {
        "NotControllerException",
        "NetworkException",
        "DisconnectException",
        "LeaderNotAvailableException",
        "NotLeaderOrFollowerException",
        "BrokerNotAvailableException",
        "ReplicaNotAvailableException",
        "RequestTimedOutException",
        "ThrottlingQuotaExceededException",
        "CoordinatorLoadInProgressException",
        "NotCoordinatorException",
        "CoordinatorNotAvailableException",
    }
)
"""Java exceptions of the RetriableException family that a long-running batched run waits out."""


class PartitionError(str):
    """One partition's failure in a call made for many (alterPartitionReassignments, electLeaders): the text
    is Java's ``getMessage()`` (what the Apache tool prints); ``exception`` is the simple name of the Java
    exception class ("" when the client failed without one); ``transient`` says whether trying again later
    may work (a retriable exception, or the whole call failing in a way worth retrying).

    A ``str``, so it prints and compares as the message; callers decide on the two fields, never on the text."""

    exception: str
    transient: bool

    def __new__(cls, message: str, exception: str = "", transient: bool | None = None) -> PartitionError:
        self = super().__new__(cls, message)
        self.exception = exception
        self.transient = exception in TRANSIENT_JAVA_EXCEPTIONS if transient is None else transient
        return self

    def __reduce__(self):  # pickles (a Spark worker, a copy) with its fields
        return (PartitionError, (str(self), self.exception, self.transient))


def is_transient(error: BaseException | PartitionError) -> bool:
    """A failure worth retrying: a TransientClusterError, or a transient per-partition error."""
    if isinstance(error, PartitionError):
        return error.transient
    return isinstance(error, TransientClusterError)
