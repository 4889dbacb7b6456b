"""An ``--execute`` as the command line asked for it: one request, built once from the options
(``cli/commands/execute.py``) and handed to the actions once, the Apache form (``actions/execute.py``) or a batched
run (``actions/batched.py``); and what a run measures before it starts (``--sample-rates``, ``--throttle auto``),
once, after the cluster's identity is read, the journal's lock taken and the hand-over checks made, so that a run
refused by them has spent no sampling window."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kreassign.actions.common import Output, discard
from kreassign.actions.traffic import find_slow_moves, slow_move_line
from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError, KreassignError, UsageError
from kreassign.execution.auto_throttle import AutoThrottle, TrafficSnapshots
from kreassign.model import ReassignmentPlan, TopicPartition
from kreassign.planning.headroom import DEFAULT_MAX_UTILISATION, auto_throttles
from kreassign.planning.steps import Limits

DEFAULT_AUTO_WINDOW_S = 10
"""The sampling window of --throttle auto without --sample-rates."""


@dataclass(frozen=True)
class AutoThrottleRequest:
    """``--throttle auto``: each broker's capacity (``--broker-capacity`` for all, or ``--broker-capacity-file``'s,
    which must name every broker of the plan) and the ceiling of utilisation."""

    capacity: float | None = None  # --broker-capacity: the same for every broker
    capacities: Mapping[int, float] = field(default_factory=dict)  # --broker-capacity-file
    capacity_file: str | None = None
    max_utilisation: float = DEFAULT_MAX_UTILISATION

    def of(self, brokers: set[int]) -> dict[int, float]:
        """Each broker's capacity; a broker the file does not name is a usage error."""
        if self.capacity is not None:
            return dict.fromkeys(sorted(brokers), float(self.capacity))
        missing = sorted(brokers - set(self.capacities))
        if missing:
            raise UsageError(
                f"--broker-capacity-file {self.capacity_file} names no capacity for broker(s) "
                f"{','.join(map(str, missing))}"
            )
        return {b: self.capacities[b] for b in sorted(brokers)}


@dataclass(frozen=True)
class ExecuteRequest:
    """Everything an ``--execute`` was asked to do. ``batched`` (any of --max-*-movements, --dry-run, --order,
    --adaptive) selects the KIP-435 executor; otherwise the Apache form."""

    plan: ReassignmentPlan
    plan_file: str | None = None  # --reassignment-json-file as named (hints, the registry of live runs)
    batched: bool = True
    additional: bool = False
    throttle: int = -1  # --throttle (bytes/s); -1: none (or auto)
    log_dir_throttle: int = -1
    timeout_ms: int = 10_000
    allow_replication_factor_change: bool = True
    sample_window: int | None = None  # --sample-rates SECONDS
    allow_slow_moves: bool = False
    auto: AutoThrottleRequest | None = None  # --throttle auto (batched runs only)
    # batched runs
    limits: Limits = field(default_factory=Limits)
    journal_path: str | None = None
    order: str = "plan"  # plan, small-first, large-first
    adaptive: bool = False
    poll_interval: float = 1.0
    stall_timeout: float = 300.0
    dry_run: bool = False
    output: str = "text"
    auto_throttle: AutoThrottle | None = None  # measured beforehand (tests); else from ``auto`` when the run starts

    def rate_changes(self) -> dict[str, int]:
        """What ``--additional`` hands to a run that moves the plan (through its control file): the rates given."""
        changes = {}
        if self.throttle >= 0:
            changes["throttle"] = self.throttle
        if self.log_dir_throttle >= 0:
            changes["log_dir_throttle"] = self.log_dir_throttle
        return changes

    @property
    def throttled(self) -> bool:
        return self.throttle >= 0 or self.log_dir_throttle >= 0 or self.auto is not None


@dataclass(frozen=True)
class Measured:
    """What a run measured before it started: the ``--throttle auto`` rates (None without it) and the throttle its
    estimates use."""

    auto_throttle: AutoThrottle | None
    throttle: int


