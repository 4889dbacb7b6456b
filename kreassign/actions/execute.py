"""--execute with the Apache behaviour: one AlterPartitionReassignments for the whole plan."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from kreassign.actions.common import Output, describe_partitions, live_broker_ids
from kreassign.actions.execute_request import ExecuteRequest, warn_slow_moves
from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType, replica_log_dirs
from kreassign.errors import CommandError, TerseError, UnknownTopicOrPartitionError
from kreassign.execution.journal import Journal
from kreassign.execution.memory import memory_of, runs_moving, shown
from kreassign.execution.registry import LiveRun
from kreassign.formats import format_reassignment_json
from kreassign.javacompat.hashes import (
    java_int_compare,
    java_int_hash,
    java_string_compare,
    java_string_hash,
    java_topic_partition_hash,
)
from kreassign.javacompat.hashmap import (
    DEFAULT_JAVA_VERSION,
    JavaHashMap,
    hash_set_capacity,
    hash_set_order,
    iteration_order,
)
from kreassign.model import (
    PartitionInfo,
    PartitionReassignment,
    ReassignmentPlan,
    TopicPartition,
    TopicPartitionReplica,
)
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIR_THROTTLED_RATE,
    calculate_follower_throttles,
    calculate_leader_throttles,
    calculate_proposed_move_map,
    calculate_reassigning_brokers,
)

CANNOT_EXECUTE_BECAUSE_OF_EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this "
    "and create a new partition assignment in addition to the existing one. The --additional flag can also "
    "be used to change the throttle by resubmitting the current reassignment."
)
YOU_MUST_RUN_VERIFY = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
)


def existing_reassignment_error(running: Mapping[TopicPartition, object], runs: Sequence[LiveRun] = ()) -> TerseError:
    """The Apache refusal, with a note naming what runs now and what to do. ``runs``: the batched runs alive on this
    cluster; for each, the command that changes its throttle (the Apache form: ``--additional`` of its plan hands the
    throttle to the run and submits none of its partitions), not ``--additional`` alone."""
    error = TerseError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    if not runs:
        error.add_note(
            f"Reassignments running now: {shown(running)} (see --list). Wait for them (--verify), stop them "
            "(--cancel), or add --additional to start this one as well."
        )
    elif running:
        error.add_note(f"Reassignments running now: {shown(running)} (see --list).")
    for run in runs:
        plan = run.plan_file or "its plan"
        error.add_note(
            f"A batched run (pid {run.pid}, journal {run.journal}) is moving {plan} on this cluster, a step at a "
            f"time. To change its throttle: --execute --additional --reassignment-json-file {plan} --throttle RATE "
            f"(its partitions are not submitted again: the run takes the throttle); to stop it: --cancel "
            f"--reassignment-json-file {plan}."
        )
    return error


def execute_apache_form(
    port: ClusterPort,
    request: ExecuteRequest,
    out: Output,
    notes: Output,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> ExecuteResult:
    """--execute with the Apache behaviour, on a cluster where batched runs may be moving partitions a step at a time
    (issue 39). Without --additional it is refused as Apache refuses while a reassignment exists, also in the instant
    between two of a run's steps. With --additional, the partitions a live run on this cluster moves to the same
    target are not submitted (it submits them, a step at a time) and the throttle is handed to that run (through its
    control file, as the batched form's --additional does); the others are submitted as Apache does. stdout is the
    Apache tool's text for the command; what happened to the runs goes on ``notes`` (stderr)."""
    plan = request.plan
    running = port.list_reassignments()  # the Apache tool's first call (on a cluster that fails, its error)
    memory = memory_of(port)
    runs = memory.live_runs() if memory is not None else []
    if runs and not request.additional:
        raise existing_reassignment_error(running, runs)
    held = runs_moving(memory, plan.targets()) if runs else {}
    if request.sample_window is not None:
        left = {tp: r for tp, r in plan.targets().items() if tp not in held}
        warn_slow_moves(port, left, request.throttle, request.sample_window, notes, sleep)
    result = execute_assignment(
        port,
        plan,
        additional=request.additional,
        inter_broker_throttle=request.throttle,
        log_dir_throttle=request.log_dir_throttle,
        timeout_ms=request.timeout_ms,
        allow_replication_factor_change=request.allow_replication_factor_change,
        out=out,
        clock=clock,
        sleep=sleep,
        held=set(held),
        running=running,
    )
    for run in {run.record: run for run in held.values()}.values():
        partitions = [tp for tp, holder in held.items() if holder.record == run.record]
        changes = _hand_throttle(run, partitions, request, notes)
        kept = {tp: tuple(replicas) for tp, replicas in plan.partitions if tp in partitions}
        result.handed.append(HandedToRun(run.pid, str(run.journal), run.plan_file, kept, changes))
    return result


def _hand_throttle(
    run: LiveRun, partitions: list[TopicPartition], request: ExecuteRequest, notes: Output
) -> dict[str, int]:
    """The rates handed to ``run`` (returned), and one line on ``notes``."""
    changes = request.rate_changes()
    if changes:
        Journal(run.journal).request(**changes)
    rates = " and ".join(
        f"the {name} {value} B/s"
        for name, value in (("throttle", request.throttle), ("log-dir throttle", request.log_dir_throttle))
        if value >= 0
    )
    plan = f" of {run.plan_file}" if run.plan_file else ""
    notes(
        f"kreassign: {shown(partitions)} stay in the steps of the batched run{plan} on this cluster (pid {run.pid}), "
        "which moves them to the same target: not submitted here"
        + (f"; it takes {rates} from its next poll.\n" if rates else "; its throttle is unchanged.\n")
    )
    return changes


@dataclass(frozen=True)
class HandedToRun:
    """Partitions of an Apache-form --execute --additional left to the live batched run that moves them to the same
    target (not submitted), and the rates handed to it (``{"throttle": N, "log_dir_throttle": N}``, as given)."""

    pid: int
    journal: str
    plan_file: str | None
    partitions: dict[TopicPartition, tuple[int, ...]]
    changes: dict[str, int]


@dataclass
class ExecuteResult:
    """What an Apache --execute did, as data (for --output json). ``started``: the reassignments submitted;
    ``handed``: the partitions left to live batched runs instead (Apache's text names them as started too)."""

    rollback_json: str = ""
    started: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    handed: list[HandedToRun] = field(default_factory=list)
    inter_broker_throttle: int | None = None
    log_dir_throttle: int | None = None
    log_dir_moves: dict[TopicPartitionReplica, str] = field(default_factory=dict)


def execute_assignment(
    port: ClusterPort,
    plan: ReassignmentPlan,
    *,
    additional: bool,
    inter_broker_throttle: int,
    log_dir_throttle: int,
    timeout_ms: int,
    allow_replication_factor_change: bool,
    out: Output,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    held: Collection[TopicPartition] = (),
    running: Mapping[TopicPartition, PartitionReassignment] | None = None,
) -> ExecuteResult:
    """``held``: partitions a batched run moves to the same target (``execute_apache_form``): printed as Apache
    prints them, neither submitted nor throttled here (the run does both, a step at a time). ``running``: the
    reassignments listed already (else listed here, the Apache tool's first call)."""
    proposed = {tp: tuple(replicas) for tp, replicas in plan.partitions}
    submitted = {tp: replicas for tp, replicas in proposed.items() if tp not in held}
    result = ExecuteResult()
    running = port.list_reassignments() if running is None else running
    if not additional and running:
        raise existing_reassignment_error(running)

    current, live = check_plan_against_cluster(port, proposed)
    current_replicas = {tp: tuple(info.replicas) for tp, info in current.items()}
    result.rollback_json = print_rollback(port, current, live, out)

    if inter_broker_throttle >= 0 or log_dir_throttle >= 0:
        out(YOU_MUST_RUN_VERIFY + "\n")
        if inter_broker_throttle >= 0:
            if submitted:
                moves = calculate_proposed_move_map(running, submitted, current_replicas)
                set_topic_throttles(port, calculate_leader_throttles(moves), calculate_follower_throttles(moves))
                set_broker_rates(port, calculate_reassigning_brokers(moves), inter_broker_throttle)
            out(f"The inter-broker throttle limit was set to {inter_broker_throttle} B/s\n")
            result.inter_broker_throttle = inter_broker_throttle
        if log_dir_throttle >= 0:
            moving_brokers = sorted(
                {r.broker_id for r in plan.log_dirs if TopicPartition(r.topic, r.partition) not in held}
            )
            port.incremental_alter_configs(
                {
                    ConfigResource(ResourceType.BROKER, str(b)): [
                        ConfigOp(LOG_DIR_THROTTLED_RATE, OpType.SET, str(log_dir_throttle))
                    ]
                    for b in moving_brokers
                }
            )
            out(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s\n")
            result.log_dir_throttle = log_dir_throttle

    errors = port.alter_reassignments(submitted, allow_replication_factor_change) if submitted else {}
    if errors:
        raise TerseError(
            "Error reassigning partition(s):\n" + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors))
        )
    plural = "" if len(proposed) == 1 else "s"
    out(f"Successfully started partition reassignment{plural} for {','.join(str(tp) for tp in sorted(proposed))}\n")
    result.started = submitted
    if plan.log_dirs:
        execute_log_dir_moves(port, dict(plan.log_dirs), timeout_ms, out, clock=clock, sleep=sleep)
        result.log_dir_moves = dict(plan.log_dirs)
    return result


