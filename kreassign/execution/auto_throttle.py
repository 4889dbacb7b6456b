"""``--throttle auto`` during a batched run: each broker's throttle is the headroom its traffic leaves
(``planning.headroom``), measured before the run starts and again every ``REMEASURE_S`` while it goes, next to the
adaptive loop of the per-broker limit. The traffic is read with Admin calls only (``execution.sampling``): two
snapshots of the logs and the committed offsets of every partition the brokers host, the later one taken each
re-measure, so a poll never waits for a sampling window."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kreassign.cluster.port import ClusterPort
from kreassign.execution.sampling import log_samples
from kreassign.humanize import format_bytes
from kreassign.model import TopicPartition
from kreassign.planning.headroom import Headroom, auto_throttles, broker_traffic
from kreassign.planning.traffic import LogSample, estimate_rates

REMEASURE_S = 30.0
"""How often a run under ``--throttle auto`` measures the brokers' traffic again and moves their throttles."""

CHANGE_SHARE = 0.1
"""A broker's throttle is moved when its new headroom differs from the rate set by more than this share."""


def headroom_line(rooms: Mapping[int, Headroom]) -> str:
    """``Throttle per broker (--throttle auto): 1: 9.5 MiB/s, 2: 9.5 MiB/s; floor on broker 3 (...)``."""
    rates = ", ".join(f"{b}: {format_bytes(room.rate)}/s" for b, room in sorted(rooms.items()))
    line = f"Throttle per broker (--throttle auto): {rates}"
    floored = [room for room in rooms.values() if room.floored]
    for room in floored:
        busiest = max(room.traffic.bytes_in, room.traffic.bytes_out)
        line += (
            f"; broker {room.broker} serves {format_bytes(busiest)}/s of traffic, which leaves less than the floor: "
            f"its throttle is the floor ({format_bytes(room.rate)}/s, 5 % of its capacity)"
        )
    return line


class TrafficSnapshots:
    """The traffic of some brokers between two snapshots of their partitions' logs and committed offsets."""

    def __init__(self, port: ClusterPort, brokers: set[int]) -> None:
        self.port, self.brokers = port, brokers
        self._last: tuple[float, dict, dict, dict] | None = None
        self.writes: dict[TopicPartition, float] = {}  # bytes/s written to each partition, between the last two

    def take(self, now: float) -> dict | None:
        """A new snapshot; the brokers' traffic since the previous one (None for the first)."""
        described = self.port.describe_topics(self.port.list_topic_names())
        layout = {
            TopicPartition(topic, info.partition): (info.leader, tuple(info.replicas))
            for topic, infos in described.items()
            for info in infos
            if set(info.replicas) & self.brokers
        }
        logs: dict[TopicPartition, LogSample] = log_samples(self.port, list(layout))
        committed = self.port.committed_offsets(list(layout))
        previous, self._last = self._last, (now, layout, logs, committed)
        if previous is None or now <= previous[0]:
            return None
        rates = estimate_rates(previous[2], logs, previous[3], committed, now - previous[0])
        writes = {tp: r.write_bytes_per_s for tp, r in rates.items()}
        reads = {tp: r.read_bytes_per_s for tp, r in rates.items()}
        self.writes = writes
        return broker_traffic(layout, writes, reads)  # type: ignore[arg-type]


class AutoThrottle:
    """Sets each broker's throttle to its headroom; ``tick`` re-measures every REMEASURE_S."""

    def __init__(
        self,
        snapshots: TrafficSnapshots,
        capacities: Mapping[int, float],
        max_utilisation: float,
        rooms: Mapping[int, Headroom],
        measured_at: float,
    ) -> None:
        self.snapshots = snapshots
        self.capacities = dict(capacities)
        self.max_utilisation = max_utilisation
        self.rooms = dict(rooms)  # the rates to set
        self.set: dict[int, int] = {}  # the rates set
        self.measured_at = measured_at

    @property
    def throttle(self) -> int:
        """The run's one throttle (its journal's record): the least of the brokers' (-1 with none)."""
        return min((room.rate for room in self.rooms.values()), default=-1)

    def rates(self) -> dict[int, int]:
        """Each broker's throttle, for the run's estimates (ETA, shares): the rates set, else those to set."""
        return {**{b: room.rate for b, room in self.rooms.items()}, **self.set}

    def handed_over(self, rate: int, event: Callable[[str], object]) -> None:
        """The operator handed the run a throttle (``--additional --throttle``): it holds from now on, and auto
        adjusts no more (the run drops this object)."""
        event(f"--throttle auto stops adjusting: the throttle of {rate} B/s handed over holds from now on")

    def tick(self, run: Any) -> int:
        """Sets the rates that differ from those set (all at the first tick) on the live brokers of ``run`` (the
        ``BatchedExecutor``), measuring again when due; returns the run's throttle."""
        now, event = run.clock(), run.reporter.event
        if now - self.measured_at >= REMEASURE_S:
            self.measured_at = now
            try:
                traffic = self.snapshots.take(now)
            except Exception as exc:  # the rates set stay; the next re-measure tries again
                event(f"--throttle auto: the brokers' traffic could not be read ({exc}); the throttles stay")
                traffic = None
            if traffic is not None:
                self.rooms = auto_throttles(self.capacities, traffic, self.max_utilisation)
        moved = {
            b: room
            for b, room in self.rooms.items()
            if b in run._live and (b not in self.set or abs(room.rate - self.set[b]) > CHANGE_SHARE * self.set[b])
        }
        if moved:
            for b, room in sorted(moved.items()):
                run.throttles.set_rates([b], room.rate, -1, respect_others=True)
                self.set[b] = room.rate
            event(headroom_line(moved))
        return self.throttle
