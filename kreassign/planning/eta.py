"""The one estimate of when a reassignment's copies end, shared by the batched run's panel, --progress, --watch and
their JSON (pure).

ETA = bytes left to copy / the copy rate, where the copy rate is measured over a sliding window of samples
(``PLAN_RATE_WINDOW_S``: a throttled copy moves in bursts, so a rate over one short interval swings between nothing and
twice the throttle) and bounded by the throttle when one binds the copies: the throttle's share of each copy in
flight (``throttle_shares``), summed. Unless a rate well below that bound (``SLOWER_THAN_THROTTLE``) has been
measured over ``TRUSTED_SPAN_S`` at least, the throttle's bound is the rate (nothing copied between the samples,
or more than the throttle lets through: Kafka's quota lets a burst through at first), and the estimate says so
(``Eta.bound``).

``write_rate``: how fast the partitions being copied grow meanwhile (producers). The copy must overtake it:
ETA = bytes left / (copy rate - write rate), and no ETA ("not at this throttle", ``Eta.losing``) when the copy
cannot win. Callers that measure how fast the bytes left shrink (--progress) already have the writes netted out and
pass 0.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

RATE_WINDOW_S = 10.0
"""A copy's own rate (a row of --watch) is measured against the oldest sample of about the last this many
seconds."""

PLAN_RATE_WINDOW_S = 30.0
"""The plan's rate (the ETA's) is measured over about the last this many seconds: long enough to span the gaps
between a batched run's steps (a copy that has caught up waits for its step to end and the next to start; Kafka's
quota then lets the next copy catch up). Measured on the real cluster with a window of 10 s: the panel's ETA
jumped from 36 s to 49 s at each step's end, and back."""

TRUSTED_SPAN_S = 5.0
"""A measured rate below the throttle's bound is believed once it was measured over at least this many seconds;
over less (--progress's single interval of 1 s), the throttle's bound is the rate."""

SLOWER_THAN_THROTTLE = 0.75
"""A measured rate counts as the copy's own (slower than the throttle: disk, network, gaps between steps) below
this share of the throttle's bound; above it, the bound is the rate. A throttled copy moves in fetches of up to
1 MiB per partition, so a window of 10 s at 500 kB/s holds 2 or 3 of them: measured, 400 to 600 kB/s (measured on
the real cluster, the panel's ETA then swung between 32 and 41 s within half a second)."""

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Eta:
    seconds: float | None  # None: unknown (nothing measured, nothing bounds it) or the copy cannot win
    rate: float | None = None  # bytes/s the estimate used (net of nothing: the copy rate)
    bound: bool = False  # the rate is the throttle's bound, not a measured one
    losing: bool = False  # the copy is slower than the writes: it never ends at this rate


def estimate_eta(
    left: float | None,
    measured: float | None,
    span_s: float | None,
    *,
    throttle: float | None = None,
    write_rate: float = 0.0,
) -> Eta:
    """``left`` bytes to copy; ``measured`` the copy rate over the last ``span_s`` seconds (None: one sample);
    ``throttle`` the most the copies in flight may copy per second (None: not throttled)."""
    if left is None:
        return Eta(None)
    rate = measured if measured is not None and measured > 0 else None
    bound = False
    if throttle is not None and throttle >= 0:  # 0: what the throttles leave the copies is nothing
        trusted = (
            rate is not None
            and span_s is not None
            and span_s >= TRUSTED_SPAN_S
            and rate < SLOWER_THAN_THROTTLE * throttle
        )
        if not trusted:
            rate, bound = float(throttle), True
    if left <= 0:
        return Eta(0.0, rate, bound)
    if rate is None:
        return Eta(None)
    closing = rate - write_rate
    if closing <= 0:
        return Eta(None, rate, bound, losing=True)
    return Eta(left / closing, rate, bound)


class CopyRate:
    """The copy rate over a sliding window: the bytes copied between the newest sample and the oldest one that
    is still about ``window_s`` old (the one before it is dropped once the next is that old too)."""

    def __init__(self, window_s: float = PLAN_RATE_WINDOW_S) -> None:
        self.window_s = window_s
        self._samples: deque[tuple[float, float]] = deque()

    def add(self, at: float, copied: float) -> None:
        """``copied``: the bytes copied so far (only differences count)."""
        self._samples.append((at, copied))
        while len(self._samples) > 2 and at - self._samples[1][0] >= self.window_s:
            self._samples.popleft()

    @property
    def span_s(self) -> float | None:
        if len(self._samples) < 2:
            return None
        return self._samples[-1][0] - self._samples[0][0]

    @property
    def rate(self) -> float | None:
        span = self.span_s
        if not span or span <= 0:
            return None
        return max(0.0, (self._samples[-1][1] - self._samples[0][1]) / span)


