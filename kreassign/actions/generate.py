"""--generate: the Apache proposal (StripedReplicaPlacer over the chosen brokers), printed with the
current assignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kreassign.actions.common import Output, describe_partitions, live_broker_ids, replica_log_dirs
from kreassign.cluster.port import ClusterPort
from kreassign.formats import format_reassignment_json, parse_generate_assignment_args
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, PartitionInfo, TopicPartition, TopicPartitionReplica
from kreassign.planning.placement import calculate_assignment, get_broker_metadata
from kreassign.planning.placement_model import UsableBroker


@dataclass(frozen=True)
class GenerateInputs:
    """What --generate reads, in the Apache tool's order (so the first error is the same)."""

    topics: list[str]
    current: dict[TopicPartition, PartitionInfo]
    cluster_brokers: list[Broker]
    log_dirs: dict[TopicPartitionReplica, str]
    usable: list[UsableBroker]


def read_generate_inputs(port: ClusterPort, topics_json: str, broker_list: str, rack_aware: bool) -> GenerateInputs:
    brokers_to_use, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = describe_partitions(port, topics)
    cluster_brokers = port.describe_brokers()
    log_dirs = replica_log_dirs(port, current, live_broker_ids(cluster_brokers))
    usable = get_broker_metadata(cluster_brokers, brokers_to_use, rack_aware)
    return GenerateInputs(topics, current, cluster_brokers, log_dirs, usable)


@dataclass(frozen=True)
class GenerateResult:
    """What --generate printed, as data: the current assignment (with log dirs) and the proposal."""

    current_json: str
    proposed_json: str
    proposal: dict[TopicPartition, list[int]]


def print_proposal(
    out: Output,
    current: Mapping[TopicPartition, Sequence[int]],
    log_dirs: Mapping[TopicPartitionReplica, str],
    proposal: Mapping[TopicPartition, Sequence[int]],
) -> GenerateResult:
    result = GenerateResult(
        format_reassignment_json(current, log_dirs),
        format_reassignment_json(proposal, {}),
        {tp: list(r) for tp, r in proposal.items()},
    )
    out(
        "Current partition replica assignment\n"
        + result.current_json
        + "\n\nProposed partition reassignment configuration\n"
        + result.proposed_json
        + "\n"
    )
    return result


def generate_assignment(
    port: ClusterPort,
    topics_json: str,
    broker_list: str,
    *,
    rack_aware: bool,
    seed: int | None,
    out: Output,
) -> GenerateResult:
    inputs = read_generate_inputs(port, topics_json, broker_list, rack_aware)
    rng = JavaRandom(seed)  # unseeded: random, like the Apache tool
    current_replicas = {tp: list(info.replicas) for tp, info in inputs.current.items()}
    proposal = calculate_assignment(
        current_replicas, inputs.usable, rng, topic_order=list(dict.fromkeys(inputs.topics))
    )
    return print_proposal(out, current_replicas, inputs.log_dirs, proposal)
