"""What a batched run tells while it runs (``Progress``, to a ``Reporter``) and how it ended (``Outcome``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from kreassign.errors import CommandError
from kreassign.execution.journal import RunStatus
from kreassign.model import TopicPartition


@dataclass
class Progress:
    """What a progress display shows."""

    partitions: int
    done: int
    moving: int
    waiting: int
    steps_done: int
    steps_total: int
    bytes_total: int | None
    # bytes copied: what the new replicas of the finished steps and of those in flight received (their logs'
    # growth, as last read: execution.copy_meter); the final line counts the same (Outcome.bytes_moved)
    bytes_moved: int | None
    rate: float | None  # bytes/s
    eta: float | None  # seconds (kreassign.planning.eta, as --progress says it)
    elapsed: float
    notes: list[str] = field(default_factory=list)
    eta_bound: bool = False  # the ETA divides by the throttle's bound (no rate below it measured long enough)
    eta_losing: bool = False  # no ETA: the copies are slower than their partitions are written ("not at this throttle")
    write_rate: float = 0.0  # bytes/s the partitions being copied are written meanwhile (times their new replicas)


class Reporter(Protocol):
    def event(self, message: str) -> None: ...

    def progress(self, progress: Progress) -> None: ...


class StalledError(CommandError):
    """The run cannot make progress (a broker it needs is away, the cluster keeps failing) for too long."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} (--stall-timeout-ms); stopped the batched reassignment, reverted its steps in flight and "
            "restored throttles. Run the same command again to resume"
        )


@dataclass
class Outcome:
    status: RunStatus  # completed, cancelled, interrupted or failed
    steps_done: int
    partitions_done: int
    partitions: int
    elapsed: float
    bytes_moved: int | None  # bytes copied, as the display counts them (Progress.bytes_moved) before the clean-up
    failures: dict[TopicPartition, str] = field(default_factory=dict)
    reverted: list[TopicPartition] = field(default_factory=list)
    message: str = ""
    signum: int | None = None  # the signal that interrupted the run
    bytes_reverted: int = 0  # of bytes_moved, what the steps reverted by the clean-up had copied (discarded)
    bytes_total: int | None = None  # the bytes the run copies, as the display counts them when it ended
