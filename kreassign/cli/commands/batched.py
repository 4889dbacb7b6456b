"""--execute with --max-*-movements or --dry-run: the KIP-435 executor, attached until the plan is done."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode, after_signal
from kreassign.execution.journal import RunStatus

RUN_EXIT_CODES = {
    RunStatus.COMPLETED: ExitCode.OK,
    RunStatus.FAILED: ExitCode.ERROR,
    RunStatus.CANCELLED: ExitCode.CANCELLED,
}
"""How a batched run ended -> exit status (an interrupted one: 128 + the signal number)."""


def run_batched(inv: Invocation, request) -> int:
    """``request``: the ``ExecuteRequest`` of the command line (cli/commands/execute.py), batched."""
    import signal
    from contextlib import ExitStack

    from kreassign.actions.batched import execute_batched
    from kreassign.cli.live import make_reporter
    from kreassign.execution.signals import Interrupted, signals_deferred, signals_interrupt

    reporter = make_reporter(inv.err, inv.err_terminal)
    own = None
    if inv.terminal:  # kreassign's own lines wrap at the terminal's width; Apache's text, and a pipe's, never
        from kreassign.cli.tty import wrapping

        own = wrapping(inv.out, 1)
    throttled = request.throttled
    # the operator watches stderr's terminal while stdout goes elsewhere (``> out.txt``): one line there too
    elsewhere = inv.err_terminal and not inv.terminal

    late = ExitStack()

    def finish(outcome) -> None:
        # the run is over and cleaned up: a late Ctrl-C no longer cuts its report short nor changes its status
        late.enter_context(signals_deferred())
        reporter.finish(outcome)
        if elsewhere and request.output != "json":
            from kreassign.cli.live import outcome_line
            from kreassign.cli.tty import columns, wrap_lines

            inv.err(wrap_lines(outcome_line(outcome, throttled), columns(2)))

    # Ctrl-C is the run's own from here on: a second one, or one once the run has ended (the clients closing),
    # is ignored rather than cutting in with a KeyboardInterrupt (the CLI puts the handler back, see app.run)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_interrupt(), late:
            outcome = execute_batched(
                inv.port,
                request,
                inv.out,
                reporter,
                notes=inv.notes,
                on_start=reporter.start,
                on_finish=finish,
                own=own,
            )
    except Interrupted as exc:  # before the executor started, or after it had finished and cleaned up
        reporter.stop()
        inv.err(f"Interrupted by {exc}.\n")
        return after_signal(exc.signum)
    except Exception:
        reporter.stop()
        if elsewhere:  # the Error: line goes to stdout, like the Apache tool's
            inv.err("Batched reassignment stopped by an error; the Error: line is on stdout.\n")
        raise
    finally:
        reporter.stop()
    if outcome is None:
        return ExitCode.OK
    if outcome.status is RunStatus.INTERRUPTED and outcome.signum is not None:
        return after_signal(outcome.signum)
    return RUN_EXIT_CODES.get(outcome.status, ExitCode.ERROR)
