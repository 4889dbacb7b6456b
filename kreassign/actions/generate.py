"""--generate: the Apache proposal (StripedReplicaPlacer over the chosen brokers), printed with the
current assignment."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from kreassign.actions.common import Output
from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError
from kreassign.formats import format_reassignment_json, parse_generate_assignment_args, topics_json_pieces
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, TopicColumns, TopicPartition
from kreassign.planning.placement import calculate_assignment, get_broker_metadata
from kreassign.planning.placement_model import UsableBroker


@dataclass(frozen=True)
class GenerateInputs:
    """What --generate reads, in the Apache tool's order (so the first error is the same).

    ``current``: each topic's partitions as columns, in partition order, with each replica's log dir
    (None where the tool prints "any": unknown, or the replica's broker is not in the cluster)."""

    topics: list[str]
    current: dict[str, TopicColumns]
    cluster_brokers: list[Broker]
    usable: list[UsableBroker]
    #: ids of --broker-list the cluster does not have (the Apache tool leaves them out silently)
    unknown_brokers: tuple[int, ...] = ()

    def current_replicas(self) -> dict[TopicPartition, list[int]]:
        return {
            TopicPartition(name, p): list(replicas)
            for name, topic in self.current.items()
            for p, replicas in zip(topic.partitions, topic.replicas, strict=True)
        }


def read_generate_inputs(port: ClusterPort, topics_json: str, broker_list: str, rack_aware: bool) -> GenerateInputs:
    brokers_to_use, topics = parse_generate_assignment_args(topics_json, broker_list)
    current = port.describe_topic_columns(topics)
    cluster_brokers = port.describe_brokers()
    usable = get_broker_metadata(cluster_brokers, brokers_to_use, rack_aware)
    return GenerateInputs(topics, current, cluster_brokers, usable, unknown_broker_ids(brokers_to_use, cluster_brokers))


def unknown_broker_ids(wanted: Sequence[int], cluster_brokers: Sequence[Broker]) -> tuple[int, ...]:
    known = {broker.id for broker in cluster_brokers}
    return tuple(dict.fromkeys(b for b in wanted if b not in known))


def note_unknown_brokers(error: BaseException, unknown: Sequence[int], cluster_brokers: Sequence[Broker]) -> None:
    """A placement that failed for want of brokers: name the ids of --broker-list the cluster lacks."""
    if unknown:
        known = ", ".join(str(b.id) for b in sorted(cluster_brokers, key=lambda b: b.id)) or "(none)"
        error.add_note(
            f"--broker-list names broker(s) {', '.join(map(str, unknown))} that the cluster does not have "
            f"(its brokers: {known}); they were left out, as the Apache tool does."
        )


@dataclass(frozen=True)
class GenerateResult:
    """What --generate printed: the current assignment (with log dirs) and the proposal, as JSON text."""

    current_json: str
    proposed_json: str
    #: ids of --broker-list the cluster does not have (left out of the proposal)
    unknown_brokers: tuple[int, ...] = ()


def current_assignment_json(current: Mapping[str, TopicColumns]) -> str:
    return "".join(current_assignment_pieces(current))


def current_assignment_pieces(current: Mapping[str, TopicColumns]) -> Iterator[str]:
    """:func:`current_assignment_json` a topic at a time (:func:`kreassign.formats.topics_json_pieces`)."""
    return topics_json_pieces((name, t.partitions, t.replicas, t.log_dirs) for name, t in current.items())


def print_proposal(out: Output, current_json: str, proposed_json: str) -> GenerateResult:
    print_documents(out, (current_json,), (proposed_json,))
    return GenerateResult(current_json, proposed_json)


def print_documents(out: Output, current: Iterable[str], proposed: Iterable[str]) -> None:
    """The two documents of --generate in the Apache layout, each printed a piece at a time as it comes."""
    out("Current partition replica assignment\n")
    for piece in current:
        out(piece)
    out("\n\nProposed partition reassignment configuration\n")
    for piece in proposed:
        out(piece)
    out("\n")


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
    try:
        proposal = calculate_assignment(
            inputs.current_replicas(), inputs.usable, rng, topic_order=list(dict.fromkeys(inputs.topics))
        )
    except CommandError as error:
        note_unknown_brokers(error, inputs.unknown_brokers, inputs.cluster_brokers)
        raise
    result = print_proposal(out, current_assignment_json(inputs.current), format_reassignment_json(proposal, {}))
    return replace(result, unknown_brokers=inputs.unknown_brokers)
