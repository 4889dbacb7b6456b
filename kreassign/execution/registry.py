"""The batched runs alive on this machine, by cluster and plan: how ``--cancel --reassignment-json-file plan.json``
(the Apache form, no ``--journal-file``), an Apache-form ``--execute`` and ``--verify`` find the runs on the cluster
they name, wherever their journal is.

A run writes ``$XDG_STATE_HOME/kreassign/clusters/<cluster id>/running/<plan id>-<pid>.json`` (its pid, plan,
journal, plan file and the cluster's id) once it holds its journal's lock, and removes it when it ends. A record whose
process is gone (``kill -9``, a reboot) or whose journal lock is free is stale: ignored, and removed by the next
lookup of its cluster or the next run on any cluster. Records written before issue 39 (in
``$XDG_STATE_HOME/kreassign/running/``, with no cluster id) belong to no cluster: a run they name is never touched
from here (``legacy_live_runs`` names it). Asking a run to stop goes through its journal's control file (read on every
poll): the run does its own clean-up (revert, throttles, journal) and exits 4; no signal is sent, so a pid reused by
another process can never be hit.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from kreassign.execution.journal import Journal, cluster_state_dir, state_dir


def registry_dir(cluster_id: str) -> Path:
    return cluster_state_dir(cluster_id) / "running"


def legacy_registry_dir() -> Path:
    """Where a version before issue 39 registered its runs, for whatever cluster."""
    return state_dir() / "running"


@dataclass(frozen=True)
class LiveRun:
    pid: int
    journal: Path
    record: Path
    plan_id: str = ""
    plan_file: str | None = None  # the reassignment JSON file the run was started with, as resolved then


def register(cluster_id: str, plan: str, journal: Journal, plan_file: str | None = None) -> Path | None:
    """Record this process as the run of ``plan`` (a plan id) on the cluster, with this journal. Best effort: a
    registry that cannot be written only means that a ``--cancel`` without ``--journal-file`` cannot find the run."""
    record = registry_dir(cluster_id) / f"{plan}-{os.getpid()}.json"
    prune_registry()
    data = {"pid": os.getpid(), "cluster_id": cluster_id, "plan_id": plan, "journal": str(journal.path.resolve())}
    if plan_file:
        data["plan_file"] = str(Path(plan_file).resolve())
    try:
        record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        journal._write_private(record, json.dumps(data) + "\n")
    except Exception:
        return None
    return record


def unregister(record: Path | None) -> None:
    if record is not None:
        with contextlib.suppress(OSError):
            record.unlink()


def live_runs(cluster_id: str, plan: str | None = None) -> list[LiveRun]:
    """The runs on the cluster alive now (their process exists and holds its journal's lock): of ``plan`` (a plan id),
    or of every plan."""
    return _live(registry_dir(cluster_id), plan, cluster_id)


def legacy_live_runs(plan: str) -> list[LiveRun]:
    """Runs of ``plan`` started by a version before issue 39 and still alive: their cluster is not known."""
    return _live(legacy_registry_dir(), plan, None)


def _live(folder: Path, plan: str | None, cluster_id: str | None) -> list[LiveRun]:
    runs = []
    for record in sorted(folder.glob(f"{plan}-*.json" if plan else "*-*.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            pid, journal = int(data["pid"]), Path(data["journal"])
            plan_id, plan_file = str(data.get("plan_id") or record.stem.rsplit("-", 1)[0]), data.get("plan_file")
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if data.get("cluster_id") != cluster_id:
            continue  # another cluster's (a record copied by hand), or a record of a cluster in the legacy folder
        if pid != os.getpid() and process_alive(pid) and Journal(journal).is_running_elsewhere():
            runs.append(LiveRun(pid, journal, record, plan_id, plan_file if isinstance(plan_file, str) else None))
        elif pid != os.getpid():
            with contextlib.suppress(OSError):
                record.unlink()  # stale
    return runs


def prune_registry() -> None:
    """Records left by runs that died without their clean-up (``kill -9``), of any plan and cluster, go."""
    folders = [legacy_registry_dir(), *(state_dir() / "clusters").glob("*/running")]
    for folder in folders:
        for record in folder.glob("*-*.json"):
            try:
                pid = int(record.stem.rsplit("-", 1)[1])
            except ValueError:
                continue
            if not process_alive(pid):
                with contextlib.suppress(OSError):
                    record.unlink()


def process_alive(pid: int) -> bool:
    """Whether a process of this id exists (it may be another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
