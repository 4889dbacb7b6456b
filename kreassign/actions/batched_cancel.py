"""--cancel of a plan that batched runs have worked on: stop the live ones, clean up after the dead ones.

Two forms, as the command line says:

* the Apache form (no ``--journal-file``): every batched run of the plan on this machine and on the cluster the
  command names (the cluster's registry of running runs, wherever their journal) and the plan's default journal on
  that cluster are looked at; a run on another cluster is never touched (issue 39). A live run is asked to
  stop (its own clean-up reverts its steps in flight, restores throttles and exits 4); a run that died
  (``kill -9``, a crash) or whose clean-up was cut short is cleaned up here. Then the Apache cancel runs and
  prints Apache's text, counting the steps the runs reverted as cancelled, as Apache would have listed them.
  kreassign's account of each run goes to stderr (and into ``--output json``), never to stdout.
* ``--journal-file J``: the run of that journal only, reported in kreassign's words on stdout (a journal of
  another cluster is refused, one line, nothing changed).

Either way the journal keeps the plan's original assignment and completed steps: the same ``--execute``
resumes the plan, and the original file (``<journal stem>-original.json``) is never rewritten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.actions.common import Output, discard
from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError, KreassignError
from kreassign.execution.cleanup import restore_order
from kreassign.execution.journal import Journal, JournalState, RunStatus, how_it_ended, plan_id
from kreassign.execution.memory import ClusterMemory, check_bound, memory_of, plan_journal
from kreassign.execution.throttle_claims import claims_for
from kreassign.execution.throttles import restore_recorded
from kreassign.model import ReassignmentPlan, TopicPartition
from kreassign.planning.steps import Step, replica_ids

STOP_WAIT_S = 120.0
"""How long --cancel waits for a live run to revert its steps in flight and restore its throttles."""


@dataclass(frozen=True)
class RunCancelled:
    """What --cancel did to one batched run of the plan."""

    pid: int | None  # the live run stopped; None: the run had already ended and this process cleaned up
    dead_pid: int | None  # the process of the run that had died (kill -9, a crash) without its clean-up
    journal: Path
    message: str
    reverted: list[TopicPartition]
    steps_done: int
    problems: list[str] = field(default_factory=list)

    @property
    def original_file(self) -> Path:
        return Journal(self.journal).original_path

    def account(self) -> list[str]:
        """kreassign's lines on stderr for the Apache form."""
        if self.pid is not None:
            head = f"stopped the batched run of this plan (pid {self.pid}, journal {self.journal}): {self.message}"
        else:
            ended = f"died (pid {self.dead_pid})" if self.dead_pid else "ended without its clean-up"
            head = f"cleaned up after the batched run of this plan that {ended} (journal {self.journal})"
        done = f"{self.steps_done} step(s) had completed"
        reverted = ", ".join(str(tp) for tp in self.reverted)
        lines = [f"kreassign: {head}; {done}" + (f"; reverted the steps in flight of {reverted}" if reverted else "")]
        lines += [f"kreassign: warning: {problem}" for problem in self.problems]
        lines.append(
            f"kreassign: the assignment from before the plan's first run is in {self.original_file}; run the same "
            "--execute to resume the plan, or --execute with that file to roll back"
        )
        return [line + "\n" for line in lines]

    def document(self) -> dict[str, object]:
        from kreassign.documents import partition_refs

        return {
            "stopped_pid": self.pid,
            "message": self.message,
            "reverted": partition_refs(self.reverted),
            "steps_done": self.steps_done,
            "journal": str(self.journal),
            "rollback_file": str(self.original_file),
        }


