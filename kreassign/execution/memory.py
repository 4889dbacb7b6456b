"""What kreassign remembers belongs to the cluster it was made on (issue 39).

One ops host often manages several clusters with the same topic names (staging, prod): a plan's id is a hash of the
plan alone, so the state of a plan is kept per cluster, under ``<state dir>/clusters/<cluster id>/`` (the cluster's id
is DescribeCluster's ``clusterId``, read once per command): the plan's journal, its log, lock and control files, its
original (the rollback file), its archived runs, and the registry of its live runs. A command aimed at a cluster finds
only that cluster's state; a journal records the cluster's id too, so that an explicit ``--journal-file`` of another
cluster is refused (one line, nothing changed).

State written before issue 39 (a version-1 journal at ``<state dir>/<plan id>.json``, registry records without a
cluster id, originals beside them) says nothing of its cluster. It is never applied to a cluster by guess:

* the default-path journal of a plan (with its original, log, lock, control file and archived runs) is set aside in
  ``<state dir>/unbound/<plan id>/`` the first time a command looks for the plan's state, with one line on stderr
  naming where it went and how to resume it on the cluster it ran on (``--journal-file <that path>``); while an
  earlier version's process still runs it, it stays where it is and the line says that it is left alone;
* a version-1 journal named by ``--journal-file`` is taken as the journal of the cluster the command names (one
  line on stderr) and stamped with that cluster's id.

Old state is pruned by ``prune`` at the start of every batched run, on the rule docs/batched-runs.md states.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kreassign.errors import CommandError
from kreassign.execution.journal import (
    Journal,
    JournalState,
    RunStatus,
    cluster_journal_path,
    cluster_state_dir,
    legacy_journal_path,
    plan_id,
    state_dir,
)
from kreassign.execution.registry import LiveRun, legacy_live_runs, live_runs, prune_registry
from kreassign.model import TopicPartition

Notes = Callable[[str], object]

KEEP_DAYS_VARIABLE = "KREASSIGN_STATE_KEEP_DAYS"
KEEP_DAYS = 30
"""How long the state of a completed run is kept (days since the run ended); ``$KREASSIGN_STATE_KEEP_DAYS`` changes it."""


def _quiet(_text: str) -> None:
    return None


@dataclass(frozen=True)
class ClusterMemory:
    """The state kreassign keeps for one cluster."""

    cluster_id: str

    @property
    def folder(self) -> Path:
        return cluster_state_dir(self.cluster_id)

    def journal_path(self, targets: Mapping[TopicPartition, Sequence[int]]) -> Path:
        """The plan's default journal on this cluster."""
        return cluster_journal_path(self.cluster_id, targets)

    def live_runs(self, plan: str | None = None) -> list[LiveRun]:
        """The batched runs alive now on this cluster: of ``plan`` (a plan id), or of every plan."""
        return live_runs(self.cluster_id, plan)


def memory_of(port: object) -> ClusterMemory | None:
    """The state of the cluster ``port`` names; None when it has no id (an offline snapshot): nothing is
    remembered for it, and nothing remembered applies to it."""
    ask = getattr(port, "cluster_id", None)
    cluster_id = ask() if callable(ask) else None
    return ClusterMemory(cluster_id) if isinstance(cluster_id, str) and cluster_id else None


def require_memory(port: object) -> ClusterMemory:
    """A batched run keeps a journal: its cluster must say its id."""
    memory = memory_of(port)
    if memory is None:
        raise CommandError(
            "The cluster did not say its id (DescribeCluster's clusterId): a batched run keeps its journal by "
            "cluster and cannot run without it; nothing was changed"
        )
    return memory


class ForeignJournal(CommandError):
    """An explicit --journal-file whose journal records another cluster."""


def plan_journal(
    memory: ClusterMemory, targets: Mapping[TopicPartition, Sequence[int]], path: str | None, notes: Notes = _quiet
) -> Journal:
    """The journal a command aimed at ``memory``'s cluster uses for the plan: ``path`` (--journal-file) when given,
    else the plan's default journal on this cluster, once what an earlier version kept at the plan's old default
    path is set aside (``set_aside_legacy``)."""
    if path:
        return Journal(path)
    set_aside_legacy(targets, notes)
    return Journal(memory.journal_path(targets))


