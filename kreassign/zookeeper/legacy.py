"""``--generate``, ``--execute`` and ``--verify`` through ZooKeeper, with Kafka 2.8.2's texts.

What differs from the ``--bootstrap-server`` actions, as in Kafka 2.8:

* ``--execute`` writes ``/admin/reassign_partitions`` (refused while that znode exists), checks that
  partitions and brokers exist first, and cannot move replicas between log dirs.
* ``--verify`` reads the replicas from the topic znodes; a partition is in progress while it is listed
  in ``/admin/reassign_partitions``; it prints a warning that the results may be incomplete, and
  ``is complete.`` where the newer tool prints ``is completed.``.
* Throttles are read-modify-written in the config znodes, each write followed by a change notification.

* ``--generate`` reads the topic and broker znodes and proposes with Kafka 2.8's ``AdminUtils``
  algorithm (:mod:`kreassign.zookeeper.placement`); topics that do not exist are left out silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kreassign.actions.common import Output
from kreassign.actions.execute import CANNOT_EXECUTE_BECAUSE_OF_EXISTING, YOU_MUST_RUN_VERIFY
from kreassign.errors import CommandError, TerseError
from kreassign.formats import (
    format_reassignment_json,
    parse_broker_list,
    parse_topics_to_move_json,
    validate_execute_plan,
)
from kreassign.javacompat.hashes import java_int_hash, java_string_hash
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, ReassignmentPlan, TopicPartition
from kreassign.planning.states import PartitionState, render_partition_states
from kreassign.planning.throttles import (
    BROKER_LEVEL_THROTTLES,
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    TOPIC_LEVEL_THROTTLES,
    calculate_follower_throttles,
    calculate_leader_throttles,
    calculate_proposed_move_map,
    calculate_reassigning_brokers,
)
from kreassign.zookeeper import placement, znodes
from kreassign.zookeeper.jsontexts import kafka_2_8_message
from kreassign.zookeeper.scalaorder import (
    scala_duplicates,
    scala_int_set_order,
    scala_string_set_order,
    scala_topic_partition_order,
)
from kreassign.zookeeper.store import ZnodeStore

NEEDS_BOOTSTRAP_FOR_LOG_DIRS = "bootstrap-server needs to be provided when replica reassignments are present."
VERIFY_RESULTS_MAY_BE_INCOMPLETE = (
    "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "
    "Use --bootstrap-server instead for more accurate results."
)


# ----------------------------------------------------------------------------------------- reading


def live_brokers(store: ZnodeStore) -> list[Broker]:
    """``getAllBrokersInCluster``: registered brokers by ascending id."""
    ids = sorted(int(child) for child in store.children(znodes.BROKER_IDS) if child.isdigit())
    brokers = (znodes.decode_broker(i, store.get(znodes.broker_path(i))) for i in ids)
    return [b for b in brokers if b is not None]


def replica_assignment(store: ZnodeStore, topics: Sequence[str]) -> dict[TopicPartition, tuple[int, ...]]:
    """``getReplicaAssignmentForTopics``: topics that do not exist are left out."""
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in dict.fromkeys(topics):
        assignment.update(znodes.decode_topic_assignment(topic, store.get(znodes.topic_path(topic))))
    return assignment


def pending_reassignment(store: ZnodeStore) -> dict[TopicPartition, tuple[int, ...]]:
    return znodes.decode_reassignment(store.get(znodes.REASSIGN_PARTITIONS))


# ----------------------------------------------------------------------------------------- configs


def _change_entity_config(store: ZnodeStore, entity_type: str, name: str, config: Mapping[str, str]) -> None:
    """``AdminZkClient.changeEntityConfig``: write the config znode, then notify the brokers."""
    store.set_or_create(znodes.config_path(entity_type, name), znodes.encode_entity_config(config))
    store.create(znodes.CONFIG_CHANGE_PREFIX, znodes.encode_config_change(entity_type, name), sequential=True)


def entity_config(store: ZnodeStore, entity_type: str, name: str) -> dict[str, str]:
    path = znodes.config_path(entity_type, name)
    return znodes.decode_entity_config(path, store.get(path))


def update_entity_config(
    store: ZnodeStore, entity_type: str, name: str, *, set_: Mapping[str, str] = {}, delete: Sequence[str] = ()
) -> bool:
    """Read-modify-write one entity's config; writes (and notifies) only if deleting removes something
    or anything is set. Returns whether it wrote."""
    config = entity_config(store, entity_type, name)
    removed = [key for key in delete if config.pop(key, None) is not None]
    if not set_ and not removed:
        return False
    config.update(set_)
    _change_entity_config(store, entity_type, name, config)
    return True


def clear_all_throttles(
    store: ZnodeStore, targets: Sequence[tuple[TopicPartition, Sequence[int]]], out: Output
) -> None:
    """Kafka 2.8's ``clearAllThrottles`` over ZooKeeper; sets printed in Scala's iteration order."""
    brokers = scala_int_set_order(
        [*(b.id for b in live_brokers(store)), *scala_int_set_order(r for _, rs in targets for r in rs)]
    )
    out(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} {','.join(map(str, brokers))}\n")
    for broker in brokers:
        update_entity_config(store, znodes.BROKER_ENTITY, str(broker), delete=BROKER_LEVEL_THROTTLES)
    topics = scala_string_set_order(tp.topic for tp, _ in targets)
    out(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}\n")
    for topic in topics:
        update_entity_config(store, znodes.TOPIC_ENTITY, topic, delete=TOPIC_LEVEL_THROTTLES)


# ----------------------------------------------------------------------------------------- actions


def parse_generate_assignment_args(topics_json: str, broker_list: str) -> tuple[list[int], list[str]]:
    """Kafka 2.8's ``parseGenerateAssignmentArgs``: duplicates comma-joined in Scala order."""
    brokers = parse_broker_list(broker_list)
    repeated_brokers = scala_duplicates(brokers, java_int_hash)
    if repeated_brokers:
        raise CommandError("Broker list contains duplicate entries: " + ",".join(map(str, repeated_brokers)))
    try:
        topics = parse_topics_to_move_json(topics_json)
    except CommandError as exc:
        raise CommandError(kafka_2_8_message(exc.message, topics_json)) from exc
    repeated_topics = scala_duplicates(topics, java_string_hash)
    if repeated_topics:
        raise CommandError("List of topics to reassign contains duplicate entries: " + ",".join(repeated_topics))
    return brokers, topics


