"""--progress (KIP-179): read where every replica of a plan stands, twice when some replica is behind so
that a copy rate and an ETA can be given. Computation in ``kreassign.planning.progress``; rendering in
``kreassign.cli.render_progress``."""

from __future__ import annotations

import time
from collections.abc import Callable

from kreassign.actions.common import describe_known_topics
from kreassign.cluster.port import ClusterPort
from kreassign.model import ReassignmentPlan
from kreassign.planning.progress import (
    ProgressReport,
    ReplicaSample,
    any_behind,
    compute_progress,
    replicas_to_sample,
)

DEFAULT_INTERVAL_S = 1.0


def sample_replicas(port: ClusterPort, replicas, brokers: set[int], clock: Callable[[], float]) -> ReplicaSample:
    sizes = port.replica_sizes(sorted(brokers)) if brokers else {}
    ends = port.replica_log_end_offsets(replicas) if replicas else {}
    return ReplicaSample(at=clock(), log_end_offsets=ends, sizes=sizes)


def read_progress(
    port: ClusterPort,
    plan: ReassignmentPlan,
    *,
    interval_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> ProgressReport:
    """Metadata once, then one sample of log end offsets and sizes; if a replica is behind and
    ``interval_s`` (default ``DEFAULT_INTERVAL_S``) > 0, a second sample that much later gives rates
    and ETAs."""
    if interval_s is None:
        interval_s = DEFAULT_INTERVAL_S
    targets = list(plan.partitions)
    live = {b.id for b in port.describe_brokers()}
    wanted = list(dict.fromkeys(tp for tp, _ in targets))
    reassignments = port.list_reassignments(wanted)
    topics = describe_known_topics(port, [tp.topic for tp in wanted])
    replicas = replicas_to_sample(targets, topics, live)
    brokers = {r.broker_id for r in replicas}
    first = sample_replicas(port, replicas, brokers, clock)
    report = compute_progress(targets, topics, reassignments, live, first)
    if interval_s <= 0 or not any_behind(report):
        return report
    sleep(interval_s)
    last = sample_replicas(port, replicas, brokers, clock)
    return compute_progress(targets, topics, reassignments, live, last, first)
