"""The ``--generate`` proposal of the Apache tool, reproduced exactly. Standard library only.

Kafka 4.3.1's ``ReassignPartitionsCommand.generateAssignment`` proposes replicas with
``StripedReplicaPlacer(new Random())`` from kafka-metadata. Given the same cluster, the same topics and the
same ``java.util.Random`` seed, the functions here return the very same replica lists:

* :func:`get_broker_metadata` is ``getBrokerMetadata``: the brokers in the order ``describeCluster``
  hands them to the tool, the racks kept or dropped, the "Not all brokers have rack information" error.
* :func:`place_topic` is ``StripedReplicaPlacer.place`` for one topic (rack lists, striping with random
  start offsets, the reshuffle after each round of brokers, the ``InvalidReplicationFactorException``
  messages).
* :func:`calculate_assignment` is ``calculateAssignment``: one placement per topic, all topics sharing
  one random generator, in the iteration order of the tool's ``HashMap``s.

That last point is why :class:`JavaHashMap` exists. The order in which topics are placed (each placement
consumes random numbers) is the iteration order of a ``HashMap<String, ...>`` filled from a
``HashMap<TopicPartition, ...>``, itself filled from a chain of maps built by the tool and the admin client.
Iteration order of a ``java.util.HashMap`` depends on the table size (which depends on the constructor,
on the Java release for pre-sized copies, and on the history of resizes), on the bucket of each key, and
on the order of keys inside a bucket (insertion order for ``put``, reverse insertion order for
``computeIfAbsent``, tree order once a bucket holds 8 or 9 keys). :class:`JavaHashMap` replays the node
layout of a ``java.util.HashMap`` exactly (in :mod:`kreassign.javacompat.hashmap`); :func:`~kreassign.javacompat.hashmap.iteration_order` gets the same answer faster by
replaying node by node only the buckets that can turn into trees.

Trees are not exotic here: ``TopicPartition("t-20", 0)`` and ``TopicPartition("t-10", 1)`` have the same
hash code, so numbered topic names fill buckets of up to one key per partition. Where Java itself is not
reproducible: a tree bucket holding two keys with the *same* hash code of a class that is not
``Comparable`` (``TopicPartition``, ``Optional``) is ordered by ``System.identityHashCode``, which changes
from run to run (the same puts give different orders even within one JVM); we break such ties one fixed
way. That order reaches the proposal only in rare cases (which topic comes first when two topics share a
bucket of ``groupedByTopic``; which partition gives a topic its replication factor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from kreassign.errors import CommandError
from kreassign.javacompat.hashes import (
    java_int_compare,
    java_int_hash,
    java_optional_string_hash,
    java_string_compare,
    java_string_hash,
    topic_partition_hash,
)
from kreassign.javacompat.hashmap import (
    DEFAULT_JAVA_VERSION,
    JavaHashMap,
    copy_capacity,
    hash_set_capacity,
    iteration_order,
)
from kreassign.javacompat.random import JavaRandom, java_shuffle
from kreassign.javacompat.text import utf16_units
from kreassign.model import TopicPartition
from kreassign.planning.placement_model import InvalidReplicationFactorError, UsableBroker

__all__ = [
    "DEFAULT_JAVA_VERSION",
    "NOT_ALL_BROKERS_HAVE_RACKS",
    "ClusterNode",
    "calculate_assignment",
    "describe_cluster_node_order",
    "get_broker_metadata",
    "place_topic",
]

NOT_ALL_BROKERS_HAVE_RACKS = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
    "assignment without rack information."
)

# --------------------------------------------------------------------------------------------------
# getBrokerMetadata


class ClusterNode(Protocol):
    """A broker as ``describeCluster`` reports it (``kreassign.model.Broker`` fits)."""

    @property
    def id(self) -> int: ...

    @property
    def rack(self) -> str | None: ...


_NodeT = TypeVar("_NodeT", bound=ClusterNode)


def describe_cluster_node_order(nodes: Iterable[_NodeT]) -> list[_NodeT]:
    """The order ``Admin.describeCluster().nodes()`` returns brokers in.

    The admin client collects the brokers of the DescribeCluster response into a ``HashMap<Integer, Node>``
    and returns its ``values()``: ascending ids when all ids are below the table size, bucket order
    otherwise. ``nodes`` is taken in response order (that order only matters for ids sharing a bucket).
    """
    by_id: dict[int, _NodeT] = {}
    layout: JavaHashMap[int] = JavaHashMap(java_int_hash, java_int_compare)
    for node in nodes:
        if layout.put(node.id):
            by_id[node.id] = node
    return [by_id[broker_id] for broker_id in layout]


def get_broker_metadata(
    nodes: Iterable[ClusterNode], broker_ids: Iterable[int], enable_rack_awareness: bool
) -> list[UsableBroker]:
    """``getBrokerMetadata``: the chosen brokers that exist, in ``describeCluster`` order.

    ``nodes`` are all the brokers of the cluster (DescribeCluster response order); ``broker_ids`` the
    ``--broker-list`` (ids that do not exist are silently left out, like the Apache tool does). Racks are
    dropped unless ``enable_rack_awareness``. Raises ``CommandError`` when rack awareness is on and some,
    but not all, of the chosen brokers have a rack.
    """
    wanted = set(broker_ids)
    result = [
        UsableBroker(node.id, node.rack if enable_rack_awareness else None)
        for node in describe_cluster_node_order(nodes)
        if node.id in wanted
    ]
    rackless = sum(1 for broker in result if broker.rack is None)
    if enable_rack_awareness and rackless not in (0, len(result)):
        raise CommandError(NOT_ALL_BROKERS_HAVE_RACKS)
    return result


# --------------------------------------------------------------------------------------------------
# StripedReplicaPlacer


class _ClusterLayout:
    """What a ``RackList`` derives from the broker list before it draws any random number.

    Racks are numbered in ``rackNames`` order (sorted, the rackless "rack" first). Each rack has two
    ``BrokerList``s, numbered as slots: ``2 * rack`` for its unfenced brokers, ``2 * rack + 1`` for its
    fenced ones, each sorted by id. ``shuffle_slots`` lists the slots in the order ``initialize`` and
    ``shuffle`` visit them: racks in the iteration order of the placer's ``HashMap<Optional<String>,
    Rack>``, fenced list before unfenced list. ``draw_slots`` / ``draw_bounds`` are the non-empty ones
    among them, which draw ``nextInt(size)`` in ``initialize``.
    """

    __slots__ = (
        "draw_bounds",
        "draw_slots",
        "rack_count",
        "shuffle_slots",
        "slots",
        "total_brokers",
        "unfenced_brokers",
    )

    def __init__(self, brokers: Iterable[UsableBroker]) -> None:
        racks: JavaHashMap[str | None] = JavaHashMap(java_optional_string_hash)
        fenced: dict[str | None, list[int]] = {}
        unfenced: dict[str | None, list[int]] = {}
        total = unfenced_total = 0
        for broker in brokers:
            if racks.put(broker.rack):
                fenced[broker.rack] = []
                unfenced[broker.rack] = []
            if broker.fenced:
                fenced[broker.rack].append(broker.id)
            else:
                unfenced[broker.rack].append(broker.id)
                unfenced_total += 1
            total += 1
        names = sorted(fenced, key=_optional_string_sort_key)
        position = {name: i for i, name in enumerate(names)}
        slots: list[list[int]] = []
        for name in names:
            slots.append(sorted(unfenced[name]))
            slots.append(sorted(fenced[name]))
        self.slots: tuple[list[int], ...] = tuple(slots)
        self.rack_count = len(names)
        self.shuffle_slots = tuple(s for name in racks for s in (2 * position[name] + 1, 2 * position[name]))
        self.draw_slots = tuple(s for s in self.shuffle_slots if slots[s])
        self.draw_bounds = tuple(len(slots[s]) for s in self.draw_slots)
        self.total_brokers = total
        self.unfenced_brokers = unfenced_total


def _optional_string_sort_key(rack: str | None) -> tuple[int, bytes]:
    """``OptionalStringComparator``: empty first, then ``String.compareTo`` (UTF-16 code units)."""
    return (0, b"") if rack is None else (1, utf16_units(rack))


class _PlacementLoopError(RuntimeError):
    """Java would loop forever here; we stop instead."""


class _RackList:
    """``StripedReplicaPlacer.RackList``: one per topic, fed by one shared random generator.

    The ``BrokerList`` objects of Java are flattened into per-slot arrays (see ``_ClusterLayout``):
    ``_brokers`` (shared with the layout until a shuffle needs a private copy), ``_offsets``,
    ``_indexes`` and ``_epochs``.
    """

    __slots__ = (
        "_brokers",
        "_epoch",
        "_epochs",
        "_indexes",
        "_layout",
        "_offset",
        "_offsets",
        "_owned",
        "_rack_names",
        "_rng",
    )

    def __init__(self, layout: _ClusterLayout, rng: JavaRandom) -> None:
        self._rng = rng
        self._layout = layout
        slot_count = len(layout.slots)
        self._brokers = list(layout.slots)
        self._owned = [False] * slot_count
        self._indexes = [0] * slot_count
        self._epochs = [0] * slot_count
        # Rack.initialize for each rack in HashMap order: nextInt(size) per non-empty BrokerList.
        offsets = [0] * slot_count
        for slot, offset in zip(layout.draw_slots, rng.next_ints(layout.draw_bounds), strict=True):
            offsets[slot] = offset
        self._offsets = offsets
        self._rack_names = list(range(layout.rack_count))
        self._offset = rng.next_int(layout.rack_count) if layout.rack_count else 0
        self._epoch = 0

    def _next(self, slot: int, epoch: int) -> int:
        """``BrokerList.next(epoch)``."""
        brokers = self._brokers[slot]
        if not brokers:
            return -1
        size = len(brokers)
        if self._epochs[slot] != epoch:
            self._epochs[slot] = epoch
            self._indexes[slot] = 0
            self._offsets[slot] = (self._offsets[slot] + 1) % size
        index = self._indexes[slot]
        if index >= size:
            return -1
        self._indexes[slot] = index + 1
        return brokers[(index + self._offsets[slot]) % size]

    def place(self, replication_factor: int) -> list[int]:
        layout = self._layout
        unfenced_brokers = layout.unfenced_brokers
        if self._epoch == unfenced_brokers and unfenced_brokers > 1:
            self._shuffle()
            self._epoch = 0
        rack_count = layout.rack_count
        if self._offset == rack_count:
            self._offset = 0
        epoch = self._epoch
        names = self._rack_names
        next_broker = self._next

        # The first replica: the next unfenced broker, from the rack at the offset or after it.
        first_rack_index = self._offset
        misses = 0
        while True:
            result = next_broker(2 * names[first_rack_index], epoch)
            if result >= 0:
                replicas = [result]
                break
            misses += 1
            if misses > rack_count:
                raise _PlacementLoopError("no unfenced broker left in this round")
            first_rack_index += 1
            if first_rack_index == rack_count:
                first_rack_index = 0

        # The others: one per rack from the offset on, skipping the first replica's rack once;
        # Rack.next takes unfenced brokers first, then fenced ones.
        rack_index = self._offset
        for _ in range(1, replication_factor):
            result = -1
            misses = 0
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    slot = 2 * names[rack_index]
                    result = next_broker(slot, epoch)
                    if result < 0:
                        result = next_broker(slot + 1, epoch)
                        misses += 1
                        if result < 0 and misses > rack_count:
                            raise _PlacementLoopError("no broker left in this round")
                rack_index += 1
                if rack_index == rack_count:
                    rack_index = 0
            replicas.append(result)
        self._epoch += 1
        self._offset += 1
        return replicas

    def _shuffle(self) -> None:
        rng = self._rng
        java_shuffle(self._rack_names, rng)
        for slot in self._layout.shuffle_slots:
            if len(self._brokers[slot]) > 1:  # Collections.shuffle draws nothing for shorter lists
                if not self._owned[slot]:
                    self._brokers[slot] = list(self._brokers[slot])
                    self._owned[slot] = True
                java_shuffle(self._brokers[slot], rng)


def _check_replication_factor(replication_factor: int, layout: _ClusterLayout) -> None:
    """The checks of ``StripedReplicaPlacer.place``, in its order, with its messages."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive."
        )
    if layout.unfenced_brokers == 0:
        raise InvalidReplicationFactorError(
            "All brokers are currently fenced, or have all their log directories cordoned."
        )
    if replication_factor > layout.total_brokers:
        raise InvalidReplicationFactorError(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{layout.total_brokers} broker(s) are registered or some brokers have all their log "
            "directories cordoned."
        )


