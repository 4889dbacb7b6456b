"""--generate --strategy balanced (minimal movement, see ``kreassign.planning.balanced``) and
--write-cluster-snapshot. stdout has the Apache layout; the balance summary goes to ``err``."""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
from kreassign.errors import CommandError, UsageError
from kreassign.formats import format_topics_json, parse_generate_assignment_args, topics_json_pieces
from kreassign.humanize import parse_size
from kreassign.model import TopicColumns
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.bounds import minimum_movement
from kreassign.planning.budget import MoveBudget, spend_move_budget
from kreassign.planning.bytebalance import DEFAULT_TOLERANCE, balance_bytes, band_of, unchanged_band
from kreassign.planning.capacity import fit_disk_capacity
from kreassign.planning.context import BalanceContext, Row, make_context
from kreassign.planning.logdirs import (
    LogDirChoice,
    choose_dirs,
    choose_log_dirs,
    unplanned_volume_bytes,
    volume_overflows,
)
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


def check_apache_strategy_options(args) -> None:
    """Options that only the balanced strategy reads are an error with the default strategy."""
    check_choice("engine", str(args.value("engine")), ENGINES)
    for name in BALANCED_ONLY:
        if args.has(name):
            raise UsageError(f"--{name} needs --strategy balanced")
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


DEFAULT_MAX_DISK_USAGE = 0.8


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
    text = value.strip().lower()
    if text == "none":
        return None
    try:
        pct = float(text.removesuffix("%"))
    except ValueError:
        pct = -1.0
    if not 0 < pct <= 100:
        raise UsageError(
            f"Invalid --bytes-tolerance '{value}': expected a percentage of the mean bytes per broker, "
            "0 < P <= 100 (e.g. 5), or none"
        )
    return pct / 100


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
    """The Spark engine's plan, collected with what the driver-side stages read (:func:`_generate_from_file`):
    ``minimum`` (the fewest replica moves and their bytes) as its job counted it; ``inputs`` and ``usage`` (the
    log dirs of ``inputs.usable``) as :func:`generate_balanced` reads them from the port; ``other_bytes``:
    :func:`broker_disks`' rest of the disks, as Spark summed it (None: summed from ``usage``)."""

    plan: dict[tuple[str, int], list[int]]
    minimum: tuple[int, int]
    inputs: GenerateInputs
    usage: Mapping[int, Sequence[LogDirUsage]]
    other_bytes: dict[int, int] | None


