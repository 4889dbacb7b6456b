"""KIP-435 incremental reassignment, computed client-side (pure, standard library only).

A partition goes from its current replicas (CR) to its final target replicas (FTR) through steps. Each
step is one AlterPartitionReassignments target; Kafka completes it only once every replica of the step
is in sync, and only then drops the replicas the step removes. The rules (documented in README.md,
"Batched reassignment"):

1. **Leader first.** If FTR's preferred leader ``FTR[0]`` is not CR's first replica, the first step puts
   it first: ``[FTR[0]] + CR`` when it is a new broker (one replica added, nothing dropped), or CR
   reordered with ``FTR[0]`` first when it already holds a replica (no data moves). The executor elects
   it (preferred-leader election) before the next step. Such a step is a *leader movement*.
2. **Then at most R replicas at a time.** With ER = replicas of CR not in FTR (CR order) and
   MR = replicas of FTR not in CR (FTR order):

   * CR at least as large as FTR: drop ``d = min(R, |ER|)`` of ER, add
     ``a = min(R, |MR|, |FTR| - (|CR| - d))`` of MR (never negative);
   * CR smaller than FTR (replication factor grows): add ``a = min(R, |MR|)``, and drop only what makes
     room beyond FTR's size: ``d = min(R, |ER|, max(0, |CR| + a - |FTR|))``.

   Without R, every replica moves in one step.
3. **Order.** A step lists the replicas of FTR it holds, in FTR's order, then the replicas it still holds
   that are not in FTR, in CR's order. So the leader (``FTR[0]``) stays first and is never dropped, and
   the last step is FTR exactly, in FTR's order.

After every completed step the replication factor is at least ``min(|CR|, |FTR|)`` (so never below
``min.insync.replicas`` unless the target itself is), and each step strictly shrinks
``|ER| + |MR|``, so every sequence ends at FTR.

Batches (``select_steps``): at most P partitions moving at once, at most L of them moving their leader;
leader movements are taken first, in plan order, and the rest of the free slots go to steps that keep the
leader. The executor calls it whenever a slot frees up (a sliding window, not rounds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kreassign.model import TopicPartition


@dataclass(frozen=True)
class Limits:
    """``None`` means no limit."""

    partitions: int | None = None  # P: partitions moving at once
    replicas: int | None = None  # R: replicas added to one partition per step
    leaders: int | None = None  # L: partitions moving their leader at once

    def describe(self) -> str:
        def text(value: int | None) -> str:
            return "unlimited" if value is None else str(value)

        return (
            f"at most {text(self.partitions)} partitions, {text(self.replicas)} replicas per partition "
            f"and {text(self.leaders)} leaders moving at once"
        )


@dataclass(frozen=True)
class Step:
    partition: TopicPartition
    source: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(r for r in self.target if r not in self.source)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(r for r in self.source if r not in self.target)

    @property
    def moves_leader(self) -> bool:
        """The preferred leader changes: the executor elects ``target[0]`` after the data moved."""
        return bool(self.source) and self.target[0] != self.source[0]

    def describe(self) -> str:
        parts = []
        if self.adding:
            parts.append("+" + ",".join(map(str, self.adding)))
        if self.removing:
            parts.append("-" + ",".join(map(str, self.removing)))
        if self.moves_leader:
            parts.append(f"leader {self.source[0]}->{self.target[0]}")
        if not parts:
            parts.append("reorder")
        return f"{self.partition}: {_ids(self.source)} -> {_ids(self.target)} ({', '.join(parts)})"


def _ids(replicas: Sequence[int]) -> str:
    return "[" + ",".join(map(str, replicas)) + "]"


def next_step(
    partition: TopicPartition, current: Sequence[int], final: Sequence[int], max_replicas: int | None
) -> Step | None:
    """The next step from ``current`` towards ``final``, or None when the partition is there."""
    current, final = tuple(current), tuple(final)
    if current == final:
        return None
    if max_replicas is not None and max_replicas < 1:
        raise ValueError("max_replicas must be at least 1")
    final_set = set(final)
    if not current:
        return Step(partition, current, final)
    if final[0] != current[0]:
        held = {final[0], *current}
    else:
        excess = [r for r in current if r not in final_set]
        missing = [r for r in final if r not in set(current)]
        limit = max(len(excess), len(missing)) if max_replicas is None else max_replicas
        if len(current) >= len(final):
            drop = min(limit, len(excess))
            add = max(0, min(limit, len(missing), len(final) - (len(current) - drop)))
        else:
            add = min(limit, len(missing))
            drop = min(limit, len(excess), max(0, len(current) + add - len(final)))
        held = (set(current) - set(excess[:drop])) | set(missing[:add])
    target = (*(r for r in final if r in held), *(r for r in current if r in held and r not in final_set))
    return Step(partition, current, target)


def plan_partition(
    partition: TopicPartition, current: Sequence[int], final: Sequence[int], max_replicas: int | None
) -> list[Step]:
    """Every step of one partition, assuming each completes as planned."""
    steps: list[Step] = []
    replicas = tuple(current)
    while (step := next_step(partition, replicas, final, max_replicas)) is not None:
        steps.append(step)
        replicas = step.target
    return steps


def select_steps(candidates: Sequence[Step], moving_partitions: int, moving_leaders: int, limits: Limits) -> list[Step]:
    """Which candidate steps start now, given how many partitions (and leader movements) are already
    moving. ``candidates`` are the next steps of idle partitions, in plan order."""
    free = len(candidates) if limits.partitions is None else max(0, limits.partitions - moving_partitions)
    leader_free = free if limits.leaders is None else max(0, min(free, limits.leaders - moving_leaders))
    leaders = [s for s in candidates if s.moves_leader][:leader_free]
    others = [s for s in candidates if not s.moves_leader][: free - len(leaders)]
    chosen = {s.partition for s in leaders + others}
    return [s for s in candidates if s.partition in chosen]


@dataclass(frozen=True)
class Round:
    """Steps that start together when every earlier step completes at once (the dry-run view)."""

    number: int
    steps: tuple[Step, ...]


def plan_rounds(
    current: Mapping[TopicPartition, Sequence[int]],
    final: Mapping[TopicPartition, Sequence[int]],
    limits: Limits,
) -> list[Round]:
    """The whole plan as rounds, assuming each step completes before the next round (``--dry-run``).
    The real executor does not wait for a round to finish; it refills free slots as steps complete."""
    state = {tp: tuple(current[tp]) for tp in final}
    rounds: list[Round] = []
    while True:
        candidates = [s for tp in final if (s := next_step(tp, state[tp], final[tp], limits.replicas)) is not None]
        if not candidates:
            return rounds
        chosen = select_steps(candidates, 0, 0, limits)
        for step in chosen:
            state[step.partition] = step.target
        rounds.append(Round(len(rounds) + 1, tuple(chosen)))
