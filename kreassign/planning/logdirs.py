"""The log dir of each new replica on a broker with several volumes (JBOD). Standard library only.

Without a dir in the plan (``"any"``) a broker puts a new replica in the log dir that holds the fewest
partitions, whatever their bytes: one disk of a JBOD broker can fill while another is nearly empty. This
stage runs last, on the driver, with the plan either engine produced, and names a dir for every replica the
plan adds to a broker whose log dirs that take new replicas (not cordoned, KIP-1066) are on two or more
volumes (``volume``, resolved by the caller: :func:`kreassign.cluster.port.with_volumes`). Every other
replica keeps ``"any"``: a broker with one volume places it as well as any choice could, and a replica
already on its broker stays in its dir, unless its volume ends above its limit (below).

A volume's bytes before the plan are what it holds on disk (``total_bytes - usable_bytes``, or, when the broker
does not say, the sizes of the replicas in its dirs); the replicas the plan takes off the broker free their
bytes on their own volume. The new replicas are placed largest first (then by topic, partition and broker),
each on the volume of its broker that ends least full: the lowest share of its total when every total is
known, else the fewest bytes; a volume it would take past its bound (``--max-disk-usage`` of its total, or
its bytes before when it was fuller already) only when every volume would be. Within the volume, the dir
that got the fewest bytes from the plan (then the first). :func:`volume_overflows` lists the volumes that end
past their bound and grew: the caller has such a broker take less and runs its stages again, then refuses the
plan.

**A volume above its limit** (``--max-disk-usage`` of its total) after the new replicas, typically one that
was that full before the plan: replicas of the listed topics that the plan keeps on the broker move from it to
the broker's other volumes that stay within their own limit, one at a time, the smallest that brings it down
to its limit, else the largest that fits another volume, each to the volume that ends least full. Such a move
copies within the broker (AlterReplicaLogDirs, throttled by ``--replica-alter-log-dirs-throttle``), not over the
network. A volume no such move brings within its limit is reported (:meth:`LogDirChoice.above_limit`);
``--replace-broker`` moves nothing of the kind (``relieve`` False).

:func:`unplanned_volume_bytes` gives the disk stages what a broker's volumes hold beyond the planned replicas,
so that they leave it no more than its volumes can take.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Protocol

from kreassign.model import TopicPartition
from kreassign.planning.context import Row


class LogDir(Protocol):
    """A log dir as DescribeLogDirs (or a snapshot) gives it, its volume resolved
    (:func:`kreassign.cluster.port.with_volumes`)."""

    @property
    def path(self) -> str: ...
    @property
    def replica_sizes(self) -> Mapping[TopicPartition, int]: ...
    @property
    def total_bytes(self) -> int | None: ...
    @property
    def usable_bytes(self) -> int | None: ...
    @property
    def volume(self) -> str | None: ...
    @property
    def cordoned(self) -> bool: ...


@dataclass
class Volume:
    """One volume of a broker: its dirs that take new replicas, its total and its bytes before and after."""

    broker: int
    label: str
    dirs: list[str]
    total: int | None
    before: int
    after: int = 0
    bound: float = float("inf")
    placed: dict[str, int] = field(default_factory=dict)  # bytes the plan puts in each of its dirs
    largest: int = 0  # the largest replica the plan puts on it
    new_replicas: int = 0  # how many replicas the plan adds to the broker go to it
    limit: float = float("inf")  # --max-disk-usage of its total (inf: total unknown)
    moved_out: int = 0  # bytes of replicas kept on the broker that the plan moves to its other volumes
    moved_replicas: int = 0  # how many


@dataclass(frozen=True)
class LogDirChoice:
    """What the stage chose: per partition (topic, partition), the dir of each replica in the plan's order
    (None: ``"any"``), only for partitions with at least one dir named; and the volumes of the brokers it
    named a dir on."""

    dirs: Mapping[tuple[str, int], tuple[str | None, ...]]
    volumes: Sequence[Volume]

    @property
    def replicas(self) -> int:
        """Replicas given a dir: the new ones and those moved between the volumes of their broker."""
        return sum(d is not None for dirs in self.dirs.values() for d in dirs)

    @property
    def moved_within(self) -> int:
        """Replicas the plan keeps on their broker and moves to another of its volumes."""
        return sum(v.moved_replicas for v in self.volumes)

    @property
    def bytes_moved_within(self) -> int:
        return sum(v.moved_out for v in self.volumes)

    def above_limit(self) -> list[Volume]:
        """The volumes that end above --max-disk-usage of their total (their other volumes had no room)."""
        return [v for v in self.volumes if v.after > v.limit]

    @property
    def brokers(self) -> int:
        """Brokers given a new replica in a named dir."""
        return len({v.broker for v in self.volumes if v.new_replicas})

    def fullest(self) -> Volume | None:
        """The volume of known total that ends the fullest (by share), None when no total is known."""
        known = [v for v in self.volumes if v.total]
        return max(known, key=lambda v: (v.after / v.total, -v.broker), default=None)  # type: ignore[operator]


def broker_volumes(broker: int, dirs: Sequence[LogDir], limit: float) -> list[Volume]:
    """The volumes of a broker whose dirs take new replicas (not cordoned), in the order of its first dir on
    each; an empty list when they are fewer than two (nothing to choose, and nothing summed)."""
    if open_volumes(dirs) < 2:
        return []
    volumes: dict[str, Volume] = {}
    for d in dirs:
        label = d.volume or d.path
        volume = volumes.get(label)
        if volume is None:
            volume = volumes[label] = Volume(broker, label, [], d.total_bytes, 0)
            if d.total_bytes is not None and d.usable_bytes is not None:
                volume.before = max(0, d.total_bytes - d.usable_bytes)
            else:  # the broker does not say: the bytes of the replicas in its dirs
                volume.total = None
                volume.before = -1
        if volume.before < 0 or volume.total is None:
            volume.before = max(volume.before, 0) + sum(s for s in d.replica_sizes.values() if s > 0)
        if not d.cordoned:
            volume.dirs.append(d.path)
    chosen = [v for v in volumes.values() if v.dirs]
    for v in chosen:
        v.after = v.before
        if v.total:
            v.limit = limit * v.total
            v.bound = max(v.limit, v.before)
    return chosen


def open_volumes(dirs: Sequence[LogDir]) -> int:
    """How many volumes a broker's log dirs that are not cordoned are on."""
    return len({d.volume or d.path for d in dirs if not d.cordoned})


