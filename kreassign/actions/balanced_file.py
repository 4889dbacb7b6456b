"""--generate --strategy balanced with the Spark engine on a snapshot file, the driver kept out of the
partitions: per-broker and per-topic aggregates from Spark, the driver-side stages of
:data:`kreassign.planning.pipeline.STAGES` on a scope of topics where they can, the two documents streamed."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import replace

from kreassign.actions.balanced import (
    Collected,
    broker_disks,
    check_disk_usage,
    generate_balanced,
    streamable_snapshot,
    without_cordoned,
)
from kreassign.actions.common import Output
from kreassign.actions.generate import GenerateInputs, GenerateResult
from kreassign.cluster.port import with_volumes
from kreassign.errors import CommandError
from kreassign.formats import parse_generate_assignment_args
from kreassign.planning.context import BalanceContext, make_context
from kreassign.planning.logdirs import choose_dirs
from kreassign.planning.pipeline import BalanceRequest, Stage, StageJob, guarded
from kreassign.planning.quality import PlanQuality

RATE_KEYS = (b'"write_bytes_per_s"', b'"read_bytes_per_s"')


def file_has_rates(path: str) -> bool:
    """Whether a snapshot file records partitions' rates (``--write-cluster-snapshot --sample-rates``), read
    a chunk at a time, nothing parsed: without rates the partitions are never loaded in Python."""
    tail = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            window = tail + chunk
            if any(key in window for key in RATE_KEYS):
                return True
            tail = window[-32:]
    return False


class PlanView:
    """What a stage's ``whole`` and ``idle`` read of the plan Spark keeps: the rules, the per-broker
    ``totals``, the per-topic ``spreads`` (asked of Spark when first read), the disks, the rack holds, and
    ``several`` (a chosen broker has log dirs on several volumes)."""

    def __init__(self, planner, ctx, request, totals, capacities, other_bytes, holds, several) -> None:
        self.planner, self.ctx, self.request, self.totals = planner, ctx, request, totals
        self.capacities, self.other_bytes, self.holds, self.several = capacities, other_bytes, holds, several
        self._spreads = None

    @property
    def spreads(self):
        if self._spreads is None:
            self._spreads = self.planner.topic_spreads(self.ctx.brokers)
        return self._spreads


def generate(port, request: BalanceRequest, out: Output) -> tuple[GenerateResult, PlanQuality, str]:
    """--generate --strategy balanced: from the snapshot file with Spark, the driver kept out of the partitions, when
    the file and the engine allow it (:func:`kreassign.actions.balanced.streamable_snapshot`); else
    :func:`kreassign.actions.balanced.generate_balanced` with every partition on the driver."""
    source = streamable_snapshot(port, request)
    if source is not None:
        return generate_from_file(port, source, request, out)
    return generate_balanced(port, request, out)


def generate_from_file(
    port, source: str, request: BalanceRequest, out: Output
) -> tuple[GenerateResult, PlanQuality, str]:
    """:func:`kreassign.actions.balanced.generate_balanced` with Spark from the snapshot file: the driver gets
    per-broker and per-topic aggregates and prints the two documents as they stream in. A stage that can run
    on a scope (``Stage.scoped``: the bytes band when it has work, a broker outside the band or a topic's
    replicas or leaders 2 or more apart; ``--move-budget``) runs on the partitions of a scope of topics and the
    others' totals per broker (:mod:`kreassign.planning.scope`, :func:`_scoped_stage`). When every topic is in
    scope (their partitions are few enough), or a stage needs the whole plan (``Stage.whole``: a disk to relieve,
    rare; a chosen broker with log dirs on several volumes), the plan is collected and the driver-side stages
    run as with every partition: the partitions they read come with the plan
    (:meth:`kreassign.spark.planner.SnapshotPlanner.collect`), the file is not read again in Python but for the
    replicas of each log dir when a broker has several volumes."""
    from kreassign.errors import UnknownTopicOrPartitionError
    from kreassign.formats import sort_topic_names, topic_entry_head
    from kreassign.javacompat.jackson_writer import quote_json_string
    from kreassign.planning.bounds import plan_minimum
    from kreassign.planning.placement import get_broker_metadata
    from kreassign.planning.quality import quality_of, topic_dimension
    from kreassign.spark import snapshot_planner

    replication_factor, rack_aware = request.replication_factor, request.rack_aware
    brokers_to_use, topics = parse_generate_assignment_args(request.topics_json, request.broker_list)
    head = port.brokers_only()
    usage = head.describe_log_dirs([b.id for b in head.describe_brokers()])
    with snapshot_planner(source, topics, master=request.spark_master, conf=request.spark_conf) as planner:
        try:  # the chosen brokers, known before the survey: it counts the lower bound for them in its job
            chosen = sorted(
                {
                    b.id
                    for b in without_cordoned(
                        get_broker_metadata(head.describe_brokers(), brokers_to_use, rack_aware), usage
                    )
                }
            )
        except CommandError:  # raised below, after the survey's error (the order of the local engine)
            chosen = []
        if chosen and (replication_factor is None or replication_factor > 0):
            known, per_topic, load = planner.survey(chosen, replication_factor)
        else:
            known, per_topic, load = planner.survey()
        for name in dict.fromkeys(topics):  # SnapshotCluster.describe_topic_columns's error
            if name not in known:
                raise UnknownTopicOrPartitionError(
                    f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic {name} not found."
                )
        usable = without_cordoned(get_broker_metadata(head.describe_brokers(), brokers_to_use, rack_aware), usage)
        ctx = make_context([(b.id, b.rack) for b in usable], replication_factor, current_load=load)
        minimum = planner.minimum(ctx)
        planner.plan(ctx, minimum[0])
        capacities, _ = broker_disks(head, topics, ctx.brokers, usage)
        other_bytes: dict[int, int] = {}
        if any(capacities.values()):
            other_bytes = planner.other_bytes([(b, d.path) for b in ctx.brokers for d in usage.get(b, ())])
        totals = planner.broker_totals()
        rf_counts = planner.replication_factors() if ctx.uneven_racks() else {}  # (one job) the rack rule's
        holds = ctx.rack_holds(rf_counts)[1] if rf_counts else []
        held = [b for hold in holds for b in hold.brokers]
        # the log dirs of new replicas on a broker with several volumes (logdirs.choose_log_dirs) need the plan
        several = choose_dirs(with_volumes(usage), ctx.brokers)
        view = PlanView(planner, ctx, request, totals, capacities, other_bytes, holds, several)
        rates = port.recorded_rates() if file_has_rates(source) else {}  # (reading them loads the partitions)
        behind = planner.left_behind(sorted(b for b, n in load.items() if n and b not in ctx.brokers))
        stages = guarded(StageJob((), {}, ctx, request, capacities, other_bytes, held, rates=rates))
        # before any change to the plan kept in the JVM: does a stage need every partition?
        relieve = any([stage.whole(view) for stage in stages if not stage.scoped])
        results: dict[str, object] = {}
        for stage in stages if not relieve else ():
            if not stage.scoped:
                continue
            idle = stage.idle(view) if stage.idle is not None else None
            if idle is not None:
                results[stage.report] = idle
                continue
            # the stage's topics (planning.scope): a share of them, collected with the totals of the others; or
            # all of them (None), few enough to collect the plan
            job = StageJob((), {}, ctx, request, capacities, other_bytes, held)
            done = _scoped_stage(planner, ctx, totals, view.spreads, stage, job)
            if done is None:
                relieve = True
                break
            results[stage.report] = done
        if relieve:  # before any change to the plan kept in the JVM
            cluster = head.describe_brokers()
            current, plan = planner.collect({b.id for b in cluster})
            inputs = GenerateInputs(topics, current, cluster, get_broker_metadata(cluster, brokers_to_use, rack_aware))
            ids = [b.id for b in inputs.usable]
            if several:  # logdirs.choose_log_dirs reads the replicas of each dir: the port's (the whole file)
                collected = Collected(plan, minimum, inputs, port.describe_log_dirs(ids), None, rates, behind)
            else:  # the rest of each disk as Spark summed it, in the order broker_disks gives it
                others = {b: other_bytes[b] for b in ids if b in other_bytes}
                collected = Collected(plan, minimum, inputs, head.describe_log_dirs(ids), others, rates, behind)
            return generate_balanced(head, replace(request, engine="spark"), out, collected)
        moved, moved_bytes, leaders_changed, total_bytes, partitions = planner.plan_totals()
        # the minimum of the plans as even as this one, when a stage left a broker outside its band (one job)
        minimum = plan_minimum(ctx, minimum, totals["replicas"][1], lambda: rf_counts, planner.minimum)
        spreads = view.spreads
        names = sorted(spreads)
        quality = quality_of(
            ctx.brokers,
            {k: totals[k] for k in ("replicas", "leaders", "bytes")},
            [
                topic_dimension(
                    "topic_replica_spread", "replicas", [spreads[t][0] for t in names], [spreads[t][1] for t in names]
                ),
                topic_dimension(
                    "topic_leader_spread", "leaders", [spreads[t][2] for t in names], [spreads[t][3] for t in names]
                ),
            ],
            partitions=partitions,
            replicas_moved=moved,
            bytes_moved=moved_bytes,
            leaders_changed=leaders_changed,
            total_bytes=total_bytes,
            minimum=minimum,
            capacities=capacities,
            other_bytes=other_bytes,
            budget=results.get("budget"),
            byte_band=results.get("byte_band"),
            drops=replication_factor is not None,
        )
        check_disk_usage(quality, capacities, other_bytes, request.max_disk_usage)
        quality = replace(quality, rack_holds=tuple(holds), left_behind=behind)
        live = {b.id for b in head.describe_brokers()}
        quoted = {d: q for d in planner.log_dirs() if (q := quote_json_string(d)) != f'"{d}"'}
        heads = [(t, topic_entry_head(t)) for t in sort_topic_names(t for t, n in per_topic.items() if n)]
        stream = planner.stream(heads, quoted, sorted(b for b in load if b not in live))
        return _print_streamed(out, stream, request.texts), quality, "spark"


def _scoped_stage(planner, ctx: BalanceContext, totals, spreads, stage: Stage, job: StageJob):
    """``stage`` on the partitions of the topics in scope (:mod:`kreassign.planning.scope`, from the Spark
    engine's topic ``spreads`` of the plan now; collected) and the others' totals (``job.rest``); its changes
    go back to the plan kept in the JVM, and ``totals`` and ``spreads`` follow them. What the stage returned,
    or None when every topic is in scope (the caller collects the plan)."""
    from kreassign.planning.scope import scope_topics

    stats = {t: (s[1][2], s[1][0], s[3][0]) for t, s in spreads.items() if s[1][2]}
    scope = scope_topics(stats, len(ctx.brokers))
    if scope is None:
        return None
    rows, plan = planner.scoped(scope)
    before = {key: list(replicas) for key, replicas in plan.items()}
    done = stage.run(replace(job, rows=rows, plan=plan, rest=planner.rest(scope)))
    planner.tick("driver stage")
    planner.change(rows, before, plan, ctx.brokers, totals, spreads)
    return done


def _print_streamed(out: Output, pieces: Iterable[tuple[str, str]], texts: bool) -> GenerateResult:
    """:func:`kreassign.actions.generate.print_proposal` from (current, proposed) pieces in order: the
    current document goes out as it comes, the proposal waits in a temporary file."""
    opening, closing = '{"version":1,"partitions":[', "]}"
    kept: tuple[list[str], list[str]] = ([opening], [opening])
    out("Current partition replica assignment\n")
    out(opening)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as proposal:
        proposal.write(opening)
        separator = ""
        for now, then in pieces:
            out(separator + now)
            proposal.write(separator + then)
            if texts:
                kept[0].append(separator + now)
                kept[1].append(separator + then)
            separator = ","
        out(closing)
        proposal.write(closing)
        out("\n\nProposed partition reassignment configuration\n")
        proposal.seek(0)
        while chunk := proposal.read(1 << 20):
            out(chunk)
        out("\n")
    if not texts:
        return GenerateResult("", "")
    return GenerateResult("".join(kept[0]) + closing, "".join(kept[1]) + closing)
