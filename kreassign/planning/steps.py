"""KIP-435 incremental reassignment, computed client-side (pure, standard library only).

A partition goes from its current replicas (CR) to its final target replicas (FTR) through steps. Each
step is one AlterPartitionReassignments target; Kafka completes it only once every replica of the step
is in sync, and only then drops the replicas the step removes. The rules (documented in docs/batched-runs.md,
"Batched reassignment"):

1. **Leader first.** If FTR's preferred leader ``FTR[0]`` is not CR's first replica, the first step puts
   it first: added when it is a new broker (one replica added), moved to the front when it already holds a
   replica (no data moves). The same step drops up to R replicas of CR that FTR leaves out (CR order), as
   long as the partition keeps FTR's size, but never CR's first replica, the current leader: it goes once
   the new leader leads. The executor elects ``FTR[0]`` (preferred-leader election) before the next step.
   Such a step is a *leader movement*. (KIP-435's example adds the new leader alone and drops in the next
   step; its algorithm drops R replicas in the same step, the leader among them. Dropping the followers at
   once saves a submission per partition, ``[1, 2] -> [3, 1]`` is one step, and the partition holds no
   extra replica while it waits for its election.)
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

Batches (``select_steps``): at most P partitions moving at once, at most L of them moving their leader,
and with a per-broker limit N, no broker part of more than N steps at once (a step counts against every
broker that receives a new replica and against the partition's current leader, which serves the copy; a
step that copies nothing counts against none). Steps are taken greedily in priority order (``tier``:
steps that copy nothing, then leader movements, then the others; within a tier the plan's order or the
order of sizes): a step is skipped only when one of its brokers, or L, is full, so no broker with a free
slot waits while a step for it waits behind others. The executor calls it whenever a slot frees up (a
sliding window, not rounds).

With a per-broker limit, the free slots go to the least crowded steps first (tier by tier; the priority
order among equally crowded steps). A step's *crowd* is the most copies that one link it uses would carry
once it starts: the serving leader's outgoing link (one copy per new replica) and each new replica's
incoming link. Links are shared by the copies crossing them, so a copy on a crowded link moves slowly and
holds its slots on both brokers for long while the rate of its brokers' other links goes unused; N counts
steps, not bandwidth, so which steps take the slots decides how close a plan gets to its physical floor.
When every broker both sends and receives (racks swapped), taking steps in priority order filled the
slots of the busiest brokers with copies squeezed on the far side of their links
(bench/bench_scheduler.py).
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from kreassign.model import TopicPartition


@dataclass(frozen=True)
class Limits:
    """``None`` means no limit."""

    partitions: int | None = None  # P: partitions moving at once
    replicas: int | None = None  # R: replicas added to one partition per step
    leaders: int | None = None  # L: partitions moving their leader at once
    brokers: int | None = None  # N: steps one broker is part of at once

    def describe(self) -> str:
        """The limits in words, e.g. "at most 2 partitions and 1 replica per partition moving at once, no limit on
        leaders" (a limit that is not set is named as such, never "at most unlimited")."""

        def count(value: int, noun: str, plural: str) -> str:
            return f"{value} {noun if value == 1 else plural}"

        limits = (
            (self.partitions, "partition", "partitions", "partitions"),
            (self.replicas, "replica per partition", "replicas per partition", "replicas per partition"),
            (self.leaders, "leader", "leaders", "leaders"),
        )
        limited = [count(v, one, many) for v, one, many, _ in limits if v is not None]
        unlimited = [name for v, _, _, name in limits if v is None]
        text = ""
        if limited:
            text = "at most " + _and(limited, "and") + " moving at once"
        if unlimited:
            text += (", no limit on " if text else "no limit on ") + _and(unlimited, "or")
            if not limited:
                text += " moving at once"
        if self.brokers is not None:
            text += f", at most {count(self.brokers, 'step', 'steps')} per broker"
        return text


def _and(items: list[str], conjunction: str) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


@dataclass(frozen=True)
class Step:
    partition: TopicPartition
    source: tuple[int, ...]
    target: tuple[int, ...]

    @cached_property  # read several times per step whenever slots are filled
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
        return f"{self.partition}: {replica_ids(self.source)} -> {replica_ids(self.target)} ({', '.join(parts)})"


def replica_ids(replicas: Sequence[int]) -> str:
    """A replica list as every line of kreassign writes it: [3,2]."""
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
        excess = [r for r in current[1:] if r not in final_set]  # never the leader before its successor is elected
        room = len(held) - len(final)
        drop = min(len(excess) if max_replicas is None else max_replicas, len(excess), max(0, room))
        held -= set(excess[:drop])
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


