"""Running requests through kafka-python's connection manager: which errors are worth a retry, the
pause between retries, and the exceptions that end a call at its deadline (the adapter turns them into
Java's ``TimeoutException`` text). kafka-python is imported inside functions."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

LOG = logging.getLogger(__name__)
LOG.addHandler(logging.NullHandler())

RETRY_BACKOFF_S = 0.1


class CallTimedOut(Exception):
    """Raised inside kafka-python coroutines when a call's deadline passes."""


class UnknownNodes(CallTimedOut):
    """A request names nodes the cluster does not report: Java waits for them until its deadline and
    then times out; kreassign gives up at once. ``missing`` are those ids, ``known`` the reported ones."""

    def __init__(self, missing: Iterable[int | str], known: Iterable[int | str]) -> None:
        self.missing = _node_ids(missing)
        self.known = _node_ids(known)
        super().__init__(f"unknown nodes {', '.join(self.missing)}")


def _node_ids(ids: Iterable[int | str]) -> list[str]:
    """Distinct ids as text, in numeric order."""
    return sorted({str(i) for i in ids}, key=lambda text: (len(text), text))


def retriable_kafka_python_errors() -> tuple[type[BaseException], ...]:
    import kafka.errors as errors

    return (
        errors.NodeNotReadyError,
        errors.KafkaConnectionError,
        errors.RequestTimedOutError,
        errors.KafkaTimeoutError,
        errors.UnknownBrokerIdError,
    )


async def pause_or_time_out(net: Any, deadline: float, exc: BaseException) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise CallTimedOut() from exc
    LOG.debug("retrying after %s", exc)
    await net.sleep(min(RETRY_BACKOFF_S, remaining))
