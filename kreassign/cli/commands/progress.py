"""--progress: how far each new replica is behind, as a table (rich on a terminal) or JSON; with --watch,
redrawn until nothing is left to move."""

from __future__ import annotations

from kreassign.cli.commands import OUTCOME_EXIT_CODES, Invocation


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.progress import plan_journal_of, read_progress

    path = inv.args.value("reassignment-json-file")
    text = read_input_file(path)
    with naming_input_file("--reassignment-json-file", path):
        plan = formats.parse_reassignment_json(text)
    journal = plan_journal_of(inv.port, plan, inv.args.value("journal-file"), inv.notes)
    if inv.args.has("watch"):
        return watch(inv, plan, journal)
    report = read_progress(inv.port, plan, journal_path=journal)
    inv.out(render(report, inv.json_mode, terminal=inv.terminal))
    tell_stopped_run(inv, plan, journal, report)
    return inv.outcome_status(report.outcome)


def tell_stopped_run(inv: Invocation, plan, journal: str | None, report) -> None:
    """A plan not at its target whose batched run stopped (killed, interrupted, cancelled): one line on stderr."""
    from kreassign.actions.progress import stopped_batched_run
    from kreassign.planning.progress import PlanOutcome

    if report.outcome is not PlanOutcome.COMPLETE:
        line = stopped_batched_run(plan.targets(), journal)
        if line:
            inv.notes(f"kreassign: {line}\n")


def render(report, json_mode: bool, terminal: bool) -> str:
    """JSON with ``--output json``; rich on a terminal; else a plain tabulate table."""
    from kreassign.cli import render_progress

    if json_mode:
        return render_progress.render_progress_json(report)
    if terminal:
        import shutil

        return render_progress.render_progress_rich(report, width=shutil.get_terminal_size().columns)
    return render_progress.render_progress_table(report)


def watch(inv: Invocation, plan, journal: str | None) -> int:
    """--watch: until the plan is complete (exit 0) or nothing moves it any more (exit 3), whatever
    --fail-if-incomplete says; a live table on stdout when it is a terminal, else plain lines of what changed.
    SIGINT or SIGTERM: the table is left as last drawn, one line on stderr, exit 130 or 143."""
    import time

    from kreassign.actions.progress import watch_progress
    from kreassign.cli.argv import watch_seconds
    from kreassign.cli.exit_codes import after_signal
    from kreassign.cli.render_progress import WatchLines, end_line
    from kreassign.execution.signals import Interrupted, signals_interrupt

    every = watch_seconds(inv.args)
    reports = watch_progress(inv.port, plan, every, journal_path=journal)
    report = None
    try:
        with signals_interrupt():
            if inv.terminal:
                report = _live(inv, reports, every)
            else:
                lines = WatchLines()
                for report in reports:
                    text = "\n".join(lines.lines(report, time.time()))
                    inv.out(text + "\n" if text else "")
    except Interrupted as exc:
        inv.err("Interrupted.\n")
        return after_signal(exc.signum)
    assert report is not None  # watch_progress yields at least once
    if inv.terminal:  # wrapped at the terminal's width; a pipe's stays one line
        from kreassign.cli.tty import columns, wrap_lines

        inv.out(wrap_lines(end_line(report), columns(1)) + "\n")
    else:
        inv.out(f"{time.strftime('%H:%M:%S ')}{end_line(report)}\n")
    tell_stopped_run(inv, plan, journal, report)
    return OUTCOME_EXIT_CODES[report.outcome]


def _live(inv: Invocation, reports, every: float):
    """The live table on the terminal (stdout). rich's Live would replace sys.stdout and sys.stderr by proxies
    into the display; it is told not to, and nothing here writes to sys.stderr while it runs."""
    import shutil
    import time

    from rich.console import Console
    from rich.live import Live

    from kreassign.cli.live import TerminalFile
    from kreassign.cli.render_progress import progress_view

    size = shutil.get_terminal_size()
    console = Console(file=TerminalFile(inv.out), force_terminal=True, width=size.columns, highlight=False)
    heading = "Reassignment progress, every {every:g}s (Ctrl-C to stop)"
    report = None
    live = Live(console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False, transient=False)
    live.start()
    try:
        for report in reports:
            stamp = time.strftime("%H:%M:%S")
            size = shutil.get_terminal_size()  # the terminal may have been resized since
            console.width = size.columns
            # heading, header, summary, throttle note, under-replication lines, "... more": one screen at most
            view = progress_view(
                report, f"{stamp} {heading.format(every=every)}", max_rows=max(3, size.lines - 9), width=size.columns
            )
            live.update(view, refresh=True)
    finally:
        live.stop()
    return report