def check_bound(journal: Journal, state: JournalState, memory: ClusterMemory, notes: Notes = _quiet) -> JournalState:
    """``state`` (loaded from ``journal``) as the journal of ``memory``'s cluster: one that records another cluster is
    refused; a version-1 journal (no cluster recorded) is taken as this cluster's, said on ``notes``, and stamped
    with its id (unless a process of an earlier version runs it now)."""
    if state.cluster_id == memory.cluster_id:
        return state
    if state.cluster_id is not None:
        raise ForeignJournal(
            f"The journal {journal.path} belongs to cluster {state.cluster_id}, not to cluster {memory.cluster_id} "
            "that this command is aimed at; nothing was changed"
        )
    notes(
        f"kreassign: the journal {journal.path} was written by an earlier version, which did not record its cluster: "
        f"it is taken as the journal of cluster {memory.cluster_id}, that this command is aimed at.\n"
    )
    state.cluster_id = memory.cluster_id
    if journal.try_lock():
        try:
            stamped = journal.load()
            if stamped.cluster_id is None:
                stamped.cluster_id = memory.cluster_id
                journal.save(stamped)
        finally:
            journal.unlock()
    return state


def set_aside_legacy(targets: Mapping[TopicPartition, Sequence[int]], notes: Notes = _quiet) -> Path | None:
    """The state an earlier version kept for this plan at its old default path (no cluster recorded) goes to
    ``<state dir>/unbound/<plan id>/``, with one line on ``notes``; returns the journal's new path (None when there
    was nothing to set aside, or when an earlier version's process still runs it: then it stays, and the line says
    it is left alone)."""
    legacy = Journal(legacy_journal_path(targets))
    plan = plan_id(targets)
    files = _legacy_files(legacy.path.parent, plan)
    if not files:
        for run in legacy_live_runs(plan):  # a run of an earlier version with its journal elsewhere
            notes(_left_alone(run.pid, run.journal))
        return None
    if legacy.exists() and legacy.is_running_elsewhere():
        pid = journal_pid(legacy)
        notes(_left_alone(pid, legacy.path))
        return None
    target = _free_folder(state_dir() / "unbound", plan)
    try:
        target.mkdir(parents=True, mode=0o700)
        for path in files:
            os.replace(path, target / path.name)
    except OSError as exc:
        notes(f"kreassign: warning: could not set aside {legacy.path} (written by an earlier version): {exc}\n")
        return None
    moved = target / legacy.path.name
    if moved.exists():
        notes(
            f"kreassign: the journal of this plan that an earlier version kept at {legacy.path} does not say which "
            f"cluster it was made on: set aside in {target}; to resume or cancel it on the cluster it ran on, add "
            f"--journal-file {moved}\n"
        )
        return moved
    notes(
        f"kreassign: files of this plan that an earlier version kept (no cluster recorded) are set aside in {target}\n"
    )
    return None


def _legacy_files(folder: Path, plan: str) -> list[Path]:
    """``<plan id>.json`` and its log, lock and control files, ``<plan id>-original.json``, the archived runs."""
    found = [p for p in folder.glob(f"{plan}.json*") if p.is_file()]
    found += [p for p in folder.glob(f"{plan}-*.json") if p.is_file()]
    return sorted(found)


def _free_folder(parent: Path, name: str) -> Path:
    candidate, again = parent / name, 1
    while candidate.exists():
        again += 1
        candidate = parent / f"{name}-{again}"
    return candidate


def journal_pid(journal: Journal) -> int | str:
    """The pid its journal names (``unknown`` when it cannot be read)."""
    try:
        return journal.load().pid
    except CommandError:
        return "unknown"


def _left_alone(pid: int | str, journal: Path) -> str:
    return (
        f"kreassign: a batched run of this plan started by an earlier version is running (pid {pid}, journal "
        f"{journal}); it did not record its cluster, so this command leaves it alone: --journal-file {journal} on "
        "the cluster it runs on reaches it\n"
    )


# ---------------------------------------------------------------------------------------------------- pruning
def keep_days(notes: Notes = _quiet) -> float:
    """``$KREASSIGN_STATE_KEEP_DAYS`` (a number of days, 0 or more), else ``KEEP_DAYS``."""
    value = os.environ.get(KEEP_DAYS_VARIABLE, "").strip()
    if not value:
        return KEEP_DAYS
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not days >= 0:  # NaN too
        notes(f"kreassign: warning: {KEEP_DAYS_VARIABLE}={value} is not a number of days; {KEEP_DAYS} are kept\n")
        return KEEP_DAYS
    return days


@dataclass
class Pruned:
    """What ``prune`` removed."""

    runs: list[Path]  # journals of completed runs, with their original, log, lock and control files
    lock_files: int = 0  # lock and control files of ended runs
    folders: int = 0


