"""JSON documents of `--output json`: one per run on stdout, instead of the Apache text (pure, standard library).

Every document has ``"version": 1`` and a ``"kind"``; the schemas are in ``docs/schemas/`` and described
in ``docs/json-output.md`` (a test validates real outputs against them). Reassignment files inside a
document (``current``, ``proposed``, ``rollback``) are the Apache reassignment JSON object itself, so
``jq .proposed`` gives a file that ``--execute`` takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kreassign.model import PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import busiest_broker

if TYPE_CHECKING:
    from kreassign.planning.progress import ProgressReport, ReplicaProgress
    from kreassign.planning.quality import PlanQuality
    from kreassign.planning.steps import Limits, Round

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


def generate_document(
    current_json: str, proposed_json: str, report: Mapping[str, object] | None = None
) -> dict[str, object]:
    """--generate; ``report``: the plan report of --strategy balanced (:func:`plan_report`)."""
    current, proposed = json.loads(current_json), json.loads(proposed_json)
    if report is None:
        return document("generate", current=current, proposed=proposed)
    return document("generate", current=current, proposed=proposed, report=dict(report))


def plan_report(quality: PlanQuality, engine: str, strategy: str = "balanced") -> dict[str, object]:
    """The plan report (the ``report`` of the ``generate`` document) of ``strategy`` (balanced, leaders or
    replace-broker); ``move_budget`` only with ``--move-budget``, ``bytes_band`` when the bytes stage ran."""
    spent = quality.budget
    budget = {}
    if spent is not None:
        budget["move_budget"] = {
            "unit": spent.budget.unit,
            "allowed": spent.budget.amount,
            "used": spent.used,
            "extra_replicas_moved": spent.extra_replicas,
            "extra_bytes_moved": spent.extra_bytes,
        }
    band = quality.byte_band
    if band is not None:
        budget["bytes_band"] = {
            "tolerance": band.tolerance,
            "low": band.low,
            "high": band.high,
            "replicas_moved": band.replica_moves,
            "extra_bytes_moved": band.extra_bytes,
            "outside": [
                {"broker": o.broker, "bytes": o.bytes, "largest_replica": o.largest, "reason": o.reason}
                for o in band.outside
            ],
        }
    if quality.rack_holds:
        budget["rack_holds"] = [
            {
                "rack": h.rack,
                "brokers": list(h.brokers),
                "replicas": h.total,
                "above_mean": h.must,
                "replicas_per_partition": h.per_partition,
            }
            for h in quality.rack_holds
        ]
    traffic = quality.traffic
    if traffic is not None:
        budget["traffic"] = {
            "tolerance": traffic.tolerance,
            "within": traffic.within,
            "in_spread_before": round(traffic.spread("in", False), 4),
            "in_spread_after": round(traffic.spread("in"), 4),
            "out_spread_before": round(traffic.spread("out", False), 4),
            "out_spread_after": round(traffic.spread("out"), 4),
            "leaders_changed": traffic.leader_moves,
            "replicas_moved": traffic.replica_moves,
            "extra_bytes_moved": traffic.extra_bytes,
            "missed": [
                {
                    "side": limit.side,
                    "broker": limit.broker,
                    "bytes_per_s": round(limit.value, 1),
                    "above": limit.above,
                    "edge_bytes_per_s": round(limit.edge, 1),
                    "reason": limit.reason,
                    **(
                        {
                            "partitions": limit.partitions,
                            "slots": limit.slots,
                            "least_bytes_per_s": round(limit.least, 1),
                            "per_broker": limit.per_broker,
                            "bound_bytes_per_s": round(limit.bound, 1),
                        }
                        if limit.reason == "traffic"
                        else {}
                    ),
                }
                for limit in traffic.limits
            ],
        }
    choice = quality.log_dirs
    if choice is not None and choice.volumes:
        budget["log_dirs"] = {
            "replicas": choice.replicas,
            "replicas_moved_within": choice.moved_within,
            "bytes_moved_within": choice.bytes_moved_within,
            "volumes": [
                {
                    "broker": v.broker,
                    "volume": v.label,
                    "dirs": list(v.dirs),
                    "total_bytes": v.total,
                    "bytes_before": v.before,
                    "bytes_after": v.after,
                    "bytes_placed": sum(v.placed.values()),
                    "bytes_moved_out": v.moved_out,
                    "limit_bytes": None if v.limit == float("inf") else int(v.limit),
                }
                for v in choice.volumes
            ],
        }
    return {
        "strategy": strategy,
        "engine": engine,
        "partitions": quality.partitions,
        "replicas_moved": quality.replicas_moved,
        "minimum_replicas_moved": quality.minimum_moves,
        "bytes_moved": quality.bytes_moved,
        "minimum_bytes_moved": quality.minimum_bytes,
        "bytes_lower_bound": quality.bytes_lower_bound,
        "total_bytes": quality.total_bytes,
        "leaders_changed": quality.leaders_changed,
        **budget,
        "score": {"before": round(quality.score_before, 2), "after": round(quality.score_after, 2)},
        "dimensions": [
            {"name": d.name, "unit": d.unit, "before": d.before.as_dict(), "after": d.after.as_dict()}
            for d in quality.dimensions
        ],
        "brokers": [
            {
                "broker": b,
                "chosen": b in quality.brokers,
                **{
                    f"{name}_{side}": quality.per_broker[name][i].get(b, 0)
                    for name in ("replicas", "leaders", "bytes")
                    for i, side in enumerate(("before", "after"))
                },
                **(
                    {}
                    if traffic is None
                    else {
                        f"bytes_{way}_per_s_{side}": round(getattr(traffic, f"{way}_{side}").get(b, 0.0), 1)
                        for way in ("in", "out")
                        for side in ("before", "after")
                    }
                ),
                **({"replicas_not_planned": quality.left_behind[b]} if b in quality.left_behind else {}),
            }
            for b in quality.shown
        ],
    }


def execute_document(
    rollback_json: str,
    started: Mapping[TopicPartition, Sequence[int]],
    inter_broker_throttle: int | None,
    log_dir_throttle: int | None,
    moves: Mapping[TopicPartitionReplica, str],
    handed: Sequence[Any] = (),
) -> dict[str, object]:
    """The Apache-form --execute. ``started``: the reassignments this command submitted; ``handed``: the
    ``HandedToRun`` of each live batched run that kept partitions of the file (moving them to the same target, a step
    at a time: not submitted here) and took the rates given (kreassign.actions.execute)."""
    return document(
        "execute",
        rollback=json.loads(rollback_json),
        started=[{**partition_ref(tp), "replicas": list(started[tp])} for tp in sorted(started)],
        handed_to_runs=[
            {
                "pid": run.pid,
                "journal": run.journal,
                "plan_file": run.plan_file,
                "partitions": [
                    {**partition_ref(tp), "replicas": list(run.partitions[tp])} for tp in sorted(run.partitions)
                ],
                "changes": dict(run.changes),
            }
            for run in handed
        ],
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
    cancelled: Iterable[TopicPartition],
    stopped: Mapping[TopicPartitionReplica, str],
    throttles_cleared: bool,
    batched_runs: Sequence[Any] = (),
) -> dict[str, object]:
    """The Apache-form --cancel; ``batched_runs``: the ``RunCancelled`` of each batched run of the plan it
    stopped or cleaned up first (kreassign.actions.batched_cancel)."""
    return document(
        "cancel",
        cancelled=partition_refs(cancelled),
        log_dir_moves_stopped=log_dir_moves(stopped),
        throttles_cleared=throttles_cleared,
        batched_runs=[run.document() for run in batched_runs],
    )


def error_document(message: str, hints: Sequence[str]) -> dict[str, object]:
    return document("error", message=message, hints=list(hints))


def _replica_progress(row: ReplicaProgress) -> dict[str, Any]:
    eta = row.eta
    return {
        "broker": row.broker,
        "status": row.status,
        "status_text": row.text,
        "log_end_offset": row.log_end_offset,
        "messages_behind": row.messages_behind,
        "bytes_behind": row.bytes_behind,
        "rate_bytes_per_s": None if row.rate_bytes_per_s is None else round(row.rate_bytes_per_s, 1),
        "eta_s": None if eta.seconds is None else round(eta.seconds, 1),
        "write_bytes_per_s": None if row.write_bytes_per_s is None else round(row.write_bytes_per_s, 1),
        "throttle_bytes_per_s": (
            None if row.throttle_rate_bytes_per_s is None else round(row.throttle_rate_bytes_per_s, 1)
        ),
        "eta_bound_by_throttle": eta.bound,
        "copy_slower_than_writes": eta.losing,
    }


def progress_document(report: ProgressReport) -> dict[str, Any]:
    from kreassign.planning.progress import PartitionStatus, ReplicaStatus, UnderReplication

    partitions = report.partitions
    replicas = [row for p in partitions for row in p.replicas]
    moving_or_done = (PartitionStatus.COMPLETE, PartitionStatus.MOVING)
    eta = report.eta
    return document(
        "progress",
        outcome=report.outcome,
        interval_s=None if report.interval_s is None else round(report.interval_s, 3),
        summary={
            "partitions": len(partitions),
            "complete": sum(p.state == PartitionStatus.COMPLETE for p in partitions),
            "moving": sum(p.state == PartitionStatus.MOVING for p in partitions),
            "not_at_target": sum(p.state not in moving_or_done for p in partitions),
            "replicas_in_sync": sum(r.status == ReplicaStatus.IN_SYNC for r in replicas),
            "replicas_behind": sum(r.status == ReplicaStatus.BEHIND for r in replicas),
            "under_replicated_by_reassignment": sum(p.urp == UnderReplication.REASSIGNING for p in partitions),
            "under_replicated": sum(p.urp == UnderReplication.UNDER_REPLICATED for p in partitions),
            "bytes_to_copy": report.bytes_left,
            "eta_s": None if eta.seconds is None else round(eta.seconds, 1),
            "eta_bound_by_throttle": eta.bound,
            "write_bytes_per_s": None if report.write_rate is None else round(report.write_rate, 1),
            "copy_slower_than_writes": eta.losing,
        },
        partitions=[
            {
                "topic": p.topic,
                "partition": p.partition,
                "state": p.state,
                "target_replicas": list(p.target),
                "current_replicas": None if p.current is None else list(p.current),
                "isr": None if p.isr is None else list(p.isr),
                "leader": p.leader,
                "adding_replicas": list(p.adding),
                "removing_replicas": list(p.removing),
                "urp": p.urp,
                "order_only": p.order_only,
                "replicas": [_replica_progress(row) for row in p.replicas],
            }
            for p in partitions
        ],
    )


def verify_document(result: Any, outcome: str, preserve_throttles: bool) -> dict[str, Any]:
    """``result`` is a ``kreassign.actions.verify.VerifyResult``."""
    partitions = [
        {
            "topic": tp.topic,
            "partition": tp.partition,
            "state": state.status,
            "current_replicas": list(state.current),
            "target_replicas": list(state.target),
        }
        for tp, state in sorted(result.partitions.items())
    ]
    log_dirs = [
        {
            "topic": replica.topic,
            "partition": replica.partition,
            "broker": replica.broker_id,
            "state": move.kind,
            "target_log_dir": move.target,
            "current_log_dir": move.current,
            "future_log_dir": move.future,
        }
        for replica, move in sorted(result.moves.items(), key=lambda item: item[0].sort_key())
    ]
    return document(
        "verify",
        outcome=outcome,
        partitions=partitions,
        log_dirs=log_dirs,
        throttles={
            "cleared": result.throttles_cleared,
            "preserved": preserve_throttles,
            "reassignments_running_in_cluster": result.partitions_ongoing,
        },
    )


def limits_document(limits: Limits) -> dict[str, int | None]:
    """The batched executor's limits (P, R, L and the per-broker N), as the journal and the documents hold them."""
    return {
        "partitions": limits.partitions,
        "replicas": limits.replicas,
        "leaders": limits.leaders,
        "brokers": limits.brokers,
    }


