"""Rendering of --progress: a table for pipes and files, rich for a terminal, or its JSON document
(``kreassign.documents``). tabulate and rich are imported inside the functions that use them, so that
start-up stays light.
"""

from __future__ import annotations

from kreassign.humanize import format_bytes, format_eta, never_ends
from kreassign.planning.progress import (
    PartitionProgress,
    PartitionStatus,
    PlanOutcome,
    ProgressReport,
    ReplicaProgress,
    ReplicaStatus,
    UnderReplication,
)

HEADERS = ("Topic", "Partition", "Broker", "Status", "Bytes behind", "Rate (B/s)", "ETA")


def _cells(row: ReplicaProgress, human: bool) -> list[str]:
    """Bytes behind, rate and ETA cells: only for replicas that are behind. The rate and ETA are those of the one
    estimate (``ReplicaProgress.eta``): the throttle's share, marked ``~``, where it is the rate."""
    if row.status is not ReplicaStatus.BEHIND:
        return ["-", "-", "-"]
    size = "?" if row.bytes_behind is None else (format_bytes(row.bytes_behind) if human else str(row.bytes_behind))
    eta = row.eta
    if eta.bound and eta.rate is not None:
        rate = THROTTLE_MARK + (format_bytes(eta.rate) + "/s" if human else str(round(eta.rate)))
    elif row.rate_bytes_per_s is None:
        rate = "?"
    else:
        rate = format_bytes(row.rate_bytes_per_s) + "/s" if human else str(round(row.rate_bytes_per_s))
    return [size, rate, eta_cell(row)]


