"""--execute with --max-*-movements (KIP-435 batches), --dry-run, and --cancel of a batched plan."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from kreassign.actions.common import Output, discard
from kreassign.actions.execute import check_plan_against_cluster, existing_reassignment_error, print_rollback
from kreassign.actions.execute_request import ExecuteRequest, measure_before_run
from kreassign.cluster.port import ClusterPort
from kreassign.documents import (
    batched_handover_document,
    batched_outcome_document,
    batched_plan_document,
    dump,
    limits_document,
)
from kreassign.errors import CommandError, TerseError
from kreassign.execution.executor import BatchedExecutor, Outcome, Reporter
from kreassign.execution.journal import Journal, JournalState, RunStatus, how_it_ended, plan_id
from kreassign.execution.memory import ClusterMemory, check_bound, journal_pid, plan_journal, prune, require_memory
from kreassign.execution.registry import register, unregister
from kreassign.execution.throttles import record_throttles
from kreassign.execution.watch import waiting_out_metadata_lag
from kreassign.formats import format_reassignment_json
from kreassign.humanize import format_bytes, format_duration
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import Limits, Round, busiest_broker, count_steps, plan_rounds


def execute_batched(
    port: ClusterPort,
    request: ExecuteRequest,
    out: Output,
    reporter: Reporter,
    *,
    notes: Output = discard,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    on_start: Callable[[], object] = lambda: None,
    on_finish: Callable[[Outcome], object] = lambda outcome: None,
    own: Output | None = None,
) -> Outcome | None:
    """Runs the plan to its end (or prints it with --dry-run). Returns the outcome, None for a dry run or a
    request handed to the process that already runs this plan. With ``output="json"`` the text is left
    out and ``out`` gets one JSON document (kind batched-plan, batched-handover or batched-outcome). ``own``:
    where kreassign's own lines go (default ``out``; on a terminal the CLI wraps them), never Apache's text;
    ``notes``: kreassign's lines on stderr before the run starts (state set aside, sampling).

    In this order: the cluster's identity (its state folder), old state pruned, the journal and its lock, the
    hand-over checks (another run of the plan, reassignments not of this plan), then the sampling window of
    ``--sample-rates`` or ``--throttle auto`` (once), then the run."""
    plan = request.plan
    json_mode = request.output == "json"
    text = discard if json_mode else out
    mine = discard if json_mode else (own or out)
    if request.adaptive and request.limits.brokers is None:
        raise CommandError("--adaptive adapts the per-broker limit: give it with --max-broker-movements N")
    targets = plan.targets()

    def lagging(call):
        return waiting_out_metadata_lag(call, clock=clock, sleep=sleep, event=reporter.event)

    if request.dry_run:
        current, live = lagging(lambda: check_plan_against_cluster(port, targets))
        if plan.log_dirs:
            lagging(lambda: check_plan_log_dirs(port, plan.log_dirs))
        print_rollback(port, current, live, text)
        rollback = format_reassignment_json({tp: tuple(info.replicas) for tp, info in current.items()}, {})
        rank = dry_run_rank(port, targets, request.order)
        rounds = plan_rounds({tp: info.replicas for tp, info in current.items()}, targets, request.limits, rank)
        (out if json_mode else mine)(
            render_rounds(rounds, request.limits, request.output, rollback, len(plan.log_dirs))
        )
        return None

    memory = require_memory(port)
    prune(notes=notes)
    journal = plan_journal(memory, targets, request.journal_path, notes)
    journal.check_location()
    if journal.is_running_elsewhere():
        return _hand_over(journal, request, out, json_mode)
    elsewhere = [run for run in memory.live_runs(plan_id(targets)) if run.journal != journal.path.resolve()]
    if elsewhere:  # the plan runs on this cluster with another journal (--journal-file): that run is the one
        return _hand_over(Journal(elsewhere[0].journal), request, out, json_mode)
    previous = _previous_run(journal, targets, memory, notes)
    resumed = previous if previous is not None and previous.status.resumable else None
    current, live = lagging(lambda: check_plan_against_cluster(port, targets))
    if plan.log_dirs:
        lagging(lambda: check_plan_log_dirs(port, plan.log_dirs))
    steps = {tp: step_target for tp, (_, step_target) in resumed.in_flight.items()} if resumed else {}
    _check_running(port, targets, steps, request.additional, resuming=resumed is not None)
    if not journal.try_lock():  # lost a race with another run of the same plan
        return _hand_over(journal, request, out, json_mode)
    journal.clear_control()  # a request written from here on (a --cancel, a throttle) is for this run
    registered = register(memory.cluster_id, plan_id(targets), journal, request.plan_file)
    try:
        measured = measure_before_run(port, request, notes, sleep=sleep, clock=clock)
        if request.auto is not None or request.sample_window is not None:  # the window has passed: read again
            current, live = lagging(lambda: check_plan_against_cluster(port, targets))
        # what the Apache tool's --execute prints: the assignment now (a resumed run's original is in its file)
        print_rollback(port, current, live, text)
        original = resumed.original if resumed else {tp: tuple(info.replicas) for tp, info in current.items()}
        # the original file names no log dirs, so that it can be run batched too
        rollback = format_reassignment_json(original, {})
        done = sum(1 for tp, final in targets.items() if current[tp].replicas == final)
        if resumed:
            state = resumed
            mine(
                f"Resuming the batched run of this plan that {_ended_as(resumed)}: {done} of {len(targets)} "
                "partition(s) at their target; the original assignment is the one from before its first run, in "
                f"{journal.original_path}.\n"
            )
            state.status, state.pid, state.message, state.reverted = RunStatus.RUNNING, os.getpid(), "", []
            if measured.throttle >= 0:
                state.throttle = measured.throttle
            if request.log_dir_throttle >= 0:
                state.log_dir_throttle = request.log_dir_throttle
        else:
            if previous is not None:  # a completed run: kept, and this one starts anew
                kept = journal.archive(previous)
                mine(
                    f"Starting a new batched run of this plan: the earlier one completed; its journal and original "
                    f"assignment are kept as {kept.path} and {kept.original_path}.\n"
                )
            state = lagging(lambda: _new_state(port, targets, original, live, request, measured.throttle))
        state.cluster_id = memory.cluster_id
        journal.keep_original(rollback + "\n")
        journal.save(state)
        mine(f"Journal: {journal.path}\n")
        mine(f"Original assignment (to roll back): {journal.original_path}\n")
        steps = count_steps({tp: info.replicas for tp, info in current.items()}, targets, request.limits.replicas)
        moving = f"{len(targets) - done} of {len(targets)}" if done else f"{len(targets)}"
        mine(f"Moving {moving} partition(s) in {steps} step(s), {request.limits.describe()}.\n")
        if plan.log_dirs:
            mine(f"{len(plan.log_dirs)} replica(s) go to the log dir the plan names.\n")
        on_start()
        executor = BatchedExecutor(
            port,
            journal,
            state,
            request.limits,
            reporter,
            allow_replication_factor_change=request.allow_replication_factor_change,
            order=request.order,
            adaptive=request.adaptive,
            poll_interval=request.poll_interval,
            stall_timeout=request.stall_timeout,
            clock=clock,
            sleep=sleep,
            log_dirs=plan.log_dirs,
            auto_throttle=measured.auto_throttle,
        )
        outcome = executor.run()
    finally:
        unregister(registered)
        journal.unlock()
    on_finish(outcome)  # the live display ends before the summary is printed (stdout may be the same terminal)
    throttled = request.throttled
    if json_mode:
        paths = str(journal.path), str(journal.original_path)
        changes, behind = executor.state.limit_changes, executor.meter.behind.named
        problems = executor.cleanup_problems
        out(dump(batched_outcome_document(outcome, *paths, throttled, rollback, problems, changes, behind)))
        return outcome
    mine(render_outcome(outcome, journal, throttled) + "\n")
    for problem in executor.cleanup_problems:
        mine(f"Warning: {problem}\n")
    return outcome


def check_plan_log_dirs(port: ClusterPort, log_dirs: Mapping[TopicPartitionReplica, str]) -> None:
    """Each log dir the plan names is one of its broker's (before the run changes anything: the Apache tool
    finds out only once the reassignment is under way). A broker that does not answer (offline: the run waits
    for it) is not checked."""
    usage = port.describe_log_dirs(sorted({r.broker_id for r in log_dirs}))
    for replica in sorted(log_dirs, key=TopicPartitionReplica.sort_key):
        if replica.broker_id not in usage:
            continue
        paths = [d.path for d in usage[replica.broker_id]]
        if log_dirs[replica] not in paths:
            raise CommandError(
                f"The plan puts {replica.topic}-{replica.partition} in log dir {log_dirs[replica]} of broker "
                f"{replica.broker_id}, which has no such log dir (its log dirs: {', '.join(paths)}); "
                "nothing was changed"
            )


def _previous_run(
    journal: Journal, targets: Mapping[TopicPartition, tuple[int, ...]], memory: ClusterMemory, notes: Output
) -> JournalState | None:
    """The journal of an earlier run of this plan on this cluster (resumed unless it completed)."""
    if not journal.exists():
        return None
    previous = journal.load()
    if previous.plan_id != plan_id(targets):
        raise CommandError(
            f"The journal {journal.path} belongs to another plan; pass another --journal-file or remove it"
        )
    return check_bound(journal, previous, memory, notes)


def _ended_as(state: JournalState) -> str:
    """How the earlier run of a resumed plan ended, after "the batched run of this plan that"."""
    if state.status is RunStatus.RUNNING:  # its lock is free: the process died without its clean-up
        return f"died (pid {state.pid})"
    return "was " + how_it_ended(state.status, state.message)


def _check_running(
    port: ClusterPort,
    targets: Mapping[TopicPartition, tuple[int, ...]],
    steps: Mapping[TopicPartition, tuple[int, ...]],
    additional: bool,
    resuming: bool = False,
) -> None:
    """Refuse while reassignments this plan did not start run on its partitions (or anywhere, without
    --additional). ``steps``: the target of each step the journal left in flight; a reassignment there going
    elsewhere is not its step. When ``resuming``, one going to exactly the plan's target is the plan's progress,
    whoever submitted it (an Apache ``--execute --additional`` of the same plan while the run went on): the run
    waits for it (execution/others.py). A first run refuses it: its original assignment would be a move's."""
    running = port.list_reassignments()
    ours = {tp for tp in steps if tp in running and set(running[tp].target) == set(steps[tp])}
    if resuming:
        ours |= {tp for tp in running if tp in targets and set(running[tp].target) == set(targets[tp])}
    conflicts = sorted(tp for tp in running if tp in targets and tp not in ours)
    if conflicts:
        raise CommandError(
            "A reassignment not started by this plan is running on "
            + ",".join(map(str, conflicts))
            + "; wait for it to finish or --cancel it first"
        )
    if not additional and any(tp not in ours for tp in running):
        raise existing_reassignment_error({tp: None for tp in running if tp not in ours})