def _place(layout: _ClusterLayout, partition_count: int, replication_factor: int, rng: JavaRandom) -> list[list[int]]:
    rack_list = _RackList(layout, rng)  # draws its random numbers before the checks, like Java
    _check_replication_factor(replication_factor, layout)
    try:
        return [rack_list.place(replication_factor) for _ in range(partition_count)]
    except _PlacementLoopError as exc:  # pragma: no cover - Java hangs forever here
        raise CommandError(f"Replica placement cannot finish: {exc}") from exc


def place_topic(
    partition_count: int,
    replication_factor: int,
    brokers: Sequence[UsableBroker],
    rng: JavaRandom,
) -> list[list[int]]:
    """``StripedReplicaPlacer(rng).place(new PlacementSpec(0, partition_count, rf), cluster)``.

    ``brokers`` in the order the cluster describer yields them (see :func:`get_broker_metadata`).
    Returns one replica list per partition, partition 0 first. Raises
    ``InvalidReplicationFactorError`` with the placer's message when no placement is possible.
    """
    return _place(_ClusterLayout(brokers), partition_count, replication_factor, rng)


# --------------------------------------------------------------------------------------------------
# calculateAssignment


def _topic_placement_order(
    partitions_by_topic: Mapping[str, Sequence[int]],
    topic_order: Sequence[str],
    java_version: int,
) -> list[tuple[str, list[TopicPartition]]]:
    """Replay the maps between the topics JSON and ``calculateAssignment``'s ``groupedByTopic``.

    Returns the topics in ``groupedByTopic`` iteration order, each with its partitions in the order
    they were added to its list (so the first one is ``assignment.get(0)``).
    """
    topic_hashes = {topic: java_string_hash(topic) for topic in topic_order}
    topic_hash = topic_hashes.__getitem__
    compare = java_string_compare
    # parseGenerateAssignmentArgs -> describeTopics(adminClient, new HashSet<>(topics))
    capacity = hash_set_capacity(len(topic_order), java_version)
    requested = iteration_order(topic_order, topic_hash, compare, initial_capacity=capacity)
    # KafkaAdminClient: topicFutures = new HashMap<>(names.size()), filled from new ArrayList<>(set) ...
    futures = iteration_order(requested, topic_hash, compare, initial_capacity=len(requested))
    # ... and returned as new HashMap<>(topicFutures)
    capacity = copy_capacity(len(futures), java_version) if futures else None
    returned = iteration_order(futures, topic_hash, compare, initial_capacity=capacity)
    # ReassignPartitionsCommand.describeTopics: res = new HashMap<>(), filled from the futures map
    described = iteration_order(returned, topic_hash, compare)

    # getReplicaAssignmentForTopics: res = new HashMap<>(); each topic's partitions in response order.
    # (Plain tuples stand for TopicPartition here: they hash much faster than the dataclass.)
    listed = [(topic, p) for topic in described for p in partitions_by_topic[topic]]
    tp_hashes = {tp: topic_partition_hash(topic_hashes[tp[0]], tp[1]) for tp in listed}
    tp_hash = tp_hashes.__getitem__
    by_partition = iteration_order(listed, tp_hash)
    # toReplicaIds: Collectors.toMap into a new HashMap (putIfAbsent, in iteration order)
    current_parts = iteration_order(by_partition, tp_hash)
    # calculateAssignment: groupedByTopic.computeIfAbsent(topic, ...).add(entry)
    grouped = iteration_order([topic for topic, _ in current_parts], topic_hash, compare, compute_if_absent=True)
    lists: dict[str, list[TopicPartition]] = {topic: [] for topic in grouped}
    for topic, partition in current_parts:
        lists[topic].append(TopicPartition(topic, partition))
    return list(lists.items())