def step_brokers(step: Step, leader: int | None = None) -> frozenset[int]:
    """The brokers a step loads: those receiving a new replica, and the partition's current leader (it
    serves the copy; ``leader`` when known, else the step's first source replica). A step that adds no
    replica (a reorder for a new leader, or only drops) copies nothing and loads no broker."""
    if not step.adding:
        return frozenset()
    source = serving(step, leader)
    return frozenset(step.adding) | (frozenset() if source is None else frozenset([source]))


def tier(step: Step) -> int:
    """0: the step copies nothing (a reorder for a new leader, or drops: it ends at once and the drops
    free the extra replicas a partition holds between its steps); 1: a leader movement that copies; 2: the
    others."""
    return 0 if not step.adding else 1 if step.moves_leader else 2


def priority(step: Step, rank: int) -> tuple[int, int]:
    """Steps that copy nothing first, then leader movements, then by ``rank`` (the position in the chosen
    order)."""
    return (tier(step), rank)


def serving(step: Step, leader: int | None = None) -> int | None:
    """The broker that serves the step's copies: the partition's current leader (``leader`` when known,
    else the step's first source replica)."""
    return leader if leader is not None else (step.source[0] if step.source else None)


def crowd(step: Step, leader: int | None, copies_in: Mapping[int, int], copies_out: Mapping[int, int]) -> int:
    """The most copies one link of the step would carry once it starts, given the copies in flight into
    (``copies_in``) and out of (``copies_out``) each broker: the serving leader's outgoing link gains one
    copy per new replica, each new replica's incoming link one. 0 for a step that copies nothing."""
    if not step.adding:
        return 0
    source = serving(step, leader)
    out = copies_out.get(source, 0) + len(step.adding) if source is not None else 0
    return max(out, *(copies_in.get(b, 0) + 1 for b in step.adding))


_NONE_FULL = -1  # no broker of the step is full (broker ids are never negative)
LOOKAHEAD = 4  # with per-broker limits, steps that may start read at a time per free slot of P
_Group = tuple[int, bool, int | None, tuple[int, ...]]  # tier, moves the leader, serving leader, new replicas


def select_steps(
    candidates: Iterable[Step],
    moving_partitions: int,
    moving_leaders: int,
    limits: Limits,
    broker_load: Mapping[int, int] | None = None,
    *,
    broker_limit: int | None = None,
    leader_of: Callable[[Step], int | None] = lambda _step: None,
    blocked: Callable[[Step, int | None], None] = lambda _step, _broker: None,
    copies_in: Mapping[int, int] | None = None,
    copies_out: Mapping[int, int] | None = None,
) -> list[Step]:
    """Which candidate steps start now, given how many partitions (and leader movements) are already
    moving and how many steps each broker is part of (``broker_load``). ``candidates`` are the next steps
    of idle partitions, in priority order (see ``priority``). The per-broker limit
    is ``broker_limit`` when given (an adapted one), else ``limits.brokers``. ``blocked(step, broker)`` hears
    of each step left out because ``broker`` (None: L) is full. Without a per-broker limit the steps are
    taken in candidate order. With one, the least crowded go first (``crowd``, from the copies in flight
    into and out of each broker, ``copies_in`` and ``copies_out``), and the candidates are read LOOKAHEAD
    steps that may start per free slot of P at a time (all at once without P). Returns the chosen steps in
    candidate order; candidates read but neither chosen nor blocked (P is full) are left as they were."""
    per_broker = broker_limit if broker_limit is not None else limits.brokers
    free = None if limits.partitions is None else max(0, limits.partitions - moving_partitions)
    leader_free = None if limits.leaders is None else max(0, limits.leaders - moving_leaders)
    load = Counter(broker_load or {})
    chosen: list[Step] = []
    if free == 0:
        return chosen
    if per_broker is None:
        for step in candidates:  # an iterator is read no further than the last step it needs
            if step.moves_leader and leader_free is not None and leader_free <= 0:
                blocked(step, None)
                continue
            if leader_free is not None:
                leader_free -= step.moves_leader
            chosen.append(step)
            if free is not None and len(chosen) >= free:
                break
        return chosen
    into, out = Counter(copies_in or {}), Counter(copies_out or {})

    def shut(step: Step, brokers: frozenset[int]) -> int | None:
        """Why the step cannot start now: L (None) or a full broker; _NONE_FULL when it can."""
        if step.moves_leader and leader_free is not None and leader_free <= 0:
            return None
        return next((b for b in sorted(brokers) if load[b] >= per_broker), _NONE_FULL)

    # Steps with the same serving leader and the same new replicas load the same brokers and links: they
    # are one group, in candidate order (tiers and leader movements apart, for priority and for L). A
    # group's crowd only grows as steps are taken, so looking at the groups of the lowest crowd first, by
    # the candidate order of their next step, and moving a group whose crowd grew to its new level, takes
    # the least crowded step each time (the first in candidate order among equals).
    groups: dict[_Group, deque[tuple[int, Step]]] = {}
    closed: dict[_Group, int | None] = {}  # groups that cannot start: why
    # per tier: crowd -> heap of (next place, group)
    levels: tuple[dict[int, list[tuple[int, _Group]]], ...] = ({}, {}, {})
    taken: list[tuple[int, Step]] = []
    reading = enumerate(candidates)
    while True:
        # with P the limit, only LOOKAHEAD steps that may start per free slot are read at a time
        may_start, read_all = 0, True
        for place, step in reading:
            key = (tier(step), step.moves_leader, serving(step, leader_of(step)), step.adding)
            if key in closed:
                blocked(step, closed[key])
                continue
            members = groups.get(key)
            if not members:
                why = shut(step, step_brokers(step, key[2]))
                if why != _NONE_FULL:
                    closed[key] = why
                    blocked(step, why)
                    continue
                members = groups[key] = deque()
                heapq.heappush(levels[key[0]].setdefault(len(step.adding), []), (place, key))
            members.append((place, step))
            may_start += 1
            if free is not None and may_start >= LOOKAHEAD * (free - len(taken)):
                read_all = False
                break
        for by_crowd in levels:  # by tier: steps that copy nothing, leader movements, the others
            while by_crowd:
                level = min(by_crowd)
                heap = by_crowd.pop(level)
                while heap:
                    key = heapq.heappop(heap)[1]
                    members = groups[key]
                    step, source = members[0][1], key[2]
                    brokers = step_brokers(step, source)
                    why = shut(step, brokers)
                    if why != _NONE_FULL:
                        closed[key] = why
                        for _, waiting in members:
                            blocked(waiting, why)
                        members.clear()
                        continue
                    crowded = crowd(step, source, into, out)
                    if crowded > level:
                        heapq.heappush(by_crowd.setdefault(crowded, []), (members[0][0], key))
                        continue
                    taken.append(members.popleft())
                    load.update(brokers)
                    into.update(step.adding)
                    out[source] += len(step.adding)
                    if leader_free is not None:
                        leader_free -= step.moves_leader
                    if free is not None and len(taken) >= free:  # the others stay where they were
                        return [step for _, step in sorted(taken)]
                    if members:  # the group's crowd is looked at again
                        heapq.heappush(heap, (members[0][0], key))
        if read_all:
            return [step for _, step in sorted(taken)]


