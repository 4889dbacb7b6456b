"""Sampling partition traffic over a window with Admin calls only, and naming the moves that cannot catch up
with their partition's writes at the throttle they will get (``--sample-rates``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from kreassign.cluster.port import ClusterPort
from kreassign.humanize import format_bytes
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.traffic import LogSample, PartitionRates, SlowMove, estimate_rates, slow_moves
from kreassign.snapshot import ClusterSnapshot, with_rates


def log_samples(port: ClusterPort, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, LogSample]:
    described = port.describe_topics(sorted({tp.topic for tp in partitions}))
    leaders = {
        TopicPartition(topic, info.partition): info.leader
        for topic, infos in described.items()
        for info in infos
        if info.leader is not None and info.leader >= 0
    }
    wanted = [tp for tp in partitions if tp in leaders]
    sizes = port.replica_sizes(sorted(set(leaders.values())), wanted) if wanted else {}
    starts = port.log_start_offsets(wanted)
    ends = port.log_end_offsets(wanted)
    samples = {}
    for tp in wanted:
        if tp in starts and tp in ends:
            size = sizes.get(TopicPartitionReplica(tp.topic, tp.partition, leaders[tp]))
            samples[tp] = LogSample(starts[tp], ends[tp], size)
    return samples


COMMITS_EVERY_S = 1.0
"""How often ``sample_rates`` reads the groups' committed offsets during its window: a group commits in steps (a Java
consumer every 5 s), and its read rate is measured between the commits seen (``planning.traffic.read_rate``)."""


def sample_rates(
    port: ClusterPort,
    partitions: Iterable[TopicPartition],
    window_s: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[TopicPartition, PartitionRates]:
    """Bytes written and read per second of each partition, from two samples about ``window_s`` apart, and the
    groups' committed offsets read every ``COMMITS_EVERY_S`` between them. The window is the time measured from
    the start of the first round of Admin calls to the start of the second: each value is read at the same point
    of its round, so slow calls neither lengthen nor shorten it (the end of the second round would add that
    round's duration)."""
    wanted = list(dict.fromkeys(partitions))
    if not wanted:
        return {}
    began = clock()
    before = log_samples(port, wanted)
    committed_before = port.committed_offsets(wanted)
    between: list[tuple[float, dict]] = []
    while committed_before and window_s - (clock() - began) > COMMITS_EVERY_S * 1.5:
        sleep(COMMITS_EVERY_S)
        committed = port.committed_offsets(wanted)
        between.append((clock() - began, committed))  # read as its call ends
    sleep(max(window_s - (clock() - began), 0.0))
    second = clock()
    after = log_samples(port, wanted)
    committed_after = port.committed_offsets(wanted)
    elapsed = max(second - began, 1e-3)
    return estimate_rates(before, after, committed_before, committed_after, elapsed, between)  # type: ignore[return-value]


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
    clock: Callable[[], float] = time.monotonic,
) -> list[SlowMove]:
    """The moves of ``proposed`` whose partition is written at or above the throttle share its copy gets (the one
    model of the run's ETA and of --progress: ``planning.traffic.slow_moves``)."""
    adding, leaders, in_sync = _moves(port, proposed)
    if not adding or (not isinstance(throttle, Mapping) and throttle < 0):
        return []
    rates = sample_rates(port, adding, window_s, sleep=sleep, clock=clock)
    writes = {tp: r.write_bytes_per_s for tp, r in rates.items()}
    return slow_moves(adding, writes, throttle, concurrent, leaders, in_sync)


def slow_move_line(move: SlowMove) -> str:
    """``t-0 is written at 2.0 MB/s, at or above its 1.0 MB/s share of the throttle on broker 3`` (``on broker 1,
    its leader``)."""
    return (
        f"{move.partition} is written at {format_bytes(move.write_bytes_per_s)}/s, at or above its "
        f"{format_bytes(move.share_bytes_per_s)}/s share of the throttle on broker {move.broker}"
        + (", its leader" if move.leader else "")
    )