def prune(now: float | None = None, notes: Notes = _quiet) -> Pruned:
    """The rule (docs/batched-runs.md, "Old state"): in every cluster's folder, in ``unbound/`` and at the old
    default place, (1) a completed run's journal whose run ended more than ``keep_days()`` days ago goes with its
    original, log, lock and control files (an archived run's too); (2) the lock and control files of a run that
    has ended (its journal is not ``running``, or is gone) go, each lock file removed while holding its lock;
    (3) registry records of processes that are gone, and (4) folders left empty. A run that is not completed
    (cancelled, interrupted, failed, died) is kept whatever its age: it can be resumed."""
    now = time.time() if now is None else now
    horizon = now - keep_days(notes) * 86400
    root = state_dir()
    pruned = Pruned([])
    prune_registry()
    folders = [root, *sorted((root / "clusters").glob("*")), *sorted((root / "unbound").glob("*"))]
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            if not path.name.endswith("-original.json") and _completed_before(path, horizon):
                _remove_run(Journal(path), horizon)
                pruned.runs.append(path)
        for lock in sorted(folder.glob("*.json.lock")):
            pruned.lock_files += _remove_stale_lock(Journal(lock.with_name(lock.name[: -len(".lock")])))
        for control in sorted(folder.glob("*.json.control")):
            journal = Journal(control.with_name(control.name[: -len(".control")]))
            if not journal.lock_path.exists():
                pruned.lock_files += _remove_stale_lock(journal)
    for folder in [*(root / "clusters").glob("*/running"), root / "running", *folders]:
        if folder != root and folder.is_dir():
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
                pruned.folders += 1
    for parent in (root / "clusters", root / "unbound"):
        with contextlib.suppress(OSError):
            parent.rmdir()
            pruned.folders += 1
    return pruned


def _completed_before(path: Path, horizon: float) -> bool:
    """A completed run's journal, last written before ``horizon`` (its file's time first: most are newer)."""
    try:
        if path.stat().st_mtime >= horizon:
            return False
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or data.get("kind") != "kreassign-journal":
        return False
    updated = data.get("updated")
    when = updated if isinstance(updated, int | float) and updated > 0 else path.stat().st_mtime
    return data.get("status") == RunStatus.COMPLETED and when < horizon


def _remove_run(journal: Journal, horizon: float) -> None:
    """A completed run's files, under its lock (a run of the plan starting now waits for nothing: it takes the
    lock of the new file)."""
    if not journal.try_lock():
        return
    try:
        if not _completed_before(journal.path, horizon):  # written again meanwhile
            return
        for path in (journal.original_path, journal.log_path, journal.control_path, journal.path):
            with contextlib.suppress(OSError):
                path.unlink()
        journal.remove_lock_file()
    finally:
        journal.unlock()


def _remove_stale_lock(journal: Journal) -> int:
    """The lock (and control) file of a run that has ended: its journal is gone, or not ``running``. Removed while
    holding the lock, the inode checked (``Journal.try_lock``), so a run starting now never shares a lock with
    another."""
    if _is_running_journal(journal.path):
        return 0
    if not journal.try_lock():
        return 0  # a run holds it now
    try:
        if _is_running_journal(journal.path):
            return 0
        journal.control_path.unlink(missing_ok=True)
        journal.remove_lock_file()
        return 1
    finally:
        journal.unlock()


def _is_running_journal(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True  # unreadable: not ours to judge
    return not isinstance(data, dict) or data.get("status") == RunStatus.RUNNING


def runs_moving(
    memory: ClusterMemory | None, targets: Mapping[TopicPartition, Sequence[int]]
) -> dict[TopicPartition, LiveRun]:
    """The partitions of ``targets`` that a batched run alive on this cluster moves to the same target (its plan
    has them with the same replicas), and that run."""
    if memory is None:
        return {}
    moved: dict[TopicPartition, LiveRun] = {}
    for run in memory.live_runs():
        try:
            state = Journal(run.journal).load()
        except CommandError:
            continue
        if state.cluster_id not in (None, memory.cluster_id) or state.status is not RunStatus.RUNNING:
            continue
        for tp, target in targets.items():
            if tuple(state.target.get(tp, ())) == tuple(target) and tp not in moved:
                moved[tp] = run
    return moved


def shown(partitions: Iterable[TopicPartition], most: int = 10) -> str:
    """``t-0,t-1 and 3 more``"""
    names = sorted(partitions)
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ",".join(map(str, names[:most])) + more