def calculate_assignment(
    current: Mapping[TopicPartition, Sequence[int]],
    brokers: Sequence[UsableBroker],
    rng: JavaRandom,
    *,
    topic_order: Sequence[str] | None = None,
    java_version: int = DEFAULT_JAVA_VERSION,
) -> dict[TopicPartition, list[int]]:
    """``calculateAssignment``: the ``--generate`` proposal for every partition of ``current``.

    ``current`` is the current replica assignment of the topics to move; ``brokers`` comes from
    :func:`get_broker_metadata`; ``rng`` is the one random generator shared by all topics (the Apache
    tool's static ``StripedReplicaPlacer``). ``topic_order`` is the order of the topics in the
    topics-to-move JSON (defaults to the order topics first appear in ``current``); it and
    ``java_version`` (the JVM the Apache tool would run on) only matter because they decide in which
    order Java's hash maps place the topics.

    Each topic keeps its partition count; its replication factor is the length of the replica list of
    the partition that comes first in Java's map order (normally all partitions have the same one).
    Partitions of a topic are assumed to be listed by the cluster in ascending order, as brokers do.
    Returns the proposal sorted by topic and partition.
    """
    partitions_by_topic: dict[str, list[int]] = {}
    for tp in current:
        partitions_by_topic.setdefault(tp.topic, []).append(tp.partition)
    for partitions in partitions_by_topic.values():
        partitions.sort()
    order = list(partitions_by_topic) if topic_order is None else list(topic_order)
    if len(set(order)) != len(order) or set(order) != set(partitions_by_topic):
        raise ValueError("topic_order must list each topic of the current assignment exactly once")

    layout = _ClusterLayout(brokers)
    proposal: dict[TopicPartition, list[int]] = {}
    for topic, partitions in _topic_placement_order(partitions_by_topic, order, java_version):
        replication_factor = len(current[partitions[0]])
        placements = _place(layout, len(partitions), replication_factor, rng)
        for partition, replicas in enumerate(placements):
            proposal[TopicPartition(topic, partition)] = replicas
    return dict(sorted(proposal.items()))
