"""--verify: the Apache text, or the verify JSON document; --fail-if-incomplete sets the exit status."""

from __future__ import annotations

from kreassign.cli.commands import Invocation


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.verify import outcome_with_runs, verify_assignment

    path = inv.args.value("reassignment-json-file")
    text = read_input_file(path)
    with naming_input_file("--reassignment-json-file", path):
        plan = formats.parse_reassignment_json(text)
    preserve = inv.args.has("preserve-throttles")
    result = verify_assignment(inv.port, plan, preserve, inv.text_out, inv.notes)
    outcome = outcome_with_runs(inv.port, plan, result)
    if inv.json_mode:
        from kreassign.documents import dump, verify_document

        inv.out(dump(verify_document(result, outcome, preserve)))
    return inv.outcome_status(outcome)
