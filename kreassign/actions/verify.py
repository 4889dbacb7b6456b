"""--verify: where each partition and log-dir move stands; clears throttles once everything is done."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from kreassign.actions.common import Output, clear_all_throttles, describe_known_topics, find_log_dir_move_states
from kreassign.cluster.port import ClusterPort
from kreassign.execution.memory import memory_of, runs_moving
from kreassign.model import ReassignmentPlan, TopicPartition
from kreassign.planning.progress import PlanOutcome, verify_outcome
from kreassign.planning.states import (
    LogDirMoveState,
    PartitionState,
    ReassignmentStatus,
    render_log_dir_states,
    render_partition_states,
)


@dataclass(frozen=True)
class VerifyResult:
    partitions: dict[TopicPartition, PartitionState]
    partitions_ongoing: bool
    moves: dict
    moves_ongoing: bool
    throttles_cleared: bool = False


def find_partition_states(
    port: ClusterPort, targets: Sequence[tuple[TopicPartition, Sequence[int]]]
) -> tuple[dict[TopicPartition, PartitionState], bool]:
    """State of each target partition, and whether any reassignment at all runs in the cluster."""
    running = port.list_reassignments()
    states: dict[TopicPartition, PartitionState] = {}
    not_running = [(tp, target) for tp, target in targets if tp not in running]
    for tp, target in targets:
        if tp in running:
            states[tp] = PartitionState(tuple(running[tp].replicas), tuple(target), False)
    described = describe_known_topics(port, [tp.topic for tp, _ in not_running])
    for tp, target in not_running:
        partitions = described.get(tp.topic)
        info = next((p for p in partitions or () if p.partition == tp.partition), None)
        current = tuple(info.replicas) if info else ()
        states[tp] = PartitionState(current, tuple(target), True)
    return states, bool(running)


def verify_assignment(
    port: ClusterPort, plan: ReassignmentPlan, preserve_throttles: bool, out: Output, notes: Output | None = None
) -> VerifyResult:
    """The Apache --verify. ``notes`` (kreassign's stderr): the batched runs alive on this cluster are asked to put back
    their own throttles before they are cleared (``clear_all_throttles``); None: they are not asked."""
    states, partitions_ongoing = find_partition_states(port, plan.partitions)
    out(render_partition_states(states) + "\n")
    moves: dict[object, LogDirMoveState] = find_log_dir_move_states(port, plan.log_dirs)
    out(render_log_dir_states(moves) + "\n")
    moves_ongoing = not all(state.done for state in moves.values())
    cleared = not partitions_ongoing and not moves_ongoing and not preserve_throttles
    if cleared:
        clear_all_throttles(port, plan.partitions, out, notes)
    return VerifyResult(states, partitions_ongoing, moves, moves_ongoing, throttles_cleared=cleared)


def outcome_with_runs(port: ClusterPort, plan: ReassignmentPlan, result: VerifyResult) -> PlanOutcome:
    """``--fail-if-incomplete``'s outcome: a partition not at its target with no reassignment running is in progress,
    not stuck, while a batched run alive on this cluster moves it to the same target (between two of its steps, or
    before it has reached the partition), as ``--progress`` says (issue 39)."""
    outcome = verify_outcome(result.partitions, result.moves)
    if outcome is not PlanOutcome.NOT_AT_TARGET:
        return outcome
    stuck = {tp for tp, state in result.partitions.items() if state.status is ReassignmentStatus.NOT_AT_TARGET}
    moved = runs_moving(memory_of(port), {tp: plan.targets()[tp] for tp in stuck if tp in plan.targets()})
    if not moved:
        return outcome
    partitions = {tp: replace(state, done=False) if tp in moved else state for tp, state in result.partitions.items()}
    return verify_outcome(partitions, result.moves)