def _busiest(steps: Sequence[Any]) -> dict[str, int] | None:
    busiest = busiest_broker(steps)
    return None if busiest is None else {"broker": busiest[0], "steps": busiest[1]}


def batched_plan_document(rounds: Sequence[Round], limits: Limits, rollback_json: str) -> dict[str, object]:
    """--execute --dry-run of a batched plan: its rounds of steps, and the busiest broker of each."""
    return document(
        "batched-plan",
        rollback=json.loads(rollback_json),
        limits=limits_document(limits),
        rounds=[
            {
                "round": r.number,
                "busiest_broker": _busiest(r.steps),
                "steps": [
                    {
                        **partition_ref(s.partition),
                        "source": list(s.source),
                        "target": list(s.target),
                        "adding": list(s.adding),
                        "removing": list(s.removing),
                        "moves_leader": s.moves_leader,
                    }
                    for s in r.steps
                ],
            }
            for r in rounds
        ],
    )


def batched_handover_document(pid: int | None, changes: Mapping[str, int]) -> dict[str, object]:
    """A batched --execute handed to the process that already runs the plan (--additional)."""
    return document("batched-handover", pid=pid, changes=dict(changes))


def batched_outcome_document(
    outcome: Any,
    journal_path: str,
    rollback_path: str,
    throttled: bool,
    rollback_json: str,
    warnings: Sequence[str],
    limit_changes: Sequence[Mapping[str, object]] = (),
    falling_behind: Sequence[Any] = (),
) -> dict[str, object]:
    """The final result of a batched --execute (``outcome``: a ``kreassign.execution.outcome.Outcome``;
    ``limit_changes``: the per-broker limit's changes under --adaptive; ``falling_behind``: the
    ``kreassign.execution.falling_behind.FallingBehind`` steps named during the run)."""
    return document(
        "batched-outcome",
        status=outcome.status,
        message=outcome.message,
        partitions=outcome.partitions,
        partitions_done=outcome.partitions_done,
        steps_done=outcome.steps_done,
        bytes_moved=outcome.bytes_moved,
        bytes_reverted=outcome.bytes_reverted,
        elapsed_s=round(outcome.elapsed, 3),
        throttles_restored=throttled,
        reverted=partition_refs(outcome.reverted),
        failures=[{**partition_ref(tp), "reason": reason} for tp, reason in sorted(outcome.failures.items())],
        journal=journal_path,
        rollback_file=rollback_path,
        rollback=json.loads(rollback_json),
        warnings=list(warnings),
        limit_changes=[dict(change) for change in limit_changes],
        falling_behind=[step.document() for step in falling_behind],
    )


def batched_cancel_document(result: Any) -> dict[str, object]:
    """What --cancel --journal-file did (``result``: a ``kreassign.actions.batched_cancel.RunCancelled``)."""
    return document("batched-cancel", **result.document())
