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

    @property
    def target(self) -> tuple[int, ...]:
        """Where it goes: its replicas but those being removed (``replicas`` is the union of both ends)."""
        return tuple(r for r in self.replicas if r not in self.removing)


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


@dataclass(frozen=True, slots=True)
class SnapshotPartition:
    partition: int
    replicas: tuple[int, ...]
    log_dirs: tuple[str | None, ...] = ()
    size_bytes: int | None = None
    leader: int | None = None
    isr: tuple[int, ...] = ()
    write_bytes_per_s: float | None = None
    """Bytes written per second over the sampling window (``--sample-rates``); None: not sampled."""
    read_bytes_per_s: float | None = None
    """Bytes read per second by consumer groups over the window; None: not sampled."""

    @property
    def rates(self) -> tuple[float, float] | None:
        """(write, read) bytes per second when the partition has either (the other then 0), else None."""
        if self.write_bytes_per_s is None and self.read_bytes_per_s is None:
            return None
        return (self.write_bytes_per_s or 0.0, self.read_bytes_per_s or 0.0)


@dataclass(frozen=True, slots=True)
class SnapshotTopic:
    name: str
    partitions: tuple[SnapshotPartition, ...]
    min_insync_replicas: int | None = None


@dataclass(slots=True)
class TopicColumns:
    """One topic of a snapshot as columns, one entry per partition in partition order: what a snapshot
    of a million partitions is held as (no object per partition or replica).

    ``log_dirs[i]`` is the tuple of log dirs of partition i's replicas (equal tuples are one object);
    ``isr[i]`` is None when the ISR equals the replicas (the common case)."""

    name: str
    min_insync_replicas: int | None = None
    partitions: list[int] = field(default_factory=list)
    replicas: list[tuple[int, ...]] = field(default_factory=list)
    log_dirs: list[tuple[str | None, ...]] = field(default_factory=list)
    sizes: list[int | None] = field(default_factory=list)
    leaders: list[int | None] = field(default_factory=list)
    isr: list[tuple[int, ...] | None] = field(default_factory=list)
    rates: list[tuple[float, float] | None] = field(default_factory=list)
    """Per partition (write, read) bytes per second, or None; empty while no partition of the topic has any
    (a snapshot written without ``--sample-rates`` costs nothing)."""

    def append(self, partition: SnapshotPartition, dirs: dict[tuple, tuple]) -> None:
        replicas, isr = partition.replicas, partition.isr
        log_dirs = partition.log_dirs or (None,) * len(replicas)
        self.partitions.append(partition.partition)
        self.replicas.append(replicas)
        self.log_dirs.append(dirs.setdefault(log_dirs, log_dirs))
        self.sizes.append(partition.size_bytes)
        self.leaders.append(partition.leader)
        self.isr.append(None if isr == replicas else isr)
        rates = partition.rates
        if rates is not None or self.rates:
            self.rates.extend([None] * (len(self.partitions) - 1 - len(self.rates)))
            self.rates.append(rates)

    def rates_at(self, index: int) -> tuple[float, float] | None:
        return self.rates[index] if index < len(self.rates) else None

    def isr_at(self, index: int) -> tuple[int, ...]:
        isr = self.isr[index]
        return self.replicas[index] if isr is None else isr

    def partition_at(self, index: int) -> SnapshotPartition:
        return SnapshotPartition(
            self.partitions[index],
            self.replicas[index],
            self.log_dirs[index],
            self.sizes[index],
            self.leaders[index],
            self.isr_at(index),
            *(self.rates_at(index) or (None, None)),
        )

    def sort(self) -> None:
        """Partition order (stable: a partition listed twice keeps its file order)."""
        parts = self.partitions
        if parts == sorted(parts):
            return
        order = sorted(range(len(parts)), key=parts.__getitem__)
        columns = ["partitions", "replicas", "log_dirs", "sizes", "leaders", "isr"]
        if self.rates:
            self.rates.extend([None] * (len(parts) - len(self.rates)))
            columns.append("rates")
        for column in columns:
            values = getattr(self, column)
            setattr(self, column, [values[i] for i in order])

    def to_topic(self) -> SnapshotTopic:
        return SnapshotTopic(
            self.name, tuple(self.partition_at(i) for i in range(len(self.partitions))), self.min_insync_replicas
        )
