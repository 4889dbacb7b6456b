"""--generate --strategy balanced (minimal movement, see ``kreassign.planning.balanced``) and
--write-cluster-snapshot. stdout has the Apache layout; the balance summary goes to ``err``."""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from typing import TypeVar

from kreassign.actions.common import Output
from kreassign.actions.generate import (
    GenerateInputs,
    GenerateResult,
    current_assignment_json,
    current_assignment_pieces,
    print_documents,
    print_proposal,
    read_generate_inputs,
)
from kreassign.cluster.port import ClusterPort, LogDirUsage, all_cordoned, volume_capacity, with_volumes
from kreassign.errors import CommandError, UnknownTopicOrPartitionError, UsageError
from kreassign.formats import format_topics_json, parse_generate_assignment_args, topics_json_pieces
from kreassign.humanize import parse_size
from kreassign.model import TopicColumns, TopicPartition
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.bounds import minimum_movement
from kreassign.planning.budget import MoveBudget
from kreassign.planning.bytebalance import DEFAULT_TOLERANCE
from kreassign.planning.context import Row, make_context
from kreassign.planning.logdirs import LogDirChoice, choose_dirs, unplanned_volume_bytes, volume_overflows
from kreassign.planning.netbalance import DEFAULT_TRAFFIC_TOLERANCE
from kreassign.planning.pipeline import DEFAULT_MAX_DISK_USAGE, BalanceRequest, StageJob, run_stages
from kreassign.planning.quality import PlanQuality, measure_plan

B = TypeVar("B")
VOLUME_ATTEMPTS = 4
"""Times the driver-side stages run when the replicas a broker gets do not pack into its volumes (each time
the broker takes the overflow less); then the plan is refused."""
STRATEGIES = ("apache", "balanced", "leaders")
ENGINES = ("auto", "local", "spark")
AUTO_SPARK_PARTITIONS = 1_000_000
"""``--engine auto`` hands planning to Spark from this many partitions on, when pyspark is installed and
``--spark-master`` names a Spark cluster or a Spark Connect server (anything but ``local[...]``). Measured
on the 2-core benchmark machine (bench/README.md, bench/bench_generate.py): an embedded ``local[N]`` session
never beats the local engine there (JVM and Python workers start, and each stage's rows cross to Python on
the same two cores the local engine uses alone), so auto never picks an embedded session; at 1,000,000
partitions the local engine needs several GB in one process, which is where executors on other machines
start to pay off."""


