"""--progress: how far each new replica is behind, as a table (rich on a terminal) or JSON."""

from __future__ import annotations

from kreassign.cli.commands import Invocation


def run(inv: Invocation) -> int:
    from kreassign import formats
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.progress import read_progress

    path = inv.args.value("reassignment-json-file")
    text = read_input_file(path)
    with naming_input_file("--reassignment-json-file", path):
        plan = formats.parse_reassignment_json(text)
    report = read_progress(inv.port, plan)
    inv.out(render(report, inv.json_mode, terminal=inv.terminal))
    return inv.outcome_status(report.outcome)


def render(report, json_mode: bool, terminal: bool) -> str:
    """JSON with ``--output json``; rich on a terminal; else a plain tabulate table."""
    from kreassign.cli import render_progress

    if json_mode:
        return render_progress.render_progress_json(report)
    if terminal:
        import shutil

        return render_progress.render_progress_rich(report, width=shutil.get_terminal_size().columns)
    return render_progress.render_progress_table(report)
