"""--progress (KIP-179): read where every replica of a plan stands, twice when some replica is behind so
that a copy rate and an ETA can be given; with --watch, again and again until nothing is left to move.
Computation in ``kreassign.planning.progress``; rendering in ``kreassign.cli.render_progress``."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping

from kreassign.actions.common import describe_known_topics
from kreassign.cluster.port import ClusterPort, ConfigResource, ResourceType
from kreassign.errors import CommandError, KreassignError, is_transient
from kreassign.model import ReassignmentPlan, TopicPartition
from kreassign.planning.eta import PLAN_RATE_WINDOW_S, RATE_WINDOW_S
from kreassign.planning.progress import (
    PlanOutcome,
    ProgressReport,
    ReplicaSample,
    ReplicaStatus,
    Throttles,
    any_behind,
    compute_progress,
    replicas_to_sample,
    with_throttles,
)
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
)

DEFAULT_INTERVAL_S = 1.0
STUCK_FOR_S = 10.0
"""--watch: how long the plan must stay not at target (a partition neither moving nor at its target, an unknown
topic, partition or broker) before the watch gives up: a broker restarting, or a batched run about to start,
is not the end."""
FAILING_FOR_S = 30.0
"""--watch: how long the cluster may keep failing in a way Kafka calls retriable (a controller or a leader moving,
a broker restarting) before the watch stops with the error. Meanwhile the last table stays, with its time."""


def sample_replicas(
    port: ClusterPort,
    replicas,
    brokers: set[int],
    clock: Callable[[], float],
    leaders: Mapping[TopicPartition, int] | None = None,
) -> ReplicaSample:
    """Log end offsets and sizes of ``replicas``; with ``leaders`` (the partitions being copied, and their
    leader), their log start offsets too, for their write rate (``planning.progress.write_rates``). The sample's
    time is when the sizes were read (the rates are their growth): the end of their call, as the brokers answer
    it. Taken after the other calls, it made the first interval short by what the first round spent setting up
    its connections (the offsets' calls), and the write rates of a 1 s --progress up to 20 % high."""
    sizes = port.replica_sizes(sorted(brokers)) if brokers else {}
    at = clock()
    ends = port.replica_log_end_offsets(replicas) if replicas else {}
    starts: dict[TopicPartition, int] = {}
    if leaders:
        try:  # display only: without them, the leader's size growth is the write rate
            starts = port.log_start_offsets(sorted(leaders))
        except Exception:
            starts = {}
    return ReplicaSample(at=at, log_end_offsets=ends, sizes=sizes, leaders=dict(leaders or {}), log_starts=starts)


def copied_partitions(targets, topics, live: set[int]) -> dict[TopicPartition, int]:
    """The partitions of the plan with a target replica out of the ISR on a live broker, and their leader."""
    copied = {}
    for tp, target in dict(targets).items():
        info = next((p for p in topics.get(tp.topic) or () if p.partition == tp.partition), None)
        if info is None or info.leader is None or info.leader not in live:
            continue
        if any(b in info.replicas and b not in info.isr for b in target):
            copied[tp] = info.leader
    return copied


class _Reader:
    """Reads the plan's state from the cluster: ``metadata()`` (brokers, reassignments, topics, and whether a
    batched run of the plan is running), then ``report(metadata, first)`` samples the replicas and computes the
    report against an earlier sample."""

    def __init__(self, port: ClusterPort, plan: ReassignmentPlan, journal_path: str | None, clock) -> None:
        """``journal_path``: the plan's journal on this cluster (``plan_journal_of``)."""
        self.port, self.clock = port, clock
        self.targets = list(plan.partitions)
        self.wanted = list(dict.fromkeys(tp for tp, _ in self.targets))
        self.journal_path = journal_path
        self.plan_targets = plan.targets()

    def metadata(self):
        live = {b.id for b in self.port.describe_brokers()}
        reassignments = self.port.list_reassignments(self.wanted)
        topics = describe_known_topics(self.port, [tp.topic for tp in self.wanted])
        return live, reassignments, topics, batched_run_running(self.plan_targets, self.journal_path, self.port)

    def report(
        self, metadata, first: ReplicaSample | None, plan_first: ReplicaSample | None = None
    ) -> tuple[ProgressReport, ReplicaSample]:
        live, reassignments, topics, batched = metadata
        replicas = replicas_to_sample(self.targets, topics, live)
        leaders = copied_partitions(self.targets, topics, live)
        sample = sample_replicas(self.port, replicas, {r.broker_id for r in replicas}, self.clock, leaders)
        report = compute_progress(
            self.targets, topics, reassignments, live, sample, first, batched_run=batched, plan_first=plan_first
        )
        return report, sample


def read_progress(
    port: ClusterPort,
    plan: ReassignmentPlan,
    *,
    interval_s: float | None = None,
    journal_path: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> ProgressReport:
    """Metadata once, then one sample of log end offsets and sizes; if a replica is behind and
    ``interval_s`` (default ``DEFAULT_INTERVAL_S``) > 0, a second sample that much later gives rates
    and ETAs."""
    if interval_s is None:
        interval_s = DEFAULT_INTERVAL_S
    reader = _Reader(port, plan, journal_path, clock)
    metadata = reader.metadata()
    report, first = reader.report(metadata, None)
    if interval_s > 0 and any_behind(report):
        sleep(interval_s)
        report, _ = reader.report(metadata, first)
    return with_throttles(report, read_throttles(port, report))


def watch_progress(
    port: ClusterPort,
    plan: ReassignmentPlan,
    every_s: float,
    *,
    journal_path: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> Iterator[ProgressReport]:
    """--watch: a report every ``every_s`` seconds, until the plan is complete, or nothing has moved it for
    ``STUCK_FOR_S`` seconds (the last report's outcome is then ``complete`` or ``not_at_target``). Each copy's rate
    comes from the oldest sample of the last ``RATE_WINDOW_S`` seconds, the plan's (its ETA) from the oldest of the
    last ``PLAN_RATE_WINDOW_S``."""
    reader = _Reader(port, plan, journal_path, clock)
    samples: deque[ReplicaSample] = deque()
    stuck_since: float | None = None
    failing_since: float | None = None
    while True:
        started = clock()
        while samples and started - samples[0].at > PLAN_RATE_WINDOW_S:
            samples.popleft()
        recent = next((x for x in samples if started - x.at <= RATE_WINDOW_S), None)
        try:
            report, sample = reader.report(reader.metadata(), recent, samples[0] if samples else None)
        except KreassignError as exc:
            failing_since = started if failing_since is None else failing_since
            if not is_transient(exc) or started - failing_since >= FAILING_FOR_S:
                raise
            sleep(max(0.0, every_s - (clock() - started)))
            continue
        failing_since = None
        samples.append(sample)
        yield with_throttles(report, read_throttles(port, report))
        if report.outcome is PlanOutcome.COMPLETE:
            return
        if report.outcome is PlanOutcome.NOT_AT_TARGET:
            stuck_since = started if stuck_since is None else stuck_since
            if started - stuck_since >= STUCK_FOR_S:
                return
        else:
            stuck_since = None
        sleep(max(0.0, every_s - (clock() - started)))


def read_throttles(port: ClusterPort, report: ProgressReport) -> Throttles:
    """The throttle rates of the brokers copying or serving a replica that is behind, and the throttled-replica
    lists of their topics. They only feed the display: when they cannot be read, no throttle is shown."""
    behind = [(p, row) for p in report.partitions for row in p.replicas if row.status is ReplicaStatus.BEHIND]
    if not behind:
        return Throttles()
    brokers = {row.broker for _, row in behind} | {p.leader for p, _ in behind if p.leader is not None}
    topics = {p.topic for p, _ in behind}
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in sorted(brokers)]
    resources += [ConfigResource(ResourceType.TOPIC, t) for t in sorted(topics)]
    try:
        configs = port.describe_configs(resources)
    except Exception:  # display only (an older fake, a broker gone since): no throttle shown
        return Throttles()

    def rates(name: str) -> dict[int, int]:
        found = {}
        for resource, values in configs.items():
            if resource.type is ResourceType.BROKER and values.get(name, "").isdigit():
                found[int(resource.name)] = int(values[name])
        return found

    def lists(name: str) -> dict[str, frozenset[str]]:
        return {
            resource.name: frozenset(e.strip() for e in values.get(name, "").split(",") if e.strip())
            for resource, values in configs.items()
            if resource.type is ResourceType.TOPIC
        }

    return Throttles(
        leader_rates=rates(LEADER_THROTTLED_RATE),
        follower_rates=rates(FOLLOWER_THROTTLED_RATE),
        leader_replicas=lists(LEADER_THROTTLED_REPLICAS),
        follower_replicas=lists(FOLLOWER_THROTTLED_REPLICAS),
    )


def plan_journal_of(port: ClusterPort, plan: ReassignmentPlan, journal_path: str | None, notes=None) -> str | None:
    """The journal of the plan's batched run on the cluster ``port`` names: ``journal_path`` (--journal-file) once
    checked to be this cluster's (another cluster's is refused, one line; a version-1 one is taken as this
    cluster's, one line on ``notes``), else the plan's default journal on this cluster (what an earlier version kept
    at the old default path set aside first). None for a cluster without an id (a snapshot)."""
    from kreassign.execution.memory import check_bound, memory_of, plan_journal

    memory = memory_of(port)
    if memory is None:
        return journal_path
    say = notes or (lambda _text: None)
    journal = plan_journal(memory, plan.targets(), journal_path, say)
    if journal_path and journal.exists():
        try:
            state = journal.load()
        except CommandError:
            return str(journal.path)  # unreadable: the lookups below say nothing of it
        check_bound(journal, state, memory, say)
    return str(journal.path)


def batched_run_running(targets, journal_path: str | None, port: ClusterPort | None = None) -> bool:
    """A batched --execute moving this plan is running on this machine: a live run on the cluster ``port`` names
    moves its partitions to the same targets (the cluster's registry), or the journal ``journal_path`` (see
    ``plan_journal_of``) says running and its process is alive. Read only: the run's lock is not touched."""
    from kreassign.execution.journal import Journal, RunStatus, plan_id
    from kreassign.execution.memory import memory_of, runs_moving

    if port is not None and runs_moving(memory_of(port), targets):
        return True
    if journal_path is None:
        return False
    journal = Journal(journal_path)
    if not journal.exists():
        return False
    try:
        state = journal.load()
    except CommandError:
        return False
    if state.plan_id != plan_id(targets) or state.status is not RunStatus.RUNNING or state.pid <= 0:
        return False
    try:
        os.kill(state.pid, 0)
    except ProcessLookupError:
        return False  # killed (kill -9) or crashed: nothing will move the waiting partitions
    except PermissionError:
        return True
    return True


def stopped_batched_run(targets, journal_path: str | None) -> str | None:
    """A batched --execute of this plan that stopped before its end and is not running: one line saying so, and
    what is true of it. A run whose clean-up ended it (cancelled, interrupted: its steps in flight reverted, its
    throttles restored) left nothing to cancel: the same --execute resumes the plan. A run that died, or whose
    clean-up was cut short (failed), may have left steps in flight or throttles: --cancel reverts and restores
    them. None when there is no such run (no journal, a completed one, or one running now)."""
    from kreassign.execution.journal import Journal, RunStatus, how_it_ended, plan_id

    if journal_path is None:
        return None
    journal = Journal(journal_path)
    try:
        state = journal.load() if journal.exists() else None
    except CommandError:
        return None
    if state is None or state.plan_id != plan_id(targets) or state.status is RunStatus.COMPLETED:
        return None
    if journal.is_running_elsewhere():
        return None
    done = sum(state.steps_done.values())
    if state.status is RunStatus.RUNNING:
        how = f"died (pid {state.pid}) without its clean-up"
        if state.in_flight:
            how += f", its step(s) in flight of {','.join(str(tp) for tp in sorted(state.in_flight))} still running"
    else:
        how = f"was {how_it_ended(state.status, state.message)}"
    cleaned = state.status in (RunStatus.CANCELLED, RunStatus.INTERRUPTED) and not state.in_flight
    if cleaned:
        reverted = "its steps in flight were put back and " if state.reverted else ""
        kept = f"; the {done} step(s) it completed stay" if done else "; nothing of it is left on the cluster"
        return (
            f"The batched run of this plan {how} after {done} step(s) ({journal.path}): {reverted}its throttles "
            f"were restored{kept}. Run the same --execute to resume the plan."
        )
    advice = "run the same --execute again to resume it"
    if state.status.cancellable:
        advice += ", or --cancel to revert what it left in flight and restore throttles"
    return f"The batched run of this plan {how} after {done} step(s) ({journal.path}): {advice}."
