"""How long a batched run has waited for the cluster: brokers its unfinished steps need that are offline, and
calls the cluster keeps failing in a way Kafka calls retriable. Either stops the run after --stall-timeout-ms."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from kreassign.errors import KreassignError
from kreassign.execution.outcome import StalledError

FAILING_REMINDER_S = 30.0
"""While the cluster keeps failing, how often the run says it is still retrying (and how long it has left)."""


class StallWatch:
    def __init__(self, stall_timeout: float, event: Callable[[str], None]) -> None:
        self.stall_timeout = stall_timeout
        self.event = event
        self.offline_since: dict[int, float] = {}
        self._failing_since: float | None = None
        self._failing_told = 0.0

    def answered(self) -> None:
        """A poll went through: the cluster no longer fails."""
        self._failing_since = None

    def failing(self, exc: KreassignError, now: float) -> None:
        """The cluster failed a call in a way Kafka calls retriable (controller moving, broker down ...)."""
        if self._failing_since is None:
            self._failing_since = self._failing_told = now
            self.event(f"The cluster did not answer ({exc.message}); retrying")
        elif now - self._failing_told >= FAILING_REMINDER_S and now - self._failing_since <= self.stall_timeout:
            self._failing_told = now
            left = self.stall_timeout - (now - self._failing_since)
            self.event(
                f"The cluster has not answered for {now - self._failing_since:.0f} s ({exc.message}); retrying, "
                f"stopping in {left:.0f} s (--stall-timeout-ms)"
            )
        elif now - self._failing_since > self.stall_timeout:
            raise StalledError(
                f"the cluster has been failing for {now - self._failing_since:.0f} s (last: {exc.message})"
            ) from None

    def offline(self, now: float, live: set[int], unfinished_on: Counter[int], in_flight: set[int]) -> list[int]:
        """Brokers the unfinished steps need (``unfinished_on``: unfinished partitions whose target has the
        broker; ``in_flight``: the targets' brokers of the steps in flight): report those offline, stop when one
        stays away too long. Returns the brokers back."""
        for broker in sorted((set(self.offline_since) | (set(unfinished_on) - live)) - live):
            if unfinished_on[broker] <= 0 and broker not in in_flight:
                self.offline_since.pop(broker, None)
                continue
            if broker not in self.offline_since:
                self.offline_since[broker] = now
                self.event(f"Broker {broker} is offline; steps that need it wait")
            elif now - self.offline_since[broker] > self.stall_timeout:
                raise StalledError(f"broker {broker} has been offline for {now - self.offline_since[broker]:.0f} s")
        back = sorted(set(self.offline_since) & live)
        for broker in back:
            self.offline_since.pop(broker)
            self.event(f"Broker {broker} is back")
        return back
