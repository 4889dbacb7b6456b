"""Rendering of --progress (table, rich, JSON) and of --verify --output json.

tabulate and rich are imported inside the functions that use them, so that start-up stays light.
The JSON documents carry ``"version": 1``; their schema is described in README.md.
"""

from __future__ import annotations

import json
from typing import Any

from kreassign.humanize import format_bytes, format_eta
from kreassign.planning.progress import (
    BEHIND,
    IN_SYNC,
    URP_REASSIGNING,
    URP_UNDER_REPLICATED,
    PartitionProgress,
    ProgressReport,
    ReplicaProgress,
)

JSON_VERSION = 1
HEADERS = ("Topic", "Partition", "Broker", "Status", "Bytes behind", "Rate (B/s)", "ETA")
RICH_HEADERS = ("Topic", "Partition", "Broker", "Status", "Behind", "Rate", "ETA")


def _cells(row: ReplicaProgress, human: bool) -> list[str]:
    """Bytes behind, rate and ETA cells: only for replicas that are behind."""
    if row.status != BEHIND:
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
    by_reassignment = [p for p in report.partitions if p.urp == URP_REASSIGNING]
    really = [p for p in report.partitions if p.urp == URP_UNDER_REPLICATED]
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

    styles = {IN_SYNC: "green", BEHIND: "yellow"}
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


def _replica_json(row: ReplicaProgress) -> dict[str, Any]:
    return {
        "broker": row.broker,
        "status": row.status,
        "status_text": row.text,
        "log_end_offset": row.log_end_offset,
        "messages_behind": row.messages_behind,
        "bytes_behind": row.bytes_behind,
        "rate_bytes_per_s": None if row.rate_bytes_per_s is None else round(row.rate_bytes_per_s, 1),
        "eta_s": None if row.eta_s is None else round(row.eta_s, 1),
    }


def progress_document(report: ProgressReport) -> dict[str, Any]:
    partitions = report.partitions
    replicas = [row for p in partitions for row in p.replicas]
    return {
        "version": JSON_VERSION,
        "kind": "progress",
        "outcome": report.outcome,
        "interval_s": None if report.interval_s is None else round(report.interval_s, 3),
        "summary": {
            "partitions": len(partitions),
            "complete": sum(p.state == "complete" for p in partitions),
            "moving": sum(p.state == "moving" for p in partitions),
            "not_at_target": sum(p.state not in ("complete", "moving") for p in partitions),
            "replicas_in_sync": sum(r.status == IN_SYNC for r in replicas),
            "replicas_behind": sum(r.status == BEHIND for r in replicas),
            "under_replicated_by_reassignment": sum(p.urp == URP_REASSIGNING for p in partitions),
            "under_replicated": sum(p.urp == URP_UNDER_REPLICATED for p in partitions),
        },
        "partitions": [
            {
                "topic": p.topic,
                "partition": p.partition,
                "state": p.state,
                "target_replicas": list(p.target),
                "current_replicas": None if p.current is None else list(p.current),
                "isr": None if p.isr is None else list(p.isr),
                "leader": p.leader,
                "adding_replicas": list(p.adding),
                "removing_replicas": list(p.removing),
                "urp": p.urp,
                "replicas": [_replica_json(row) for row in p.replicas],
            }
            for p in partitions
        ],
    }


def render_progress_json(report: ProgressReport) -> str:
    return json.dumps(progress_document(report), indent=2) + "\n"


def verify_document(result: Any, outcome: str, preserve_throttles: bool) -> dict[str, Any]:
    """``result`` is a ``kreassign.actions.verify.VerifyResult``."""
    partitions = []
    for tp in sorted(result.partitions):
        state = result.partitions[tp]
        if not state.done:
            kind = "in_progress"
        elif state.current == state.target:
            kind = "completed"
        else:
            kind = "not_at_target"
        partitions.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "state": kind,
                "current_replicas": list(state.current),
                "target_replicas": list(state.target),
            }
        )
    log_dirs = [
        {
            "topic": replica.topic,
            "partition": replica.partition,
            "broker": replica.broker_id,
            "state": move.kind,
            "target_log_dir": move.target,
            "current_log_dir": move.current,
            "future_log_dir": move.future,
        }
        for replica, move in sorted(result.moves.items(), key=lambda item: item[0].sort_key())
    ]
    return {
        "version": JSON_VERSION,
        "kind": "verify",
        "outcome": outcome,
        "partitions": partitions,
        "log_dirs": log_dirs,
        "throttles": {
            "cleared": result.throttles_cleared,
            "preserved": preserve_throttles,
            "reassignments_running_in_cluster": result.partitions_ongoing,
        },
    }


def render_verify_json(result: Any, outcome: str, preserve_throttles: bool) -> str:
    return json.dumps(verify_document(result, outcome, preserve_throttles), indent=2) + "\n"
