"""The batched runs alive on this machine, by plan: how ``--cancel --reassignment-json-file plan.json`` (the
Apache form, no ``--journal-file``) finds a run of the same plan wherever its journal is.

A run writes ``$XDG_STATE_HOME/kreassign/running/<plan id>-<pid>.json`` (its pid, its journal) once it holds
its journal's lock, and removes it when it ends. A record whose process is gone (``kill -9``, a reboot) or
whose journal lock is free is stale: ignored, and removed by the next lookup of its plan or the next run of any
plan. Asking a run to stop goes
through its journal's control file (read on every poll): the run does its own clean-up (revert, throttles,
journal) and exits 4; no signal is sent, so a pid reused by another process can never be hit.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from kreassign.execution.journal import Journal, state_dir


def registry_dir() -> Path:
    return state_dir() / "running"


@dataclass(frozen=True)
class LiveRun:
    pid: int
    journal: Path
    record: Path


def register(plan: str, journal: Journal) -> Path | None:
    """Record this process as the run of ``plan`` (a plan id) with this journal. Best effort: a registry
    that cannot be written only means that a ``--cancel`` without ``--journal-file`` cannot find the run."""
    record = registry_dir() / f"{plan}-{os.getpid()}.json"
    _prune()
    text = json.dumps({"pid": os.getpid(), "plan_id": plan, "journal": str(journal.path.resolve())}) + "\n"
    try:
        record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        journal._write_private(record, text)
    except Exception:
        return None
    return record


def unregister(record: Path | None) -> None:
    if record is not None:
        with contextlib.suppress(OSError):
            record.unlink()


def live_runs(plan: str) -> list[LiveRun]:
    """The runs of ``plan`` alive now (their process exists and holds its journal's lock)."""
    runs = []
    for record in sorted(registry_dir().glob(f"{plan}-*.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            pid, journal = int(data["pid"]), Path(data["journal"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if pid != os.getpid() and _alive(pid) and Journal(journal).is_running_elsewhere():
            runs.append(LiveRun(pid, journal, record))
        elif pid != os.getpid():
            with contextlib.suppress(OSError):
                record.unlink()  # stale
    return runs


def _prune() -> None:
    """Records left by runs that died without their clean-up (``kill -9``), of any plan, go."""
    for record in registry_dir().glob("*-*.json"):
        try:
            pid = int(record.stem.rsplit("-", 1)[1])
        except ValueError:
            continue
        if not _alive(pid):
            with contextlib.suppress(OSError):
                record.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
