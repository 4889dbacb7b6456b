"""SIGINT and SIGTERM during a batched run: the run stops at a safe point and cleans up.

A signal raises :class:`Interrupted` once, in the main thread, wherever the run is, except inside
:func:`signals_deferred` (the clean-up: later signals are only recorded) and inside :func:`whole_request`
(a request that changes the cluster: the signal is raised when the request has returned). A request
abandoned half-way is still on the wire: the change it carries can reach the controller after the clean-up
has read the configs or cancelled the steps, and then outlive the run (a throttle list left set, a step
started after its cancellation).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; the run stops and cleans up. A BaseException, like KeyboardInterrupt, so
    that no ``except Exception`` on the way (the Kafka clients', the adapter's) mistakes it for a failed call."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Signals:
    """What the SIGINT/SIGTERM handler does: raise ``Interrupted`` once, unless held (see the module)."""

    fired: ClassVar[list[int]] = []
    deferring = 0
    raised = False

    @classmethod
    def handler(cls, signum: int, _frame: object) -> None:
        if cls.fired:
            return  # one interruption is enough: let the clean-up finish
        cls.fired.append(signum)
        if not cls.deferring:
            cls.raised = True
            raise Interrupted(signum)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT/SIGTERM raise ``Interrupted`` once; later ones, and any that come during clean-up
    (``signals_deferred``), are only recorded so that the clean-up can finish."""
    _Signals.fired = []
    _Signals.raised = False
    previous = {s: signal.signal(s, _Signals.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        _Signals.fired = []  # a signal recorded during the clean-up was for this run only


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within this block (the clean-up) a signal does not interrupt; it is only recorded."""
    _Signals.deferring += 1
    try:
        yield
    finally:
        _Signals.deferring -= 1


@contextmanager
def whole_request() -> Iterator[None]:
    """One request that changes the cluster (a step submitted or cancelled, an election, a config written)
    runs to its answer: a signal that arrives meanwhile raises ``Interrupted`` when the block ends (even if
    the request failed), unless a clean-up is running (then it stays recorded only)."""
    _Signals.deferring += 1
    try:
        yield
    finally:
        _Signals.deferring -= 1
        if _Signals.fired and not _Signals.deferring and not _Signals.raised:
            _Signals.raised = True
            raise Interrupted(_Signals.fired[0])
