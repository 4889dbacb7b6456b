"""--cancel: of a batched plan that has a journal (its run stopped, steps in flight reverted), else Apache's
(after stopping the batched runs of the plan found in the registry of running runs, wherever their journal)."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.batched import cancel_batched, stop_live_runs
    from kreassign.actions.cancel import cancel_assignment
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.documents import cancel_document, dump

    args = inv.args
    path = args.value("reassignment-json-file")
    plan_text = read_input_file(path)
    preserve = args.has("preserve-throttles")
    timeout_ms = args.long_value("timeout")
    with naming_input_file("--reassignment-json-file", path):
        plan = formats.parse_reassignment_json(plan_text)
    runs = []
    if args.value("journal-file") is None:
        # the Apache form: a batched run of this plan anywhere on this machine stops first (its own clean-up:
        # steps in flight reverted, throttles restored, exit 4), then Apache's cancel runs and prints as Apache
        runs = stop_live_runs(plan)
        for stopped_run in runs:
            inv.err(
                f"kreassign: stopped the batched reassignment of this plan run by pid {stopped_run.pid} "
                f"(journal {stopped_run.journal}): {stopped_run.message or 'cancelled'}\n"
            )
    if not runs:
        batched = cancel_batched(inv.port, plan, args.value("journal-file"), inv.text_out)
        if batched is not None:
            if inv.json_mode:
                inv.out(dump(batched.document()))
            return ExitCode.OK
    cancelled, stopped = cancel_assignment(
        inv.port,
        plan,
        preserve_throttles=preserve,
        timeout_ms=timeout_ms,
        out=inv.text_out,
        cancelled_by_runs=[tp for r in runs for tp in r.reverted],
    )
    if inv.json_mode:
        inv.out(dump(cancel_document(cancelled, stopped, not preserve)))
    return ExitCode.OK
