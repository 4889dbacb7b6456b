"""--adaptive: the per-broker limit of a batched reassignment, moved by additive increase and
multiplicative decrease (AIMD) within [1, N] from what the Admin API shows (pure, standard library only).

The executor samples the cluster once per window and hands the ``Signals`` to ``Aimd.observe``:

* **halve** (``max(1, limit // 2)``) when a partition of the cluster is at or under ``min.insync.replicas``
  (more of them than when the run started), when real under-replicated partitions appear (more than in the
  previous window; the plan's own reassigning partitions do not count, KIP-352), when a broker goes offline,
  or when copies in flight stop progressing; after a decrease the limit holds for ``hold`` windows;
* **step back** (``limit - 1``) when the limit was raised in the previous window and the aggregate copy
  rate did not rise by ``gain`` with it (the throttle is the bottleneck: more moves only add risk); it then
  holds for ``hold`` windows;
* otherwise **add one**, up to N, when the last window had every broker slot in use somewhere (raising a
  limit nobody reaches changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Signals:
    at_min_isr: int  # partitions of the cluster at or under min.insync.replicas
    under_replicated: int  # real under-replicated partitions (a replica of their own out of the ISR)
    offline_brokers: int
    stalled_copies: int  # steps in flight whose copy made no progress for a while
    rate: float | None  # aggregate copy rate, bytes/s
    saturated: bool = True  # some broker used all its slots in the window


@dataclass(frozen=True)
class Change:
    before: int
    after: int
    reason: str


class Aimd:
    def __init__(self, maximum: int, current: int | None = None, *, hold: int = 2, gain: float = 1.05) -> None:
        if maximum < 1:
            raise ValueError("the per-broker limit must be at least 1")
        self.maximum = maximum
        self.limit = min(maximum, max(1, current if current is not None else (maximum + 1) // 2))
        self.hold = hold
        self.gain = gain
        self._holding = 0
        self._baseline: Signals | None = None
        self._previous: Signals | None = None
        self._raised_from_rate: float | None = None  # the rate before the last increase

    def observe(self, signals: Signals) -> Change | None:
        """One window's signals; returns the change of the limit, if any."""
        baseline = self._baseline = self._baseline or signals
        previous, self._previous = self._previous or signals, signals
        raised_from, self._raised_from_rate = self._raised_from_rate, None
        reason = None
        if signals.at_min_isr > baseline.at_min_isr:
            reason = f"{signals.at_min_isr} partition(s) of the cluster at or under min.insync.replicas"
        elif signals.under_replicated > previous.under_replicated:
            reason = f"under-replicated partitions appeared ({previous.under_replicated} -> {signals.under_replicated})"
        elif signals.offline_brokers > previous.offline_brokers:
            reason = f"{signals.offline_brokers} broker(s) offline"
        elif signals.stalled_copies:
            reason = f"{signals.stalled_copies} copy(ies) stopped progressing"
        if reason is not None:
            self._holding = self.hold
            return self._set(max(1, self.limit // 2), reason)
        if raised_from is not None and (signals.rate or 0.0) < raised_from * self.gain:
            self._holding = self.hold
            return self._set(
                max(1, self.limit - 1),
                "the copy rate did not rise with the limit (the throttle is the bottleneck)",
            )
        if self._holding:
            self._holding -= 1
            return None
        if self.limit < self.maximum and signals.saturated and signals.rate is not None:
            self._raised_from_rate = signals.rate
            return self._set(self.limit + 1, "the cluster is healthy")
        return None

    def _set(self, limit: int, reason: str) -> Change | None:
        if limit == self.limit:
            return None
        change = Change(self.limit, limit, reason)
        self.limit = limit
        return change