def generate_balanced(
    port,
    topics_json: str,
    broker_list: str,
    *,
    rack_aware: bool,
    replication_factor: int | None,
    engine: str,
    spark_master: str | None,
    spark_conf: Mapping[str, str],
    out: Output,
    max_disk_usage: float = DEFAULT_MAX_DISK_USAGE,
    move_budget: MoveBudget | None = None,
    texts: bool = True,
    bytes_tolerance: float | None = DEFAULT_TOLERANCE,
    collected: Collected | None = None,
) -> tuple[GenerateResult, PlanQuality, str]:
    """Prints the proposal (Apache layout) on ``out``; returns it with the plan's quality
    (:mod:`kreassign.planning.quality`, for the plan report) and the engine used.

    Stages after the engine, on the driver (so both engines give the same plan): disk capacity
    (:mod:`kreassign.planning.capacity`), bytes per broker within ``bytes_tolerance`` of the mean
    (:mod:`kreassign.planning.bytebalance`; None: not run), then, with ``move_budget``, the extra moves it buys
    (:mod:`kreassign.planning.budget`, which keeps every disk within its bound), then the final disk check.

    With the Spark engine on a snapshot file, the driver holds no more than a scope of topics' partitions
    (:func:`_generate_from_file`). Otherwise every partition is on the driver (a live cluster, the local engine, a
    disk to relieve, log dirs to choose, every topic in the stages' scope); ``collected``: the Spark engine's plan
    and what it read, collected by :func:`_generate_from_file` (the port is not read again). ``texts`` False: the
    result's JSON texts are left empty (the documents were printed a piece at a time, never held whole)."""
    source = (
        None if collected is not None else _streamable_snapshot(port, topics_json, broker_list, engine, spark_master)
    )
    if source is not None:
        return _generate_from_file(
            port,
            source,
            topics_json,
            broker_list,
            rack_aware=rack_aware,
            replication_factor=replication_factor,
            spark_master=spark_master,
            spark_conf=spark_conf,
            out=out,
            max_disk_usage=max_disk_usage,
            texts=texts,
            move_budget=move_budget,
            bytes_tolerance=bytes_tolerance,
        )
    if collected is None:
        inputs = read_generate_inputs(port, topics_json, broker_list, rack_aware)
        usage = port.describe_log_dirs([b.id for b in inputs.usable])
    else:
        inputs, usage = collected.inputs, collected.usage
    topics, current = inputs.topics, inputs.current
    usable = without_cordoned(inputs.usable, usage)
    sizes = partition_sizes(port, current, [b.id for b in inputs.cluster_brokers])
    rows: list[Row] = []
    for name in sorted(current):  # by topic, then partition
        rows += zip(repeat(name), current[name].partitions, current[name].replicas, sizes[name])
    ctx = make_context([(b.id, b.rack) for b in usable], replication_factor, rows)
    plan, minimum = (None, None) if collected is None else (collected.plan, collected.minimum)
    used = choose_engine(engine, len(rows), spark_master) if plan is None else "spark"
    if minimum is None:  # for the engine and the report
        minimum = minimum_movement(rows, ctx.brokers, replication_factor)
    if plan is None and used == "spark":
        plan = _plan_with_spark(port, topics, ctx, spark_master, spark_conf)
    elif plan is None:
        plan = plan_balanced(rows, ctx, minimum[0])
    capacities, other_bytes = broker_disks(port, topics, [b.id for b in usable], usage)
    if collected is not None and collected.other_bytes is not None:
        other_bytes = collected.other_bytes
    volumes = with_volumes(usage)
    other_bytes = unplanned_volume_bytes(rows, volumes, ctx.brokers, other_bytes, max_disk_usage)
    holds = ctx.rack_holds(Counter(map(len, plan.values())))[1] if ctx.uneven_racks() else []
    held = [b for hold in holds for b in hold.brokers]
    engine_plan = {key: list(replicas) for key, replicas in plan.items()} if choose_dirs(volumes, ctx.brokers) else None
    for attempt in range(VOLUME_ATTEMPTS):
        fit_disk_capacity(rows, plan, ctx, capacities, other_bytes, max_disk_usage)
        band = None
        if bytes_tolerance is not None:
            band = balance_bytes(rows, plan, ctx, bytes_tolerance, capacities, other_bytes, max_disk_usage, held=held)
        spent = None
        if move_budget is not None:
            spent = spend_move_budget(rows, plan, ctx, move_budget, capacities, other_bytes, max_disk_usage)
        choice = choose_log_dirs(rows, plan, volumes, ctx.brokers, max_disk_usage)
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
        budget=spent,
        current_load=dict(ctx.current_load),
        byte_band=band,
    )
    check_volumes(choice, max_disk_usage)
    check_disk_usage(quality, capacities, other_bytes, max_disk_usage)
    quality = replace(quality, log_dirs=choice, rack_holds=tuple(holds))
    return print_plan(out, current, plan, choice, texts), quality, used


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


def _streamable_snapshot(port, topics_json: str, broker_list: str, engine: str, spark_master: str | None) -> str | None:
    """The snapshot file the Spark engine plans from with the driver's memory bounded by brokers and topics
    (the partitions never loaded in Python), or None: a live cluster, the local engine, a snapshot loaded."""
    from kreassign.snapshot import SnapshotCluster, count_snapshot_partitions

    if not isinstance(port, SnapshotCluster) or port.loaded or engine == "local" or port.snapshot_file() is None:
        return None
    if engine == "auto":
        if not spark_master or spark_master.startswith("local"):  # choose_engine's rule, before counting
            return None
        _, topics = parse_generate_assignment_args(topics_json, broker_list)
        if choose_engine(engine, count_snapshot_partitions(port.source, topics), spark_master) != "spark":
            return None
    return port.source


