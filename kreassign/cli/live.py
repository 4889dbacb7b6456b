"""Progress of a batched run on stderr: a rich live display on a terminal, a plain line every few
seconds otherwise. stdout keeps the command's own text."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from kreassign.execution.executor import Outcome, Progress
from kreassign.execution.journal import RunStatus, how_it_ended
from kreassign.humanize import format_bytes, format_duration, never_ends


def progress_line(p: Progress) -> str:
    line = (
        f"{p.done}/{p.partitions} partitions done, {p.moving} moving, {p.waiting} waiting; "
        f"steps {p.steps_done}/{p.steps_total}"
    )
    if p.bytes_total is not None and p.bytes_moved is not None:
        line += f"; {format_bytes(p.bytes_moved)} of {format_bytes(p.bytes_total)} copied"
        if p.rate is not None:
            line += f", {format_bytes(p.rate)}/s"
        if p.write_rate:
            line += f", written at {format_bytes(p.write_rate)}/s"
        if p.rate is not None or p.eta is not None or p.eta_losing:
            line += f", ETA {eta_text(p)}"
    line += f"; elapsed {format_duration(p.elapsed)}"
    return line


def eta_text(p: Progress) -> str:
    """``1m20s``, or ``~1m20s`` when it divides by the throttle's bound (as --progress marks it); ``not at this
    throttle`` when the copies cannot overtake the writes."""
    if p.eta_losing:
        return never_ends(p.eta_bound)
    return ("~" if p.eta_bound and p.eta is not None else "") + format_duration(p.eta)


class PlainReporter:
    """For logs and pipes: events as they happen, the progress line every ``interval`` seconds."""

    def __init__(
        self, write: Callable[[str], object], interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.write = write
        self.interval = interval
        self.clock = clock
        self._last: float | None = None

    def event(self, message: str) -> None:
        self.write(f"kreassign: {message}\n")

    def progress(self, progress: Progress) -> None:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        self.write(
            f"kreassign: {progress_line(progress)}\n" + "".join(f"kreassign:   {note}\n" for note in progress.notes)
        )

    def start(self) -> None:
        pass

    def finish(self, outcome: Outcome) -> None:
        pass

    def stop(self) -> None:
        pass


def _ended(outcome: Outcome) -> str:
    """ "interrupted by SIGINT", "cancelled by --cancel (pid 12)", "failed (why)"."""
    return how_it_ended(outcome.status, outcome.message)


def outcome_line(outcome: Outcome, throttled: bool) -> str:
    """How the run ended, in one line for the terminal when stdout (which has the full summary) is elsewhere."""
    if outcome.status is RunStatus.COMPLETED:
        line = f"Batched reassignment complete: {outcome.partitions} partition(s) at their target"
    else:
        line = (
            f"Batched reassignment {_ended(outcome)}: {outcome.partitions_done} of {outcome.partitions} "
            "partition(s) at their target"
        )
    line += f" after {outcome.steps_done} step(s)"
    if outcome.reverted:
        line += f"; reverted the steps in flight of {len(outcome.reverted)} partition(s)"
    if outcome.failures:
        line += f"; {len(outcome.failures)} partition(s) failed"
    if throttled:
        line += "; throttles restored"
    return line + ". The summary is on stdout.\n"


class TerminalFile:
    """A file for rich that writes through one of the command's writers (``err`` for the batched panel,
    ``out`` for --progress --watch): secrets scrubbed, a broken pipe quiet."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self.write_text = write

    def write(self, text: str) -> int:
        self.write_text(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def _whole(method):
    """A call of the live display runs whole: SIGINT/SIGTERM arriving meanwhile interrupt the run once it has
    returned. Cut off half-way, a frame leaves the panel's cursor moves and escape sequences broken, and the
    last frame and the line below it are drawn over the wrong rows."""

    @functools.wraps(method)
    def whole(self, *args):
        from kreassign.execution.signals import whole_request

        with whole_request():
            return method(self, *args)

    return whole


PANEL_WIDTH = 62
"""The batched panel's width (the terminal's when narrower), the same in every frame: its value column (46) holds
the longest writes row (``1023.9 MiB/s into the partitions being copied``); a longer row (a note) wraps in it
rather than widen the panel, and the bars fill it."""

LABEL_WIDTH = len("partitions")
"""The panel's label column: its longest label."""


class RichReporter:
    """On a terminal: a live panel (partitions done / moving / waiting, bytes, rate, ETA), written to ``err``."""

    def __init__(self, write: Callable[[str], object]) -> None:
        from rich.console import Console

        from kreassign.cli.tty import columns

        width = columns(2)  # the panel is on stderr's terminal
        self.console = Console(file=TerminalFile(write), force_terminal=True, width=width, highlight=False)
        self._live = None
        self._last: Progress | None = None
        self._width = min(PANEL_WIDTH, width)
        self._values = max(10, self._width - 4 - LABEL_WIDTH - 2)  # less the borders, padding, labels, gap

    @_whole
    def start(self) -> None:
        from rich.live import Live

        # rich's Live would replace sys.stderr (and sys.stdout) by proxies into the display while it runs; the
        # display itself writes through ``err``, which is sys.stderr: it would write into itself for ever
        self._live = Live(
            self._render(None),
            console=self.console,
            refresh_per_second=4,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    @_whole
    def finish(self, outcome: Outcome) -> None:
        """The panel's last frame shows how the run ended, then the display stops."""
        if self._live is not None:
            self._live.update(self._render_outcome(outcome), refresh=True)
        self.stop()

    @_whole
    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    @_whole
    def event(self, message: str) -> None:
        self.console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {message}", highlight=False)

    @_whole
    def progress(self, progress: Progress) -> None:
        self._last = progress
        if self._live is not None:
            self._live.update(self._render(progress))

    def _grid(self):
        """The panel's two columns: the labels, and the values (as wide as the bars)."""
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", width=LABEL_WIDTH, no_wrap=True)
        table.add_column(width=self._values)
        return table

    def _bar(self, total: int, completed: int):
        from rich.progress_bar import ProgressBar

        return ProgressBar(total=max(1, total), completed=completed, width=self._values)

    def _panel(self, table, title: str = "kreassign batched reassignment"):
        from rich.panel import Panel

        return Panel(table, title=title, width=self._width)

    def _render_outcome(self, outcome: Outcome):
        last = self._last
        table = self._grid()
        table.add_row("status", "complete" if outcome.status is RunStatus.COMPLETED else _ended(outcome))
        table.add_row("partitions", f"{outcome.partitions_done} of {outcome.partitions} at their target")
        if outcome.reverted:
            table.add_row("reverted", f"the steps in flight of {len(outcome.reverted)} partition(s)")
        steps_total = outcome.steps_done if last is None else max(outcome.steps_done, last.steps_total)
        if outcome.status is RunStatus.COMPLETED:
            steps_total = outcome.steps_done
        table.add_row("steps", f"{outcome.steps_done} of {steps_total}")
        table.add_row("", self._bar(steps_total, outcome.steps_done))
        if outcome.bytes_moved is not None:
            total = outcome.bytes_total if outcome.bytes_total is not None or last is None else last.bytes_total
            copied = format_bytes(outcome.bytes_moved)
            table.add_row("copied", copied if total is None else f"{copied} of {format_bytes(total)}")
        table.add_row("elapsed", format_duration(outcome.elapsed))
        return self._panel(table)

    def _render(self, p: Progress | None):
        table = self._grid()
        if p is None:
            table.add_row("kreassign", "starting ...")
            return self._panel(table, "batched reassignment")
        table.add_row("partitions", f"{p.done} done, {p.moving} moving, {p.waiting} waiting (of {p.partitions})")
        table.add_row("steps", f"{p.steps_done} of {p.steps_total}")
        table.add_row("", self._bar(p.steps_total, p.steps_done))
        if p.bytes_total is not None and p.bytes_moved is not None:
            table.add_row("copied", f"{format_bytes(p.bytes_moved)} of {format_bytes(p.bytes_total)}")
            table.add_row("", self._bar(p.bytes_total, p.bytes_moved))
            rate = "measuring" if p.rate is None else f"{format_bytes(p.rate)}/s"
            table.add_row("rate", rate)
            if p.write_rate:  # the partitions being copied take writes: the copies must overtake them
                table.add_row("writes", f"{format_bytes(p.write_rate)}/s into the partitions being copied")
            table.add_row("ETA", eta_text(p))
        table.add_row("elapsed", format_duration(p.elapsed))
        for note in p.notes:
            table.add_row("note", note)
        return self._panel(table)


def make_reporter(err: Callable[[str], object], terminal: bool, interval: float = 10.0):
    """The rich display when ``err`` is stderr on a terminal, else plain lines written to ``err``."""
    if terminal:
        return RichReporter(err)
    return PlainReporter(err, interval=interval)