def cancel_runs_of_plan(
    port: ClusterPort,
    plan: ReassignmentPlan,
    warn: Output = discard,
    *,
    wait_s: float = STOP_WAIT_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[RunCancelled]:
    """The Apache form's first part: every batched run of the plan known here stopped or cleaned up (see the
    module). Prints nothing on stdout: a journal that cannot be read, a run that does not stop in time or a
    clean-up the cluster refuses (through --bootstrap-controller, say) is one ``warn`` line, and the Apache cancel
    goes on (it cancels the reassignments in Kafka itself)."""
    targets = plan.targets()
    # the Apache cancel's first call, before the cluster's id is asked: on a cluster that fails, its error
    if targets:
        port.list_reassignments(list(targets))
    memory = memory_of(port)
    if memory is None:  # no cluster id, no state of its own
        return []
    journals = {run.journal.resolve(): Journal(run.journal) for run in memory.live_runs(plan_id(targets))}
    default = plan_journal(memory, targets, None, warn)
    journals.setdefault(default.path.resolve(), default)
    done = []
    for journal in journals.values():
        try:
            result = _cancel_run(port, journal, targets, memory, wait_s, clock, sleep, discard)
        except KreassignError as exc:  # the run's clean-up failed here: Apache's cancel still runs and prints
            warn(f"kreassign: warning: {exc.message}\n")
            continue
        if result is not None:
            done.append(result)
    return done


def cancel_batched(
    port: ClusterPort,
    plan: ReassignmentPlan,
    journal_path: str,
    out: Output,
    *,
    notes: Output = discard,
    wait_s: float = STOP_WAIT_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RunCancelled | None:
    """--cancel --journal-file: stop the run of that journal (or clean up after it), in kreassign's words.
    Returns None when the journal has nothing to cancel (the Apache --cancel applies then). A journal of another
    cluster is refused (nothing changed); one of version 1 is taken as this cluster's (one line on ``notes``)."""
    journal = Journal(journal_path)
    result = _cancel_run(port, journal, plan.targets(), memory_of(port), wait_s, clock, sleep, out, notes)
    if result is None:
        return None
    if result.pid is not None:
        out(f"Cancelled the batched reassignment run by pid {result.pid}: {result.message}.\n")
    else:
        reverted = ",".join(str(tp) for tp in result.reverted)
        out(
            "Cancelled the batched reassignment"
            + (f" of pid {result.dead_pid}, which had died" if result.dead_pid else "")
            + (f"; reverted the steps in flight of {reverted}" if reverted else "")
            + "; throttles restored.\n"
        )
    out(f"{result.steps_done} step(s) had completed. Journal: {journal.path}\n")
    out("Run the same --execute again to resume the plan.\n")
    out(f"To roll back to the original assignment: --execute --reassignment-json-file {journal.original_path}\n")
    return result


def _cancel_run(
    port: ClusterPort,
    journal: Journal,
    targets,
    memory: ClusterMemory | None,
    wait_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    out: Output,
    notes: Output = discard,
) -> RunCancelled | None:
    """One journal: its live run stopped, or its dead run cleaned up; None when it has nothing to cancel (no
    journal, another plan's, or a run that ended cleanly)."""
    if not journal.exists():
        return None
    state = journal.load()
    if state.plan_id != plan_id(targets):
        return None
    if memory is None:
        raise CommandError(f"The cluster did not say its id: the journal {journal.path} is left alone")
    state = check_bound(journal, state, memory, notes)
    if journal.is_running_elsewhere():
        pid = state.pid
        _stop_run(journal, f"The batched reassignment of this plan (pid {pid})", wait_s, clock, sleep)
        state = journal.load()
        return RunCancelled(
            pid, None, journal.path, state.message, list(state.reverted), sum(state.steps_done.values())
        )
    if not state.status.cancellable:
        return None
    died = state.pid if state.status is RunStatus.RUNNING and state.pid > 0 else None
    reverted, problems = clean_up_ended_run(port, journal, state, clock=clock, sleep=sleep)
    for problem in problems:
        out(f"Warning: {problem}\n")
    return RunCancelled(None, died, journal.path, state.message, reverted, sum(state.steps_done.values()), problems)


def clean_up_ended_run(
    port: ClusterPort,
    journal: Journal,
    state: JournalState,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[list[TopicPartition], list[str]]:
    """A run whose process is gone (or whose clean-up was cut short): its steps still running in Kafka are
    cancelled and put back in the source's exact order, its throttles restored to what they were before the
    run, and the journal marked cancelled. Returns the partitions reverted and what could not be done."""
    if not journal.try_lock():  # pragma: no cover - a run started between the two checks
        raise CommandError("A batched run of this plan just started; run --cancel again")
    problems: list[str] = []
    try:
        in_flight = list(state.in_flight)
        reverted: list[TopicPartition] = []
        if in_flight:
            running = port.list_reassignments(in_flight)
            # a reassignment there now is the journal's step only if it goes where the step went: someone else's
            # (submitted after the run died) is not this cancel's to stop
            ours = [tp for tp in in_flight if tp in running and set(running[tp].target) == set(state.in_flight[tp][1])]
            problems += [
                f"{tp}: the reassignment running (to {replica_ids(running[tp].target)}) is not the step this run "
                f"left in flight (to {replica_ids(state.in_flight[tp][1])}); left alone"
                for tp in in_flight
                if tp in running and tp not in ours
            ]
            errors = port.alter_reassignments({tp: None for tp in ours}) if ours else {}
            reverted = [tp for tp in ours if tp not in errors]
            problems += [f"could not cancel the step of {tp}: {errors[tp]}" for tp in sorted(errors)]
            # Kafka's revert keeps the step's order: the source's is put back (copies nothing)
            steps = {tp: Step(tp, *state.in_flight[tp]) for tp in reverted}
            problems += restore_order(port, steps, reverted=steps, clock=clock, sleep=sleep, event=discard)
        pending, state.throttles_written = restore_recorded(
            port,
            state.recorded_throttles,
            state.throttles_written or {},
            claims=claims_for(port, journal.path),
            event=problems.append,
        )
        if pending:
            problems.append(
                f"broker(s) {','.join(pending)} are offline: run --cancel again when they are back to restore "
                "their throttle rates"
            )
        ended = how_it_ended(state.status, state.message) if state.status is not RunStatus.RUNNING else ""
        died = f"the run (pid {state.pid}) had died" if state.status is RunStatus.RUNNING else f"the run had {ended}"
        state.in_flight = {}
        state.reverted = sorted(reverted)
        state.status, state.message = RunStatus.CANCELLED, f"cancelled by --cancel (pid {os.getpid()}) after {died}"
        journal.save(state)
    finally:
        journal.unlock()
    return sorted(reverted), problems


def _stop_run(
    journal: Journal,
    which: str,
    wait_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> None:
    """Asks the process running ``journal`` to cancel (through its control file, never a signal: a pid may
    have been reused) and waits for it to finish its clean-up and let go of the journal."""
    journal.request(cancel=True, by=f"--cancel (pid {os.getpid()})")
    deadline = clock() + wait_s
    while journal.is_running_elsewhere():
        if clock() >= deadline:
            raise CommandError(
                f"{which} did not stop within {wait_s:.0f} s; the cancel request stays in {journal.control_path}"
            )
        sleep(0.2)