def _generate_from_file(
    port,
    source: str,
    topics_json: str,
    broker_list: str,
    *,
    rack_aware: bool,
    replication_factor: int | None,
    spark_master: str | None,
    spark_conf: Mapping[str, str],
    out: Output,
    max_disk_usage: float,
    texts: bool,
    move_budget: MoveBudget | None = None,
    bytes_tolerance: float | None = DEFAULT_TOLERANCE,
) -> tuple[GenerateResult, PlanQuality, str]:
    """:func:`generate_balanced` with Spark from the snapshot file: the driver gets per-broker and per-topic
    aggregates and prints the two documents as they stream in. The bytes stage (when it has work: a broker's
    bytes outside ``bytes_tolerance`` of the mean, a topic's replicas or leaders 2 or more apart) and
    ``--move-budget`` run on the partitions of a scope of topics and the others' totals per broker
    (:mod:`kreassign.planning.scope`, :func:`_scoped_stage`). When every topic is in scope (their partitions are
    few enough), when a disk must be relieved (rare), or when a chosen broker has log dirs on several volumes,
    the plan is collected and the driver-side stages run as with every partition: the partitions they read come
    with the plan (:meth:`kreassign.spark.planner.SnapshotPlanner.collect`), the file is not read again in
    Python but for the replicas of each log dir when a broker has several volumes."""
    from kreassign.errors import UnknownTopicOrPartitionError
    from kreassign.formats import sort_topic_names, topic_entry_head
    from kreassign.javacompat.jackson_writer import quote_json_string
    from kreassign.planning.capacity import disk_bounds
    from kreassign.planning.placement import get_broker_metadata
    from kreassign.planning.quality import quality_of, topic_dimension
    from kreassign.spark import snapshot_planner

    brokers_to_use, topics = parse_generate_assignment_args(topics_json, broker_list)
    head = port.brokers_only()
    usage = head.describe_log_dirs([b.id for b in head.describe_brokers()])
    with snapshot_planner(source, topics, master=spark_master, conf=spark_conf) as planner:
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
        minimum = planner.minimum(ctx.brokers, replication_factor)
        planner.plan(ctx, minimum[0])
        capacities, _ = broker_disks(head, topics, ctx.brokers, usage)
        other_bytes: dict[int, int] = {}
        if any(capacities.values()):
            other_bytes = planner.other_bytes([(b, d.path) for b in ctx.brokers for d in usage.get(b, ())])
        totals = planner.broker_totals()
        if any(capacities.get(b) for b in ctx.brokers):  # capacity.fit_disk_capacity's test, from the totals
            before, after = (Counter(other_bytes) + Counter(side) for side in totals["disk"])
            bounds = disk_bounds(before, capacities, ctx.brokers, max_disk_usage)
            relieve = any(after[b] > bound for b, bound in bounds.items())
        else:
            relieve = False
        band = spreads = spent = None
        holds = ctx.rack_holds(planner.replication_factors())[1] if ctx.uneven_racks() else []
        held = [b for hold in holds for b in hold.brokers]
        # the log dirs of new replicas on a broker with several volumes (logdirs.choose_log_dirs) need the plan
        several = choose_dirs(with_volumes(usage), ctx.brokers)
        relieve = relieve or several
        if not relieve and (bytes_tolerance is not None or move_budget is not None):
            spreads = planner.topic_spreads(ctx.brokers)
        disks = {"capacities": capacities, "other_bytes": other_bytes, "limit": max_disk_usage}
        if bytes_tolerance is not None and not relieve:
            # bytebalance.balance_bytes changes nothing when every broker is inside the band and no topic's
            # replicas or leaders are 2 or more apart (its topic pass looks at no other topic)
            on = totals["bytes"][1]
            _, low, high = band_of(sum(on.get(b, 0) for b in ctx.brokers), len(ctx.brokers), bytes_tolerance)
            band = unchanged_band(on, ctx.brokers, bytes_tolerance)
            assert spreads is not None
            if (
                holds
                or any(not low <= on.get(b, 0) <= high for b in ctx.brokers)
                or any(s[1][0] >= 2 or s[3][0] >= 2 for s in spreads.values())
            ):
                # the stage's topics (planning.scope): a share of them, collected with the totals of the
                # others; or all of them (None), few enough to collect the plan
                band = _scoped_stage(
                    planner, ctx, totals, spreads, balance_bytes, tolerance=bytes_tolerance, held=held, **disks
                )
                relieve = band is None
        if move_budget is not None and not relieve:  # on the scope of the plan the bytes stage left
            spent = _scoped_stage(planner, ctx, totals, spreads, spend_move_budget, budget=move_budget, **disks)
            relieve = spent is None
        if relieve:  # before any change to the plan kept in the JVM
            cluster = head.describe_brokers()
            current, plan = planner.collect({b.id for b in cluster})
            inputs = GenerateInputs(topics, current, cluster, get_broker_metadata(cluster, brokers_to_use, rack_aware))
            ids = [b.id for b in inputs.usable]
            if several:  # logdirs.choose_log_dirs reads the replicas of each dir: the port's (the whole file)
                collected = Collected(plan, minimum, inputs, port.describe_log_dirs(ids), None)
            else:  # the rest of each disk as Spark summed it, in the order broker_disks gives it
                others = {b: other_bytes[b] for b in ids if b in other_bytes}
                collected = Collected(plan, minimum, inputs, head.describe_log_dirs(ids), others)
            return generate_balanced(
                head,
                topics_json,
                broker_list,
                rack_aware=rack_aware,
                replication_factor=replication_factor,
                engine="spark",
                spark_master=spark_master,
                spark_conf=spark_conf,
                out=out,
                max_disk_usage=max_disk_usage,
                move_budget=move_budget,
                texts=texts,
                bytes_tolerance=bytes_tolerance,
                collected=collected,
            )
        moved, moved_bytes, leaders_changed, total_bytes, partitions = planner.plan_totals()
        if spreads is None:
            spreads = planner.topic_spreads(ctx.brokers)
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
            budget=spent,
            byte_band=band,
            drops=replication_factor is not None,
        )
        check_disk_usage(quality, capacities, other_bytes, max_disk_usage)
        quality = replace(quality, rack_holds=tuple(holds))
        live = {b.id for b in head.describe_brokers()}
        quoted = {d: q for d in planner.log_dirs() if (q := quote_json_string(d)) != f'"{d}"'}
        heads = [(t, topic_entry_head(t)) for t in sort_topic_names(t for t, n in per_topic.items() if n)]
        stream = planner.stream(heads, quoted, sorted(b for b in load if b not in live))
        return _print_streamed(out, stream, texts), quality, "spark"


def _scoped_stage(planner, ctx: BalanceContext, totals, spreads, stage, **options):
    """``stage(rows, plan, ctx, rest=..., **options)`` on the partitions of the topics in scope
    (:mod:`kreassign.planning.scope`, from the Spark engine's topic ``spreads`` of the plan now; collected) and
    the others' totals; its changes go back to the plan kept in the JVM, and ``totals`` and ``spreads`` follow
    them. What the stage returned, or None when every topic is in scope (the caller collects the plan)."""
    from kreassign.planning.scope import scope_topics

    stats = {t: (s[1][2], s[1][0], s[3][0]) for t, s in spreads.items() if s[1][2]}
    scope = scope_topics(stats, len(ctx.brokers))
    if scope is None:
        return None
    rows, plan = planner.scoped(scope)
    before = {key: list(replicas) for key, replicas in plan.items()}
    done = stage(rows, plan, ctx, rest=planner.rest(scope), **options)
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
