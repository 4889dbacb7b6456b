"""Why the traffic goals (:mod:`kreassign.planning.netbalance`) are missed after a plan: for each side (bytes in,
bytes out) whose broker furthest from the mean ends outside the tolerance, a reason the report can say. Standard
library only.

A reason is proved when it holds for every placement of the partitions on the chosen brokers, whatever the other
goals. Bytes out of a broker are the loads of the partitions it leads (each partition one leader), bytes in the
writes of the partitions it holds a replica of (each partition ``rf`` replicas on distinct brokers); a partition
counts once per leadership (out) or per replica (in), a *slot*. Take the ``k`` partitions of most traffic, their
``S`` slots, the least traffic ``w`` of one of them, over ``B`` brokers:

* **above the band**: some broker takes ``ceil(S / B)`` of those slots, so its traffic is at least
  ``ceil(S / B) * w`` (six partitions of equal traffic led by four brokers: one leads two, a third above the
  mean);
* **below it**: when ``S < B``, at least ``B - S`` brokers take none of them and share the rest of the traffic,
  so one of them has at most ``rest / (B - S)`` (three busy partitions, four brokers: one leads none).

Only the ``k`` whose slots are fewer than ``B / tolerance`` (above) or ``B`` (below) can prove anything, so the
partitions of most traffic are all that is read. Otherwise: a broker the rack rule holds (the racks set what it
holds), replicas a leadership plan does not move (bytes in), or no move the search tried keeps the other goals and
brings the broker closer.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TrafficLimit:
    """Why one side's goal is missed: ``side`` ``"in"`` or ``"out"``; ``broker`` the one furthest from the mean
    (``value`` bytes/s), ``above`` it or below; ``edge`` the band's edge it is past. ``reason``: ``"traffic"`` (a
    proof over ``brokers`` chosen brokers, above: ``partitions`` of most traffic, ``slots`` of them, ``least`` traffic of one, ``per_broker`` the
    slots one broker takes at least, ``bound`` what that broker has at least (below: at most, ``per_broker`` 0)),
    ``"rack rule"``, ``"replicas stay"`` (a leadership plan) or ``"no move"``."""

    side: str
    broker: int
    value: float
    above: bool
    edge: float
    reason: str
    brokers: int = 0  # the chosen brokers (a proof's B)
    partitions: int = 0
    slots: int = 0
    least: float = 0.0
    per_broker: int = 0
    bound: float = 0.0


def traffic_limits(
    brokers: Sequence[int],
    values: Mapping[str, Mapping[int, float]],
    weights: Mapping[str, Sequence[float]],
    slots: Mapping[str, Sequence[int]],
    tolerance: float,
    held: Collection[int] = (),
    leaders_only: bool = False,
) -> tuple[TrafficLimit, ...]:
    """Per side (``values[side]``: each chosen broker's bytes/s after the plan; ``weights[side]``: each
    partition's traffic per slot, ``slots[side]`` its slots), the reason it misses ``tolerance`` (none when
    within). ``held``: brokers the rack rule holds; ``leaders_only``: a plan that moves no replica."""
    limits = []
    n = len(brokers)
    for side in ("in", "out"):
        held_values = [values[side].get(b, 0.0) for b in brokers]
        mean = sum(held_values) / n if n else 0.0
        if mean <= 0:
            continue
        slack = tolerance * mean * (1 + 1e-9)
        pairs = list(zip(held_values, brokers, strict=True))
        high, low = max(pairs, key=lambda vb: (vb[0], -vb[1])), min(pairs)  # the lowest id on a tie
        past = [(v - mean if above else mean - v, above, b, v) for above, (v, b) in ((True, high), (False, low))]
        past = sorted((p for p in past if p[0] > slack), key=lambda p: (-p[0], not p[1]))  # the furthest first
        if not past:
            continue
        limit = None
        for _, above, broker, value in past:  # a proof of either direction, the furthest first
            edge = mean * (1 + tolerance) if above else mean * (1 - tolerance)
            found = _proof(weights[side], slots[side], n, edge, above, tolerance)
            if found is not None:
                limit = TrafficLimit(side, broker, value, above, edge, "traffic", n, *found)
                break
        if limit is None:
            _, above, broker, value = past[0]
            edge = mean * (1 + tolerance) if above else mean * (1 - tolerance)
            reason = "rack rule" if broker in held else "replicas stay" if leaders_only and side == "in" else "no move"
            limit = TrafficLimit(side, broker, value, above, edge, reason, n)
        limits.append(limit)
    return tuple(limits)


def _proof(
    weights: Sequence[float], slots: Sequence[int], n: int, edge: float, above: bool, tolerance: float
) -> tuple[int, int, float, int, float] | None:
    """(partitions, slots, least traffic, slots per broker, bound) of the strongest proof that some broker ends
    past ``edge`` (above it, or below), or None."""
    total = sum(w * s for w, s in zip(weights, slots, strict=True))
    reach = n + 1 if not above else (len(weights) if tolerance <= 0 else math.ceil(n / tolerance) + 1)
    top = heapq.nlargest(min(reach, len(weights)), zip(weights, slots, strict=True))
    best = None
    taken = 0
    carried = 0.0
    for k, (w, s) in enumerate(top, 1):
        if w <= 0:
            break
        taken += s
        carried += w * s
        if above:
            per = math.ceil(taken / n)
            bound = per * w
            if bound > edge and (best is None or bound >= best[4]):  # a tie: the more partitions
                best = (k, taken, w, per, bound)
        else:
            if taken >= n:
                break
            bound = (total - carried) / (n - taken)
            if bound < edge and (best is None or bound < best[4]):
                best = (k, taken, w, 0, bound)
    return best
