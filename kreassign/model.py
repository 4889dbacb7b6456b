"""Plain immutable values shared by every layer. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field

ANY_LOG_DIR = "any"


@dataclass(frozen=True, order=True)
class TopicPartition:
    """Sorted like the Apache tool sorts: by topic name, then partition number."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class TopicPartitionReplica:
    topic: str
    partition: int
    broker_id: int

    def sort_key(self) -> tuple[int, str, int]:
        """The Apache tool's order for replicas: broker, then topic, then partition."""
        return (self.broker_id, self.topic, self.partition)

    def __str__(self) -> str:
        # Same text as Java's TopicPartitionReplica.toString().
        return f"{self.topic}-{self.partition}-{self.broker_id}"


@dataclass(frozen=True)
class Broker:
    id: int
    rack: str | None = None
    host: str = ""
    port: int = 0


@dataclass(frozen=True)
class PartitionReassignment:
    """An in-flight reassignment as ListPartitionReassignments reports it."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as metadata describes it."""

    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...] = ()
    leader: int | None = None


@dataclass(frozen=True)
class ReassignmentPlan:
    """The content of a reassignment JSON file, in file order.

    ``partitions`` keeps duplicates (so they can be reported); ``log_dirs`` maps the replicas that
    name an absolute log directory (not ``"any"``) to that directory.
    """

    partitions: tuple[tuple[TopicPartition, tuple[int, ...]], ...]
    log_dirs: dict[TopicPartitionReplica, str] = field(default_factory=dict)

    def targets(self) -> dict[TopicPartition, tuple[int, ...]]:
        return dict(self.partitions)