def check_plan_against_cluster(
    port: ClusterPort, proposed: Mapping[TopicPartition, Sequence[int]]
) -> tuple[dict[TopicPartition, PartitionInfo], set[int]]:
    """The Apache checks before anything changes: every target broker is live and every partition exists.
    Returns the partitions as they are now and the live broker ids."""
    live = live_broker_ids(port.describe_brokers())
    if any(b not in live for r in proposed.values() for b in r):
        # executeAssignment: brokers = new HashSet<>(), then proposedParts.values().forEach(brokers::addAll)
        target_brokers = hash_set_order(
            (b for tp in _proposed_parts_order(proposed) for b in proposed[tp]), java_int_hash, java_int_compare
        )
        unknown = next(b for b in target_brokers if b not in live)
        error = CommandError(f"Unknown broker id {unknown}")
        error.add_note(
            f"Broker {unknown} is not a live broker of this cluster (live: {','.join(map(str, sorted(live)))}). "
            f"Fix the replicas of the reassignment JSON file, or start broker {unknown} first."
        )
        raise error
    described = describe_partitions(port, [tp.topic for tp in proposed])
    missing = [tp for tp in proposed if tp not in described]
    if missing:
        ordered = _missing_partition_order(_proposed_parts_order(proposed), described)
        raise UnknownTopicOrPartitionError(
            "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: "
            + ", ".join(str(tp) for tp in ordered)
        )
    return {tp: described[tp] for tp in proposed}, live