def _new_state(
    port: ClusterPort,
    targets: Mapping[TopicPartition, tuple[int, ...]],
    original: Mapping[TopicPartition, tuple[int, ...]],
    live: set[int],
    request: ExecuteRequest,
    throttle: int,
) -> JournalState:
    """The journal of a first run: the plan, its limits and rates, and the throttle configs before it."""
    return JournalState(
        plan_id=plan_id(targets),
        status=RunStatus.RUNNING,
        original=dict(original),
        target=dict(targets),
        limits=limits_document(request.limits),
        throttle=throttle,
        log_dir_throttle=request.log_dir_throttle,
        recorded_throttles=_recorded_throttles(port, targets, original, live),
        pid=os.getpid(),
        started=time.time(),
    )


def _recorded_throttles(
    port: ClusterPort,
    targets: Mapping[TopicPartition, tuple[int, ...]],
    original: Mapping[TopicPartition, tuple[int, ...]],
    live: set[int],
) -> dict[str, dict[str, dict[str, str | None]]]:
    """The throttle configs of the plan's topics and brokers as they are before the run changes them."""
    topics = {tp.topic for tp in targets}
    # an offline broker's configs cannot be read (nor changed): it is left alone
    brokers = ({b for r in targets.values() for b in r} | {b for r in original.values() for b in r}) & live
    return record_throttles(port, topics, brokers)


