"""What brokers of older Kafka releases lack, and what the adapter does in its place: the one home of the
per-release differences of the Kafka adapter (docs/broker-matrix.md has the table of releases and flows).

The adapter never asks a broker for its version: each difference shows in the answer itself (a field
the request version does not carry, a request version the broker does not serve), and is read here.

* DescribeLogDirs v4 (KIP-827, Kafka 3.3) added the total and usable bytes of each log dir's volume:
  older brokers leave them out, so their capacity is unknown (:func:`volume_bytes`).
* DescribeLogDirs v5 (KIP-1066, Kafka 4.3) added ``IsCordoned``: older brokers cordon no dir
  (:func:`is_cordoned`).
* AlterPartitionReassignments v1 (KIP-860) carries ``AllowReplicationFactorChange``: a broker without it
  refuses the option with Java's text (:func:`replication_factor_change_refused`).
* Kafka 2.4 brokers leave the throttle rates out of DescribeConfigs. The batched run's throttle watch
  (``kreassign.execution.watch``, which sees the cluster through the ``ClusterPort`` only) notices it,
  tells it once on stderr, and watches the topic throttles only.
"""

from __future__ import annotations

from typing import Any

from kreassign.errors import ClusterError, PartitionError

RF_CHANGE_UNSUPPORTED = (
    "The broker does not support the AllowReplicationFactorChange option for the "
    "AlterPartitionReassignments API. Consider re-sending the request without the option or updating "
    "the server version"
)


def volume_bytes(log_dir: Any) -> tuple[int | None, int | None]:
    """The total and usable bytes of a DescribeLogDirs result's volume; None for each one the broker did not
    report (before Kafka 3.3, or -1 for a dir it could not measure)."""
    total = getattr(log_dir, "total_bytes", -1)
    usable = getattr(log_dir, "usable_bytes", -1)
    return (
        None if total is None or total < 0 else total,
        None if usable is None or usable < 0 else usable,
    )


def is_cordoned(log_dir: Any) -> bool:
    """Whether a DescribeLogDirs result's dir is cordoned (never, before Kafka 4.3)."""
    return bool(getattr(log_dir, "is_cordoned", False))


def replication_factor_change_refused(failure: ClusterError) -> PartitionError | None:
    """The partition error of an AlterPartitionReassignments with ``AllowReplicationFactorChange=false``
    that failed because the broker has no version of the request carrying it; None for any other failure."""
    import kafka.errors as errors

    if isinstance(failure.__cause__, errors.IncompatibleBrokerVersion):
        return PartitionError(RF_CHANGE_UNSUPPORTED, "UnsupportedVersionException")
    return None