def _proposed_parts_order(proposed: Mapping[TopicPartition, object]) -> list[TopicPartition]:
    """Iteration order of ``parseExecuteAssignmentArgs``'s ``proposedParts``: a ``HashMap``
    (``Collectors.toMap``) filled in file order."""
    return iteration_order(list(proposed), java_topic_partition_hash)


def _missing_partition_order(
    proposed_order: Sequence[TopicPartition], described: Mapping[TopicPartition, PartitionInfo]
) -> list[TopicPartition]:
    """``getReplicaAssignmentForPartitions``: ``missing = new HashSet<>(partitions); missing.removeAll(res.keySet())``.

    ``partitions`` iterates as ``proposed_order``; ``res`` is a default ``HashMap`` filled per topic, in the
    order of the tool's ``describeTopics`` map (a default ``HashMap`` filled from the admin client's, whose
    order ``described`` has), each topic's partitions as the broker lists them."""
    wanted = set(proposed_order)
    topics = iteration_order(list(dict.fromkeys(tp.topic for tp in described)), java_string_hash, java_string_compare)
    by_topic: dict[str, list[TopicPartition]] = {topic: [] for topic in topics}
    for tp in described:
        if tp in wanted:
            by_topic[tp.topic].append(tp)
    found = iteration_order([tp for topic in topics for tp in by_topic[topic]], java_topic_partition_hash)
    missing: JavaHashMap[TopicPartition] = JavaHashMap(
        java_topic_partition_hash, None, hash_set_capacity(len(proposed_order), DEFAULT_JAVA_VERSION)
    )
    for tp in proposed_order:
        missing.put(tp)
    missing.remove_all(found)
    return list(missing)


def print_rollback(
    port: ClusterPort, current: Mapping[TopicPartition, PartitionInfo], live: set[int], out: Output
) -> str:
    """The Apache "Current partition replica assignment" block; returns the rollback JSON."""
    rollback = format_reassignment_json(
        {tp: tuple(info.replicas) for tp, info in current.items()}, replica_log_dirs(port, current, live)
    )
    out(
        "Current partition replica assignment\n\n"
        + rollback
        + "\n\nSave this to use as the --reassignment-json-file option during rollback\n"
    )
    return rollback


def set_topic_throttles(port: ClusterPort, leaders: Mapping[str, str], followers: Mapping[str, str]) -> None:
    changes = {}
    for topic in dict.fromkeys([*leaders, *followers]):
        ops = []
        if topic in leaders:
            ops.append(ConfigOp(LEADER_THROTTLED_REPLICAS, OpType.SET, leaders[topic]))
        if topic in followers:
            ops.append(ConfigOp(FOLLOWER_THROTTLED_REPLICAS, OpType.SET, followers[topic]))
        changes[ConfigResource(ResourceType.TOPIC, topic)] = ops
    if changes:
        port.incremental_alter_configs(changes)


def set_broker_rates(port: ClusterPort, brokers: list[int], rate: int) -> None:
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.BROKER, str(b)): [
                ConfigOp(LEADER_THROTTLED_RATE, OpType.SET, str(rate)),
                ConfigOp(FOLLOWER_THROTTLED_RATE, OpType.SET, str(rate)),
            ]
            for b in brokers
        }
    )


def execute_log_dir_moves(
    port: ClusterPort,
    moves: dict[TopicPartitionReplica, str],
    timeout_ms: int,
    out: Output,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Keep asking for the log-dir moves until each is accepted (a replica being added to a broker
    cannot move between its log dirs until it exists there), or the timeout passes."""
    deadline = clock() + timeout_ms / 1000.0
    pending = dict(moves)
    while True:
        accepted = port.alter_replica_log_dirs(pending)
        for replica in sorted(accepted, key=TopicPartitionReplica.sort_key):
            out(
                f"Successfully started moving log directory to {pending[replica]} for replica "
                f"{replica.topic}-{replica.partition} with broker {replica.broker_id} \n"
            )
        for replica in accepted:
            pending.pop(replica, None)
        if not pending:
            return
        if clock() >= deadline:
            plural = "" if len(pending) == 1 else "s"
            names = ",".join(str(r) for r in sorted(pending, key=TopicPartitionReplica.sort_key))
            raise TerseError(f"Timed out before log directory move{plural} could be started for: {names}")
        sleep(0.1)
