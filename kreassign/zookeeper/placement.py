"""Kafka 2.8's ``--generate`` proposal on the ZooKeeper path: ``AdminUtils.assignReplicasToBrokers``
(pure, standard library only).

Per topic, a random start index and replica shift (two ``nextInt(brokers)`` draws of one shared
``java.util.Random``); rack-aware when every chosen broker has a rack, over the brokers alternated rack
by rack. Topics are placed in the order of the ``HashMap`` that ``groupBy`` returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cmp_to_key

from kreassign.errors import CommandError
from kreassign.javacompat.hashes import java_string_compare, java_string_hash, java_topic_partition_hash
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, TopicPartition
from kreassign.planning.placement import NOT_ALL_BROKERS_HAVE_RACKS
from kreassign.zookeeper.scalaorder import champ_order, scala_set_order


def broker_metadata(brokers: Sequence[Broker], broker_ids: Sequence[int], rack_aware: bool) -> list[Broker]:
    """``AdminZkClient.getBrokerMetadatas``: the chosen live brokers by id, racks kept when rack-aware."""
    wanted = set(broker_ids)
    chosen = sorted((b for b in brokers if b.id in wanted), key=lambda b: b.id)
    with_rack = sum(1 for b in chosen if b.rack is not None)
    if rack_aware and 0 < with_rack < len(chosen):
        raise CommandError(NOT_ALL_BROKERS_HAVE_RACKS)
    return [Broker(b.id, b.rack if rack_aware else None) for b in chosen]


def _replica_index(first: int, shift: int, index: int, count: int) -> int:
    return (first + 1 + (shift + index) % (count - 1)) % count


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """``getRackAlternatedBrokerList``: racks in name order, taking each rack's next broker in turn."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    names = sorted(by_rack, key=cmp_to_key(java_string_compare))
    queues = {name: sorted(by_rack[name]) for name in names}
    result: list[int] = []
    index = 0
    while len(result) < len(racks):
        queue = queues[names[index]]
        if queue:
            result.append(queue.pop(0))
        index = (index + 1) % len(names)
    return result


def assign_replicas(
    brokers: Sequence[Broker], partitions: int, replication_factor: int, rng: JavaRandom
) -> list[list[int]]:
    """``assignReplicasToBrokers`` with random start index and shift; replicas of partitions 0..n-1."""
    if partitions <= 0:
        raise CommandError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise CommandError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise CommandError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    if all(b.rack is None for b in brokers):
        ids = [b.id for b in brokers]
        start, shift = rng.next_int(len(ids)), rng.next_int(len(ids))
        result = []
        for p in range(partitions):
            if p > 0 and p % len(ids) == 0:
                shift += 1
            first = (p + start) % len(ids)
            result.append(
                [ids[first]] + [ids[_replica_index(first, shift, j, len(ids))] for j in range(replication_factor - 1)]
            )
        return result
    if any(b.rack is None for b in brokers):
        raise CommandError("Not all brokers have rack information for replica rack aware assignment.")
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    rack_count = len(set(racks.values()))
    arranged = rack_alternated_brokers(racks)
    count = len(arranged)
    start, shift = rng.next_int(count), rng.next_int(count)
    result = []
    for p in range(partitions):
        if p > 0 and p % count == 0:
            shift += 1
        first = (p + start) % count
        leader = arranged[first]
        replicas, used_racks, used = [leader], {racks[leader]}, {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, shift * rack_count, k, count)]
                rack = racks[broker]
                k += 1
                if (rack not in used_racks or len(used_racks) == rack_count) and (
                    broker not in used or len(used) == count
                ):
                    replicas.append(broker)
                    used_racks.add(rack)
                    used.add(broker)
                    break
        result.append(replicas)
    return result


def calculate_assignment(
    current: Mapping[TopicPartition, Sequence[int]], brokers: Sequence[Broker], rng: JavaRandom
) -> dict[TopicPartition, list[int]]:
    """Kafka 2.8's ``calculateAssignment``: each topic keeps its partition count and takes the replication
    factor of its first partition in Scala ``Map`` order."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in current:
        by_topic.setdefault(tp.topic, []).append(tp)
    proposal: dict[TopicPartition, list[int]] = {}
    for topic in champ_order(by_topic, java_string_hash):
        parts = sorted(by_topic[topic], key=lambda tp: tp.partition)
        head = scala_set_order(parts, java_topic_partition_hash)[0]
        for p, replicas in enumerate(assign_replicas(brokers, len(parts), len(current[head]), rng)):
            proposal[TopicPartition(topic, p)] = replicas
    return dict(sorted(proposal.items()))
