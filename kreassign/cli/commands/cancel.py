"""--cancel: of a batched plan that has a journal (its run stopped, steps in flight reverted), else Apache's."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.batched import cancel_batched
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
    batched = cancel_batched(inv.port, plan, args.value("journal-file"), inv.text_out)
    if batched is not None:
        if inv.json_mode:
            inv.out(dump(batched.document()))
        return ExitCode.OK
    cancelled, stopped = cancel_assignment(
        inv.port, plan, preserve_throttles=preserve, timeout_ms=timeout_ms, out=inv.text_out
    )
    if inv.json_mode:
        inv.out(dump(cancel_document(cancelled, stopped, not preserve)))
    return ExitCode.OK
