"""--generate: the Apache proposal (StripedReplicaPlacer over the chosen brokers), printed with the
current assignment."""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.actions.common import Output, describe_partitions, live_broker_ids, replica_log_dirs
from kreassign.cluster.port import ClusterPort
from kreassign.formats import format_reassignment_json, parse_generate_assignment_args
from kreassign.model import TopicPartition
from kreassign.planning.javarandom import JavaRandom
from kreassign.planning.placement import calculate_assignment, get_broker_metadata


@dataclass(frozen=True)
class GenerateResult:
    """What --generate printed, as data: the current assignment (with log dirs) and the proposal."""

    current_json: str
    proposed_json: str
    proposal: dict[TopicPartition, list[int]]


def generate_assignment(
    port: ClusterPort,
    topics_json: str,
    broker_list: str,
    *,
    rack_aware: bool,
    seed: int | None,
    out: Output,
) -> GenerateResult:
    brokers_to_use, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = describe_partitions(port, topics)
    cluster_brokers = port.describe_brokers()
    log_dirs = replica_log_dirs(port, current, live_broker_ids(cluster_brokers))
    usable = get_broker_metadata(cluster_brokers, brokers_to_use, rack_aware)
    rng = JavaRandom(seed)  # unseeded: random, like the Apache tool
    current_replicas = {tp: list(info.replicas) for tp, info in current.items()}
    proposal = calculate_assignment(current_replicas, usable, rng, topic_order=list(dict.fromkeys(topics)))
    result = GenerateResult(
        format_reassignment_json(current_replicas, log_dirs), format_reassignment_json(proposal, {}), proposal
    )
    out(
        "Current partition replica assignment\n"
        + result.current_json
        + "\n\nProposed partition reassignment configuration\n"
        + result.proposed_json
        + "\n"
    )
    return result