def _hand_over(journal: Journal, options: ExecuteRequest, out: Output, json_mode: bool = False) -> None:
    """Another process runs this plan: with --additional, pass it the new throttle; otherwise refuse."""
    pid = journal_pid(journal)
    if not options.additional:
        raise TerseError(
            f"A batched reassignment of this plan is running (pid {pid}, journal {journal.path}). "
            "Use --additional with --throttle to change its throttle, or --cancel to stop it."
        )
    changes = options.rate_changes()
    if changes:
        journal.request(**changes)
    if json_mode:
        out(dump(batched_handover_document(pid if isinstance(pid, int) else None, changes)))
    elif not changes:
        out(f"A batched reassignment of this plan is already running (pid {pid}); nothing to change.\n")
    else:
        out(f"The batched reassignment running as pid {pid} will use the new throttle from its next poll.\n")
    return None


def dry_run_rank(port: ClusterPort, targets, order: str) -> dict[TopicPartition, int] | None:
    """The partitions' order for --dry-run: the plan's, or by the size of their largest replica."""
    if order == "plan":
        return None
    sizes: dict[TopicPartition, int] = {}
    try:
        for replica, size in port.replica_sizes(sorted({b for r in targets.values() for b in r})).items():
            tp = TopicPartition(replica.topic, replica.partition)
            sizes[tp] = max(sizes.get(tp, 0), size)
    except Exception:  # no sizes (a snapshot without them, brokers that cannot say): the plan's order
        return None
    sign = 1 if order == "small-first" else -1
    return {tp: i for i, tp in enumerate(sorted(targets, key=lambda tp: sign * sizes.get(tp, 0)))}


