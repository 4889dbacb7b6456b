"""Throttle arithmetic of the Apache tool (pure): which replicas and brokers get throttled.

A *move* of a partition has ``sources`` (replicas that already hold the data) and ``destinations``
(replicas that must fetch it). Leaders are throttled on the sources, followers on the destinations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kreassign.model import PartitionReassignment, TopicPartition

LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
LOG_DIR_THROTTLED_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"

BROKER_LEVEL_THROTTLES = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIR_THROTTLED_RATE)
TOPIC_LEVEL_THROTTLES = (LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS)


@dataclass(frozen=True)
class PartitionMove:
    sources: frozenset[int]
    destinations: frozenset[int]


MoveMap = dict[str, dict[int, PartitionMove]]


def calculate_current_move_map(current: Mapping[TopicPartition, PartitionReassignment]) -> MoveMap:
    """Moves already running: sources are the replicas that are not being added."""
    moves: MoveMap = {}
    for tp, reassignment in current.items():
        adding = set(reassignment.adding)
        moves.setdefault(tp.topic, {})[tp.partition] = PartitionMove(
            frozenset(r for r in reassignment.replicas if r not in adding), frozenset(adding)
        )
    return moves


def calculate_proposed_move_map(
    current_reassignments: Mapping[TopicPartition, PartitionReassignment],
    proposed: Mapping[TopicPartition, Sequence[int]],
    current_replicas: Mapping[TopicPartition, Sequence[int]],
) -> MoveMap:
    """Running moves plus the proposed ones; a proposal for a moving partition keeps its sources."""
    moves = calculate_current_move_map(current_reassignments)
    for tp, replicas in proposed.items():
        partition_moves = moves.setdefault(tp.topic, {})
        if tp.partition in partition_moves:
            sources = partition_moves[tp.partition].sources
        elif tp in current_replicas:
            sources = frozenset(current_replicas[tp])
        else:
            raise ValueError(f"Trying to reassign a topic partition {tp} with 0 replicas")
        partition_moves[tp.partition] = PartitionMove(sources, frozenset(replicas) - sources)
    return moves


def _throttle_list(entries: set[str]) -> str:
    # Java builds these in a TreeSet<String>: plain string order ("10:1" sorts before "2:1").
    return ",".join(sorted(entries))


def calculate_leader_throttles(moves: MoveMap) -> dict[str, str]:
    return {
        topic: _throttle_list({f"{p}:{s}" for p, move in parts.items() for s in move.sources})
        for topic, parts in moves.items()
    }


def calculate_follower_throttles(moves: MoveMap) -> dict[str, str]:
    return {
        topic: _throttle_list(
            {f"{p}:{d}" for p, move in parts.items() for d in move.destinations if d not in move.sources}
        )
        for topic, parts in moves.items()
    }


def calculate_reassigning_brokers(moves: MoveMap) -> list[int]:
    brokers: set[int] = set()
    for parts in moves.values():
        for move in parts.values():
            brokers |= move.sources | move.destinations
    return sorted(brokers)