def eta_cell(row: ReplicaProgress) -> str:
    """``~16s`` (bound by the throttle), ``16s``, ``never`` (the copy cannot overtake the writes), ``unknown``."""
    eta = row.eta
    if eta.losing:
        return NEVER
    return (THROTTLE_MARK if eta.bound and eta.seconds is not None else "") + format_eta(eta.seconds)


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
    reorder = [p for p in report.partitions if p.order_only]
    if reorder:
        names = ", ".join(f"{p.tp} [{_joined(p.current or ())}] -> [{_joined(p.target)}]" for p in reorder)
        when = "the batched run submits it" if report.batched_run else "a reassignment submits it (--execute)"
        lines.append(
            f"Only the order of the replicas differs: {names}. Every replica is in sync and nothing is copied; "
            f"the new order and preferred leader take effect as soon as {when}."
        )
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
    """The compact table (``progress_view``) drawn by rich for a terminal (colours unless ``color`` is False)."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="auto" if color else None,
        highlight=False,
    )
    console.print(progress_view(report, "Reassignment progress", width=console.width))
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------- compact layout
STATE_WORDS = {
    ReplicaStatus.IN_SYNC: "in sync",
    ReplicaStatus.UNKNOWN_TOPIC: "no topic",
    ReplicaStatus.UNKNOWN_PARTITION: "no partition",
    ReplicaStatus.UNKNOWN_BROKER: "no broker",
}
"""Short words for a terminal (the tabulate table and JSON keep the KIP-179 texts); see ``state_word``."""

_WORD_STYLES = {"in sync": "green", "copying": "yellow", "behind": "yellow", "waiting": "cyan", "not started": "red"}
THROTTLE_MARK = "~"
THROTTLE_NOTE = f"{THROTTLE_MARK} bound by the throttle (its share of the copies)"
NEVER = "never"
NEVER_NOTE = f"{NEVER}: its partition is written at least as fast as its share of the throttle ({never_ends(True)})"
NEVER_MEASURED_NOTE = f"{NEVER}: its partition is written faster than it was copied ({never_ends(False)})"


def state_word(partition: PartitionProgress, row: ReplicaProgress, batched_run: bool) -> str:
    """``in sync``; ``copying`` (a replica the reassignment adds, out of the ISR) or ``behind`` (one of the
    partition's own replicas out of the ISR); ``waiting`` (not on its broker yet: a running batched run of the
    plan has not reached the partition) or ``not started`` (not on its broker and nothing moves it);
    ``no topic``, ``no partition``, ``no broker``."""
    if row.status is ReplicaStatus.BEHIND:
        return "copying" if row.broker in partition.adding else "behind"
    if row.status is ReplicaStatus.NOT_HOSTED:
        return "waiting" if batched_run else "not started"
    return STATE_WORDS[row.status]


def _compact_cells(row: ReplicaProgress) -> tuple[str, str, str]:
    """Behind, rate and ETA for a terminal, by the one estimate (``ReplicaProgress.eta``): the rate it used (the
    throttle's share, marked, where that is the rate) and its time."""
    if row.status is not ReplicaStatus.BEHIND:
        return "-", "-", "-"
    if row.bytes_behind is not None:
        behind = format_bytes(row.bytes_behind)
    else:
        behind = "?" if row.messages_behind is None else f"{row.messages_behind} msgs"
    _, rate, eta = _cells(row, human=True)
    return behind, rate, eta


def summary_line(report: ProgressReport) -> str:
    """``2 of 6 partitions done, 1 moving, 3 waiting; 12.0 MiB to copy, ETA ~40s``."""
    counts: dict[str, int] = {}
    for p in report.partitions:
        if p.state is PartitionStatus.COMPLETE:
            word = "done"
        elif p.state is PartitionStatus.MOVING:
            word = "moving"
        elif p.state is PartitionStatus.NOT_AT_TARGET:
            word = "waiting" if report.batched_run else "not started"
        else:
            word = "unknown"
        counts[word] = counts.get(word, 0) + 1
    line = f"{counts.pop('done', 0)} of {len(report.partitions)} partitions done"
    for word in ("moving", "waiting", "not started", "unknown"):
        if counts.get(word):
            line += f", {counts[word]} {word}"
    behind = any(r.status is ReplicaStatus.BEHIND for p in report.partitions for r in p.replicas)
    if behind or (report.batched_run and report.bytes_left):
        line += f"; {format_bytes(report.bytes_left or 0)} to copy"
        if report.write_rate:
            line += f", written at {format_bytes(report.write_rate)}/s"
        line += f", ETA {plan_eta_text(report)}"
    return line


def plan_eta_text(report: ProgressReport) -> str:
    """``~40s`` (bound by the throttle), ``40s``, ``unknown``, or ``not at this throttle`` when the copies cannot
    overtake the writes to their partitions."""
    eta = report.eta
    if eta.losing:
        return never_ends(eta.bound)
    return (THROTTLE_MARK if eta.bound else "") + format_eta(eta.seconds)


def _ordered_rows(report: ProgressReport, max_rows: int | None) -> tuple[list, int]:
    """(partition, row) pairs in plan order; past ``max_rows``, the rows not in sync first. And how many were
    left out."""
    rows = [(p, row) for p in report.partitions for row in p.replicas]
    if max_rows is None or len(rows) <= max_rows:
        return rows, 0
    keep = max(1, max_rows)
    wanted = [pair for pair in rows if pair[1].status is not ReplicaStatus.IN_SYNC][:keep]
    wanted += [pair for pair in rows if pair[1].status is ReplicaStatus.IN_SYNC][: keep - len(wanted)]
    chosen = {id(pair[1]) for pair in wanted}
    return [pair for pair in rows if id(pair[1]) in chosen], len(rows) - len(wanted)


_WIDTHS = {"Broker": 6, "State": 12, "Behind": 10, "Rate": 12, "ETA": 9}
"""The columns after Partition: the longest state word (``no partition``), ``1023.9 KiB``, ``~1023.9 KiB/s``
less its mark, ``~1h00m07s``."""


def progress_view(report: ProgressReport, heading: str, max_rows: int | None = None, width: int | None = None):
    """The compact layout (a rich renderable): a heading, one row per target replica with a short state word
    (never wrapped; a long topic name is cut with an ellipsis), the summary and the under-replication lines
    (wrapped at word boundaries). Six columns that fit 80 columns; ``max_rows`` bounds the rows (for a live display)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=False, header_style="bold underline")
    fixed = sum(_WIDTHS.values()) + 2 * len(_WIDTHS)  # each column and the two spaces before it
    table.add_column("Partition", overflow="ellipsis", no_wrap=True, max_width=max(9, (width or 80) - fixed))
    for name, size in _WIDTHS.items():
        table.add_column(name, justify="left" if name == "State" else "right", no_wrap=True, min_width=size)
    rows, hidden = _ordered_rows(report, max_rows)
    marked = never = never_measured = False
    for partition, row in rows:
        word = state_word(partition, row, report.batched_run)
        cells = _compact_cells(row)
        marked = marked or cells[2].startswith(THROTTLE_MARK)
        never = never or (cells[2] == NEVER and row.eta.bound)
        never_measured = never_measured or (cells[2] == NEVER and not row.eta.bound)
        name = f"{row.topic}-{row.partition}"
        table.add_row(name, str(row.broker), Text(word, style=_WORD_STYLES.get(word, "red")), *cells)
    parts: list = [Text(heading, style="bold", no_wrap=True, overflow="ellipsis"), table]
    if hidden:
        parts.append(Text(f"... and {hidden} more replica(s)", style="dim", no_wrap=True))
    parts.append(Text(summary_line(report)))
    if marked:
        parts.append(Text(THROTTLE_NOTE, style="dim"))
    if never:
        parts.append(Text(NEVER_NOTE, style="yellow"))
    if never_measured:
        parts.append(Text(NEVER_MEASURED_NOTE, style="yellow"))
    for line in _urp_lines(report):  # every partition named, wrapped at the terminal's width
        parts.append(Text(line, style="yellow"))
    return Group(*parts)


def end_line(report: ProgressReport) -> str:
    """Why --watch stopped watching."""
    if report.outcome is PlanOutcome.COMPLETE:
        return "Complete: every partition at its target, every target replica in sync."
    stuck = [str(p.tp) for p in report.partitions if p.state is not PartitionStatus.COMPLETE]
    shown = ", ".join(stuck[:5]) + (f" and {len(stuck) - 5} more" if len(stuck) > 5 else "")
    return f"Not at target, and nothing is moving: {shown}."


class WatchLines:
    """--watch when stdout is not a terminal (a log, a pipe): per refresh, one line per replica whose state word
    changed, and the summary when anything changed or at least every ``summary_every_s`` seconds; each line
    starts with the local time."""

    def __init__(self, summary_every_s: float = 30.0) -> None:
        self.summary_every_s = summary_every_s
        self._words: dict[tuple[str, int, int], str] = {}
        self._summary_at: float | None = None

    def lines(self, report: ProgressReport, now: float) -> list[str]:
        import time

        stamp = time.strftime("%H:%M:%S", time.localtime(now))
        out = []
        for partition, row in _ordered_rows(report, None)[0]:
            word = state_word(partition, row, report.batched_run)
            key = (row.topic, row.partition, row.broker)
            if self._words.get(key) == word:
                continue
            self._words[key] = word
            line = f"{stamp} {row.topic}-{row.partition} broker {row.broker}: {word}"
            if row.status is ReplicaStatus.BEHIND:
                behind, rate, eta = _compact_cells(row)
                line += f", {behind} behind, {rate}, ETA {eta}"
            out.append(line)
        if out or self._summary_at is None or now - self._summary_at >= self.summary_every_s:
            self._summary_at = now
            out.append(f"{stamp} {summary_line(report)}")
        return out


def render_progress_json(report: ProgressReport) -> str:
    from kreassign.documents import dump, progress_document

    return dump(progress_document(report))