def measure_before_run(
    port: ClusterPort,
    request: ExecuteRequest,
    notes: Output = discard,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Measured:
    """One sampling window at most: ``--throttle auto`` measures the brokers' traffic over it (``--sample-rates
    SECONDS``, else ``DEFAULT_AUTO_WINDOW_S``), and ``--sample-rates`` judges the slow moves from the same
    window (they were sampled twice before: the first step of ``--throttle auto --sample-rates 10`` started after
    21 s). A slow move refuses the run (one line) unless --allow-slow-moves, then it is named on ``notes``."""
    auto, throttle = request.auto_throttle, request.throttle
    writes: dict[TopicPartition, float] | None = None
    if auto is None and request.auto is not None:
        auto, writes = _measure_headroom(port, request, notes, sleep, clock)
    if auto is not None:
        throttle = auto.throttle
    if request.sample_window is not None:
        if throttle < 0:
            notes("kreassign: warning: --sample-rates needs a --throttle to compare the rates with; not sampled.\n")
        else:
            # under --throttle auto, each broker's own rate
            _refuse_slow_moves(port, request, auto.rates() if auto is not None else throttle, writes, notes, sleep)
    return Measured(auto, throttle)


def measuring_line(brokers: set[int], seconds: int, width: int = 80) -> str:
    """The run's first line under --throttle auto, within ``width`` columns: the brokers it measures (ranges of
    consecutive ids; their count when even that is too long) and for how long."""
    spans: list[list[int]] = []
    for b in sorted(brokers):
        if spans and b == spans[-1][1] + 1:
            spans[-1][1] = b
        else:
            spans.append([b, b])
    ids = ",".join(f"{a}" if a == z else f"{a},{z}" if z == a + 1 else f"{a}-{z}" for a, z in spans)
    for who in (f"broker{'s' if len(brokers) != 1 else ''} {ids}", f"{len(brokers)} brokers"):
        line = f"kreassign: --throttle auto: measuring traffic on {who} for {seconds} s ..."
        if len(line) <= width:
            break
    return line


def _measure_headroom(
    port: ClusterPort,
    request: ExecuteRequest,
    notes: Output,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> tuple[AutoThrottle, dict[TopicPartition, float]]:
    """The brokers' traffic over the window, the AutoThrottle of the run (its first rates), and the write rates of
    the partitions it measured (for the slow moves)."""
    assert request.auto is not None
    plan = request.plan
    brokers = {b for _, replicas in plan.partitions for b in replicas}
    described = port.describe_topics(sorted({tp.topic for tp, _ in plan.partitions}))
    brokers |= {b for infos in described.values() for info in infos for b in info.replicas}
    live = {b.id for b in port.describe_brokers()}
    if not brokers & live:
        raise CommandError(
            f"--throttle auto: none of the plan's brokers ({','.join(map(str, sorted(brokers)))}) is alive: there is "
            "no traffic to measure and no broker to set a throttle on"
        )
    brokers &= live
    capacity = request.auto.of(brokers)
    seconds = request.sample_window or DEFAULT_AUTO_WINDOW_S
    notes(measuring_line(brokers, seconds) + "\n")
    snapshots = TrafficSnapshots(port, brokers)
    began = clock()
    snapshots.take(began)
    sleep(max(seconds - (clock() - began), 0.0))
    now = clock()
    traffic = snapshots.take(now) or {}
    rooms = auto_throttles(capacity, traffic, request.auto.max_utilisation)
    # the run says the rates (and any floor) as it sets them, at its first poll
    return AutoThrottle(snapshots, capacity, request.auto.max_utilisation, rooms, now), dict(snapshots.writes)


def _refuse_slow_moves(
    port: ClusterPort,
    request: ExecuteRequest,
    throttle: int | Mapping[int, int],
    writes: Mapping[TopicPartition, float] | None,
    notes: Output,
    sleep: Callable[[float], None],
) -> None:
    """A batched run: the moves at once per broker are bounded by its limits; a slow move refuses the run (one
    line) unless --allow-slow-moves, then it is named on ``notes``."""
    limit = request.limits.brokers or request.limits.partitions
    proposed = dict(request.plan.partitions)
    concurrent = None
    if limit is not None:
        concurrent = dict.fromkeys({b for replicas in proposed.values() for b in replicas}, max(int(limit), 1))
    slow = find_slow_moves(port, proposed, throttle, request.sample_window or 0, concurrent, sleep, writes)
    if not slow:
        return
    if request.allow_slow_moves:
        for move in slow:
            notes(f"kreassign: warning: {slow_move_line(move)}: its copy may never catch up.\n")
        return
    more = f" (and {len(slow) - 1} more)" if len(slow) > 1 else ""
    raise CommandError(
        f"{slow_move_line(slow[0])}{more}: its copy would never catch up; raise --throttle, or run anyway "
        "with --allow-slow-moves"
    )


def warn_slow_moves(
    port: ClusterPort,
    proposed: Mapping[TopicPartition, tuple[int, ...]],
    throttle: int,
    window: int,
    notes: Output,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """The Apache form: every move starts at once; each slow one is a warning on ``notes`` (stdout unchanged). A
    sampling that fails is a warning too: the Apache run goes on and reports its own errors."""
    if throttle < 0:
        notes("kreassign: warning: --sample-rates needs a --throttle to compare the rates with; not sampled.\n")
        return
    try:
        slow = find_slow_moves(port, proposed, throttle, window, sleep=sleep)
    except KreassignError as exc:
        notes(f"kreassign: warning: the rates could not be sampled: {exc}\n")
        return
    for move in slow:
        notes(f"kreassign: warning: {slow_move_line(move)}: its copy may never catch up.\n")
