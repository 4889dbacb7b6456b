"""Sampling partition traffic with Admin calls only: each partition's log (start and end offsets, the leader's size)
and its consumer groups' committed offsets, twice over a window (``--sample-rates``, ``--throttle auto``). The rates
themselves are computed in ``kreassign.planning.traffic``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from kreassign.cluster.port import ClusterPort
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.traffic import LogSample, PartitionRates, estimate_rates


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
