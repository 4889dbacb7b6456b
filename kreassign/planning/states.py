"""States of partition reassignments and log-dir moves, and the Apache tool's text for them (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from kreassign.model import PartitionReassignment, TopicPartition, TopicPartitionReplica


class ReassignmentStatus(StrEnum):
    """Where a partition of a --verify stands (the ``state`` of the verify JSON document)."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    NOT_AT_TARGET = "not_at_target"  # no reassignment running, replicas other than the target


@dataclass(frozen=True)
class PartitionState:
    current: tuple[int, ...]
    target: tuple[int, ...]
    done: bool  # no reassignment of the partition is running

    @property
    def status(self) -> ReassignmentStatus:
        if not self.done:
            return ReassignmentStatus.IN_PROGRESS
        return ReassignmentStatus.COMPLETED if self.current == self.target else ReassignmentStatus.NOT_AT_TARGET


class LogDirMoveKind(StrEnum):
    MISSING_REPLICA = "missing_replica"  # the broker does not report the replica
    MISSING_LOG_DIR = "missing_log_dir"  # the replica is in no live log dir (an offline one, likely)
    COMPLETED = "completed"
    CANCELLED = "cancelled"  # no move running, and the replica is not in its target log dir
    ACTIVE = "active"


@dataclass(frozen=True)
class LogDirMoveState:
    kind: LogDirMoveKind
    target: str
    current: str | None = None
    future: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", LogDirMoveKind(self.kind))

    @property
    def done(self) -> bool:
        """As in the Apache tool: only a completed or cancelled move is done (a missing replica is not,
        so --verify keeps the throttles)."""
        return self.kind in (LogDirMoveKind.COMPLETED, LogDirMoveKind.CANCELLED)


def _joined(replicas: tuple[int, ...]) -> str:
    return ",".join(str(r) for r in replicas)


def render_partition_states(states: Mapping[TopicPartition, PartitionState], *, completed: str = "completed") -> str:
    """The ``--verify`` lines; Kafka 2.8's ZooKeeper path said ``complete`` where later tools say ``completed``."""
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        state = states[tp]
        if state.status is ReassignmentStatus.IN_PROGRESS:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
        elif state.status is ReassignmentStatus.COMPLETED:
            lines.append(f"Reassignment of partition {tp} is {completed}.")
        else:
            lines.append(
                f"There is no active reassignment of partition {tp}, but replica set is "
                f"{_joined(state.current)} rather than {_joined(state.target)}."
            )
    return "\n".join(lines)


def render_log_dir_states(states: Mapping[TopicPartitionReplica, LogDirMoveState]) -> str:
    lines = []
    for replica in sorted(states, key=TopicPartitionReplica.sort_key):
        state = states[replica]
        where = f"{replica.topic}-{replica.partition}"
        if state.kind is LogDirMoveKind.MISSING_LOG_DIR:
            lines.append(
                f"Partition {where} is not found in any live log dir on broker {replica.broker_id}. "
                "There is likely an offline log directory on the broker."
            )
        elif state.kind is LogDirMoveKind.MISSING_REPLICA:
            lines.append(f"Partition {where} cannot be found in any live log directory on broker {replica.broker_id}.")
        elif state.kind is LogDirMoveKind.ACTIVE:
            if state.target == state.future:
                lines.append(f"Reassignment of replica {replica} is still in progress.")
            else:
                lines.append(
                    f"Partition {where} on broker {replica.broker_id} is being moved to log dir "
                    f"{state.future} instead of {state.target}."
                )
        elif state.kind is LogDirMoveKind.CANCELLED:
            lines.append(
                f"Partition {where} on broker {replica.broker_id} is not being moved from log dir "
                f"{state.current} to {state.target}."
            )
        else:
            lines.append(f"Reassignment of replica {replica} completed successfully.")
    return "\n".join(lines)


def render_current_reassignments(current: Mapping[TopicPartition, PartitionReassignment]) -> str:
    if not current:
        return "No partition reassignments found."
    lines = ["Current partition reassignments:"]
    for tp in sorted(current):
        r = current[tp]
        adding = f" adding: {_joined(r.adding)}." if r.adding else ""
        removing = f" removing: {_joined(r.removing)}." if r.removing else ""
        lines.append(f"{tp}: replicas: {_joined(r.replicas)}.{adding}{removing}")
    return "\n".join(lines)
