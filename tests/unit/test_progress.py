"""--progress computation (pure): replica statuses, lag, rates, ETAs, KIP-352 classes, outcomes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kreassign.actions.progress import read_progress
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    ReassignmentPlan,
    TopicPartition,
    TopicPartitionReplica,
)
from kreassign.planning.progress import (
    PartitionStatus,
    PlanOutcome,
    ReplicaProgress,
    ReplicaSample,
    ReplicaStatus,
    UnderReplication,
    classify_urp,
    compute_progress,
    replicas_to_sample,
    status_text,
    verify_outcome,
)
from kreassign.planning.states import LogDirMoveState, PartitionState

T = TopicPartition
IN_SYNC, BEHIND, NOT_HOSTED = ReplicaStatus.IN_SYNC, ReplicaStatus.BEHIND, ReplicaStatus.NOT_HOSTED
UNKNOWN_BROKER = ReplicaStatus.UNKNOWN_BROKER
# partition states and replica statuses of an unknown topic or partition have the same values
UNKNOWN_TOPIC, UNKNOWN_PARTITION = PartitionStatus.UNKNOWN_TOPIC, PartitionStatus.UNKNOWN_PARTITION
COMPLETE, MOVING = PartitionStatus.COMPLETE, PartitionStatus.MOVING
IN_PROGRESS, NOT_AT_TARGET = PlanOutcome.IN_PROGRESS, PlanOutcome.NOT_AT_TARGET
URP_REASSIGNING, URP_UNDER_REPLICATED = UnderReplication.REASSIGNING, UnderReplication.UNDER_REPLICATED


def R(partition: int, broker: int, topic: str = "t") -> TopicPartitionReplica:
    return TopicPartitionReplica(topic, partition, broker)


LIVE = (1, 2, 3)
# t-0 moves from [1,2] to [3,2]: broker 3 is being added and is behind.
MOVING_META = {"t": [PartitionInfo(0, replicas=(3, 2, 1), isr=(1, 2), leader=1)]}
MOVING_REASSIGNMENT = {T("t", 0): PartitionReassignment(replicas=(3, 2, 1), adding=(3,), removing=(1,))}


def sample(at: float, leo: dict, size: dict) -> ReplicaSample:
    return ReplicaSample(at=at, log_end_offsets=leo, sizes=size)


def rows_of(report) -> list[ReplicaProgress]:
    return [row for p in report.partitions for row in p.replicas]


@pytest.mark.parametrize(
    ("row", "text"),
    [
        (ReplicaProgress("t", 0, 1, IN_SYNC), "In sync"),
        (ReplicaProgress("t", 0, 1, BEHIND, messages_behind=10456), "Behind: 10456 messages behind"),
        (ReplicaProgress("t", 0, 1, BEHIND), "Behind: leader unavailable"),
        (ReplicaProgress("t", 0, 1, UNKNOWN_TOPIC), "Unknown topic"),
        (ReplicaProgress("t", 0, 1, UNKNOWN_PARTITION), "Unknown partition"),
        (ReplicaProgress("t", 0, 1, UNKNOWN_BROKER), "Unknown broker"),
        (ReplicaProgress("t", 0, 1, NOT_HOSTED), "Broker does not host this partition"),
    ],
    ids=["in-sync", "behind", "behind-no-leader", "unknown-topic", "unknown-partition", "unknown-broker", "not-hosted"],
)
def test_status_texts_are_kip_179s(row, text):
    assert status_text(row) == text == row.text


STATUS_CASES = [
    # (id, targets, metadata, reassignments, last sample (leo, size), expected (broker, status, messages, bytes))
    (
        "leader-and-follower-in-sync",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        ({R(0, 1): 100, R(0, 2): 98}, {R(0, 1): 5000, R(0, 2): 4900}),
        [(1, IN_SYNC, 0, 0), (2, IN_SYNC, 2, 100)],
    ),
    (
        "added-replica-behind",
        [(T("t", 0), (3, 2))],
        MOVING_META,
        MOVING_REASSIGNMENT,
        ({R(0, 1): 4000, R(0, 2): 4000, R(0, 3): 990}, {R(0, 1): 4_000_000, R(0, 3): 990_000}),
        [(3, BEHIND, 3010, 3_010_000), (2, IN_SYNC, 0, None)],
    ),
    (
        "added-replica-without-a-log-yet-is-behind-by-everything",
        [(T("t", 0), (3, 2))],
        MOVING_META,
        MOVING_REASSIGNMENT,
        ({R(0, 1): 4000, R(0, 2): 4000}, {R(0, 1): 4_000_000}),
        [(3, BEHIND, 4000, 4_000_000), (2, IN_SYNC, 0, None)],
    ),
    (
        "out-of-isr-but-caught-up-is-still-behind",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (1,), 1)]},
        {},
        ({R(0, 1): 50, R(0, 2): 50}, {}),
        [(1, IN_SYNC, 0, None), (2, BEHIND, 0, None)],
    ),
    (
        "in-sync-replica-its-broker-did-not-answer-for",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        ({R(0, 1): 100}, {R(0, 1): 5000}),
        [(1, IN_SYNC, 0, 0), (2, IN_SYNC, None, None)],
    ),
    (
        "offline-leader",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (2,), None)]},
        {},
        ({R(0, 2): 50}, {}),
        [(1, BEHIND, None, None), (2, IN_SYNC, None, None)],
    ),
    (
        "unknown-topic",
        [(T("gone", 0), (1, 2))],
        {"gone": None},
        {},
        ({}, {}),
        [(1, UNKNOWN_TOPIC, None, None), (2, UNKNOWN_TOPIC, None, None)],
    ),
    (
        "unknown-partition",
        [(T("t", 42), (1,))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        ({}, {}),
        [(1, UNKNOWN_PARTITION, None, None)],
    ),
    (
        "unknown-broker",
        [(T("t", 0), (1, 42))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        ({R(0, 1): 7}, {}),
        [(1, IN_SYNC, 0, None), (42, UNKNOWN_BROKER, None, None)],
    ),
    (
        "broker-does-not-host-the-partition",
        [(T("t", 0), (1, 3))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        ({R(0, 1): 7}, {}),
        [(1, IN_SYNC, 0, None), (3, NOT_HOSTED, None, None)],
    ),
]


@pytest.mark.parametrize(
    ("targets", "meta", "reassignments", "last", "expected"),
    [c[1:] for c in STATUS_CASES],
    ids=[c[0] for c in STATUS_CASES],
)
def test_replica_statuses(targets, meta, reassignments, last, expected):
    report = compute_progress(targets, meta, reassignments, LIVE, sample(10.0, *last))
    got = [(r.broker, r.status, r.messages_behind, r.bytes_behind) for r in rows_of(report)]
    assert got == expected
    # one sample: no rate, and no ETA but for a replica with nothing left to copy
    assert all(
        r.rate_bytes_per_s is None and (r.eta_s is None or 0 in (r.bytes_behind, r.messages_behind))
        for r in rows_of(report)
    )


RATE_CASES = [
    # (id, first (leo, size), last (leo, size), seconds apart, rate B/s, ETA s)
    (
        "idle-leader",
        ({R(0, 1): 4000, R(0, 3): 1000}, {R(0, 1): 4_000_000, R(0, 3): 1_000_000}),
        ({R(0, 1): 4000, R(0, 3): 1100}, {R(0, 1): 4_000_000, R(0, 3): 1_100_000}),
        2.0,
        50_000.0,
        58.0,  # 2.9 MB behind, gap closing at 50 kB/s
    ),
    (
        "leader-still-growing",
        ({R(0, 1): 4000, R(0, 3): 1000}, {R(0, 1): 4_000_000, R(0, 3): 1_000_000}),
        ({R(0, 1): 4050, R(0, 3): 1100}, {R(0, 1): 4_050_000, R(0, 3): 1_100_000}),
        1.0,
        100_000.0,
        59.0,  # 2.95 MB behind, closing at 100 - 50 kB/s
    ),
    (
        "gap-not-closing",
        ({R(0, 1): 4000, R(0, 3): 1000}, {R(0, 1): 4_000_000, R(0, 3): 1_000_000}),
        ({R(0, 1): 4100, R(0, 3): 1100}, {R(0, 1): 4_100_000, R(0, 3): 1_100_000}),
        1.0,
        100_000.0,
        None,
    ),
    (
        "throttled-nothing-copied",
        ({R(0, 1): 4000, R(0, 3): 990}, {R(0, 1): 4_000_000, R(0, 3): 990_000}),
        ({R(0, 1): 4000, R(0, 3): 990}, {R(0, 1): 4_000_000, R(0, 3): 990_000}),
        1.0,
        0.0,
        None,
    ),
    (
        "no-sizes-eta-from-messages",
        ({R(0, 1): 4000, R(0, 3): 1000}, {}),
        ({R(0, 1): 4000, R(0, 3): 1500}, {}),
        1.0,
        None,
        5.0,  # 2500 messages behind, 500 messages/s
    ),
]


@pytest.mark.parametrize(
    ("first", "last", "seconds", "rate", "eta"), [c[1:] for c in RATE_CASES], ids=[c[0] for c in RATE_CASES]
)
def test_rate_and_eta_from_two_samples(first, last, seconds, rate, eta):
    report = compute_progress(
        [(T("t", 0), (3, 2))],
        MOVING_META,
        MOVING_REASSIGNMENT,
        LIVE,
        replace(sample(100.0 + seconds, *last), leaders={T("t", 0): 1}),  # the leader's log: the write rate
        replace(sample(100.0, *first), leaders={T("t", 0): 1}),
    )
    behind = rows_of(report)[0]
    assert behind.status == BEHIND
    assert behind.rate_bytes_per_s == rate
    assert behind.eta_s == (None if eta is None else pytest.approx(eta))
    assert report.interval_s == seconds


URP_CASES = [
    ("fully-replicated", PartitionInfo(0, (1, 2), (1, 2), 1), None, None),
    (
        "missing-replica-is-being-added",
        PartitionInfo(0, (3, 2, 1), (1, 2), 1),
        PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,)),
        URP_REASSIGNING,
    ),
    ("original-replica-out-of-isr", PartitionInfo(0, (1, 2), (1,), 1), None, URP_UNDER_REPLICATED),
    (
        "original-replica-out-of-isr-during-a-move",
        PartitionInfo(0, (3, 2, 1), (1,), 1),
        PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,)),
        URP_UNDER_REPLICATED,
    ),
    (
        "replica-being-removed-out-of-isr",
        PartitionInfo(0, (3, 2, 1), (3, 2), 3),
        PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,)),
        URP_UNDER_REPLICATED,
    ),
]


@pytest.mark.parametrize(("info", "reassignment", "urp"), [c[1:] for c in URP_CASES], ids=[c[0] for c in URP_CASES])
def test_kip_352_urp_classes(info, reassignment, urp):
    assert classify_urp(info, reassignment) == urp


OUTCOME_CASES = [
    (
        "all-at-target-and-in-sync",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        COMPLETE,
        COMPLETE,
    ),
    ("moving", [(T("t", 0), (3, 2))], MOVING_META, MOVING_REASSIGNMENT, MOVING, IN_PROGRESS),
    (
        "at-target-but-a-replica-behind",
        [(T("t", 0), (1, 2))],
        {"t": [PartitionInfo(0, (1, 2), (1,), 1)]},
        {},
        COMPLETE,
        IN_PROGRESS,
    ),
    (
        "neither-moving-nor-at-target",
        [(T("t", 0), (2, 1))],
        {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]},
        {},
        NOT_AT_TARGET,
        NOT_AT_TARGET,
    ),
    ("unknown-topic", [(T("gone", 0), (1,))], {"gone": None}, {}, UNKNOWN_TOPIC, NOT_AT_TARGET),
    (
        "unknown-partition",
        [(T("t", 5), (1,))],
        {"t": [PartitionInfo(0, (1,), (1,), 1)]},
        {},
        UNKNOWN_PARTITION,
        NOT_AT_TARGET,
    ),
    (
        "unknown-broker-while-moving",
        [(T("t", 0), (3, 42))],
        MOVING_META,
        MOVING_REASSIGNMENT,
        MOVING,
        NOT_AT_TARGET,
    ),
]


@pytest.mark.parametrize(
    ("targets", "meta", "reassignments", "state", "outcome"),
    [c[1:] for c in OUTCOME_CASES],
    ids=[c[0] for c in OUTCOME_CASES],
)
def test_partition_state_and_outcome(targets, meta, reassignments, state, outcome):
    leo = {R(0, b): 10 for b in (1, 2, 3)}
    report = compute_progress(targets, meta, reassignments, LIVE, sample(0.0, leo, {}))
    assert report.partitions[0].state == state
    assert report.outcome == outcome


def test_partitions_sorted_and_duplicates_merged_rows_in_target_order():
    meta = {"a": [PartitionInfo(0, (2, 1), (2, 1), 2)], "b": [PartitionInfo(0, (1,), (1,), 1)]}
    targets = [(T("b", 0), (1,)), (T("a", 0), (2, 1)), (T("b", 0), (1,))]
    report = compute_progress(targets, meta, {}, LIVE, sample(0.0, {}, {}))
    assert [(p.tp, [r.broker for r in p.replicas]) for p in report.partitions] == [
        (T("a", 0), [2, 1]),
        (T("b", 0), [1]),
    ]


def test_replicas_to_sample_are_leaders_and_hosted_targets_on_live_brokers():
    meta = {"t": [PartitionInfo(0, (3, 2, 1), (1, 2), 1), PartitionInfo(1, (2, 4), (2,), 2)], "gone": None}
    targets = [(T("t", 0), (3, 2)), (T("t", 1), (4, 1)), (T("gone", 0), (1,)), (T("t", 9), (1,))]
    assert replicas_to_sample(targets, meta, LIVE) == [R(0, 1), R(0, 3), R(0, 2), R(1, 2)]


VERIFY_CASES = [
    ("completed", {T("t", 0): PartitionState((1, 2), (1, 2), True)}, {}, COMPLETE),
    ("still-in-progress", {T("t", 0): PartitionState((1, 2, 3), (3, 2), False)}, {}, IN_PROGRESS),
    ("not-at-target", {T("t", 0): PartitionState((1, 2), (2, 3), True)}, {}, NOT_AT_TARGET),
    ("unknown-partition", {T("t", 9): PartitionState((), (2, 3), True)}, {}, NOT_AT_TARGET),
    (
        "log-dir-move-active",
        {T("t", 0): PartitionState((1,), (1,), True)},
        {R(0, 1): LogDirMoveState("active", "/b", "/a", "/b")},
        IN_PROGRESS,
    ),
    (
        "log-dir-move-cancelled",
        {T("t", 0): PartitionState((1,), (1,), True)},
        {R(0, 1): LogDirMoveState("cancelled", "/b", "/a")},
        NOT_AT_TARGET,
    ),
    (
        "replica-not-there-yet-while-moving",
        {T("t", 0): PartitionState((1, 2), (2,), False)},
        {R(0, 2): LogDirMoveState("missing_replica", "/b")},
        IN_PROGRESS,
    ),
    (
        "replica-not-hosted-yet-while-moving",
        {T("t", 0): PartitionState((1, 2), (2,), False)},
        {R(0, 2): LogDirMoveState("missing_log_dir", "/b")},
        IN_PROGRESS,
    ),
    (
        "replica-not-in-a-live-log-dir-and-nothing-moving",
        {T("t", 0): PartitionState((1,), (1,), True)},
        {R(0, 1): LogDirMoveState("missing_log_dir", "/b")},
        NOT_AT_TARGET,
    ),
    (
        "replica-missing-and-nothing-moving",
        {T("t", 0): PartitionState((1,), (1,), True)},
        {R(0, 2): LogDirMoveState("missing_replica", "/b")},
        NOT_AT_TARGET,
    ),
    (
        "log-dir-move-completed",
        {T("t", 0): PartitionState((1,), (1,), True)},
        {R(0, 1): LogDirMoveState("completed", "/b", "/b")},
        COMPLETE,
    ),
]


@pytest.mark.parametrize(
    ("partitions", "moves", "outcome"), [c[1:] for c in VERIFY_CASES], ids=[c[0] for c in VERIFY_CASES]
)
def test_verify_outcome(partitions, moves, outcome):
    assert verify_outcome(partitions, moves) == outcome


class ScriptedPort:
    """A ClusterPort whose replicas copy 100 messages of 1 kB per read (sizes and offsets)."""

    def __init__(self) -> None:
        self.reads = 0
        self.calls: list[str] = []

    def describe_brokers(self):
        return [Broker(b) for b in LIVE]

    def list_reassignments(self, partitions=None):
        self.calls.append("list_reassignments")
        return dict(MOVING_REASSIGNMENT)

    def describe_topics(self, topics):
        return {t: MOVING_META[t] for t in topics}

    def replica_sizes(self, broker_ids):
        self.calls.append(f"replica_sizes {list(broker_ids)}")
        return {R(0, 1): 4_000_000, R(0, 3): 1_000_000 + 100_000 * self.reads}

    def replica_log_end_offsets(self, replicas):
        self.calls.append(f"replica_log_end_offsets {len(list(replicas))}")
        self.reads += 1
        return {R(0, 1): 4000, R(0, 2): 4000, R(0, 3): 1000 + 100 * (self.reads - 1)}


def test_read_progress_samples_twice_with_the_injected_clock_and_sleep():
    now = [50.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    port = ScriptedPort()
    plan = ReassignmentPlan(((T("t", 0), (3, 2)),))
    report = read_progress(port, plan, interval_s=2.0, clock=lambda: now[0], sleep=sleep)
    assert slept == [2.0]
    assert port.calls == [
        "list_reassignments",
        "replica_sizes [1, 2, 3]",
        "replica_log_end_offsets 3",
        "replica_sizes [1, 2, 3]",
        "replica_log_end_offsets 3",
    ]
    behind = report.partitions[0].replicas[0]
    assert (behind.messages_behind, behind.bytes_behind) == (2900, 2_900_000)
    assert behind.rate_bytes_per_s == 50_000.0 and behind.eta_s == pytest.approx(58.0)
    assert report.interval_s == 2.0


def test_read_progress_samples_once_when_nothing_is_behind():
    class InSync(ScriptedPort):
        def list_reassignments(self, partitions=None):
            return {}

        def describe_topics(self, topics):
            return {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]}

    slept: list[float] = []
    report = read_progress(InSync(), ReassignmentPlan(((T("t", 0), (1, 2)),)), sleep=slept.append)
    assert slept == []
    assert report.outcome == COMPLETE and report.interval_s is None
