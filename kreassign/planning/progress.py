"""Where each replica of a reassignment stands: in sync, or how far behind, how fast, and when done (pure).

``--progress`` (KIP-179) reports one row per partition of the plan and per target broker. The cluster
is read by ``kreassign.actions.progress``; this module only computes:

* per (partition, target broker) a ``ReplicaProgress``: status (``in_sync``, ``behind``,
  ``unknown_topic``, ``unknown_partition``, ``unknown_broker``, ``not_hosted``), messages and bytes
  behind the leader, the observed copy rate and an ETA;
* per partition a ``PartitionProgress``: where the partition stands against its target
  (``complete``, ``moving``, ``not_at_target``, ``unknown_topic``, ``unknown_partition``), and its
  under-replication class after KIP-352: ``reassigning`` when every replica missing from the ISR is
  being added by a reassignment, ``under-replicated`` when a replica of the original set is out of it;
* the outcome of the whole plan (``complete``, ``in_progress``, ``not_at_target``), which
  ``--fail-if-incomplete`` turns into exit statuses 0, 2 and 3; and the same outcome for ``--verify``.

In-sync means "in the ISR" (the broker's own definition). Lag is the leader's log end offset minus
the replica's, both read from the brokers themselves; bytes behind is the leader's log size minus the
replica's (DescribeLogDirs). A replica that is being added but has no log yet is behind by the whole
leader log (messages counted from offset 0). The rate is how fast the replica's log grew between two
samples (none when it shrank: its broker deleted segments); the ETA is the plan's estimate applied to one copy
(``ReplicaProgress.eta``, ``planning.eta.estimate_eta``): bytes behind / (the copy rate, bounded by the copy's
share of the throttle, less its partition's write rate), or the messages behind over the message rates when
sizes are missing. No rate and no throttle, no ETA.

When the copy is throttled (``with_throttles``: its topic lists the replica and its broker, or its leader, has
a rate), the row gets its share of the throttle (``planning.eta.throttle_shares``, the model of every surface):
a throttled follower copies in bursts, so between two samples 1 s apart it may copy nothing or a whole fetch,
and the share is then the rate.

A partition of a running batched plan (``batched_run``) that has not been reached yet is not stuck: its
target replicas are simply not on their brokers yet; the plan is in progress.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from kreassign.model import PartitionInfo, PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.eta import Eta, estimate_eta, plan_throttle, throttle_shares
from kreassign.planning.states import LogDirMoveKind, LogDirMoveState, PartitionState, ReassignmentStatus
from kreassign.planning.traffic import LogSample, write_rate


class ReplicaStatus(StrEnum):
    """Where one target replica stands."""

    IN_SYNC = "in_sync"
    BEHIND = "behind"
    UNKNOWN_TOPIC = "unknown_topic"
    UNKNOWN_PARTITION = "unknown_partition"
    UNKNOWN_BROKER = "unknown_broker"
    NOT_HOSTED = "not_hosted"


class PartitionStatus(StrEnum):
    """Where one partition stands against its target."""

    COMPLETE = "complete"
    MOVING = "moving"
    NOT_AT_TARGET = "not_at_target"
    UNKNOWN_TOPIC = "unknown_topic"
    UNKNOWN_PARTITION = "unknown_partition"


class PlanOutcome(StrEnum):
    """Where the whole plan stands (``--fail-if-incomplete`` turns it into exit statuses 0, 2, 3)."""

    COMPLETE = "complete"
    IN_PROGRESS = "in_progress"  # some of its moves still run, or a replica is behind
    NOT_AT_TARGET = "not_at_target"


class UnderReplication(StrEnum):
    """KIP-352's classes of an under-replicated partition."""

    REASSIGNING = "reassigning"
    UNDER_REPLICATED = "under-replicated"


@dataclass(frozen=True)
class ReplicaSample:
    """What the brokers said at one instant: each replica's log end offset and log size."""

    at: float
    log_end_offsets: Mapping[TopicPartitionReplica, int] = field(default_factory=dict)
    sizes: Mapping[TopicPartitionReplica, int] = field(default_factory=dict)
    leaders: Mapping[TopicPartition, int] = field(default_factory=dict)
    """Each partition's leader when sampled (its log end offset and size are the partition's)."""
    log_starts: Mapping[TopicPartition, int] = field(default_factory=dict)
    """Each partition's log start offset (ListOffsets earliest; empty when it could not be read)."""

    def log(self, tp: TopicPartition) -> tuple[int, LogSample] | None:
        """The partition's leader and its log (start and end offsets, size), as ``planning.traffic`` reads it;
        without the start offset, the log is taken to start at 0 (its size growth is then the write rate)."""
        leader = self.leaders.get(tp)
        replica = None if leader is None else TopicPartitionReplica(tp.topic, tp.partition, leader)
        if replica is None or replica not in self.log_end_offsets or replica not in self.sizes:
            return None
        start = self.log_starts.get(tp, 0)
        return leader, LogSample(start, self.log_end_offsets[replica], self.sizes[replica])  # type: ignore[return-value]


