"""Rendering of --progress: a table for pipes and files, rich for a terminal, or its JSON document
(``kreassign.documents``). tabulate and rich are imported inside the functions that use them, so that
start-up stays light.
"""

from __future__ import annotations

from kreassign.humanize import format_bytes, format_eta
from kreassign.planning.progress import (
    PartitionProgress,
    ProgressReport,
    ReplicaProgress,
    ReplicaStatus,
    UnderReplication,
)

HEADERS = ("Topic", "Partition", "Broker", "Status", "Bytes behind", "Rate (B/s)", "ETA")
RICH_HEADERS = ("Topic", "Partition", "Broker", "Status", "Behind", "Rate", "ETA")


def _cells(row: ReplicaProgress, human: bool) -> list[str]:
    """Bytes behind, rate and ETA cells: only for replicas that are behind."""
    if row.status is not ReplicaStatus.BEHIND:
        return ["-", "-", "-"]
    size = "?" if row.bytes_behind is None else (format_bytes(row.bytes_behind) if human else str(row.bytes_behind))
    if row.rate_bytes_per_s is None:
        rate = "?"
    else:
        rate = format_bytes(row.rate_bytes_per_s) + "/s" if human else str(round(row.rate_bytes_per_s))
    return [size, rate, format_eta(row.eta_s)]


def _rows(report: ProgressReport, human: bool) -> list[list[str]]:
    return [
        [row.topic, str(row.partition), str(row.broker), row.text, *_cells(row, human)]
        for partition in report.partitions
        for row in partition.replicas
    ]


def _urp_lines(report: ProgressReport) -> list[str]:
    lines = []
    by_reassignment = [p for p in report.partitions if p.urp is UnderReplication.REASSIGNING]
    really = [p for p in report.partitions if p.urp is UnderReplication.UNDER_REPLICATED]
    if by_reassignment:
        names = ", ".join(f"{p.tp} (adding {_joined(_out_of_isr(p))})" for p in by_reassignment)
        lines.append(f"Under-replicated only because of the reassignment: {names}")
    if really:
        names = ", ".join(f"{p.tp} (out of ISR: {_joined(_out_of_isr(p))})" for p in really)
        lines.append(f"Under-replicated: {names}")
    return lines


def _out_of_isr(p: PartitionProgress) -> tuple[int, ...]:
    return tuple(b for b in p.current or () if b not in (p.isr or ()))


def _joined(brokers: tuple[int, ...]) -> str:
    return ",".join(str(b) for b in brokers)


def render_progress_table(report: ProgressReport) -> str:
    """Plain text for pipes and files: a tabulate table, then the under-replication lines."""
    from tabulate import tabulate

    table = tabulate(_rows(report, human=False), headers=HEADERS, tablefmt="simple", disable_numparse=True)
    return "\n".join([table, *_urp_lines(report)]) + "\n"


def render_progress_rich(report: ProgressReport, width: int | None = None, color: bool = True) -> str:
    """The same table drawn by rich for a terminal (colours unless ``color`` is False)."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    styles = {ReplicaStatus.IN_SYNC: "green", ReplicaStatus.BEHIND: "yellow"}
    table = Table(*RICH_HEADERS, title="Reassignment progress", title_justify="left")
    for column in table.columns[1:3] + table.columns[4:]:
        column.justify = "right"
    for partition in report.partitions:
        for row in partition.replicas:
            cells = [row.topic, str(row.partition), str(row.broker)]
            table.add_row(*cells, Text(row.text, style=styles.get(row.status, "red")), *_cells(row, human=True))
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="auto" if color else None,
        highlight=False,
    )
    console.print(table)
    for line in _urp_lines(report):
        console.print(Text(line, style="yellow"))
    return buffer.getvalue()


def render_progress_json(report: ProgressReport) -> str:
    from kreassign.documents import dump, progress_document

    return dump(progress_document(report))