def generate_assignment(
    store: ZnodeStore, topics_json: str, broker_list: str, *, rack_aware: bool, seed: int | None, out: Output
) -> None:
    brokers_to_use, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = replica_assignment(store, topics)
    brokers = placement.broker_metadata(live_brokers(store), brokers_to_use, rack_aware)
    proposal = placement.calculate_assignment(current, brokers, JavaRandom(seed))
    out(
        "Current partition replica assignment\n"
        + format_reassignment_json(current, {})
        + "\n\nProposed partition reassignment configuration\n"
        + format_reassignment_json(proposal, {})
        + "\n"
    )


def _check_partitions_and_brokers(store: ZnodeStore, proposed: Mapping[TopicPartition, tuple[int, ...]]) -> None:
    """``verifyReplicasAndBrokersInAssignment``, with its Scala collection texts."""
    order = scala_topic_partition_order(proposed)
    existing = replica_assignment(store, [tp.topic for tp in order])
    missing = [tp for tp in order if tp not in existing]
    if missing:
        raise CommandError(
            "The proposed assignment contains non-existent partitions: List(" + ", ".join(map(str, missing)) + ")"
        )
    live = {b.id for b in live_brokers(store)}
    unknown = scala_int_set_order(b for tp in order for b in proposed[tp] if b not in live)
    if unknown:
        raise CommandError("The proposed assignment contains non-existent brokerIDs: " + ",".join(map(str, unknown)))


def execute_assignment(store: ZnodeStore, plan: ReassignmentPlan, *, throttle: int, out: Output) -> None:
    proposed = validate_execute_plan(plan, duplicates=scala_duplicates)
    if plan.log_dirs:
        raise CommandError(NEEDS_BOOTSTRAP_FOR_LOG_DIRS)
    _check_partitions_and_brokers(store, proposed)
    if store.exists(znodes.REASSIGN_PARTITIONS):
        raise TerseError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    current = replica_assignment(store, [tp.topic for tp in proposed])
    out(
        "Current partition replica assignment\n\n"
        + format_reassignment_json({tp: r for tp, r in current.items() if tp in proposed}, {})
        + "\n\nSave this to use as the --reassignment-json-file option during rollback\n"
    )
    if throttle >= 0:
        out(YOU_MUST_RUN_VERIFY + "\n")
        moves = calculate_proposed_move_map({}, proposed, current)
        leaders, followers = calculate_leader_throttles(moves), calculate_follower_throttles(moves)
        for topic in dict.fromkeys([*leaders, *followers]):
            values = {}
            if topic in leaders:
                values[LEADER_THROTTLED_REPLICAS] = leaders[topic]
            if topic in followers:
                values[FOLLOWER_THROTTLED_REPLICAS] = followers[topic]
            update_entity_config(store, znodes.TOPIC_ENTITY, topic, set_=values)
        rate = str(throttle)
        for broker in calculate_reassigning_brokers(moves):
            update_entity_config(
                store,
                znodes.BROKER_ENTITY,
                str(broker),
                set_={LEADER_THROTTLED_RATE: rate, FOLLOWER_THROTTLED_RATE: rate},
            )
        out(f"The inter-broker throttle limit was set to {throttle} B/s\n")
    store.create(znodes.REASSIGN_PARTITIONS, znodes.encode_reassignment(list(proposed.items())))
    plural = "" if len(proposed) == 1 else "s"
    out(f"Successfully started partition reassignment{plural} for {','.join(str(tp) for tp in sorted(proposed))}\n")


def find_partition_states(
    store: ZnodeStore, targets: Sequence[tuple[TopicPartition, Sequence[int]]]
) -> tuple[dict[TopicPartition, PartitionState], bool]:
    """Where each target stands, and whether ``/admin/reassign_partitions`` lists any partition."""
    pending = pending_reassignment(store)
    wanted = dict(targets)
    current = replica_assignment(store, [tp.topic for tp in wanted])
    states = {
        tp: PartitionState(current.get(tp, ()), tuple(target), tp not in pending) for tp, target in wanted.items()
    }
    return states, bool(pending)


def verify_assignment(
    store: ZnodeStore, plan: ReassignmentPlan, *, preserve_throttles: bool, out: Output
) -> tuple[dict[TopicPartition, PartitionState], bool]:
    if plan.log_dirs:
        raise CommandError(NEEDS_BOOTSTRAP_FOR_LOG_DIRS)
    out(VERIFY_RESULTS_MAY_BE_INCOMPLETE + "\n")
    states, ongoing = find_partition_states(store, plan.partitions)
    out(render_partition_states(states, completed="complete") + "\n")
    if not ongoing and not preserve_throttles:
        clear_all_throttles(store, plan.partitions, out)
    return states, ongoing