def write_rates(first: ReplicaSample | None, last: ReplicaSample) -> dict[TopicPartition, float]:
    """Bytes written per second to each partition between the samples (``planning.traffic.write_rate``: the one
    estimate of --sample-rates), where both read the same leader's log."""
    if first is None or last.at <= first.at:
        return {}
    rates = {}
    for tp in last.leaders:
        before, after = first.log(tp), last.log(tp)
        if before is not None and after is not None and before[0] == after[0]:
            rates[tp] = write_rate(before[1], after[1], last.at - first.at)[0]
    return rates


@dataclass(frozen=True)
class ReplicaProgress:
    topic: str
    partition: int
    broker: int
    status: ReplicaStatus
    log_end_offset: int | None = None
    messages_behind: int | None = None
    bytes_behind: int | None = None
    rate_bytes_per_s: float | None = None
    """How fast its log grew between the samples (never below 0; None with one sample, or when its log lost
    segments meanwhile: what arrived is then unknown)."""
    throttle_rate_bytes_per_s: float | None = None
    """This copy's share of the throttles that bind it (None: not throttled, or not known)."""
    write_bytes_per_s: float | None = None
    """How fast its partition is written meanwhile (the leader's log between the samples; None: one sample)."""
    interval_s: float | None = None
    """Seconds between the samples its rates come from."""
    messages_per_s: float | None = None
    """How fast its log end offset grew, and its leader's (the ETA in messages, when sizes are unknown)."""
    leader_messages_per_s: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", ReplicaStatus(self.status))

    @property
    def text(self) -> str:
        """The KIP-179 status text."""
        return status_text(self)

    @property
    def eta(self) -> Eta:
        """When its copy ends, by the one estimate of the plan's ETA (``planning.eta.estimate_eta``): bytes behind /
        (its copy rate, bounded by its share of the throttle, less its partition's write rate). Over one interval
        of less than ``TRUSTED_SPAN_S`` (--progress's 1 s) a throttled copy's rate is its share: a throttled copy
        moves in bursts, so one interval shows nothing or a burst. Without sizes, the messages behind over the
        message rates. With one sample, unknown: its partition's writes are not measured yet, and an ETA that takes
        them for none is too soon."""
        if self.status is not ReplicaStatus.BEHIND:
            return Eta(None)
        if self.interval_s is None and (self.bytes_behind or self.messages_behind):
            return Eta(None)
        if self.bytes_behind is not None:
            return estimate_eta(
                self.bytes_behind,
                self.rate_bytes_per_s,
                self.interval_s,
                throttle=self.throttle_rate_bytes_per_s,
                write_rate=self.write_bytes_per_s or 0.0,
            )
        if self.messages_behind is not None:
            return estimate_eta(
                self.messages_behind,
                self.messages_per_s,
                self.interval_s,
                write_rate=max(0.0, self.leader_messages_per_s or 0.0),
            )
        return Eta(None)

    @property
    def eta_s(self) -> float | None:
        return self.eta.seconds


