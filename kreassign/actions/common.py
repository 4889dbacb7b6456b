"""Pieces shared by several Apache actions: reading input files, log-dir states, clearing throttles."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.errors import CommandError, InvalidJsonError, UnknownTopicOrPartitionError
from kreassign.javacompat.hashes import java_int_compare, java_int_hash, java_string_compare, java_string_hash
from kreassign.javacompat.hashmap import hash_set_order
from kreassign.model import Broker, PartitionInfo, TopicPartition, TopicPartitionReplica
from kreassign.planning.states import LogDirMoveKind, LogDirMoveState
from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES

Output = Callable[[str], object]
"""Where an action writes its stdout text (exact bytes, newlines included)."""


def discard(_text: str) -> None:
    """The Output of the Apache text with --output json: nowhere."""


def read_input_file(path: str) -> str:
    """Java's Utils.readFileAsString: its UTF-8 decoding, same error text."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        error = CommandError(f"Unable to read file {path}")  # the Apache text; the hint goes to stderr
        where = os.path.abspath(path)
        error.add_note(
            f"{where}: {exc.strerror or exc}. Check the path of the JSON file option"
            + ("" if os.path.isabs(path) else f" (relative paths are read from {os.getcwd()})")
            + "."
        )
        raise error from exc
    from kreassign.formats import decode_file_bytes

    return decode_file_bytes(data)


_JACKSON_POSITION = re.compile(r"line: (\d+), column: (\d+)\]")
EMPTY_PLAN = "Partition reassignment list cannot be empty"


@contextmanager
def naming_input_file(option: str, path: str, text: str | None = None) -> Iterator[None]:
    """An error about the content of the file of ``option`` (malformed JSON, a wrong shape, an empty plan)
    gets a note naming the file and, for malformed JSON, the line and column; the Apache line stays as is.
    ``text``: the file's content, to tell a topics-to-move file given as a plan."""
    try:
        yield
    except InvalidJsonError as error:
        cause = error.__cause__ if isinstance(error.__cause__, InvalidJsonError) else error
        position = _JACKSON_POSITION.search(cause.message)
        if position is None:
            error.add_note(f"The error is in {path} ({option}).")
        else:
            detail = "" if cause is error else f" ({cause.message.splitlines()[0]})"
            error.add_note(f"{path} ({option}) is not valid JSON: line {position[1]}, column {position[2]}{detail}.")
        raise
    except CommandError as error:
        if error.message == EMPTY_PLAN and option == "--reassignment-json-file":
            error.add_note(_empty_plan_note(path, text))
        raise


def _empty_plan_note(path: str, text: str | None) -> str:
    import json

    try:
        root = json.loads(text or "")
    except ValueError:
        root = None
    if isinstance(root, dict) and "topics" in root and "partitions" not in root:
        return (
            f'{path} looks like a topics-to-move file (it has "topics", no "partitions"): give it to '
            '--generate --topics-to-move-json-file, and the plan --generate proposes (after "Proposed '
            'partition reassignment configuration") to --reassignment-json-file.'
        )
    return f'{path} lists no partition to move ("partitions" is missing or empty).'


def find_log_dir_move_states(
    port: ClusterPort, targets: Mapping[TopicPartitionReplica, str]
) -> dict[TopicPartitionReplica, LogDirMoveState]:
    infos = port.describe_replica_log_dirs(list(targets)) if targets else {}
    states = {}
    for replica, target in targets.items():
        info = infos.get(replica)
        if info is None:
            states[replica] = LogDirMoveState(LogDirMoveKind.MISSING_REPLICA, target)
        elif info.current is None:
            states[replica] = LogDirMoveState(LogDirMoveKind.MISSING_LOG_DIR, target)
        elif info.future is None:
            kind = LogDirMoveKind.COMPLETED if info.current == target else LogDirMoveKind.CANCELLED
            states[replica] = LogDirMoveState(kind, target, current=info.current)
        else:
            states[replica] = LogDirMoveState(LogDirMoveKind.ACTIVE, target, current=info.current, future=info.future)
    return states


def describe_partitions(port: ClusterPort, topics: Sequence[str]) -> dict[TopicPartition, PartitionInfo]:
    described = port.describe_topics(list(dict.fromkeys(topics)))
    return {TopicPartition(t, p.partition): p for t, parts in described.items() for p in parts}


def describe_known_topics(port: ClusterPort, topics: Sequence[str]) -> dict[str, list[PartitionInfo] | None]:
    """Partitions of each topic; None for a topic the cluster does not know. One request; when it fails
    for an unknown topic, one request per topic to tell which."""
    names = list(dict.fromkeys(topics))
    if not names:
        return {}
    try:
        return dict(port.describe_topics(names))
    except UnknownTopicOrPartitionError:
        described: dict[str, list[PartitionInfo] | None] = {}
        for name in names:
            try:
                described.update(port.describe_topics([name]))
            except UnknownTopicOrPartitionError:
                described[name] = None
        return described


def live_broker_ids(brokers: Sequence[Broker]) -> set[int]:
    return {b.id for b in brokers}


def clear_all_throttles(
    port: ClusterPort,
    targets: Sequence[tuple[TopicPartition, Sequence[int]]],
    out: Output,
    notes: Output | None = None,
    by: str = "--verify",
) -> None:
    """Remove every throttle the Apache tool may have set for these partitions (its clearAllThrottles). With
    ``notes`` (kreassign's lines, stderr), every batched run alive on this cluster is first asked to put back its own
    throttles that this clears (``keep_live_runs_throttles``): its protection lapses for a poll at most, and it goes
    on instead of stopping as it does when someone else removes them."""
    broker_ids = [b.id for b in port.describe_brokers()]
    if notes is not None:
        keep_live_runs_throttles(port, by, notes)
    for _, replicas in targets:
        broker_ids.extend(replicas)
    brokers = hash_set_order(broker_ids, java_int_hash, java_int_compare)  # Collectors.toSet(), then addAll
    out(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} {','.join(map(str, brokers))}\n")
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.BROKER, str(b)): [ConfigOp(n, OpType.DELETE) for n in BROKER_LEVEL_THROTTLES]
            for b in brokers
        }
    )
    topics = hash_set_order((tp.topic for tp, _ in targets), java_string_hash, java_string_compare)
    out(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} {','.join(topics)}\n")
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.TOPIC, t): [ConfigOp(n, OpType.DELETE) for n in TOPIC_LEVEL_THROTTLES]
            for t in topics
        }
    )


def keep_live_runs_throttles(port: ClusterPort, by: str, notes: Output) -> None:
    """Asks every batched run alive on this cluster (its registry, ``execution/registry.py``) to put back its own
    throttles that this process (``by``) is about to clear as the Apache tool does, one line on ``notes`` for each
    that holds any (its journal says so)."""
    from kreassign.errors import CommandError
    from kreassign.execution.journal import Journal
    from kreassign.execution.memory import memory_of
    from kreassign.execution.watch import ask_to_keep_throttles

    memory = memory_of(port)
    for run in memory.live_runs() if memory is not None else []:
        journal = Journal(run.journal)
        ask_to_keep_throttles(journal, by)
        try:
            holds = bool(journal.load().throttles_written)
        except CommandError:
            holds = True  # unreadable now: said as if it held some
        if not holds:
            continue
        plan = f" of {run.plan_file}" if run.plan_file else ""
        notes(
            f"kreassign: the batched run{plan} on this cluster (pid {run.pid}) puts back its own throttles, which this "
            f"{by} clears as the Apache tool does, and goes on\n"
        )
