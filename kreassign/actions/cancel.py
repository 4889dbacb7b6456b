"""--cancel: revert the running reassignments of the listed partitions, stop their log-dir moves."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from kreassign.actions.common import Output, clear_all_throttles, find_log_dir_move_states
from kreassign.actions.execute import execute_log_dir_moves
from kreassign.cluster.port import ClusterPort
from kreassign.errors import TerseError
from kreassign.model import ReassignmentPlan, TopicPartition, TopicPartitionReplica
from kreassign.planning.states import LogDirMoveKind


def cancel_assignment(
    port: ClusterPort,
    plan: ReassignmentPlan,
    *,
    preserve_throttles: bool,
    timeout_ms: int,
    out: Output,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    cancelled_by_runs: Iterable[TopicPartition] = (),
    notes: Output | None = None,
) -> tuple[set[TopicPartition], dict[TopicPartitionReplica, str]]:
    """Returns the partitions whose reassignment was cancelled and the log-dir moves stopped (replica -> dir).
    ``cancelled_by_runs``: the steps in flight that the batched runs of this plan, stopped by this --cancel,
    reverted themselves (stop_live_runs); they count as cancelled here, as Apache would have listed them. ``notes``:
    the batched runs still alive on this cluster (of other plans) are asked to put back their own throttles before
    they are cleared, with a line there each (``clear_all_throttles``)."""
    targets = {tp for tp, _ in plan.partitions}
    running = port.list_reassignments(targets) if targets else {}
    active = {tp for tp, r in running.items() if tp in targets and (r.adding or r.removing)}
    cancelling = active | (set(cancelled_by_runs) & targets)
    if active:
        errors = port.alter_reassignments(dict.fromkeys(active))
        if errors:
            plural = "" if len(errors) == 1 else "s"
            raise TerseError(
                f"Error cancelling partition reassignment{plural} for:\n"
                + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors))
            )
    if cancelling:
        plural = "" if len(cancelling) == 1 else "s"
        out(
            f"Successfully cancelled partition reassignment{plural} for: "
            + ",".join(str(tp) for tp in sorted(cancelling))
            + "\n"
        )
    else:
        out("None of the specified partition reassignments are active.\n")
    moving = {
        replica: state.current
        for replica, state in find_log_dir_move_states(port, plan.log_dirs).items()
        if state.kind is LogDirMoveKind.ACTIVE and state.current
    }
    if moving:
        # Moving a replica back to the log dir it is in stops the move.
        execute_log_dir_moves(port, moving, timeout_ms, out, clock=clock, sleep=sleep)
    else:
        out("None of the specified partition moves are active.")  # sic: no newline, as Apache
    if not preserve_throttles:
        clear_all_throttles(port, plan.partitions, out, notes, by="--cancel")
    return cancelling, moving
