"""JSON documents of `--output json`: one per run on stdout, instead of the Apache text (pure, standard library).

Every document has ``"version": 1`` and a ``"kind"``; the schemas are in ``docs/schemas/`` and described
in ``docs/json-output.md`` (a test validates real outputs against them). Reassignment files inside a
document (``current``, ``proposed``, ``rollback``) are the Apache reassignment JSON object itself, so
``jq .proposed`` gives a file that ``--execute`` takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from kreassign.model import PartitionReassignment, TopicPartition, TopicPartitionReplica

JSON_VERSION = 1


def dump(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2) + "\n"


def document(kind: str, **fields: object) -> dict[str, object]:
    return {"version": JSON_VERSION, "kind": kind, **fields}


def partition_ref(tp: TopicPartition) -> dict[str, object]:
    return {"topic": tp.topic, "partition": tp.partition}


def partition_refs(partitions: Iterable[TopicPartition]) -> list[dict[str, object]]:
    return [partition_ref(tp) for tp in sorted(partitions)]


def log_dir_moves(moves: Mapping[TopicPartitionReplica, str]) -> list[dict[str, object]]:
    return [
        {"topic": r.topic, "partition": r.partition, "broker": r.broker_id, "log_dir": moves[r]}
        for r in sorted(moves, key=TopicPartitionReplica.sort_key)
    ]


def generate_document(current_json: str, proposed_json: str) -> dict[str, object]:
    return document("generate", current=json.loads(current_json), proposed=json.loads(proposed_json))


def execute_document(
    rollback_json: str,
    started: Mapping[TopicPartition, Sequence[int]],
    inter_broker_throttle: int | None,
    log_dir_throttle: int | None,
    moves: Mapping[TopicPartitionReplica, str],
) -> dict[str, object]:
    return document(
        "execute",
        rollback=json.loads(rollback_json),
        started=[{**partition_ref(tp), "replicas": list(started[tp])} for tp in sorted(started)],
        throttle={"inter_broker": inter_broker_throttle, "log_dir": log_dir_throttle},
        log_dir_moves=log_dir_moves(moves),
    )


def list_document(current: Mapping[TopicPartition, PartitionReassignment]) -> dict[str, object]:
    return document(
        "list",
        reassignments=[
            {
                **partition_ref(tp),
                "replicas": list(current[tp].replicas),
                "adding": list(current[tp].adding),
                "removing": list(current[tp].removing),
            }
            for tp in sorted(current)
        ],
    )


def cancel_document(
    cancelled: Iterable[TopicPartition], stopped: Mapping[TopicPartitionReplica, str], throttles_cleared: bool
) -> dict[str, object]:
    return document(
        "cancel",
        cancelled=partition_refs(cancelled),
        log_dir_moves_stopped=log_dir_moves(stopped),
        throttles_cleared=throttles_cleared,
    )


def error_document(message: str, hints: Sequence[str]) -> dict[str, object]:
    return document("error", message=message, hints=list(hints))
