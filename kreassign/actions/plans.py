"""--generate's other plans: ``--strategy leaders`` (leadership only, :mod:`kreassign.planning.leaders`),
``--replace-broker OLD=NEW`` (:mod:`kreassign.planning.replace`), and topic selection by pattern
(``--topics-regex``, ``--exclude-topics``) for every strategy. stdout has the Apache layout; the plan report
goes to stderr (the command's job)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from kreassign.actions.balanced import (
    BALANCED_ONLY,
    DEFAULT_MAX_DISK_USAGE,
    TRAFFIC_OPTIONS,
    check_volumes,
    left_behind,
    print_plan,
)
from kreassign.actions.common import Output
from kreassign.actions.generate import GenerateResult
from kreassign.cluster.port import ClusterPort, with_volumes
from kreassign.errors import CommandError, UsageError
from kreassign.formats import check_topic_duplicates, parse_topics_to_move_json
from kreassign.model import TopicColumns
from kreassign.planning.logdirs import choose_log_dirs
from kreassign.planning.quality import PlanQuality, measure_plan

INTERNAL_PREFIX = "__"
"""Topics whose names start with this (Kafka's own: ``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``) are selected by ``--topics-regex`` only when the pattern itself contains it."""


def compile_pattern(option: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"Invalid --{option} '{pattern}': {exc}") from None


def select_topics(
    port: ClusterPort, topics_json: str | None, regex: str | None, exclude: str | None
) -> tuple[str, list[str]]:
    """The topics to plan, as a topics-to-move JSON text (what the Apache code paths read) and as a list.

    ``topics_json`` (--topics-to-move-json-file, its duplicates an error as in the Apache tool) or ``regex``
    (--topics-regex: every topic of the cluster whose whole name matches, Python ``re.fullmatch``; names
    starting with ``__`` only when the pattern contains ``__``); then ``exclude`` (--exclude-topics, also a
    full match) drops topics from either. Raises CommandError when nothing is left."""
    excluded = compile_pattern("exclude-topics", exclude) if exclude is not None else None
    if regex is not None:
        pattern = compile_pattern("topics-regex", regex)
        internal_ok = INTERNAL_PREFIX in regex
        names = [t for t in port.list_topic_names() if internal_ok or not t.startswith(INTERNAL_PREFIX)]
        topics = [t for t in names if pattern.fullmatch(t)]
        if not topics:
            error = CommandError(f"--topics-regex '{regex}' matches no topic of the cluster")
            within = [t for t in names if pattern.search(t)]
            if within:  # the pattern is found inside names: the usual slip (Java's Pattern.matches semantics)
                shown = ", ".join(within[:3]) + (f" and {len(within) - 3} more" if len(within) > 3 else "")
                error.add_note(
                    f"--topics-regex must match the whole topic name; '{regex}' is found inside {shown}: "
                    f"to take every topic that contains it, write '.*{regex}.*'"
                )
            raise error
    else:
        assert topics_json is not None
        topics = parse_topics_to_move_json(topics_json)
        check_topic_duplicates(topics)
        if excluded is None:
            return topics_json, topics
    if excluded is not None:
        kept = [t for t in topics if not excluded.fullmatch(t)]
        if not kept:
            raise CommandError(f"--exclude-topics '{exclude}' leaves no topic to plan")
        topics = kept
    text = json.dumps({"topics": [{"topic": t} for t in topics], "version": 1})
    return text, topics


def _read(port: ClusterPort, topics_json: str) -> tuple[list[str], dict[str, TopicColumns], list, list]:
    from kreassign.actions.balanced import partition_sizes

    topics = parse_topics_to_move_json(topics_json)
    check_topic_duplicates(topics)
    current = port.describe_topic_columns(topics)
    brokers = port.describe_brokers()
    sizes = partition_sizes(port, current, [b.id for b in brokers])
    rows = []
    for name in sorted(current):
        topic = current[name]
        rows += [(name, p, tuple(r), s) for p, r, s in zip(topic.partitions, topic.replicas, sizes[name], strict=True)]
    return topics, current, rows, brokers


def generate_leaders(
    port: ClusterPort,
    topics_json: str,
    *,
    out: Output,
    sample_rates: float | None = None,
    traffic_tolerance: float | None = None,
) -> tuple[GenerateResult, PlanQuality]:
    """``--strategy leaders``: every partition keeps its replicas, reordered so that preferred leaders are
    balanced per broker and per topic. The report's brokers: those holding a replica of the topics. When the
    partitions' rates are known (sampled over ``sample_rates`` seconds, or recorded in a snapshot), the
    leaderships then change, counts kept, so that bytes out per broker come within ``traffic_tolerance`` of the
    mean (:func:`kreassign.planning.netbalance.balance_leadership_traffic`)."""
    from kreassign.actions.balanced import parse_traffic_tolerance, partition_rates
    from kreassign.planning.leaders import plan_leaders
    from kreassign.planning.netbalance import balance_leadership_traffic, known_rates
    from kreassign.planning.pipeline import BalanceRequest

    _topics, current, rows, _brokers = _read(port, topics_json)
    plan = plan_leaders(rows)
    holders = sorted({b for row in rows for b in row[2]})
    rates = partition_rates(port, BalanceRequest(topics_json, "", sample_rates=sample_rates), rows)
    traffic = None
    if known_rates(rates) and holders:
        tolerance = traffic_tolerance if traffic_tolerance is not None else parse_traffic_tolerance(None)
        traffic = balance_leadership_traffic(rows, plan, holders, rates, tolerance)
    quality = measure_plan(rows, plan, holders, minimum=(0, 0))
    return print_plan(out, current, plan), replace(quality, traffic=traffic)


def generate_replacement(
    port: ClusterPort, topics_json: str, replacements: str, *, live: bool, out: Output, err: Output
) -> tuple[GenerateResult, PlanQuality]:
    """``--replace-broker OLD=NEW[,...]``: each OLD's replicas go to its NEW in place; nothing else moves.
    On a live cluster (``live``) every NEW must be a broker of the cluster; on a snapshot an unknown NEW
    gets a warning (the snapshot may predate it). Rack changes that put two replicas of a partition in one
    rack are warned about on ``err``."""
    from kreassign.planning.replace import ReplaceError, parse_replacements, plan_replacement, rack_breaks

    try:
        pairs = parse_replacements(replacements)
    except ReplaceError as exc:
        raise UsageError(str(exc)) from None
    topics, current, rows, brokers = _read(port, topics_json)
    racks = {b.id: b.rack for b in brokers}
    unknown = [new for new in pairs.values() if new not in racks]
    if unknown and live:
        raise CommandError(
            f"--replace-broker: broker {unknown[0]} is not a broker of the cluster; start it first (no plan was written)"
        )
    for new in unknown:
        err(f"Warning: broker {new} is not in the snapshot; its rack is unknown.\n")
    try:
        plan = plan_replacement(rows, pairs)
    except ReplaceError as exc:
        raise CommandError(str(exc)) from None
    held = {b for row in rows for b in row[2]}
    for old in pairs:
        if old not in held:
            err(f"Warning: broker {old} holds no replica of the listed topics; nothing to replace.\n")
    for gap in rack_breaks(rows, pairs, racks):
        err(
            f"Warning: broker {gap.new} (rack {gap.new_rack}) replaces broker {gap.old} (rack {gap.old_rack}): "
            f"{gap.partitions} partition(s) get two replicas in rack {gap.new_rack}.\n"
        )
    minimum_moves = sum(1 for row in rows for r in row[2] if r in pairs)  # every retired replica, no more
    minimum_bytes = sum(row[3] for row in rows for r in row[2] if r in pairs)
    chosen = sorted((held - set(pairs)) | set(pairs.values()))
    quality = measure_plan(rows, plan, chosen, minimum=(minimum_moves, minimum_bytes))
    # each NEW with log dirs on several volumes: a dir per replica it takes (--max-disk-usage's default bound)
    targets = sorted(set(pairs.values()) & racks.keys())
    usage = with_volumes(port.describe_log_dirs(targets))
    choice = choose_log_dirs(rows, plan, usage, targets, DEFAULT_MAX_DISK_USAGE, relieve=False)  # nothing else moves
    check_volumes(choice, DEFAULT_MAX_DISK_USAGE)
    behind = left_behind(port, topics, [old for old in pairs if old in held])
    return print_plan(out, current, plan, choice), replace(quality, log_dirs=choice, left_behind=behind)


def check_plan_options(args) -> None:
    """Options of the balanced strategy are errors with the leaders plan and with --replace-broker."""
    what = "--replace-broker" if args.has("replace-broker") else "--strategy leaders"
    if args.has("replace-broker") and args.has("strategy"):
        raise UsageError("--replace-broker is a plan of its own: don't give --strategy with it")
    traffic = () if what == "--strategy leaders" else TRAFFIC_OPTIONS  # the leaders plan reads them
    for name in ("broker-list", *BALANCED_ONLY, *traffic):
        if args.has(name):
            reason = " (replica sets do not change)" if what == "--strategy leaders" else ""
            raise UsageError(f"--{name} can't be used with {what}{reason}")
    if args.has("engine") and args.value("engine") == "spark":
        raise UsageError(f"--engine spark can't be used with {what}")


def plan_title(strategy: str) -> str:
    return {"leaders": "Leadership plan", "replace-broker": "Broker replacement"}.get(strategy, "Balanced plan")