@dataclass(frozen=True)
class PartitionProgress:
    topic: str
    partition: int
    state: PartitionStatus
    target: tuple[int, ...]
    current: tuple[int, ...] | None = None
    isr: tuple[int, ...] | None = None
    leader: int | None = None
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    urp: UnderReplication | None = None
    replicas: tuple[ReplicaProgress, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", PartitionStatus(self.state))
        if self.urp is not None:
            object.__setattr__(self, "urp", UnderReplication(self.urp))

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def order_only(self) -> bool:
        """Not at its target only by the order of its replicas (the same brokers): nothing to copy, every replica
        in sync; the new order (and preferred leader) comes once a reassignment submits it."""
        return (
            self.state is PartitionStatus.NOT_AT_TARGET
            and self.current is not None
            and tuple(self.current) != tuple(self.target)
            and sorted(self.current) == sorted(self.target)
        )


@dataclass(frozen=True)
class ProgressReport:
    partitions: tuple[PartitionProgress, ...]
    interval_s: float | None = None
    """Seconds between the two samples the rates come from; None with a single sample."""
    batched_run: bool = False
    """A batched run of this plan is running: partitions not at their target wait for it."""
    bytes_left: int | None = None
    """Bytes the plan still copies: into each target replica of the partitions moving (or, during a batched run,
    waiting for it), the partition's size less what the replica holds (``bytes_left``); None when unknown."""
    left_rate: float | None = None
    """How fast ``bytes_left`` shrank between two samples (bytes/s; the writes meanwhile netted out)."""
    left_span_s: float | None = None
    """Seconds between the samples ``left_rate`` comes from."""
    write_rate: float | None = None
    """Over the same samples, bytes/s the replicas being copied fall behind by: their partition's write rate,
    summed over the replicas behind (None: not measured)."""

    @property
    def eta(self) -> Eta:
        """When the plan's copies end (``kreassign.planning.eta``): bytes left / (the copy rate, bounded by the
        throttle's shares of the copies in flight, less ``write_rate``). The copy rate is how fast the bytes left
        shrank with the writes to the replicas behind added back. With one sample (the first frame of --watch),
        unknown: the writes are not measured yet."""
        behind = [row for p in self.partitions for row in p.replicas if row.status is ReplicaStatus.BEHIND]
        if self.interval_s is None and behind and self.bytes_left:
            return Eta(None)
        shares = {
            i: row.throttle_rate_bytes_per_s
            for i, row in enumerate(behind)
            if row.throttle_rate_bytes_per_s is not None
        }
        throttle = plan_throttle(shares, len(behind))  # type: ignore[arg-type]
        writes = self.write_rate or 0.0
        copy = None if self.left_rate is None else self.left_rate + writes
        return estimate_eta(self.bytes_left, copy, self.left_span_s, throttle=throttle, write_rate=writes)

    @property
    def outcome(self) -> PlanOutcome:
        return progress_outcome(self)


def status_text(row: ReplicaProgress) -> str:
    if row.status is ReplicaStatus.IN_SYNC:
        return "In sync"
    if row.status is ReplicaStatus.BEHIND:
        if row.messages_behind is None:
            return "Behind: leader unavailable"
        return f"Behind: {row.messages_behind} messages behind"
    return {
        ReplicaStatus.UNKNOWN_TOPIC: "Unknown topic",
        ReplicaStatus.UNKNOWN_PARTITION: "Unknown partition",
        ReplicaStatus.UNKNOWN_BROKER: "Unknown broker",
        ReplicaStatus.NOT_HOSTED: "Broker does not host this partition",
    }[row.status]


def classify_urp(info: PartitionInfo, reassignment: PartitionReassignment | None) -> UnderReplication | None:
    """KIP-352: a partition whose only replicas out of the ISR are being added is ``reassigning``;
    one with a replica of its original set out of the ISR is ``under-replicated``; else None."""
    missing = [b for b in info.replicas if b not in info.isr]
    if not missing:
        return None
    adding = set(reassignment.adding) if reassignment else set()
    if all(b in adding for b in missing):
        return UnderReplication.REASSIGNING
    return UnderReplication.UNDER_REPLICATED


def _rate(
    first: Mapping[TopicPartitionReplica, int],
    second: Mapping[TopicPartitionReplica, int],
    key: TopicPartitionReplica | None,
    dt: float | None,
) -> float | None:
    """How fast the replica's log (its size, or its log end offset) grew between the samples; None when it shrank
    (its broker deleted segments meanwhile: tiered storage's local retention trims a follower being filled, and
    a follower whose fetch position its leader trimmed away starts again from the leader's local log) or with one
    sample. A replica that had no log at the first sample (its copy started since) grew from nothing."""
    if key is None or dt is None or dt <= 0 or key not in second:
        return None
    grown = second[key] - first.get(key, 0)
    return None if grown < 0 else grown / dt


def _gap(leader: int | None, replica: int | None) -> int | None:
    return None if leader is None or replica is None else max(leader - replica, 0)


def _replica_row(
    tp: TopicPartition,
    broker: int,
    info: PartitionInfo,
    live: set[int],
    first: ReplicaSample | None,
    last: ReplicaSample,
    dt: float | None,
) -> ReplicaProgress:
    base = {"topic": tp.topic, "partition": tp.partition, "broker": broker}
    if broker not in live:
        return ReplicaProgress(**base, status=ReplicaStatus.UNKNOWN_BROKER)
    if broker not in info.replicas:
        return ReplicaProgress(**base, status=ReplicaStatus.NOT_HOSTED)
    replica = TopicPartitionReplica(tp.topic, tp.partition, broker)
    leader = TopicPartitionReplica(tp.topic, tp.partition, info.leader) if info.leader is not None else None
    leo = last.log_end_offsets.get(replica)
    leader_leo = last.log_end_offsets.get(leader) if leader else None
    size = last.sizes.get(replica)
    leader_size = last.sizes.get(leader) if leader else None
    if broker in info.isr:
        return ReplicaProgress(
            **base,
            status=ReplicaStatus.IN_SYNC,
            log_end_offset=leo,
            messages_behind=_gap(leader_leo, leo),
            bytes_behind=_gap(leader_size, size),
        )
    if leo is None and size is None:  # out of the ISR with no log on its broker yet: all still to copy
        messages, behind_bytes = _gap(leader_leo, 0), _gap(leader_size, 0)
    else:
        messages, behind_bytes = _gap(leader_leo, leo), _gap(leader_size, size)
    return ReplicaProgress(
        **base,
        status=ReplicaStatus.BEHIND,
        log_end_offset=leo,
        messages_behind=messages,
        bytes_behind=behind_bytes,
        rate_bytes_per_s=_rate(first.sizes, last.sizes, replica, dt) if first else None,
        interval_s=dt,
        messages_per_s=_rate(first.log_end_offsets, last.log_end_offsets, replica, dt) if first else None,
        leader_messages_per_s=(
            _rate(first.log_end_offsets, last.log_end_offsets, leader, dt)
            if first and leader in first.log_end_offsets
            else None
        ),
    )


def compute_progress(
    targets: Iterable[tuple[TopicPartition, Sequence[int]]],
    topics: Mapping[str, Sequence[PartitionInfo] | None],
    reassignments: Mapping[TopicPartition, PartitionReassignment],
    live_brokers: Iterable[int],
    last: ReplicaSample,
    first: ReplicaSample | None = None,
    batched_run: bool = False,
    plan_first: ReplicaSample | None = None,
) -> ProgressReport:
    """One ``PartitionProgress`` per distinct partition of the plan (sorted), with one row per target
    broker in plan order. ``topics[t]`` is None for a topic the cluster does not know. Rates and ETAs
    need ``first``, an earlier sample; the plan's rate (its ETA) ``plan_first`` (default ``first``), an earlier one
    still (``kreassign.planning.eta.PLAN_RATE_WINDOW_S``)."""
    live = set(live_brokers)
    dt = last.at - first.at if first is not None else None
    plan = dict(targets)
    row_writes = write_rates(first, last)
    partitions = []
    for tp in sorted(plan):
        target = tuple(plan[tp])
        described = topics.get(tp.topic)
        info = next((p for p in described or () if p.partition == tp.partition), None)
        if info is None:
            topic_known = described is not None
            unknown = ReplicaStatus.UNKNOWN_PARTITION if topic_known else ReplicaStatus.UNKNOWN_TOPIC
            state = PartitionStatus.UNKNOWN_PARTITION if topic_known else PartitionStatus.UNKNOWN_TOPIC
            rows = tuple(
                ReplicaProgress(tp.topic, tp.partition, b, unknown if b in live else ReplicaStatus.UNKNOWN_BROKER)
                for b in target
            )
            partitions.append(PartitionProgress(tp.topic, tp.partition, state, target, replicas=rows))
            continue
        reassignment = reassignments.get(tp)
        if reassignment is not None:
            state = PartitionStatus.MOVING
        elif tuple(info.replicas) == target:
            state = PartitionStatus.COMPLETE
        else:
            state = PartitionStatus.NOT_AT_TARGET
        rows = tuple(
            replace(row, write_bytes_per_s=row_writes.get(tp)) if row.status is ReplicaStatus.BEHIND else row
            for row in (_replica_row(tp, b, info, live, first, last, dt) for b in target)
        )
        partitions.append(
            PartitionProgress(
                tp.topic,
                tp.partition,
                state,
                target,
                current=tuple(info.replicas),
                isr=tuple(info.isr),
                leader=info.leader,
                adding=tuple(reassignment.adding) if reassignment else (),
                removing=tuple(reassignment.removing) if reassignment else (),
                urp=classify_urp(info, reassignment),
                replicas=rows,
            )
        )
    left = bytes_left(plan, topics, reassignments, live, last, batched_run)
    rate = span = writes = None
    plan_first = plan_first or first
    if plan_first is not None and last.at > plan_first.at:
        before = bytes_left(plan, topics, reassignments, live, plan_first, batched_run)
        both = set(before) & set(left)
        span = last.at - plan_first.at
        rate = (sum(before[k] for k in both) - sum(left[k] for k in both)) / span
        plan_writes = write_rates(plan_first, last)
        behind = [(p.tp, row.broker) for p in partitions for row in p.replicas if row.status is ReplicaStatus.BEHIND]
        if plan_writes:  # None when the samples read no leader's log (older callers)
            writes = sum(plan_writes.get(tp, 0.0) for tp, broker in behind if (tp, broker) in both)
    return ProgressReport(
        tuple(partitions),
        interval_s=dt,
        batched_run=batched_run,
        bytes_left=sum(left.values()) if left else None,
        left_rate=rate,
        left_span_s=span,
        write_rate=writes,
    )


def bytes_left(
    plan: Mapping[TopicPartition, Sequence[int]],
    topics: Mapping[str, Sequence[PartitionInfo] | None],
    reassignments: Mapping[TopicPartition, PartitionReassignment],
    live: set[int],
    sample: ReplicaSample,
    batched_run: bool,
) -> dict[tuple[TopicPartition, int], int]:
    """Per (partition, target broker): the partition's size (its largest replica in ``sample``) less what the
    broker holds of it, for the partitions moving, at their target, or (during a batched run) waiting for it.
    Sizes only, not the ISR: a copy that ends between two samples still counts as copied between them."""
    left: dict[tuple[TopicPartition, int], int] = {}
    for tp, target in plan.items():
        info = next((p for p in topics.get(tp.topic) or () if p.partition == tp.partition), None)
        if info is None:
            continue
        if tp not in reassignments and tuple(info.replicas) != tuple(target) and not batched_run:
            continue  # nothing moves it
        sizes = [
            sample.sizes[r]
            for b in {*info.replicas, *target}
            if (r := TopicPartitionReplica(tp.topic, tp.partition, b)) in sample.sizes
        ]
        if not sizes:
            continue
        for b in target:
            if b in live:
                held = sample.sizes.get(TopicPartitionReplica(tp.topic, tp.partition, b), 0)
                left[(tp, b)] = max(max(sizes) - held, 0)
    return left


_STUCK_PARTITION_STATES = frozenset(
    {PartitionStatus.NOT_AT_TARGET, PartitionStatus.UNKNOWN_TOPIC, PartitionStatus.UNKNOWN_PARTITION}
)
_STUCK_REPLICA_STATUSES = frozenset(
    {ReplicaStatus.UNKNOWN_TOPIC, ReplicaStatus.UNKNOWN_PARTITION, ReplicaStatus.UNKNOWN_BROKER}
)


def progress_outcome(report: ProgressReport) -> PlanOutcome:
    """``not_at_target`` when a partition is neither moving nor at its target, or a topic, partition
    or broker is unknown; else ``in_progress`` while a partition moves or a replica is behind (or a
    target broker does not host its replica yet); else ``complete``."""
    rows = [row for p in report.partitions for row in p.replicas]
    stuck = _STUCK_PARTITION_STATES - ({PartitionStatus.NOT_AT_TARGET} if report.batched_run else set())
    if any(p.state in stuck for p in report.partitions) or any(row.status in _STUCK_REPLICA_STATUSES for row in rows):
        return PlanOutcome.NOT_AT_TARGET
    moving = any(p.state in (PartitionStatus.MOVING, PartitionStatus.NOT_AT_TARGET) for p in report.partitions)
    if moving or any(row.status is not ReplicaStatus.IN_SYNC for row in rows):
        return PlanOutcome.IN_PROGRESS
    return PlanOutcome.COMPLETE


def verify_outcome(
    partitions: Mapping[TopicPartition, PartitionState],
    log_dirs: Mapping[TopicPartitionReplica, LogDirMoveState],
) -> PlanOutcome:
    """The ``--verify`` counterpart: ``not_at_target`` for a partition with no active reassignment
    whose replicas differ from the target (unknown partitions included) and for a log-dir move that
    is not happening (cancelled, or the replica not in a live log dir of its broker while its
    partition is not moving); ``in_progress`` while a partition or log-dir move runs; else ``complete``."""
    moving = {tp for tp, state in partitions.items() if not state.done}
    stuck = any(state.status is ReassignmentStatus.NOT_AT_TARGET for state in partitions.values())
    for replica, move in log_dirs.items():
        # a replica its broker does not list yet is expected while its partition is still being moved
        missing = move.kind in (LogDirMoveKind.MISSING_REPLICA, LogDirMoveKind.MISSING_LOG_DIR)
        not_there = missing and TopicPartition(replica.topic, replica.partition) not in moving
        stuck = stuck or not_there or move.kind is LogDirMoveKind.CANCELLED
    if stuck:
        return PlanOutcome.NOT_AT_TARGET
    if moving or any(not move.done for move in log_dirs.values()):
        return PlanOutcome.IN_PROGRESS
    return PlanOutcome.COMPLETE


def replicas_to_sample(
    targets: Iterable[tuple[TopicPartition, Sequence[int]]],
    topics: Mapping[str, Sequence[PartitionInfo] | None],
    live_brokers: Iterable[int],
) -> list[TopicPartitionReplica]:
    """Every replica whose log end offset the report needs: the leader and the target brokers of each
    known partition, on live brokers, in a stable order."""
    live = set(live_brokers)
    wanted: dict[TopicPartitionReplica, None] = {}
    for tp, target in dict(targets).items():
        info = next((p for p in topics.get(tp.topic) or () if p.partition == tp.partition), None)
        if info is None:
            continue
        brokers = ([info.leader] if info.leader is not None else []) + [b for b in target if b in info.replicas]
        for b in brokers:
            if b in live:
                wanted[TopicPartitionReplica(tp.topic, tp.partition, b)] = None
    return list(wanted)


def any_behind(report: ProgressReport) -> bool:
    return any(row.status is ReplicaStatus.BEHIND for p in report.partitions for row in p.replicas)


@dataclass(frozen=True)
class Throttles:
    """The replication throttles as the brokers and topics have them (dynamic configs): rates per broker, and
    per topic the replicas each list names (``partition:broker`` entries, or ``*`` for all)."""

    leader_rates: Mapping[int, int] = field(default_factory=dict)
    follower_rates: Mapping[int, int] = field(default_factory=dict)
    leader_replicas: Mapping[str, frozenset[str]] = field(default_factory=dict)
    follower_replicas: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @staticmethod
    def listed(lists: Mapping[str, frozenset[str]], topic: str, partition: int, broker: int) -> bool:
        entries = lists.get(topic, frozenset())
        return "*" in entries or f"{partition}:{broker}" in entries


def with_throttles(report: ProgressReport, throttles: Throttles) -> ProgressReport:
    """Each replica behind gets its share of the throttles that bind its copy: the follower rate of its broker
    divided by the throttled copies into that broker, and the leader rate of its leader, less what it sends its
    in-sync followers of the partitions its list names (their write rate each), divided by the throttled copies
    that leader serves (the smaller of the two)."""
    copies: dict[tuple[TopicPartition, int], tuple[int, float | None, int | None, float | None]] = {}
    load: dict[int, float] = {}  # what each leader sends its in-sync followers under its throttle (throttle_shares)
    for p in report.partitions:
        writes = max((row.write_bytes_per_s or 0.0 for row in p.replicas), default=0.0)
        if (
            p.leader is not None
            and writes
            and throttles.listed(throttles.leader_replicas, p.topic, p.partition, p.leader)
        ):
            load[p.leader] = load.get(p.leader, 0.0) + writes * len(set(p.isr or ()) - {p.leader})
        for row in p.replicas:
            if row.status is not ReplicaStatus.BEHIND:
                continue
            follower = row.broker in throttles.follower_rates and throttles.listed(
                throttles.follower_replicas, p.topic, p.partition, row.broker
            )
            leader = (
                p.leader is not None
                and p.leader in throttles.leader_rates
                and throttles.listed(throttles.leader_replicas, p.topic, p.partition, p.leader)
            )
            copies[(p.tp, row.broker)] = (
                row.broker,
                throttles.follower_rates[row.broker] if follower else None,
                p.leader,
                throttles.leader_rates[p.leader] if leader else None,  # type: ignore[index]
            )
    shares = throttle_shares(copies, load)
    if not shares:
        return report
    partitions = tuple(
        replace(
            p,
            replicas=tuple(
                replace(row, throttle_rate_bytes_per_s=shares[(p.tp, row.broker)])
                if (p.tp, row.broker) in shares
                else row
                for row in p.replicas
            ),
        )
        for p in report.partitions
    )
    return replace(report, partitions=partitions)
