"""``--throttle auto`` before a batched run starts: each broker's capacity (``--broker-capacity`` or
``--broker-capacity-file``), its traffic over a sampling window (``--sample-rates SECONDS``, else
``DEFAULT_WINDOW_S``), and the headroom that leaves (``kreassign.planning.headroom``)."""

from __future__ import annotations

import time

from kreassign.cli.commands import Invocation
from kreassign.errors import UsageError

DEFAULT_WINDOW_S = 10
"""The sampling window of --throttle auto without --sample-rates."""


def capacities(inv: Invocation, brokers: set[int]) -> dict[int, float]:
    """Each broker's capacity: --broker-capacity for all of them, or the file's (which must name every broker of
    the plan)."""
    from kreassign.actions.common import read_input_file
    from kreassign.planning.headroom import parse_capacities

    args = inv.args
    if args.has("broker-capacity"):
        every = float(args.long_value("broker-capacity") or 0)
        return dict.fromkeys(sorted(brokers), every)
    path = args.value("broker-capacity-file")
    try:
        found = parse_capacities(read_input_file(path))
    except ValueError as exc:
        raise UsageError(f"--broker-capacity-file {path}: {exc}") from None
    missing = sorted(brokers - set(found))
    if missing:
        raise UsageError(f"--broker-capacity-file {path} names no capacity for broker(s) {','.join(map(str, missing))}")
    return {b: found[b] for b in sorted(brokers)}


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


def measure_headroom(inv: Invocation, plan, window: int | None):
    """The brokers' traffic over the window, and the AutoThrottle of the run (its first rates)."""
    from kreassign.cli.argv import max_utilisation
    from kreassign.execution.auto_throttle import AutoThrottle, TrafficSnapshots
    from kreassign.planning.headroom import auto_throttles

    brokers = {b for _, replicas in plan.partitions for b in replicas}
    described = inv.port.describe_topics(sorted({tp.topic for tp, _ in plan.partitions}))
    brokers |= {b for infos in described.values() for info in infos for b in info.replicas}
    brokers &= {b.id for b in inv.port.describe_brokers()}
    capacity = capacities(inv, brokers)
    ceiling = max_utilisation(inv.args.value("max-utilisation"))
    seconds = window or DEFAULT_WINDOW_S
    inv.err(measuring_line(brokers, seconds) + "\n")
    snapshots = TrafficSnapshots(inv.port, brokers)
    began = time.monotonic()
    snapshots.take(began)
    time.sleep(seconds)
    now = time.monotonic()
    traffic = snapshots.take(now) or {}
    # the run says the rates (and any floor) as it sets them, at its first poll
    return AutoThrottle(snapshots, capacity, ceiling, auto_throttles(capacity, traffic, ceiling), now)