def choose_dirs(usage: Mapping[int, Sequence[LogDir]], brokers: Sequence[int]) -> bool:
    """Whether one of ``brokers`` has its open log dirs on two or more volumes (the stage has work)."""
    return any(open_volumes(usage.get(b, ())) >= 2 for b in brokers)


def unplanned_volume_bytes(
    rows: Sequence[Row],
    usage: Mapping[int, Sequence[LogDir]],
    brokers: Sequence[int],
    other_bytes: Mapping[int, int],
    limit: float,
) -> dict[int, int]:
    """``other_bytes`` (per broker, the bytes on its disk that the plan does not move) with, for each broker
    this stage names dirs on whose volumes all say their totals, what its volumes hold on disk beyond the
    planned partitions' replicas: the disk stages then leave the broker no more than its volumes can take."""
    result = dict(other_bytes)
    known = [
        b
        for b in brokers
        if broker_volumes(b, usage.get(b, ()), limit)
        and all(d.total_bytes and d.usable_bytes is not None for d in usage[b])
    ]
    if not known:
        return result
    planned: dict[int, int] = {}
    for _, _, current, size in rows:
        for b in current:
            planned[b] = planned.get(b, 0) + size
    for b in known:
        held = {d.volume or d.path: d.total_bytes - d.usable_bytes for d in usage[b]}  # type: ignore[operator]
        result[b] = max(result.get(b, 0), sum(held.values()) - planned.get(b, 0))
    return result