def throttle_shares(
    copies: Mapping[K, tuple[int, float | None, int | None, float | None]],
    leader_load: Mapping[int, float] | None = None,
    concurrent: Mapping[int, int] | None = None,
) -> dict[K, float]:
    """Each copy's share of the throttles that bind it (``binding_shares``, without the broker)."""
    return {key: share for key, (share, _) in binding_shares(copies, leader_load, concurrent).items()}


def binding_shares(
    copies: Mapping[K, tuple[int, float | None, int | None, float | None]],
    leader_load: Mapping[int, float] | None = None,
    concurrent: Mapping[int, int] | None = None,
) -> dict[K, tuple[float, int]]:
    """Each copy's share of the throttles that bind it: the one model of every surface (the batched run's panel
    and lines, --progress and --watch, the slow-move warnings). ``copies``: copy -> (receiving broker, its
    follower rate or None when it does not bind this copy, serving leader, its leader rate or None). The follower
    rate is shared by the throttled copies into its broker, the leader rate by those its leader serves; a copy
    gets the smaller share, and none when neither binds it.

    ``leader_load``: bytes/s a leader already sends under its throttle besides the copies: Kafka counts against
    the leader's throttle every follower fetch of a partition its list names, in-sync followers too (they are
    never held back), so the replication of the writes to a moving partition's in-sync followers leaves the
    copies that much less. Measured on the real cluster, a 16 MB copy under an 800,000 B/s throttle while a
    producer wrote 156 kB/s into it (one in-sync follower): the gap closed at 480 kB/s, not 644.

    ``concurrent``: the most copies a broker takes part in at once (a batched run's limit), when ``copies`` holds
    more than will run together (a plan not started yet).

    Returns copy -> (its share, the broker whose throttle gives it: the receiving one or the leader)."""
    load = leader_load or {}
    into: dict[int, int] = {}
    out_of: dict[int, int] = {}
    for broker, follower, leader, leader_rate in copies.values():
        if follower is not None:
            into[broker] = into.get(broker, 0) + 1
        if leader is not None and leader_rate is not None:
            out_of[leader] = out_of.get(leader, 0) + 1

    def sharing(counts: dict[int, int], broker: int) -> int:
        if concurrent is None or broker not in concurrent:
            return counts[broker]
        return max(1, min(counts[broker], concurrent[broker]))

    shares: dict[K, tuple[float, int]] = {}
    for key, (broker, follower, leader, leader_rate) in copies.items():
        limits = []
        if follower is not None:
            limits.append((follower / sharing(into, broker), broker))
        if leader is not None and leader_rate is not None:
            limits.append((max(0.0, leader_rate - load.get(leader, 0.0)) / sharing(out_of, leader), leader))
        if limits:
            shares[key] = min(limits, key=lambda limit: limit[0])
    return shares


def broker_rates(rate: float | Mapping[int, float] | None) -> Callable[[int | None], float | None]:
    """A broker's throttle rate (both ways, as a batched run, the Apache ``--throttle`` and ``--throttle auto`` set
    them) from one rate for every broker or one per broker; None where none is set (below 0: none)."""
    if rate is None or isinstance(rate, (int, float)):
        every = None if rate is None or rate < 0 else float(rate)
        return lambda broker: every
    rates = {b: float(r) for b, r in rate.items() if r >= 0}
    return lambda broker: None if broker is None else rates.get(broker)


def rated_copies(
    copies: Mapping[K, tuple[int, int | None]], rate: float | Mapping[int, float] | None
) -> dict[K, tuple[int, float | None, int | None, float | None]]:
    """``throttle_shares``'s copies under broker rates set both ways on the brokers (``broker_rates``): ``copies``:
    copy -> (receiving broker, serving leader or None)."""
    of = broker_rates(rate)
    return {key: (broker, of(broker), leader, of(leader)) for key, (broker, leader) in copies.items()}


def plan_throttle(shares: Mapping[K, float], copies: int) -> float | None:
    """The most the ``copies`` in flight may copy per second: their shares summed, when the throttle binds each
    of them (None otherwise, or with no copy in flight)."""
    if not copies or len(shares) < copies:
        return None
    return float(sum(shares.values()))
