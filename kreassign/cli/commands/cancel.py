"""--cancel. The Apache form (no ``--journal-file``) prints Apache's text whatever kreassign has on disk: the
batched runs of the plan on the cluster it names (live anywhere on this machine, or dead at the plan's default
journal of that cluster) are stopped or cleaned up first, kreassign's account of them goes to stderr, then Apache's cancel runs and prints. With
``--journal-file`` the run of that journal is cancelled and reported in kreassign's words."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.batched_cancel import cancel_batched, cancel_runs_of_plan
    from kreassign.actions.cancel import cancel_assignment
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.documents import batched_cancel_document, cancel_document, dump

    args = inv.args
    path = args.value("reassignment-json-file")
    plan_text = read_input_file(path)
    preserve = args.has("preserve-throttles")
    timeout_ms = args.long_value("timeout")
    with naming_input_file("--reassignment-json-file", path):
        plan = formats.parse_reassignment_json(plan_text)
    journal = args.value("journal-file")
    runs = []
    if journal is None:
        notes = inv.notes
        runs = cancel_runs_of_plan(inv.port, plan, notes)
        for account in runs:
            for line in account.account():
                notes(line)
    else:
        batched = cancel_batched(inv.port, plan, journal, inv.text_out, notes=inv.notes)
        if batched is not None:
            if inv.json_mode:
                inv.out(dump(batched_cancel_document(batched)))
            return ExitCode.OK
    cancelled, stopped = cancel_assignment(
        inv.port,
        plan,
        preserve_throttles=preserve,
        timeout_ms=timeout_ms,
        out=inv.text_out,
        cancelled_by_runs=[tp for run in runs for tp in run.reverted],
        notes=inv.notes,
    )
    if inv.json_mode:
        inv.out(dump(cancel_document(cancelled, stopped, not preserve, runs)))
    return ExitCode.OK