def check_choice(option: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise UsageError(f"Invalid value '{value}' for --{option}: expected one of {', '.join(choices)}")
    return value


BALANCED_ONLY = ("replication-factor", "spark-master", "spark-conf", "max-disk-usage", "move-budget", "bytes-tolerance")
"""The options only ``--strategy balanced`` reads."""
TRAFFIC_OPTIONS = ("sample-rates", "traffic-tolerance")
"""The options ``--strategy balanced`` and ``--strategy leaders`` read (the traffic goals)."""


def check_apache_strategy_options(args) -> None:
    """Options that only the balanced strategy reads are an error with the default strategy."""
    check_choice("engine", str(args.value("engine")), ENGINES)
    for name in BALANCED_ONLY:
        if args.has(name):
            raise UsageError(f"--{name} needs --strategy balanced")
    for name in TRAFFIC_OPTIONS:
        if args.has(name):
            raise UsageError(f"--{name} needs --strategy balanced or --strategy leaders")
    if args.value("engine") == "spark":
        raise UsageError("--engine spark needs --strategy balanced (the Apache placement is sequential)")


def parse_spark_conf(pairs: Sequence[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"Invalid --spark-conf '{pair}': expected KEY=VALUE")
        conf[key.strip()] = value
    return conf


def parse_max_disk_usage(value: str | None) -> float:
    if value is None:
        return DEFAULT_MAX_DISK_USAGE
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 < share <= 1:
        raise UsageError(f"Invalid --max-disk-usage '{value}': expected a share of the disk, 0 < F <= 1 (e.g. 0.8)")
    return share


def parse_bytes_tolerance(value: str | None) -> float | None:
    """``--bytes-tolerance``: a percentage of the mean bytes per broker (``5``, ``2.5%``), default 5; ``none``
    turns the bytes stage off (the plan moves the fewest replicas, bytes are best effort)."""
    if value is None:
        return DEFAULT_TOLERANCE
    if value.strip().lower() == "none":
        return None
    return _tolerance(
        value,
        f"Invalid --bytes-tolerance '{value}': expected a percentage of the mean bytes per broker, "
        "0 < P <= 100 (e.g. 5), or none",
    )


def _tolerance(value: str, error: str) -> float:
    """A percentage (``5``, ``2.5%``), 0 < P <= 100, as a share; ``error`` otherwise."""
    try:
        pct = float(value.strip().lower().removesuffix("%"))
    except ValueError:
        pct = -1.0
    if not 0 < pct <= 100:
        raise UsageError(error)
    return pct / 100


def parse_traffic_tolerance(value: str | None) -> float:
    """``--traffic-tolerance``: a percentage of the mean bytes in (and out) per second per broker (``10``,
    ``7.5%``), default 10."""
    if value is None:
        return DEFAULT_TRAFFIC_TOLERANCE
    return _tolerance(
        value,
        f"Invalid --traffic-tolerance '{value}': expected a percentage of the mean bytes in and out per broker, "
        "0 < P <= 100 (e.g. 10)",
    )


def parse_move_budget(value: str | None) -> MoveBudget | None:
    """``--move-budget``: a number of replicas (``200``) or bytes with a unit (``50GB``, ``1.5TiB``); None
    without the option (the plan without a budget)."""
    if value is None:
        return None
    text = value.strip()
    if re.fullmatch(r"[0-9]+", text):
        return MoveBudget(int(text), "replicas")
    size = parse_size(text)
    if size is None:
        raise UsageError(
            f"Invalid --move-budget '{value}': expected a number of replicas (e.g. 200) or bytes with a unit "
            "(e.g. 50GB, 1.5TiB)"
        )
    return MoveBudget(size, "bytes")


def check_disk_usage(
    quality: PlanQuality, capacities: Mapping[int, int | None], other_bytes: Mapping[int, int], limit: float
) -> None:
    """Refuse a plan that leaves a broker of known capacity above ``limit`` of it, unless it was already
    above and does not grow (the plan never makes a full disk worse)."""
    before, after = quality.per_broker["bytes"]
    for b in quality.brokers:
        capacity = capacities.get(b)
        if not capacity:
            continue
        used_before = before.get(b, 0) + other_bytes.get(b, 0)
        used_after = after.get(b, 0) + other_bytes.get(b, 0)
        if used_after > limit * capacity and used_after > used_before:
            raise CommandError(
                f"The balanced plan would fill broker {b} to {100 * used_after / capacity:.1f}% of its "
                f"{capacity} bytes (--max-disk-usage {limit:g}); no plan was written. Add brokers or disks, "
                "or list fewer topics."
            )


def choose_engine(engine: str, partitions: int, spark_master: str | None = None) -> str:
    if engine != "auto":
        return engine
    if partitions < AUTO_SPARK_PARTITIONS or not spark_master or spark_master.startswith("local"):
        return "local"
    import importlib.util

    return "spark" if importlib.util.find_spec("pyspark") is not None else "local"


def partition_sizes(
    port: ClusterPort, current: Mapping[str, TopicColumns], broker_ids: Iterable[int]
) -> dict[str, list[int]]:
    """Size of each partition in bytes (0 when unknown), per topic in the order of ``current``'s columns: its
    largest current replica on ``broker_ids``, the cluster's brokers (DescribeLogDirs on a live cluster: a
    broker gone from the cluster cannot answer); a snapshot's columns hold ``size_bytes`` already (when
    every partition has one, the port is not asked)."""
    if None not in chain.from_iterable(topic.sizes for topic in current.values()):
        return {name: list(topic.sizes) for name, topic in current.items()}
    sizes: dict[tuple[str, int], int] = {}
    for replica, size in port.replica_sizes(broker_ids).items():
        if replica.topic in current:
            key = (replica.topic, replica.partition)
            sizes[key] = max(size, sizes.get(key, 0), 0)
    return {name: [sizes.get((name, p), 0) for p in topic.partitions] for name, topic in current.items()}


@dataclass(frozen=True)
class Collected:
    """The Spark engine's plan, collected with what the driver-side stages read
    (:func:`kreassign.actions.balanced_file.generate_from_file`):
    ``minimum`` (the fewest replica moves and their bytes) as its job counted it; ``inputs`` and ``usage`` (the
    log dirs of ``inputs.usable``) as :func:`generate_balanced` reads them from the port; ``other_bytes``:
    :func:`broker_disks`' rest of the disks, as Spark summed it (None: summed from ``usage``); ``rates``: the
    snapshot's recorded rates (None: read from the port); ``left_behind``: :func:`left_behind`, as Spark counted it."""

    plan: dict[tuple[str, int], list[int]]
    minimum: tuple[int, int]
    inputs: GenerateInputs
    usage: Mapping[int, Sequence[LogDirUsage]]
    other_bytes: dict[int, int] | None
    rates: Mapping[TopicPartition, tuple[float, float]] | None = None
    left_behind: dict[int, dict[str, int]] = field(default_factory=dict)


def generate_balanced(
    port, request: BalanceRequest, out: Output, collected: Collected | None = None
) -> tuple[GenerateResult, PlanQuality, str]:
    """Prints the proposal (Apache layout) on ``out``; returns it with the plan's quality
    (:mod:`kreassign.planning.quality`, for the plan report) and the engine used.

    After the engine, the driver-side stages of :data:`kreassign.planning.pipeline.STAGES` run on the driver,
    each under its guard (so both engines give the same plan): disk capacity, bytes per broker within the
    request's tolerance of the mean, the extra moves ``--move-budget`` buys, the log dirs; then the final disk
    check.

    Every partition is on the driver here (a live cluster, the local engine, a disk to relieve, log dirs to
    choose, every topic in the stages' scope); with the Spark engine on a snapshot file the driver holds no more
    than a scope of topics' partitions (:func:`kreassign.actions.balanced_file.generate`, the entry of both, chooses).
    ``collected``: the Spark engine's plan and what it read, collected from the file (the port is not read
    again)."""
    if collected is None:
        inputs = read_generate_inputs(port, request.topics_json, request.broker_list, request.rack_aware)
        usage = port.describe_log_dirs([b.id for b in inputs.usable])
    else:
        inputs, usage = collected.inputs, collected.usage
    topics, current = inputs.topics, inputs.current
    usable = without_cordoned(inputs.usable, usage)
    sizes = partition_sizes(port, current, [b.id for b in inputs.cluster_brokers])
    rows: list[Row] = []
    for name in sorted(current):  # by topic, then partition
        rows += zip(repeat(name), current[name].partitions, current[name].replicas, sizes[name])
    replication_factor = request.replication_factor
    ctx = make_context([(b.id, b.rack) for b in usable], replication_factor, rows)
    plan, minimum = (None, None) if collected is None else (collected.plan, collected.minimum)
    used = choose_engine(request.engine, len(rows), request.spark_master) if plan is None else "spark"
    if minimum is None:  # for the engine and the report
        minimum = minimum_movement(rows, ctx)
    if plan is None and used == "spark":
        plan = _plan_with_spark(port, topics, ctx, request.spark_master, request.spark_conf)
    elif plan is None:
        plan = plan_balanced(rows, ctx, minimum[0])
    capacities, other_bytes = broker_disks(port, topics, [b.id for b in usable], usage)
    if collected is not None and collected.other_bytes is not None:
        other_bytes = collected.other_bytes
    limit = request.max_disk_usage
    volumes = with_volumes(usage)
    other_bytes = unplanned_volume_bytes(rows, volumes, ctx.brokers, other_bytes, limit)
    holds = ctx.rack_holds(Counter(map(len, plan.values())))[1] if ctx.uneven_racks() else []
    held = [b for hold in holds for b in hold.brokers]
    engine_plan = {key: list(replicas) for key, replicas in plan.items()} if choose_dirs(volumes, ctx.brokers) else None
    rates = partition_rates(port, request, rows, None if collected is None else collected.rates)
    for attempt in range(VOLUME_ATTEMPTS):
        job = StageJob(rows, plan, ctx, request, capacities, other_bytes, held, volumes=volumes, rates=rates)
        results = run_stages(job)
        choice = results["log_dirs"]
        over = volume_overflows(choice)
        if not over or engine_plan is None or attempt == VOLUME_ATTEMPTS - 1:
            break
        # the new replicas did not pack into a broker's volumes: it takes its largest new replica less (or the
        # overflow, when larger), and the stages run again
        other_bytes = dict(other_bytes)
        for v in over:
            other_bytes[v.broker] = other_bytes.get(v.broker, 0) + max(int(v.after - v.bound) + 1, v.largest)
        plan = {key: list(replicas) for key, replicas in engine_plan.items()}
    quality = measure_plan(
        rows,
        plan,
        [b.id for b in usable],
        replication_factor=replication_factor,
        capacities=capacities,
        other_bytes=other_bytes,
        minimum=minimum,
        budget=results.get("budget"),
        current_load=dict(ctx.current_load),
        byte_band=results.get("byte_band"),
        ctx=ctx,
    )
    check_volumes(choice, limit)
    check_disk_usage(quality, capacities, other_bytes, limit)
    left = [b for b in quality.shown if b not in quality.brokers]
    behind = collected.left_behind if collected is not None else left_behind(port, current, left)
    quality = replace(
        quality, log_dirs=choice, rack_holds=tuple(holds), traffic=results.get("traffic"), left_behind=behind
    )
    return print_plan(out, current, plan, choice, request.texts), quality, used


def left_behind(port: ClusterPort, planned: Iterable[str], brokers: Iterable[int]) -> dict[int, dict[str, int]]:
    """Per broker of ``brokers`` (those a plan of the topics ``planned`` empties: left out of it), the replicas
    of the cluster's other topics it keeps, per topic, Kafka's internal ones included (``--topics-regex '.*'``
    skips them): what stopping that broker would leave under-replicated. {} when there are none."""
    wanted = set(brokers)
    if not wanted:
        return {}
    skip = set(planned)
    for attempt in range(2):  # a topic deleted between the listing and the description: listed again, once
        names = [t for t in port.list_topic_names() if t not in skip]
        try:
            columns = port.describe_topic_columns(names)
            break
        except UnknownTopicOrPartitionError:
            if attempt:
                return {}
    kept: dict[int, Counter[str]] = {}
    for name, topic in columns.items():
        for replicas in topic.replicas:
            for b in wanted.intersection(replicas):
                kept.setdefault(b, Counter())[name] += 1
    return {b: dict(sorted(kept[b].items())) for b in sorted(kept)}


def partition_rates(
    port: ClusterPort,
    request: BalanceRequest,
    rows: Sequence[Row],
    recorded: Mapping[TopicPartition, tuple[float, float]] | None = None,
) -> dict[tuple[str, int], tuple[float, float]]:
    """Bytes written and read per second of each partition of ``rows``: sampled on the live cluster over
    ``request.sample_rates`` seconds (:func:`kreassign.execution.sampling.sample_rates`), else those a cluster
    snapshot recorded (``recorded``, or the port's); {} when none are known (the plan is then today's)."""
    if request.sample_rates is not None:
        from kreassign.execution.sampling import sample_rates

        sampled = sample_rates(port, [TopicPartition(t, p) for t, p, _, _ in rows], request.sample_rates)
        return {(tp.topic, tp.partition): (r.write_bytes_per_s, r.read_bytes_per_s) for tp, r in sampled.items()}
    if recorded is None:
        return port.recorded_partition_rates()
    return {(tp.topic, tp.partition): pair for tp, pair in recorded.items()}


def print_plan(
    out: Output,
    current: Mapping[str, TopicColumns],
    plan: Mapping[tuple[str, int], Sequence[int]],
    choice: LogDirChoice | None = None,
    texts: bool = True,
) -> GenerateResult:
    """The two documents of --generate (Apache layout), the proposal's log_dirs from ``choice``; ``texts``
    False: printed a topic at a time, neither held whole (the result's texts are empty)."""
    proposed = (
        (name, topic.partitions, [plan[(name, p)] for p in topic.partitions], _topic_dirs(choice, name, plan, topic))
        for name, topic in current.items()
    )
    if texts:
        return print_proposal(out, current_assignment_json(current), format_topics_json(proposed))
    print_documents(out, current_assignment_pieces(current), topics_json_pieces(proposed))
    return GenerateResult("", "")


def _topic_dirs(
    choice: LogDirChoice | None, name: str, plan: Mapping[tuple[str, int], Sequence[int]], topic: TopicColumns
) -> list[tuple[str | None, ...]] | None:
    """A topic's log_dirs for format_topics_json: None (every replica "any") when the stage named no dir."""
    if choice is None or not choice.dirs or not any((name, p) in choice.dirs for p in topic.partitions):
        return None
    return [choice.dirs.get((name, p)) or (None,) * len(plan[(name, p)]) for p in topic.partitions]


def check_volumes(choice: LogDirChoice, limit: float) -> None:
    """Refuse a plan whose new replicas cannot be put on a broker's volumes within their bound."""
    over = volume_overflows(choice)
    if over:
        v = over[0]
        share = f"{100 * v.after / v.total:.1f}% of its {v.total} bytes" if v.total else f"{v.after} bytes"
        raise CommandError(
            f"The balanced plan would fill volume {v.label} of broker {v.broker} to {share} "
            f"(--max-disk-usage {limit:g}): its volumes have no room for the replicas it gets; no plan was written. "
            "Add brokers or disks, or list fewer topics."
        )


def without_cordoned(brokers: Sequence[B], usage: Mapping[int, Sequence[LogDirUsage]]) -> list[B]:
    """The brokers that may take replicas: not those whose every log dir is cordoned (KIP-1066). Such a
    broker is being drained: the balanced plan treats it as one left out of --broker-list (it places nothing
    on it and moves its replicas off). A plan with no broker left is refused."""
    kept = [b for b in brokers if not all_cordoned(usage.get(b.id, ()))]  # type: ignore[attr-defined]
    if brokers and not kept:
        raise CommandError(
            "Every broker of the plan has all its log directories cordoned (cordoned.log.dirs); no plan was written."
        )
    return kept


def broker_disks(
    port: ClusterPort,
    topics: Sequence[str],
    broker_ids: Iterable[int],
    usage: Mapping[int, Sequence[LogDirUsage]] | None = None,
) -> tuple[dict[int, int | None], dict[int, int]]:
    """Per broker (DescribeLogDirs, or the snapshot's; ``usage`` when read already): its capacity in bytes
    (:func:`kreassign.cluster.port.volume_capacity`: each volume its log dirs are on counted once; None when
    one is unknown) and the bytes of the topics not planned (the rest of its disk)."""
    wanted = set(topics)
    capacities: dict[int, int | None] = {}
    other: Counter[int] = Counter()
    ids = list(broker_ids)
    usage = port.describe_log_dirs(ids) if usage is None else {b: usage[b] for b in ids if b in usage}
    for broker, dirs in usage.items():
        capacities[broker] = volume_capacity(dirs)
    if not any(capacities.values()):  # the rest of the disk only matters against a known capacity
        return capacities, {}
    for broker, dirs in usage.items():
        for d in dirs:
            for tp, size in d.replica_sizes.items():
                if tp.topic not in wanted and size > 0:
                    other[broker] += size
    return capacities, dict(other)


def _plan_with_spark(port, topics, ctx, spark_master, spark_conf) -> dict[tuple[str, int], list[int]]:
    from kreassign.spark import plan_balanced_spark

    source = port.snapshot_file()
    if source is not None:
        return plan_balanced_spark(source, topics, ctx, master=spark_master, conf=spark_conf)
    from kreassign.snapshot import save_snapshot, snapshot_from_cluster

    with tempfile.TemporaryDirectory(prefix="kreassign-") as folder:
        path = os.path.join(folder, "snapshot.jsonl")
        save_snapshot(snapshot_from_cluster(port, topics), path)
        return plan_balanced_spark(path, topics, ctx, master=spark_master, conf=spark_conf)


def write_cluster_snapshot(
    port, path: str, topics_json: str | None, err: Output, sample_rates_s: int | None = None
) -> None:
    """The snapshot of the cluster (or of ``topics_json``'s topics) to ``path``; with ``sample_rates_s``, each
    partition's write and read rates sampled over that many seconds are recorded in it."""
    from kreassign.formats import check_topic_duplicates, parse_topics_to_move_json
    from kreassign.snapshot import save_snapshot, snapshot_from_cluster

    topics = None
    if topics_json is not None:
        topics = parse_topics_to_move_json(topics_json)
        check_topic_duplicates(topics)
    snapshot = snapshot_from_cluster(port, topics)
    sampled = ""
    if sample_rates_s is not None:
        from kreassign.actions.traffic import snapshot_rates

        snapshot, sampled = snapshot_rates(port, snapshot, sample_rates_s, err)
    save_snapshot(snapshot, path)
    err(
        f"Wrote cluster snapshot {path}: {len(snapshot.brokers)} broker(s), {len(snapshot.topics)} topic(s), "
        f"{snapshot.partition_count} partition(s){sampled}.\n"
    )


def streamable_snapshot(port, request: BalanceRequest) -> str | None:
    """The snapshot file the Spark engine plans from with the driver's memory bounded by brokers and topics
    (the partitions never loaded in Python), or None: a live cluster, the local engine, a snapshot loaded."""
    from kreassign.snapshot import SnapshotCluster, count_snapshot_partitions

    engine, spark_master = request.engine, request.spark_master
    if not isinstance(port, SnapshotCluster) or port.loaded or engine == "local" or port.snapshot_file() is None:
        return None
    if engine == "auto":
        if not spark_master or spark_master.startswith("local"):  # choose_engine's rule, before counting
            return None
        _, topics = parse_generate_assignment_args(request.topics_json, request.broker_list)
        if choose_engine(engine, count_snapshot_partitions(port.source, topics), spark_master) != "spark":
            return None
    return port.source
