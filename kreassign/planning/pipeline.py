"""The balanced plan's driver-side stages as one declared list, and the request that carries its options.
Standard library only.

Either engine (local or Spark) gives a plan that moves the fewest replicas; then the stages of :data:`STAGES`
run on the driver, in order, each under its guard, so both engines end with the same plan. A stage is one
:class:`Stage` entry: its name, its guard (does the request turn it on?), what it runs on the plan
(:class:`StageJob`: the partitions, the plan changed in place, the rules, the disks), the field of the plan
report (:class:`kreassign.planning.quality.PlanQuality`) its result goes to, and how it runs when the Spark
engine plans from a snapshot file without collecting the plan (``scoped``: on a scope of topics and the others'
totals, :mod:`kreassign.planning.scope`; ``idle``: the report when it has nothing to do there; else ``whole``:
whether it needs the whole plan collected). Adding a goal is adding an entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kreassign.planning.budget import spend_move_budget
from kreassign.planning.bytebalance import DEFAULT_TOLERANCE, balance_bytes, band_of, unchanged_band
from kreassign.planning.capacity import disk_bounds, fit_disk_capacity
from kreassign.planning.context import BalanceContext, Row
from kreassign.planning.logdirs import choose_log_dirs
from kreassign.planning.netbalance import DEFAULT_TRAFFIC_TOLERANCE, Rates, balance_traffic, known_rates
from kreassign.planning.planstate import MoveBudget, Rest

DEFAULT_MAX_DISK_USAGE = 0.8
"""``--max-disk-usage``'s default: a broker of known capacity ends at most 80 % full (or no fuller than now)."""


@dataclass(frozen=True)
class BalanceRequest:
    """What ``--generate --strategy balanced`` was asked: the topics and brokers (Apache's two inputs), the
    engine, and the options of the driver-side stages."""

    topics_json: str
    broker_list: str
    rack_aware: bool = True
    replication_factor: int | None = None
    engine: str = "auto"
    spark_master: str | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    max_disk_usage: float = DEFAULT_MAX_DISK_USAGE
    move_budget: MoveBudget | None = None
    bytes_tolerance: float | None = DEFAULT_TOLERANCE
    traffic_tolerance: float = DEFAULT_TRAFFIC_TOLERANCE  # bytes in and out per broker, when rates are known
    sample_rates: float | None = None  # seconds: the rates sampled on a live cluster over this window
    texts: bool = True  # False: the result's JSON texts are left empty (the documents printed a piece at a time)


@dataclass
class StageJob:
    """A stage's inputs: ``rows`` (the partitions as they are now), ``plan`` (changed in place), the rules,
    the disks (``capacities``, ``other_bytes``, the request's limit), the brokers the rack rule holds away from
    the mean (``held``), ``rest`` (the others' totals when ``rows`` are a scope of topics), the log dirs of
    the chosen brokers (``volumes``) and the partitions' traffic (``rates``)."""

    rows: Sequence[Row]
    plan: dict[tuple[str, int], list[int]]
    ctx: BalanceContext
    request: BalanceRequest
    capacities: Mapping[int, int | None]
    other_bytes: Mapping[int, int]
    held: Collection[int] = ()
    rest: Rest | None = None
    volumes: Mapping[int, Sequence[Any]] = field(default_factory=dict)
    rates: Rates | None = None  # per partition (bytes written, bytes read) per second; None: unknown


@dataclass(frozen=True)
class Stage:
    """One driver-side stage (see the module). ``whole(view)`` and ``idle(view)`` read the Spark engine's view
    of a plan it keeps (``view.ctx``, ``view.totals``, ``view.spreads``, ``view.capacities``,
    ``view.other_bytes``, ``view.request``, ``view.holds``, ``view.several``)."""

    name: str
    report: str  # the PlanQuality field of its result ("" when the report shows none)
    guard: Callable[[StageJob], bool]
    run: Callable[[StageJob], Any]
    scoped: bool = False
    whole: Callable[[Any], bool] = lambda view: True
    idle: Callable[[Any], Any] | None = None


