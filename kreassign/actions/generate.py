"""--generate: the Apache proposal (StripedReplicaPlacer over the chosen brokers), printed with the
current assignment."""

from __future__ import annotations

from kreassign.actions.common import Output, describe_partitions, live_broker_ids, replica_log_dirs
from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError
from kreassign.formats import format_reassignment_json, parse_broker_list, parse_topics_to_move_json
from kreassign.planning.javaorder import java_hash_order, java_int_hash, java_string_hash
from kreassign.planning.javarandom import JavaRandom
from kreassign.planning.placement import calculate_assignment, get_broker_metadata


def _java_duplicates(items: list, hash_fn) -> list:
    """ToolsUtils.duplicates: each repeated element once, in Java HashSet order."""
    seen, repeated = set(), []
    for item in items:
        if item in seen:
            repeated.append(item)
        seen.add(item)
    return java_hash_order(repeated, hash_fn)


def parse_generate_args(topics_json: str, broker_list: str) -> tuple[list[int], list[str]]:
    """parseGenerateAssignmentArgs: brokers first, then topics, each checked for duplicates."""
    brokers = parse_broker_list(broker_list)
    duplicate_brokers = _java_duplicates(brokers, java_int_hash)
    if duplicate_brokers:
        raise CommandError(f"Broker list contains duplicate entries: [{', '.join(map(str, duplicate_brokers))}]")
    topics = parse_topics_to_move_json(topics_json)
    duplicate_topics = _java_duplicates(topics, java_string_hash)
    if duplicate_topics:
        raise CommandError(f"List of topics to reassign contains duplicate entries: [{', '.join(duplicate_topics)}]")
    return brokers, topics


def generate_assignment(
    port: ClusterPort,
    topics_json: str,
    broker_list: str,
    *,
    rack_aware: bool,
    seed: int | None,
    out: Output,
) -> None:
    brokers_to_use, topics = parse_generate_args(topics_json, broker_list)
    current = describe_partitions(port, topics)
    cluster_brokers = port.describe_brokers()
    log_dirs = replica_log_dirs(port, current, live_broker_ids(cluster_brokers))
    usable = get_broker_metadata(cluster_brokers, brokers_to_use, rack_aware)
    rng = JavaRandom(seed)  # unseeded: random, like the Apache tool
    current_replicas = {tp: list(info.replicas) for tp, info in current.items()}
    proposal = calculate_assignment(current_replicas, usable, rng, topic_order=list(dict.fromkeys(topics)))
    out(
        "Current partition replica assignment\n"
        + format_reassignment_json(current_replicas, log_dirs)
        + "\n\nProposed partition reassignment configuration\n"
        + format_reassignment_json(proposal, {})
        + "\n"
    )
