"""Throttle arithmetic and status texts of the Apache tool (pure)."""

from __future__ import annotations

from kreassign.model import PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.states import (
    LogDirMoveState,
    PartitionState,
    render_current_reassignments,
    render_log_dir_states,
    render_partition_states,
)
from kreassign.planning.throttles import (
    calculate_follower_throttles,
    calculate_leader_throttles,
    calculate_proposed_move_map,
    calculate_reassigning_brokers,
)

T = TopicPartition


def test_throttles_for_new_moves():
    moves = calculate_proposed_move_map(
        {},
        {T("foo", 0): [4, 5, 6], T("foo", 1): [1, 2, 3], T("bar", 0): [3, 4]},
        {T("foo", 0): [1, 2, 3], T("foo", 1): [4, 5, 6], T("bar", 0): [2, 3]},
    )
    assert calculate_leader_throttles(moves) == {"foo": "0:1,0:2,0:3,1:4,1:5,1:6", "bar": "0:2,0:3"}
    assert calculate_follower_throttles(moves) == {"foo": "0:4,0:5,0:6,1:1,1:2,1:3", "bar": "0:4"}
    assert calculate_reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6]


def test_running_reassignment_keeps_its_sources():
    running = {T("foo", 0): PartitionReassignment(replicas=(1, 2, 3, 4), adding=(4,), removing=(3,))}
    moves = calculate_proposed_move_map(running, {T("foo", 0): [1, 2, 5]}, {T("foo", 0): [1, 2, 3, 4]})
    assert calculate_leader_throttles(moves) == {"foo": "0:1,0:2,0:3"}
    assert calculate_follower_throttles(moves) == {"foo": "0:5"}


def test_throttle_lists_sort_as_strings_like_java_treeset():
    moves = calculate_proposed_move_map({}, {T("t", 10): [2], T("t", 2): [2]}, {T("t", 10): [1], T("t", 2): [1]})
    assert calculate_leader_throttles(moves) == {"t": "10:1,2:1"}


def test_partition_state_texts():
    states = {
        T("b", 0): PartitionState((1, 2), (1, 2), True),
        T("a", 1): PartitionState((1, 2, 3), (3, 2), False),
        T("a", 0): PartitionState((), (1, 2), True),
    }
    assert render_partition_states(states) == (
        "Status of partition reassignment:\n"
        "There is no active reassignment of partition a-0, but replica set is  rather than 1,2.\n"
        "Reassignment of partition a-1 is still in progress.\n"
        "Reassignment of partition b-0 is completed."
    )


def test_log_dir_state_texts_sorted_by_broker_then_topic():
    r = TopicPartitionReplica
    states = {
        r("t", 0, 2): LogDirMoveState("completed", "/d1", current="/d1"),
        r("t", 0, 1): LogDirMoveState("active", "/d1", current="/d0", future="/d1"),
        r("s", 1, 1): LogDirMoveState("active", "/d1", current="/d0", future="/d2"),
        r("t", 1, 3): LogDirMoveState("cancelled", "/d1", current="/d0"),
        r("t", 2, 3): LogDirMoveState("missing_replica", "/d1"),
        r("t", 3, 3): LogDirMoveState("missing_log_dir", "/d1"),
    }
    assert render_log_dir_states(states).splitlines() == [
        "Partition s-1 on broker 1 is being moved to log dir /d2 instead of /d1.",
        "Reassignment of replica t-0-1 is still in progress.",
        "Reassignment of replica t-0-2 completed successfully.",
        "Partition t-1 on broker 3 is not being moved from log dir /d0 to /d1.",
        "Partition t-2 cannot be found in any live log directory on broker 3.",
        "Partition t-3 is not found in any live log dir on broker 3. There is likely an offline log directory on the broker.",
    ]


def test_current_reassignments_text():
    assert render_current_reassignments({}) == "No partition reassignments found."
    text = render_current_reassignments(
        {T("t", 1): PartitionReassignment((1, 2, 3), (3,), (1,)), T("t", 0): PartitionReassignment((1, 2))}
    )
    assert (
        text == "Current partition reassignments:\nt-0: replicas: 1,2.\nt-1: replicas: 1,2,3. adding: 3. removing: 1."
    )
