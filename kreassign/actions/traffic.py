"""The moves that cannot catch up with their partition's writes at the throttle they will get (``--sample-rates``), and
the rates of a cluster snapshot; the sampling itself (Admin calls only) is ``kreassign.execution.sampling``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from kreassign.cluster.port import ClusterPort
from kreassign.execution.sampling import sample_rates
from kreassign.humanize import format_bytes
from kreassign.model import TopicPartition
from kreassign.planning.traffic import SlowMove, slow_moves
from kreassign.snapshot import ClusterSnapshot, with_rates


def snapshot_rates(
    port: ClusterPort,
    snapshot: ClusterSnapshot,
    window_s: int,
    err: Callable[[str], object],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[ClusterSnapshot, str]:
    """``--write-cluster-snapshot --sample-rates``: the snapshot with the rates of its partitions sampled over
    ``window_s`` seconds, and the words the closing stderr line adds. What the estimate did about an edge
    case (retention deleting, offsets reset) is a warning on stderr, the first few of them."""
    partitions = [TopicPartition(name, p.partition) for name, t in snapshot.topics.items() for p in t.partitions]
    err(f"Sampling the write and read rates of {len(partitions)} partition(s) over {window_s} s.\n")
    rates = sample_rates(port, partitions, window_s, sleep=sleep, clock=clock)
    notes = [f"{tp}: {note}" for tp, r in sorted(rates.items()) for note in r.notes]
    for note in notes[:_NOTES_SHOWN]:
        err(f"kreassign: warning: {note}\n")
    if len(notes) > _NOTES_SHOWN:
        err(f"kreassign: warning: and {len(notes) - _NOTES_SHOWN} more such notes.\n")
    recorded = {tp: (r.write_bytes_per_s, r.read_bytes_per_s) for tp, r in rates.items()}
    return with_rates(snapshot, recorded), f", rates of {len(recorded)} sampled over {window_s} s"


_NOTES_SHOWN = 5


def adding_replicas(
    port: ClusterPort, proposed: Mapping[TopicPartition, Sequence[int]]
) -> dict[TopicPartition, list[int]]:
    """Per moved partition, the brokers that will receive a copy (in the proposed list, not in the current)."""
    return _moves(port, proposed)[0]


def _moves(
    port: ClusterPort, proposed: Mapping[TopicPartition, Sequence[int]]
) -> tuple[dict[TopicPartition, list[int]], dict[TopicPartition, int | None], dict[TopicPartition, int]]:
    """The brokers receiving a copy of each moved partition, its leader, and its in-sync followers."""
    described = port.describe_topics(sorted({tp.topic for tp in proposed}))
    infos = {TopicPartition(t, i.partition): i for t, infos in described.items() for i in infos}
    adding, leaders, in_sync = {}, {}, {}
    for tp, replicas in proposed.items():
        info = infos.get(tp)
        new = [b for b in replicas if info is None or b not in info.replicas]
        if new:
            adding[tp] = new
            leader = None if info is None or info.leader is None or info.leader < 0 else info.leader
            leaders[tp] = leader
            in_sync[tp] = 0 if info is None else len(set(info.isr) - {leader})
    return adding, leaders, in_sync


def find_slow_moves(
    port: ClusterPort,
    proposed: Mapping[TopicPartition, Sequence[int]],
    throttle: float | Mapping[int, float],
    window_s: float,
    concurrent: Mapping[int, int] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    writes: Mapping[TopicPartition, float] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[SlowMove]:
    """The moves of ``proposed`` whose partition is written at or above the throttle share its copy gets (the one
    model of the run's ETA and of --progress: ``planning.traffic.slow_moves``); the write rates sampled over
    ``window_s``, unless ``writes`` (measured already, by ``--throttle auto``) are given. ``throttle``: one rate,
    or each broker's (``--throttle auto``)."""
    adding, leaders, in_sync = _moves(port, proposed)
    if not adding or (not isinstance(throttle, Mapping) and throttle < 0):
        return []
    if writes is None:
        rates = sample_rates(port, adding, window_s, sleep=sleep, clock=clock)
        writes = {tp: r.write_bytes_per_s for tp, r in rates.items()}
    return slow_moves(adding, {tp: writes[tp] for tp in adding if tp in writes}, throttle, concurrent, leaders, in_sync)


def slow_move_line(move: SlowMove) -> str:
    """``t-0 is written at 2.0 MB/s, at or above its 1.0 MB/s share of the throttle on broker 3`` (``on broker 1,
    its leader``)."""
    return (
        f"{move.partition} is written at {format_bytes(move.write_bytes_per_s)}/s, at or above its "
        f"{format_bytes(move.share_bytes_per_s)}/s share of the throttle on broker {move.broker}"
        + (", its leader" if move.leader else "")
    )
