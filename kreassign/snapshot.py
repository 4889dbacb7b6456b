"""Offline cluster snapshots: a JSON-lines file holding what planning needs from a cluster.

Standard library only. The format (version 1), one JSON object per line, UTF-8, every object with a
``type``:

* first line, the header: ``{"type":"snapshot","version":1}`` (a reader refuses other versions);
* one line per broker: ``{"type":"broker","id":1,"rack":"rack-a","log_dirs":["/d1","/d2"],
  "capacity_bytes":270553174016,"dirs":[{"path":"/d1","volume":"/d1","total_bytes":270553174016,
  "usable_bytes":83741118464,"used_bytes":1048576,"cordoned":false},{"path":"/d2","volume":"/d1",...}]}``
  (``rack`` null for a broker without rack). ``dirs`` gives per log dir, in ``log_dirs`` order: the
  ``volume`` it is on (the path of the broker's first log dir on that volume), the volume's ``total_bytes``
  and ``usable_bytes`` as DescribeLogDirs reported them (null when the broker does not say: before Kafka
  3.3, KIP-827), ``used_bytes`` (the sizes of the replicas in the dir) and ``cordoned`` (KIP-1066, Kafka
  4.3's ``cordoned.log.dirs``). Two dirs are on one volume when they report the same ``total_bytes`` and
  ``usable_bytes`` within 64 MiB (:func:`kreassign.cluster.port.volume_labels`; two distinct disks of one
  size equally full count as one volume, the safe side: edit ``volume`` to correct it).
  ``capacity_bytes`` is the sum of ``total_bytes`` over the broker's volumes, each volume once; null when
  one is unknown. Files written before ``dirs`` was recorded have no ``dirs`` and are read as they were:
  their ``capacity_bytes`` (the sum over all log dirs, a shared volume counted once per dir), each dir a
  volume of its own, none cordoned;
* per topic, one line ``{"type":"topic","topic":"t","min_insync_replicas":2}`` (the topic-level
  ``min.insync.replicas`` when the topic sets it, else null), then one line per partition:
  ``{"type":"partition","topic":"t","partition":0,"replicas":[1,2,3],"log_dirs":["/d1",null,"/d2"],
  "size_bytes":1048576,"leader":1,"isr":[1,2,3]}``.

``size_bytes`` is the partition's size on disk: the largest size DescribeLogDirs reports among its
current replicas (normally the leader's log), in bytes; null when no replica reported one. A snapshot taken
with ``--sample-rates SECONDS`` gives a sampled partition two more fields after ``size_bytes``:
``write_bytes_per_s`` and ``read_bytes_per_s`` (numbers, 0 or more; one missing or null reads as 0 when the
other is there), the rates :mod:`kreassign.planning.traffic` estimated over the window;
:meth:`SnapshotCluster.recorded_rates` gives them.
``log_dirs`` gives, per replica in ``replicas`` order, the log directory holding it (null if unknown).
Brokers come before topics; a partition line may only follow its topic line. Readers stream the file;
Spark reads the same file as a DataFrame (``kreassign.spark``).

``--write-cluster-snapshot FILE`` writes one from a live cluster (:func:`snapshot_from_cluster`);
``--cluster-snapshot-file FILE`` replaces ``--bootstrap-server`` with :class:`SnapshotCluster`, a
read-only ``ClusterPort``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, compress, islice, pairwise, repeat
from operator import itemgetter, methodcaller, ne
from typing import IO, Any

from kreassign.cluster.port import (
    ClusterPort,
    ConfigOp,
    ConfigResource,
    LogDirUsage,
    ReplicaLogDirInfo,
    ResourceType,
    volume_capacity,
    volume_labels,
)
from kreassign.errors import CommandError, PartitionError, UnknownTopicOrPartitionError
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    SnapshotPartition,
    SnapshotTopic,
    TopicColumns,
    TopicPartition,
    TopicPartitionReplica,
)

SNAPSHOT_VERSION = 1
MIN_INSYNC_REPLICAS = "min.insync.replicas"
_UNKNOWN_TOPIC = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


@dataclass(frozen=True, slots=True)
class SnapshotLogDir:
    """One log dir of a broker as the snapshot records it (the ``dirs`` of a broker line)."""

    path: str
    volume: str
    total_bytes: int | None = None
    usable_bytes: int | None = None
    used_bytes: int = 0
    cordoned: bool = False


@dataclass(frozen=True, slots=True)
class SnapshotBroker:
    id: int
    rack: str | None = None
    log_dirs: tuple[str, ...] = ()
    capacity_bytes: int | None = None
    dirs: tuple[SnapshotLogDir, ...] = ()
    """Per log dir, in ``log_dirs`` order; empty in files written before it was recorded."""

    @property
    def cordoned_log_dirs(self) -> tuple[str, ...]:
        return tuple(d.path for d in self.dirs if d.cordoned)


@dataclass
class ClusterSnapshot:
    brokers: tuple[SnapshotBroker, ...]
    topics: dict[str, SnapshotTopic] = field(default_factory=dict)

    @property
    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())


class SnapshotFormatError(CommandError):
    """A snapshot file that cannot be read; the message names the file and line."""


# ---------------------------------------------------------------------------------------- writing
def snapshot_records(snapshot: ClusterSnapshot) -> Iterator[dict[str, Any]]:
    """The objects of the file, in file order (brokers by id, topics by name, partitions by number)."""
    yield {"type": "snapshot", "version": SNAPSHOT_VERSION}
    for broker in sorted(snapshot.brokers, key=lambda b: b.id):
        record: dict[str, Any] = {
            "type": "broker",
            "id": broker.id,
            "rack": broker.rack,
            "log_dirs": list(broker.log_dirs),
            "capacity_bytes": broker.capacity_bytes,
        }
        if broker.dirs:
            record["dirs"] = [
                {
                    "path": d.path,
                    "volume": d.volume,
                    "total_bytes": d.total_bytes,
                    "usable_bytes": d.usable_bytes,
                    "used_bytes": d.used_bytes,
                    "cordoned": d.cordoned,
                }
                for d in broker.dirs
            ]
        yield record
    for name in sorted(snapshot.topics):
        topic = snapshot.topics[name]
        yield {"type": "topic", "topic": name, "min_insync_replicas": topic.min_insync_replicas}
        for p in sorted(topic.partitions, key=lambda p: p.partition):
            record = {
                "type": "partition",
                "topic": name,
                "partition": p.partition,
                "replicas": list(p.replicas),
                "log_dirs": list(p.log_dirs) if p.log_dirs else [None] * len(p.replicas),
                "size_bytes": p.size_bytes,
            }
            if p.rates is not None:  # only when sampled: a snapshot without rates stays as it was
                record["write_bytes_per_s"], record["read_bytes_per_s"] = p.rates
            record["leader"] = p.leader
            record["isr"] = list(p.isr)
            yield record


def write_snapshot(snapshot: ClusterSnapshot, stream: IO[str]) -> None:
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for record in snapshot_records(snapshot):
        stream.write(dumps(record))
        stream.write("\n")


def save_snapshot(snapshot: ClusterSnapshot, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            write_snapshot(snapshot, handle)
    except OSError as exc:
        raise CommandError(f"Unable to write cluster snapshot {path}: {exc.strerror or exc}") from exc


# ---------------------------------------------------------------------------------------- reading
# Lines are parsed a chunk at a time: one json.loads of "[line,line,...]" costs half of one call per line.
# A chunk is taken whole only when it gives one object per line and no line can hold two objects ("}" ","
# "{" outside a string, with nothing but blanks between, is the only way a line splits in two; a line that
# runs into the next one must be balanced by such a split for the count to hold). Otherwise its lines are
# parsed one by one, which also gives each error its line number and message, in file order.
_CHUNK_LINES = 8192
_SPLIT = re.compile(r"\}[ \t\r]*,[ \t\r]*\{")  # never across lines: the chunk joins them with ",\n"
_TYPE = methodcaller("get", "type")


def _parse_chunk(lines: list[str]) -> list[dict[str, Any]] | None:
    """The objects of these lines from one parse (each with a string type), or None when the lines must
    be parsed one by one."""
    text = ",\n".join(lines)
    if _SPLIT.search(text) is not None:
        return None
    try:
        records = json.loads("[" + text + "]")
    except ValueError:
        return None
    if len(records) != len(lines) or not set(map(type, records)) <= {dict}:
        return None
    if not set(map(type, map(_TYPE, records))) <= {str}:
        return None
    return records


def iter_snapshot_record_chunks(
    lines: Iterable[str], source: str = "<snapshot>"
) -> Iterator[tuple[Sequence[int], list[dict[str, Any]]]]:
    """(line numbers, objects) of the non-blank lines, a chunk at a time; checks the header and the version.
    A chunk that cannot be parsed at once comes line by line, so errors come in file order."""
    header_seen = False

    def checked(number: int, record: Any) -> bool:
        """Whether the record is data (False for the header)."""
        nonlocal header_seen
        if type(record) is not dict or not isinstance(record.get("type"), str):
            raise SnapshotFormatError(
                f"Invalid cluster snapshot {source} line {number}: expected an object with a type"
            )
        if header_seen:
            return True
        if record["type"] != "snapshot":
            raise SnapshotFormatError(f"Invalid cluster snapshot {source}: the first line must be the snapshot header")
        if record.get("version") != SNAPSHOT_VERSION:
            raise SnapshotFormatError(
                f"Unsupported cluster snapshot version {record.get('version')!r} in {source} "
                f"(this kreassign reads version {SNAPSHOT_VERSION})"
            )
        header_seen = True
        return False

    remaining, base = iter(lines), 1
    while chunk := list(islice(remaining, _CHUNK_LINES)):
        numbers: Sequence[int] = range(base, base + len(chunk))
        records = _parse_chunk(chunk)
        if records is None:  # blank lines, or a line to parse alone
            numbers = [n for n, line in zip(numbers, chunk, strict=True) if line.strip()]
            if numbers and len(numbers) < len(chunk):
                records = _parse_chunk([chunk[n - base] for n in numbers])
        if records is not None:
            if header_seen or checked(numbers[0], records[0]):
                yield numbers, records
            elif len(records) > 1:
                yield numbers[1:], records[1:]
        else:
            for number in numbers:
                try:
                    record = json.loads(chunk[number - base])
                except ValueError as exc:
                    raise SnapshotFormatError(f"Invalid cluster snapshot {source} line {number}: {exc}") from None
                if checked(number, record):
                    yield [number], [record]
        base += len(chunk)
    if not header_seen:
        raise SnapshotFormatError(f"Invalid cluster snapshot {source}: the file is empty")


def _int(record: Mapping[str, Any], key: str, where: str, optional: bool = False) -> Any:
    value = record.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise SnapshotFormatError(f"{where}: {key} must be an integer")
    return value


RATE_FIELDS = ("write_bytes_per_s", "read_bytes_per_s")


def _rate(record: Mapping[str, Any], key: str, where: str) -> float | None:
    """An optional rate: a finite number, 0 or more (NaN and Infinity, which Python's JSON reads, refused)."""
    value = record.get(key)
    if value is None:
        return None
    if type(value) not in (int, float) or not 0 <= value < math.inf:
        raise SnapshotFormatError(f"{where}: {key} must be a number of bytes per second, 0 or more")
    return float(value)


def _ints(record: Mapping[str, Any], key: str, where: str) -> tuple[int, ...]:
    value = record.get(key) or []
    if type(value) is not list or not all(type(v) is int for v in value):
        raise SnapshotFormatError(f"{where}: {key} must be a list of integers")
    return tuple(value)


def _live_log_dirs(topic: TopicColumns, live: set[int]) -> TopicColumns:
    """The topic with no log dir for replicas on brokers outside the cluster (the topic itself when none is)."""
    if set(chain.from_iterable(topic.replicas)) <= live:
        return topic
    log_dirs = [
        tuple(d if b in live else None for b, d in zip(on, where, strict=True))
        for on, where in zip(topic.replicas, topic.log_dirs, strict=True)
    ]
    return replace(topic, log_dirs=log_dirs)


@dataclass
class SnapshotColumns:
    """A whole snapshot as :class:`TopicColumns`, topics in file order."""

    brokers: tuple[SnapshotBroker, ...]
    topics: dict[str, TopicColumns]

    @classmethod
    def of(cls, snapshot: ClusterSnapshot) -> SnapshotColumns:
        dirs: dict[tuple, tuple] = {}
        topics = {}
        for name, topic in snapshot.topics.items():
            columns = topics[name] = TopicColumns(name, topic.min_insync_replicas)
            for partition in topic.partitions:
                columns.append(partition, dirs)
            columns.sort()
        return cls(tuple(snapshot.brokers), topics)

    def to_snapshot(self) -> ClusterSnapshot:
        return ClusterSnapshot(self.brokers, {name: topic.to_topic() for name, topic in self.topics.items()})


def _read_record(
    number: int, record: dict[str, Any], source: str, brokers: list[SnapshotBroker], topics: dict[str, TopicColumns]
) -> SnapshotPartition | None:
    """Check one record with the exact rules and messages; keep a broker or topic, return a partition."""
    where = f"Invalid cluster snapshot {source} line {number}"
    kind = record["type"]
    if kind == "broker":
        rack = record.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise SnapshotFormatError(f"{where}: rack must be a string or null")
        log_dirs = record.get("log_dirs") or []
        if type(log_dirs) is not list or not all(type(d) is str for d in log_dirs):
            raise SnapshotFormatError(f"{where}: log_dirs must be a list of strings")
        brokers.append(
            SnapshotBroker(
                _int(record, "id", where),
                rack,
                tuple(log_dirs),
                _int(record, "capacity_bytes", where, optional=True),
                _read_dirs(record.get("dirs"), log_dirs, where),
            )
        )
    elif kind == "topic":
        name = record.get("topic")
        if not isinstance(name, str):
            raise SnapshotFormatError(f"{where}: topic must be a string")
        topics[name] = TopicColumns(name, _int(record, "min_insync_replicas", where, optional=True))
    elif kind == "partition":
        name = record.get("topic")
        if not isinstance(name, str) or name not in topics:
            raise SnapshotFormatError(f"{where}: partition of topic {name!r} before its topic line")
        replicas = _ints(record, "replicas", where)
        dirs = tuple(record.get("log_dirs") or (None,) * len(replicas))
        if len(dirs) != len(replicas):
            raise SnapshotFormatError(f"{where}: log_dirs must have one entry per replica")
        return SnapshotPartition(
            _int(record, "partition", where),
            replicas,
            dirs,
            _int(record, "size_bytes", where, optional=True),
            _int(record, "leader", where, optional=True),
            _ints(record, "isr", where),
            _rate(record, "write_bytes_per_s", where),
            _rate(record, "read_bytes_per_s", where),
        )
    # other types are ignored: later versions may add records older readers can skip
    return None


def _read_dirs(value: Any, log_dirs: Sequence[str], where: str) -> tuple[SnapshotLogDir, ...]:
    """The ``dirs`` of a broker line (absent in older files: no details)."""
    if value is None:
        return ()
    if type(value) is not list or not all(type(d) is dict for d in value):
        raise SnapshotFormatError(f"{where}: dirs must be a list of objects")
    if [d.get("path") for d in value] != list(log_dirs):
        raise SnapshotFormatError(f"{where}: dirs must give one object per log dir, in log_dirs order")
    dirs = []
    for d in value:
        volume = d.get("volume", d["path"])
        if type(volume) is not str:
            raise SnapshotFormatError(f"{where}: a dir's volume must be a string")
        cordoned = d.get("cordoned", False)
        if type(cordoned) is not bool:
            raise SnapshotFormatError(f"{where}: a dir's cordoned must be true or false")
        used = _int(d, "used_bytes", where, optional=True)
        dirs.append(
            SnapshotLogDir(
                d["path"],
                volume,
                _int(d, "total_bytes", where, optional=True),
                _int(d, "usable_bytes", where, optional=True),
                0 if used is None else used,
                cordoned,
            )
        )
    return tuple(dirs)


def _is_int_or_none(values: Sequence[Any]) -> bool:
    return set(map(type, values)) <= {int, type(None)}


_PARTITION_FIELDS = itemgetter("partition", "replicas", "log_dirs", "size_bytes", "leader", "isr")
_WRITE_RATE, _READ_RATE = (methodcaller("get", key) for key in RATE_FIELDS)
_PLAIN_PARTITION_KEYS = 8


def _rates_column(records: list[dict[str, Any]]) -> list[tuple[float, float] | None] | None:
    """The (write, read) rates of the records, [] when none has any, or None when one needs the exact checks.
    Records of 8 keys (type, topic and the 6 fields read, all there) have no rate: a file written without
    rates costs one len per record."""
    if max(map(len, records)) <= _PLAIN_PARTITION_KEYS:
        return []
    writes, reads = list(map(_WRITE_RATE, records)), list(map(_READ_RATE, records))
    values = [v for v in chain(writes, reads) if v is not None]
    if not values:
        return []
    if not set(map(type, values)) <= {int, float} or not all(0 <= v < math.inf for v in values):  # NaN too
        return None
    return [
        None if w is None and r is None else (float(w or 0), float(r or 0)) for w, r in zip(writes, reads, strict=True)
    ]


def _read_partitions_fast(records: list[dict[str, Any]], topic: TopicColumns, dirs: dict[tuple, tuple]) -> bool:
    """Append partition records of ``topic`` (all of them; or none, and False, when one needs the exact
    checks of :func:`_read_record`): the same values, checked and stored a column at a time."""
    try:
        partitions, replicas, log_dirs, sizes, leaders, isrs = zip(*map(_PARTITION_FIELDS, records), strict=True)
    except KeyError:
        return False
    if not (
        set(map(type, partitions)) <= {int}
        and set(map(type, replicas)) <= {list}
        and set(map(type, isrs)) <= {list}
        and set(map(type, log_dirs)) <= {list}
        and set(map(type, chain.from_iterable(replicas))) <= {int}
        and set(map(type, chain.from_iterable(isrs))) <= {int}
        and _is_int_or_none(sizes)
        and _is_int_or_none(leaders)
        and list(map(len, replicas)) == list(map(len, log_dirs))
        and all(replicas)
    ):
        return False
    rates = _rates_column(records)
    if rates is None:
        return False
    if rates or topic.rates:
        topic.rates += [None] * (len(topic.partitions) - len(topic.rates))
        topic.rates += rates or repeat(None, len(records))
    topic.partitions += partitions
    topic.replicas += map(tuple, replicas)
    dir_tuples = list(map(tuple, log_dirs))
    topic.log_dirs += map(dirs.setdefault, dir_tuples, dir_tuples)
    topic.sizes += sizes
    topic.leaders += leaders
    if isrs == replicas:
        topic.isr += repeat(None, len(isrs))
    else:
        topic.isr += [None if isr == on else tuple(isr) for isr, on in zip(isrs, replicas, strict=True)]
    return True


def read_snapshot_columns(lines: Iterable[str], source: str = "<snapshot>") -> SnapshotColumns:
    brokers: list[SnapshotBroker] = []
    topics: dict[str, TopicColumns] = {}
    dirs: dict[tuple, tuple] = {}  # one tuple object per distinct log_dirs
    for numbers, records in iter_snapshot_record_chunks(lines, source):
        # runs: consecutive partition lines of one topic; any other line is a run of its own
        keys = list(zip(map(_TYPE, records), map(methodcaller("get", "topic"), records), strict=True))
        starts = [0, *compress(range(1, len(keys)), map(ne, keys[1:], keys[:-1])), len(keys)]
        for start, end in pairwise(starts):
            kind, name = keys[start]
            if (
                kind == "partition"
                and type(name) is str
                and name in topics
                and _read_partitions_fast(records[start:end], topics[name], dirs)
            ):
                continue
            for index in range(start, end):
                partition = _read_record(numbers[index], records[index], source, brokers, topics)
                if partition is not None:
                    topics[records[index]["topic"]].append(partition, dirs)
    for topic in topics.values():
        topic.sort()
    return SnapshotColumns(tuple(brokers), topics)


def read_snapshot_head(lines: Iterable[str], source: str = "<snapshot>") -> SnapshotColumns:
    """The header (checked) and the broker lines before the first other line (brokers come first), without
    reading further: a snapshot with its brokers and no topic."""
    brokers: list[SnapshotBroker] = []
    for numbers, records in iter_snapshot_record_chunks(lines, source):
        for number, record in zip(numbers, records, strict=True):
            if record["type"] != "broker":
                return SnapshotColumns(tuple(brokers), {})
            _read_record(number, record, source, brokers, {})
    return SnapshotColumns(tuple(brokers), {})


def count_snapshot_partitions(path: str, topics: Iterable[str]) -> int:
    """The partitions of ``topics`` in the snapshot file, in one streaming pass (nothing kept)."""
    wanted = set(topics)

    def count(lines: Iterable[str], source: str) -> int:
        return sum(
            1
            for _, records in iter_snapshot_record_chunks(lines, source)
            for record in records
            if record["type"] == "partition" and record.get("topic") in wanted
        )

    return _open_snapshot(path, count)


def read_snapshot_lines(lines: Iterable[str], source: str = "<snapshot>") -> ClusterSnapshot:
    return read_snapshot_columns(lines, source).to_snapshot()


def _open_snapshot(path: str, read):
    try:
        with open(path, encoding="utf-8") as handle:
            return read(handle, path)
    except OSError as exc:
        raise CommandError(f"Unable to read cluster snapshot {path}") from exc
    except UnicodeDecodeError as exc:
        raise SnapshotFormatError(f"Invalid cluster snapshot {path}: not UTF-8 ({exc.reason})") from exc


def load_snapshot(path: str) -> ClusterSnapshot:
    return _open_snapshot(path, read_snapshot_lines)


def load_snapshot_columns(path: str) -> SnapshotColumns:
    return _open_snapshot(path, read_snapshot_columns)


# ---------------------------------------------------------------------------------------- from a cluster
def snapshot_from_cluster(port: ClusterPort, topics: Sequence[str] | None = None) -> ClusterSnapshot:
    """Read brokers, topics, replica sizes and ``min.insync.replicas`` through ``port`` (the Kafka
    adapter, or a ``SnapshotCluster``). ``topics`` defaults to every topic of the cluster."""
    brokers = sorted(port.describe_brokers(), key=lambda b: b.id)
    names = list(dict.fromkeys(topics)) if topics is not None else list(port.list_topic_names())
    described = port.describe_topics(names) if names else {}
    usage: Mapping[int, Sequence[LogDirUsage]] = port.describe_log_dirs([b.id for b in brokers])
    where: dict[tuple[str, int, int], tuple[str, int]] = {}
    for broker_id, dirs in usage.items():
        for log_dir in dirs:
            for tp, size in log_dir.replica_sizes.items():
                where[(tp.topic, tp.partition, broker_id)] = (log_dir.path, size)
    configs = port.describe_configs([ConfigResource(ResourceType.TOPIC, name) for name in described])
    snapshot_brokers = []
    for broker in brokers:
        dirs = usage.get(broker.id, ())
        details = tuple(
            SnapshotLogDir(
                d.path,
                volume,
                d.total_bytes,
                d.usable_bytes,
                sum(size for size in d.replica_sizes.values() if size > 0),
                d.cordoned,
            )
            for d, volume in zip(dirs, volume_labels(dirs), strict=True)
        )
        snapshot_brokers.append(
            SnapshotBroker(broker.id, broker.rack, tuple(d.path for d in dirs), volume_capacity(dirs), details)
        )
    snapshot_topics = {}
    for name, partitions in described.items():
        parts = []
        for info in partitions:
            found = [where.get((name, info.partition, b)) for b in info.replicas]
            sizes = [f[1] for f in found if f is not None and f[1] >= 0]
            parts.append(
                SnapshotPartition(
                    info.partition,
                    tuple(info.replicas),
                    tuple(f[0] if f is not None else None for f in found),
                    max(sizes) if sizes else None,
                    info.leader,
                    tuple(info.isr),
                )
            )
        mir = configs.get(ConfigResource(ResourceType.TOPIC, name), {}).get(MIN_INSYNC_REPLICAS)
        snapshot_topics[name] = SnapshotTopic(name, tuple(parts), int(mir) if mir is not None else None)
    return ClusterSnapshot(tuple(snapshot_brokers), snapshot_topics)


def with_rates(snapshot: ClusterSnapshot, rates: Mapping[TopicPartition, tuple[float, float]]) -> ClusterSnapshot:
    """The snapshot with each partition's sampled (write, read) bytes per second, rounded to 0.1 B/s
    (partitions without a sample keep none)."""
    topics = {}
    for name, topic in snapshot.topics.items():
        parts = []
        for p in topic.partitions:
            sampled = rates.get(TopicPartition(name, p.partition))
            if sampled is not None:
                p = replace(p, write_bytes_per_s=round(sampled[0], 1), read_bytes_per_s=round(sampled[1], 1))
            parts.append(p)
        topics[name] = replace(topic, partitions=tuple(parts))
    return ClusterSnapshot(snapshot.brokers, topics)


# ---------------------------------------------------------------------------------------- read-only port
class _DirReplicas(Mapping[TopicPartition, int]):
    """One log dir's replicas and sizes in a snapshot, read from ``sizes()`` (every dir's, built once) on
    first use: a caller that only wants the capacities never builds them."""

    __slots__ = ("_key", "_sizes")

    def __init__(self, sizes: Callable[[], dict[tuple[int, str], dict[TopicPartition, int]]], key: tuple[int, str]):
        self._sizes = sizes
        self._key = key

    def _map(self) -> dict[TopicPartition, int]:
        return self._sizes().get(self._key, {})

    def __getitem__(self, key: TopicPartition) -> int:
        return self._map()[key]

    def __iter__(self) -> Iterator[TopicPartition]:
        return iter(self._map())

    def __len__(self) -> int:
        return len(self._map())

    def __repr__(self) -> str:
        return repr(self._map())


class SnapshotCluster:
    """A read-only ``ClusterPort`` over a snapshot: what ``--generate`` and ``--execute --dry-run`` read.

    No reassignment is in progress; ``describe_configs`` reports ``min.insync.replicas`` for topics that
    set it; log end offsets are not kept (an error). Every mutating call raises ``CommandError``.
    The snapshot is held as columns (:class:`SnapshotColumns`); :meth:`describe_topic_columns` gives them
    to ``--generate`` without an object per partition.
    """

    def __init__(self, snapshot: ClusterSnapshot | SnapshotColumns | None, source: str = "<snapshot>") -> None:
        self._columns = (
            snapshot if isinstance(snapshot, SnapshotColumns) or snapshot is None else SnapshotColumns.of(snapshot)
        )
        self.source = source
        self._index: dict[tuple[str, int], tuple[TopicColumns, int]] | None = None
        self._sizes: dict[tuple[int, str], dict[TopicPartition, int]] | None = None

    @classmethod
    def open(cls, path: str) -> SnapshotCluster:
        """The snapshot file ``path``: its header and brokers are read now (their errors come first), the
        rest on first use, so that the Spark engine can plan from the file without it (:meth:`loaded`)."""
        port = cls(None, path)
        port.head = _open_snapshot(path, read_snapshot_head)
        return port

    head: SnapshotColumns | None = None
    """The brokers of the file (no topics), read by :meth:`open`."""

    @property
    def columns(self) -> SnapshotColumns:
        if self._columns is None:
            self._columns = load_snapshot_columns(self.source)
        return self._columns

    @property
    def loaded(self) -> bool:
        """Whether the topics and partitions are in memory (always, unless made by :meth:`open`)."""
        return self._columns is not None

    def brokers_only(self) -> SnapshotCluster:
        """A port on the brokers of the snapshot and no topic (its log dirs, capacities): from the head
        when the partitions are not loaded."""
        brokers = self.head.brokers if self.head is not None and not self.loaded else self.columns.brokers
        return SnapshotCluster(SnapshotColumns(brokers, {}), self.source)

    @property
    def snapshot(self) -> ClusterSnapshot:
        """The snapshot as objects (built on each call: one object per partition)."""
        return self.columns.to_snapshot()

    def _read_only(self, call: str) -> CommandError:
        return CommandError(
            f"{call} needs a live cluster: {self.source} is a read-only cluster snapshot "
            "(use --bootstrap-server instead of --cluster-snapshot-file)"
        )

    # reads
    def describe_brokers(self) -> list[Broker]:
        from kreassign.planning.placement import describe_cluster_node_order

        return describe_cluster_node_order(Broker(b.id, b.rack) for b in self.columns.brokers)

    def cluster_id(self) -> str | None:
        return None  # a snapshot plans offline: nothing is remembered on disk for it

    def list_topic_names(self) -> list[str]:
        return sorted(self.columns.topics)

    def _known(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        """The topics' columns as held (the error ``describe_topics`` gives for an unknown topic)."""
        names = list(dict.fromkeys(topics))
        known = self.columns.topics
        for name in names:
            if name not in known:
                raise UnknownTopicOrPartitionError(f"{_UNKNOWN_TOPIC}: Topic {name} not found.")
        return {name: known[name] for name in names}

    def describe_topic_columns(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        """The columns as held, without the log dirs of replicas on brokers the snapshot does not list."""
        live = {b.id for b in self.columns.brokers}
        return {name: _live_log_dirs(topic, live) for name, topic in self._known(topics).items()}

    def describe_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        return {
            name: [
                PartitionInfo(p, replicas, topic.isr_at(i), leader)
                for i, (p, replicas, leader) in enumerate(
                    zip(topic.partitions, topic.replicas, topic.leaders, strict=False)
                )
            ]
            for name, topic in self._known(topics).items()
        }

    def read_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        return self.describe_topics(topics)

    def list_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        return {}

    def _partitions(self) -> dict[tuple[str, int], tuple[TopicColumns, int]]:
        if self._index is None:
            self._index = {
                (topic.name, p): (topic, i)
                for topic in self.columns.topics.values()
                for i, p in enumerate(topic.partitions)
            }
        return self._index

    def describe_replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        index = self._partitions()
        brokers = {b.id for b in self.columns.brokers}
        result = {}
        for replica in replicas:
            found = index.get((replica.topic, replica.partition))
            if found is None or replica.broker_id not in found[0].replicas[found[1]]:
                if replica.broker_id in brokers:
                    result[replica] = ReplicaLogDirInfo(current=None)  # the broker does not host it
                continue
            topic, i = found
            on = topic.replicas[i]
            log_dir = topic.log_dirs[i][on.index(replica.broker_id)]
            if log_dir is not None:
                result[replica] = ReplicaLogDirInfo(current=log_dir)
        return result

    def _dir_sizes(self) -> dict[tuple[int, str], dict[TopicPartition, int]]:
        """(broker, log dir) -> its replicas with the partition's size (-1: the snapshot has none)."""
        if self._sizes is None:
            sizes: dict[tuple[int, str], dict[TopicPartition, int]] = {}
            for topic in self.columns.topics.values():
                for p, replicas, log_dirs, size in zip(
                    topic.partitions, topic.replicas, topic.log_dirs, topic.sizes, strict=False
                ):
                    tp = TopicPartition(topic.name, p)
                    for broker, log_dir in zip(replicas, log_dirs, strict=False):
                        if log_dir is not None:
                            sizes.setdefault((broker, log_dir), {})[tp] = -1 if size is None else size
            self._sizes = sizes
        return self._sizes

    def describe_log_dirs(self, broker_ids: Iterable[int]) -> dict[int, list[LogDirUsage]]:
        brokers = {b.id: b for b in self.columns.brokers}
        result = {}
        for broker_id in dict.fromkeys(broker_ids):
            broker = brokers.get(broker_id)
            if broker is None:
                continue
            if broker.dirs:  # as recorded: each dir's volume, its figures and its cordon
                result[broker_id] = [
                    LogDirUsage(
                        d.path,
                        _DirReplicas(self._dir_sizes, (broker_id, d.path)),
                        d.total_bytes,
                        d.usable_bytes,
                        d.volume,
                        d.cordoned,
                    )
                    for d in broker.dirs
                ]
                continue
            # an older file: capacity_bytes only, the sum of its dirs' totals then; each dir is a volume of its
            # own and gets an equal share, the first the remainder, so that the sum is the same
            share, extra = divmod(broker.capacity_bytes, len(broker.log_dirs) or 1) if broker.capacity_bytes else (0, 0)
            result[broker_id] = [
                LogDirUsage(
                    d,
                    _DirReplicas(self._dir_sizes, (broker_id, d)),
                    (share + (extra if i == 0 else 0)) or None,
                    volume=d,
                )
                for i, d in enumerate(broker.log_dirs)
            ]
        return result

    def describe_configs(self, resources: Iterable[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        result: dict[ConfigResource, dict[str, str]] = {}
        for resource in dict.fromkeys(resources):
            values: dict[str, str] = {}
            if resource.type is ResourceType.TOPIC:
                topic = self.columns.topics.get(resource.name)
                if topic is None:
                    raise UnknownTopicOrPartitionError(f"{_UNKNOWN_TOPIC}: ")
                if topic.min_insync_replicas is not None:
                    values[MIN_INSYNC_REPLICAS] = str(topic.min_insync_replicas)
            result[resource] = values
        return result

    def replica_sizes(
        self,
        broker_ids: Iterable[int],
        partitions: Iterable[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> dict[TopicPartitionReplica, int]:
        """Each replica on these brokers with the partition's ``size_bytes`` (replicas of partitions
        without a size are left out, as a live cluster leaves out what it cannot read)."""
        wanted = set(broker_ids)
        only = None if partitions is None else set(partitions)
        return {
            TopicPartitionReplica(topic.name, p, broker): size
            for topic in self.columns.topics.values()
            for p, replicas, size in zip(topic.partitions, topic.replicas, topic.sizes, strict=False)
            if size is not None and (only is None or TopicPartition(topic.name, p) in only)
            for broker in replicas
            if broker in wanted
        }

    def replica_log_end_offsets(self, replicas: Iterable[TopicPartitionReplica]) -> dict[TopicPartitionReplica, int]:
        """A snapshot keeps no offsets: every replica is left out."""
        return {}

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        raise CommandError(f"{self.source} is a cluster snapshot: it holds no log end offsets")

    def log_start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        raise CommandError(f"{self.source} is a cluster snapshot: it holds no log start offsets")

    def committed_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        raise CommandError(f"{self.source} is a cluster snapshot: it holds no committed offsets")

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        """(write_bytes_per_s, read_bytes_per_s) of each partition the snapshot has rates for (taken with
        ``--sample-rates``); {} for a snapshot without them."""
        return {TopicPartition(*key): rates for key, rates in self.recorded_partition_rates().items()}

    def recorded_partition_rates(self) -> dict[tuple[str, int], tuple[float, float]]:
        return {
            (topic.name, p): rates
            for topic in self.columns.topics.values()
            if topic.rates
            for p, rates in zip(topic.partitions, topic.rates, strict=False)
            if rates is not None
        }

    def snapshot_file(self) -> str | None:
        return self.source if os.path.exists(self.source) else None

    def secrets(self) -> list[str]:
        return []

    # writes: refused
    def alter_reassignments(
        self,
        targets: Mapping[TopicPartition, Sequence[int] | None],
        allow_replication_factor_change: bool = True,
    ) -> dict[TopicPartition, PartitionError]:
        raise self._read_only("Altering partition reassignments")

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        raise self._read_only("Moving replicas between log directories")

    def incremental_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
        raise self._read_only("Altering configs")

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        raise self._read_only("Electing leaders")

    def close(self) -> None:
        pass