def choose_log_dirs(
    rows: Sequence[Row],
    plan: Mapping[tuple[str, int], Sequence[int]],
    usage: Mapping[int, Sequence[LogDir]],
    brokers: Sequence[int],
    limit: float,
    relieve: bool = True,
) -> LogDirChoice:
    """The dirs of the replicas ``plan`` adds to ``brokers`` with two or more volumes, and (``relieve``) of
    the replicas it keeps there that move off a volume above its limit (see the module)."""
    volumes = {b: v for b in brokers if (v := broker_volumes(b, usage.get(b, ()), limit))}
    if not volumes:
        return LogDirChoice({}, [])
    where: dict[tuple[int, TopicPartition], tuple[Volume, int]] = {}  # each current replica's volume and size
    for b, vs in volumes.items():
        by_label = {v.label: v for v in vs}
        for d in usage[b]:
            volume = by_label.get(d.volume or d.path)
            if volume is not None:
                for tp, held in d.replica_sizes.items():
                    where[(b, tp)] = (volume, held)
    new: list[tuple[int, str, int, int]] = []  # (-size, topic, partition, broker)
    kept: dict[int, list[tuple[int, str, int]]] = {}  # per volume (id), its replicas the plan keeps
    for topic, partition, current, size in rows:
        target = plan[(topic, partition)]
        for b in current:
            if b in volumes:
                found = where.get((b, TopicPartition(topic, partition)))
                if found is None:
                    continue
                held = found[1] if found[1] > 0 else size
                if b not in target:
                    found[0].after -= held
                elif relieve:
                    kept.setdefault(id(found[0]), []).append((held, topic, partition))
        new.extend((-size, topic, partition, b) for b in target if b in volumes and b not in current)
    new.sort()
    chosen: dict[tuple[str, int], dict[int, str]] = {}
    for negative, topic, partition, b in new:
        size = -negative
        volume = min(volumes[b], key=lambda v: _fill_key(v, size, volumes[b]))
        chosen.setdefault((topic, partition), {})[b] = _place(volume, size)
        volume.largest = max(volume.largest, size)
        volume.new_replicas += 1
    for b in sorted(volumes) if kept else ():
        for volume in volumes[b]:
            _relieve(b, volume, volumes[b], sorted(kept.get(id(volume), ())), chosen)
    dirs = {key: tuple(chosen[key].get(b) for b in plan[key]) for key in sorted(chosen)}
    shown = {b for named in chosen.values() for b in named} | {
        b for b, vs in volumes.items() if any(v.after > v.limit for v in vs)
    }
    return LogDirChoice(dirs, [v for b in sorted(shown) for v in volumes[b]])


def _place(volume: Volume, size: int) -> str:
    """Puts a replica of ``size`` bytes in the dir of ``volume`` that got the fewest bytes from the plan (then
    the first); that dir."""
    path = min(volume.dirs, key=lambda d: (volume.placed.get(d, 0), volume.dirs.index(d)))
    volume.placed[path] = volume.placed.get(path, 0) + size
    volume.after += size
    return path


def _relieve(
    broker: int,
    volume: Volume,
    siblings: Sequence[Volume],
    kept: list[tuple[int, str, int]],
    chosen: dict[tuple[str, int], dict[int, str]],
) -> None:
    """While ``volume`` is above its limit, one of its replicas the plan keeps on ``broker`` (``kept``:
    (bytes, topic, partition), sorted) goes to the sibling volume that ends least full and stays within its
    own limit: the smallest replica that brings ``volume`` down to its limit, else the largest that fits
    (the fewest bytes copied within the broker, a replica at a time)."""
    others = [v for v in siblings if v is not volume and v.total]
    while volume.after > volume.limit and kept and others:
        excess = volume.after - volume.limit
        room = max(v.limit - v.after for v in others)
        fits = bisect.bisect_right(kept, room, key=itemgetter(0))  # kept[:fits] fit a sibling
        if not fits:
            return  # not even the smallest replica fits elsewhere
        enough = bisect.bisect_left(kept, excess, hi=fits, key=itemgetter(0))
        size, topic, partition = kept.pop(enough if enough < fits else fits - 1)
        target = min(
            (v for v in others if v.after + size <= v.limit),
            key=lambda v: (v.after + size) / v.total,  # type: ignore[operator]
        )
        chosen.setdefault((topic, partition), {})[broker] = _place(target, size)
        volume.after -= size
        volume.moved_out += size
        volume.moved_replicas += 1


def _fill_key(volume: Volume, size: int, siblings: Sequence[Volume]) -> tuple:
    after = volume.after + size
    over = after > volume.bound
    if all(v.total for v in siblings):
        return (over, after / volume.total, siblings.index(volume))  # type: ignore[operator]
    return (over, after, siblings.index(volume))


def volume_overflows(choice: LogDirChoice) -> list[Volume]:
    """The volumes the plan takes past their bound (each grew: a volume fuller than the bound before may
    stay so, no fuller)."""
    return [v for v in choice.volumes if v.after > v.bound and v.after > v.before]
