"""--generate --strategy balanced (minimal movement, see ``kreassign.planning.balance``) and
--write-cluster-snapshot. stdout has the Apache layout; the balance summary goes to ``err``."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from kreassign.actions.common import Output
from kreassign.actions.generate import GenerateResult, print_proposal, read_generate_inputs
from kreassign.cluster.port import ClusterPort
from kreassign.errors import UsageError
from kreassign.model import TopicPartition
from kreassign.planning.balance import Row, make_context, plan_balanced

STRATEGIES = ("apache", "balanced")
ENGINES = ("auto", "local", "spark")
AUTO_SPARK_PARTITIONS = 1_000_000
"""``--engine auto`` hands planning to Spark from this many partitions on, when pyspark is installed and a
``--spark-master`` other than ``local[...]`` is given: the embedded ``local[*]`` session was slower than the
local engine at every size measured on the 2-core benchmark machine (bench/README.md), so without a real
Spark cluster auto stays local."""


def check_choice(option: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise UsageError(f"Invalid value '{value}' for --{option}: expected one of {', '.join(choices)}")
    return value


def check_apache_strategy_options(args) -> None:
    """Options that only the balanced strategy reads are an error with the default strategy."""
    check_choice("engine", str(args.value("engine")), ENGINES)
    for name in ("replication-factor", "spark-master", "spark-conf"):
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


def choose_engine(engine: str, partitions: int, spark_master: str | None = None) -> str:
    if engine != "auto":
        return engine
    if partitions < AUTO_SPARK_PARTITIONS or not spark_master or spark_master.startswith("local"):
        return "local"
    import importlib.util

    return "spark" if importlib.util.find_spec("pyspark") is not None else "local"


def partition_sizes(port: ClusterPort, topics: Sequence[str], broker_ids: Iterable[int]) -> dict[tuple[str, int], int]:
    """Size of each partition in bytes: its largest current replica on these brokers (DescribeLogDirs on
    a live cluster, ``size_bytes`` in a snapshot)."""
    wanted = set(topics)
    sizes: dict[tuple[str, int], int] = {}
    for replica, size in port.replica_sizes(broker_ids).items():
        if replica.topic in wanted:
            key = (replica.topic, replica.partition)
            sizes[key] = max(size, sizes.get(key, 0), 0)
    return sizes


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
    err: Output,
) -> GenerateResult:
    inputs = read_generate_inputs(port, topics_json, broker_list, rack_aware)
    topics, current, usable = inputs.topics, inputs.current, inputs.usable
    hosts = {b for info in current.values() for b in info.replicas}  # brokers gone from the cluster too
    sizes = partition_sizes(port, topics, [*(b.id for b in inputs.cluster_brokers), *sorted(hosts)])
    rows: list[Row] = [
        (tp.topic, tp.partition, tuple(info.replicas), sizes.get((tp.topic, tp.partition), 0))
        for tp, info in sorted(current.items())
    ]
    ctx = make_context([(b.id, b.rack) for b in usable], replication_factor, rows)
    used = choose_engine(engine, len(rows), spark_master)
    if used == "spark":
        plan = _plan_with_spark(port, topics, ctx, spark_master, spark_conf)
    else:
        plan = plan_balanced(rows, ctx)
    current_replicas = {tp: list(info.replicas) for tp, info in current.items()}
    proposal = {TopicPartition(t, p): replicas for (t, p), replicas in plan.items()}
    result = print_proposal(out, current_replicas, inputs.log_dirs, proposal)
    err(render_balance_summary(rows, plan, [b.id for b in usable], used))
    return result


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


def _human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(size) < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover


def balance_stats(
    rows: Sequence[Row], plan: Mapping[tuple[str, int], Sequence[int]]
) -> tuple[dict[str, Counter[int]], int, int, int]:
    """Per-broker replicas/leaders/bytes before and after, replicas and bytes moved, leaders changed."""
    stats: dict[str, Counter[int]] = {
        k: Counter() for k in ("replicas0", "replicas1", "leaders0", "leaders1", "bytes0", "bytes1")
    }
    moved = moved_bytes = leaders_changed = 0
    for topic, partition, before, size in rows:
        after = plan[(topic, partition)]
        stats["replicas0"].update(before)
        stats["replicas1"].update(after)
        for b in before:
            stats["bytes0"][b] += size
        for b in after:
            stats["bytes1"][b] += size
        if before:
            stats["leaders0"][before[0]] += 1
        if after:
            stats["leaders1"][after[0]] += 1
        added = len(set(after) - set(before))
        moved += added
        moved_bytes += added * size
        leaders_changed += bool(before and after and before[0] != after[0])
    return stats, moved, moved_bytes, leaders_changed


def render_balance_summary(
    rows: Sequence[Row], plan: Mapping[tuple[str, int], Sequence[int]], brokers: Sequence[int], engine: str
) -> str:
    stats, moved, moved_bytes, leaders_changed = balance_stats(rows, plan)
    total_bytes = sum(size * len(replicas) for _, _, replicas, size in rows)
    lines = [
        f"Balanced plan (engine {engine}): {moved} replica(s) moved, {_human(moved_bytes)} of "
        f"{_human(total_bytes)} copied, {leaders_changed} leader(s) changed, {len(rows)} partition(s).",
    ]
    shown = sorted(set(brokers) | {b for b in stats["replicas0"]})
    spread: Callable[[str], str] = lambda key: (  # noqa: E731
        f"{min(stats[key].get(b, 0) for b in brokers)}..{max(stats[key].get(b, 0) for b in brokers)}"
    )
    lines.append(
        f"Chosen brokers, min..max: replicas {spread('replicas0')} -> {spread('replicas1')}, "
        f"leaders {spread('leaders0')} -> {spread('leaders1')}, bytes "
        f"{_human(min(stats['bytes0'].get(b, 0) for b in brokers))}..{_human(max(stats['bytes0'].get(b, 0) for b in brokers))}"
        f" -> {_human(min(stats['bytes1'].get(b, 0) for b in brokers))}..{_human(max(stats['bytes1'].get(b, 0) for b in brokers))}"
    )
    lines.append(f"{'broker':>8} {'replicas':>17} {'leaders':>15} {'bytes':>25}")
    for b in shown:
        note = "" if b in brokers else "  (removed)"
        lines.append(
            f"{b:>8} {stats['replicas0'][b]:>7} -> {stats['replicas1'][b]:<6} "
            f"{stats['leaders0'][b]:>6} -> {stats['leaders1'][b]:<5} "
            f"{_human(stats['bytes0'][b]):>10} -> {_human(stats['bytes1'][b])}{note}"
        )
    return "\n".join(lines) + "\n"


def write_cluster_snapshot(port, path: str, topics_json: str | None, err: Output) -> None:
    from kreassign.formats import check_topic_duplicates, parse_topics_to_move_json
    from kreassign.snapshot import save_snapshot, snapshot_from_cluster

    topics = None
    if topics_json is not None:
        topics = parse_topics_to_move_json(topics_json)
        check_topic_duplicates(topics)
    snapshot = snapshot_from_cluster(port, topics)
    save_snapshot(snapshot, path)
    err(
        f"Wrote cluster snapshot {path}: {len(snapshot.brokers)} broker(s), {len(snapshot.topics)} topic(s), "
        f"{snapshot.partition_count} partition(s).\n"
    )