def render_rounds(rounds: list[Round], limits: Limits, output: str, rollback: str, log_dirs: int = 0) -> str:
    if output == "json":
        return dump(batched_plan_document(rounds, limits, rollback))
    steps = sum(len(r.steps) for r in rounds)
    lines = [
        f"Batched plan (dry run, nothing changed): {steps} step(s) in {len(rounds)} round(s), {limits.describe()}.",
        "A round starts when the previous one is done; the executor itself starts a step as soon as a slot frees up.",
    ]
    if log_dirs:
        lines.append(
            f"{log_dirs} replica(s) go to the log dir the plan names: named before the step that adds each, "
            "moved there after its partition's steps when kept on its broker."
        )
    for r in rounds:
        busiest = busiest_broker(r.steps) if limits.brokers is not None else None
        if busiest is None:
            lines.append(f"Round {r.number}:")
        else:
            lines.append(f"Round {r.number} (busiest broker {busiest[0]}: {busiest[1]} of {limits.brokers} steps):")
        lines.extend(f"  {s.describe()}" for s in r.steps)
    return "\n".join(lines) + "\n"


def render_outcome(outcome: Outcome, journal: Journal, throttled: bool) -> str:
    took = format_duration(outcome.elapsed)
    moved = "" if outcome.bytes_moved is None else f", {format_bytes(outcome.bytes_moved)} copied"
    if outcome.bytes_moved is not None and outcome.bytes_reverted:
        moved += f" ({format_bytes(outcome.bytes_reverted)} of it by the reverted steps, discarded)"
    restored = " Throttles restored." if throttled else ""
    if outcome.status is RunStatus.COMPLETED:
        return (
            f"Batched reassignment complete: {outcome.partitions} partition(s) at their target after "
            f"{outcome.steps_done} step(s){moved} in {took}.{restored}"
        )
    lines = [
        f"Batched reassignment {how_it_ended(outcome.status, outcome.message)}: {outcome.partitions_done} of "
        f"{outcome.partitions} partition(s) at their target after {outcome.steps_done} step(s){moved} in {took}.{restored}"
    ]
    if outcome.reverted:
        lines.append("Reverted the steps in flight of " + ",".join(str(tp) for tp in sorted(outcome.reverted)) + ".")
    for tp, reason in sorted(outcome.failures.items()):
        lines.append(f"{tp}: {reason}")
    lines.append("Run the same command again to resume from where it stopped.")
    lines.append(f"To roll back to the original assignment: --execute --reassignment-json-file {journal.original_path}")
    return "\n".join(lines)
