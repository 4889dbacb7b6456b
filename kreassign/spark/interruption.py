"""Whether a Spark failure stands in for a Ctrl-C (no pyspark here: the package and its session share it)."""

from __future__ import annotations


def interrupted(exc: BaseException) -> bool:
    """Was ``exc`` raised while a Ctrl-C was being handled? py4j, interrupted while it sends a command, shuts
    its sockets down and may fail doing so ("Gateway must be connected to send cancel cmd."): that error then
    stands in for the KeyboardInterrupt, which is its context. Such a run ends as an interrupt, not as a
    Spark failure."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