def _disk(job: StageJob):
    return fit_disk_capacity(job.rows, job.plan, job.ctx, job.capacities, job.other_bytes, job.request.max_disk_usage)


def _disk_needs_plan(view) -> bool:
    """:func:`kreassign.planning.capacity.fit_disk_capacity`'s test, from the totals: a broker past its bound."""
    ctx, capacities = view.ctx, view.capacities
    if not any(capacities.get(b) for b in ctx.brokers):
        return False
    before, after = (Counter(view.other_bytes) + Counter(side) for side in view.totals["disk"])
    bounds = disk_bounds(before, capacities, ctx.brokers, view.request.max_disk_usage)
    return any(after[b] > bound for b, bound in bounds.items())


def _disks(job: StageJob) -> tuple[Mapping[int, int | None], Mapping[int, int], float]:
    """What the stages that move bytes read of the disks: capacities, the rest of each disk, the limit."""
    return job.capacities, job.other_bytes, job.request.max_disk_usage


def _bytes_band(job: StageJob):
    tolerance = job.request.bytes_tolerance
    assert tolerance is not None
    return balance_bytes(job.rows, job.plan, job.ctx, tolerance, *_disks(job), rest=job.rest, held=job.held)


def _bytes_band_idle(view):
    """The band unchanged when every broker is inside it and no topic's replicas or leaders are 2 or more
    apart (the stage's topic pass looks at no other topic), else None."""
    tolerance, brokers = view.request.bytes_tolerance, view.ctx.brokers
    on = view.totals["bytes"][1]
    _, low, high = band_of(sum(on.get(b, 0) for b in brokers), len(brokers), tolerance)
    if (
        view.holds
        or any(not low <= on.get(b, 0) <= high for b in brokers)
        or any(s[1][0] >= 2 or s[3][0] >= 2 for s in view.spreads.values())
    ):
        return None
    return unchanged_band(on, brokers, tolerance)


def _move_budget(job: StageJob):
    budget = job.request.move_budget
    assert budget is not None
    return spend_move_budget(job.rows, job.plan, job.ctx, budget, *_disks(job), rest=job.rest)


def _traffic(job: StageJob):
    assert job.rates is not None
    request = job.request
    return balance_traffic(
        job.rows,
        job.plan,
        job.ctx,
        job.rates,
        request.traffic_tolerance,
        *_disks(job),
        bytes_tolerance=request.bytes_tolerance,
        held=job.held,
    )


def _log_dirs(job: StageJob):
    return choose_log_dirs(job.rows, job.plan, job.volumes, job.ctx.brokers, job.request.max_disk_usage)


STAGES: tuple[Stage, ...] = (
    Stage("disk capacity", "", lambda job: True, _disk, whole=_disk_needs_plan),
    Stage(
        "bytes band",
        "byte_band",
        lambda job: job.request.bytes_tolerance is not None,
        _bytes_band,
        scoped=True,
        idle=_bytes_band_idle,
    ),
    Stage("move budget", "budget", lambda job: job.request.move_budget is not None, _move_budget, scoped=True),
    # after the hard goals (rack rule, counts, bytes band, disks): bytes in and out per broker; it reads every
    # partition's replicas (a broker's traffic is that of all it holds and leads)
    Stage("traffic", "traffic", lambda job: known_rates(job.rates), _traffic),
    Stage("log dirs", "log_dirs", lambda job: True, _log_dirs, whole=lambda view: view.several),
)
"""The driver-side stages, in the order they run (the same list for both engines)."""


def guarded(job: StageJob, stages: Sequence[Stage] = STAGES) -> list[Stage]:
    """The stages ``job`` (its request, its rates) turns on, in order."""
    return [stage for stage in stages if stage.guard(job)]


def run_stages(job: StageJob, stages: Sequence[Stage] = STAGES) -> dict[str, Any]:
    """Runs the stages ``job`` turns on, in order, on ``job.plan`` (changed in place); each result by its report
    field."""
    results: dict[str, Any] = {}
    for stage in guarded(job, stages):
        done = stage.run(job)
        if stage.report:
            results[stage.report] = done
    return results
