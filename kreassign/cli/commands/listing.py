"""--list: the reassignments running in the cluster."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode


def run(inv: Invocation) -> int:
    if inv.json_mode:
        from kreassign.documents import dump, list_document

        inv.out(dump(list_document(inv.port.list_reassignments())))
    else:
        from kreassign.actions.listing import list_reassignments

        list_reassignments(inv.port, inv.out)
    return ExitCode.OK
