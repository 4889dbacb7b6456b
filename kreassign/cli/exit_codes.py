"""kreassign's exit statuses, all of them: the Apache tool's 0 and 1, kreassign's opt-in 2, 3 and 4, and
128 + the signal number after SIGINT or SIGTERM. The man page's EXIT STATUS section is generated from here."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1  # any error, usage errors included (the Apache tool's only failure status)
    IN_PROGRESS = 2  # --fail-if-incomplete: moves still running, or a replica behind
    NOT_AT_TARGET = 3  # --fail-if-incomplete: a partition neither moving nor at its target (or unknown)
    CANCELLED = 4  # a batched --execute stopped by --cancel


def after_signal(signum: int) -> int:
    """The shell's convention for a process ended by a signal: 130 after SIGINT, 143 after SIGTERM."""
    return 128 + signum


def descriptions() -> tuple[tuple[int, str], ...]:
    """Each status with what it means, for the man page."""
    import signal

    return (
        (
            ExitCode.OK,
            "Success. Also for --verify and --progress while moves are still running, as the Apache tool does.",
        ),
        (
            ExitCode.ERROR,
            "Any error, usage errors included; a batched --execute whose partitions could not all be moved.",
        ),
        (ExitCode.IN_PROGRESS, "With --fail-if-incomplete: --verify or --progress found moves still in progress."),
        (
            ExitCode.NOT_AT_TARGET,
            "With --fail-if-incomplete, and at the end of --progress --watch: a partition is neither moving nor at "
            "its target.",
        ),
        (ExitCode.CANCELLED, "A batched --execute was cancelled by --cancel."),
        (
            after_signal(signal.SIGINT),
            "A batched --execute was interrupted by SIGINT (its steps in flight reverted, throttles restored); "
            "--progress --watch was stopped by it.",
        ),
        (after_signal(signal.SIGTERM), "A batched --execute was stopped by SIGTERM (likewise)."),
    )