@dataclass(frozen=True)
class Round:
    """Steps that start together when every earlier step completes at once (the dry-run view)."""

    number: int
    steps: tuple[Step, ...]


def plan_rounds(
    current: Mapping[TopicPartition, Sequence[int]],
    final: Mapping[TopicPartition, Sequence[int]],
    limits: Limits,
    rank: Mapping[TopicPartition, int] | None = None,
) -> list[Round]:
    """The whole plan as rounds, assuming each step completes before the next round (``--dry-run``).
    The real executor does not wait for a round to finish; it refills free slots as steps complete.
    ``rank`` orders the partitions (default: the plan's order)."""
    order = {tp: i for i, tp in enumerate(final)} if rank is None else dict(rank)
    waiting: dict[TopicPartition, Step] = {}
    for tp in final:
        step = next_step(tp, current[tp], final[tp], limits.replicas)
        if step is not None:
            waiting[tp] = step
    rounds: list[Round] = []
    while waiting:
        candidates = sorted(waiting.values(), key=lambda s: priority(s, order[s.partition]))
        chosen = select_steps(candidates, 0, 0, limits)
        for step in chosen:
            following = next_step(step.partition, step.target, final[step.partition], limits.replicas)
            if following is None:
                del waiting[step.partition]
            else:
                waiting[step.partition] = following
        rounds.append(Round(len(rounds) + 1, tuple(sorted(chosen, key=lambda s: order[s.partition]))))
    return rounds


def count_steps(
    current: Mapping[TopicPartition, Sequence[int]],
    final: Mapping[TopicPartition, Sequence[int]],
    max_replicas: int | None,
) -> int:
    """How many steps the whole plan takes."""
    return sum(len(plan_partition(tp, current[tp], final[tp], max_replicas)) for tp in final)


def busiest_broker(steps: Sequence[Step]) -> tuple[int, int] | None:
    """(broker, steps it is part of) for the broker most loaded by these steps (lowest id on ties)."""
    load = Counter(b for s in steps for b in step_brokers(s))
    if not load:
        return None
    broker = min(load, key=lambda b: (-load[b], b))
    return broker, load[broker]
