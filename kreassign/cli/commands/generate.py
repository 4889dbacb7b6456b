"""--generate: the Apache placement (reproducible with --seed), --strategy balanced, --strategy leaders or
--replace-broker; topics from --topics-to-move-json-file or --topics-regex, less --exclude-topics."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode
from kreassign.errors import CommandError


def run(inv: Invocation) -> int:
    from kreassign.documents import dump, generate_document

    args = inv.args
    if args.has("replace-broker"):
        strategy = "replace-broker"
    elif args.has("strategy"):
        from kreassign.actions.balanced import STRATEGIES, check_choice

        strategy = check_choice("strategy", str(args.value("strategy")), STRATEGIES)
    else:
        strategy = "apache"
    if strategy == "apache":
        result = _apache(inv)
        if inv.json_mode:
            inv.out(dump(generate_document(result.current_json, result.proposed_json)))
        return ExitCode.OK
    if strategy == "balanced":
        result, quality, engine = _balanced(inv)
    else:
        result, quality = _other_plan(inv, strategy)
        engine = "local"
    inv.err(render_plan_report(quality, engine, terminal=inv.err_terminal, strategy=strategy))
    if inv.json_mode:
        from kreassign.documents import plan_report

        report = plan_report(quality, engine, strategy)
        inv.out(dump(generate_document(result.current_json, result.proposed_json, report)))
    return ExitCode.OK


def render_plan_report(quality, engine: str, terminal: bool, strategy: str = "balanced") -> str:
    """The plan report (stderr): rich bars on a terminal, else plain text."""
    from kreassign.actions.plans import plan_title
    from kreassign.cli import render_plan_report as render

    title = plan_title(strategy)
    if terminal:
        from kreassign.cli.tty import columns

        # stderr's terminal, not stdout's
        return render.render_plan_report_rich(quality, engine, width=columns(2), title=title)
    return render.render_plan_report_text(quality, engine, title=title)


def _naming_topics_file(path: str | None):
    """Errors about the topics file's content name it (none with --topics-regex)."""
    from contextlib import nullcontext

    from kreassign.actions.common import naming_input_file

    return nullcontext() if path is None else naming_input_file("--topics-to-move-json-file", path)


def _topics_text(inv: Invocation) -> str | None:
    """The topics-to-move JSON text: the file's as it is (the Apache path), or the topics chosen by
    --topics-regex and --exclude-topics."""
    from kreassign.actions.common import read_input_file

    args = inv.args
    text = None
    if args.has("topics-to-move-json-file"):
        text = read_input_file(args.value("topics-to-move-json-file"))
    if not args.has("topics-regex") and not args.has("exclude-topics"):
        return text
    from kreassign.actions.plans import select_topics

    with _naming_topics_file(args.value("topics-to-move-json-file")):
        return select_topics(inv.port, text, args.value("topics-regex"), args.value("exclude-topics"))[0]


def _apache(inv: Invocation):
    from kreassign.actions.balanced import check_apache_strategy_options
    from kreassign.actions.generate import generate_assignment

    args = inv.args
    check_apache_strategy_options(args)
    path = args.value("topics-to-move-json-file")
    topics = _topics_text(inv)
    broker_list = args.value("broker-list")
    seed = args.long_value("seed")
    rack_aware = not args.has("disable-rack-aware")
    with _naming_topics_file(path):
        result = generate_assignment(inv.port, topics, broker_list, rack_aware=rack_aware, seed=seed, out=inv.text_out)
    warn_unknown_brokers(inv, result.unknown_brokers)
    return result


def warn_unknown_brokers(inv: Invocation, unknown: tuple[int, ...]) -> None:
    if unknown:
        ids = ", ".join(map(str, unknown))
        inv.err(
            f"kreassign: warning: --broker-list names broker(s) {ids} that the cluster does not have; the "
            "proposal leaves them out (as the Apache tool does silently).\n"
        )


def _balanced(inv: Invocation):
    from kreassign.actions import balanced

    args = inv.args
    path = args.value("topics-to-move-json-file")
    text = _topics_text(inv)
    with _naming_topics_file(path):
        try:
            generated = _generate_balanced(inv, balanced, text)
        except CommandError as error:
            if "cannot be reached" in error.message:  # too few brokers: were some of the list unknown?
                _note_unknown_brokers(inv, error)
            raise
    warn_unknown_brokers(inv, _unknown_brokers(inv)[0])
    return generated


def _unknown_brokers(inv: Invocation):
    """(ids of --broker-list the cluster does not have, the cluster's brokers); a snapshot's from its head."""
    from kreassign.actions.generate import unknown_broker_ids
    from kreassign.formats import parse_broker_list
    from kreassign.snapshot import SnapshotCluster

    port = inv.port.brokers_only() if isinstance(inv.port, SnapshotCluster) else inv.port
    brokers = port.describe_brokers()
    return unknown_broker_ids(parse_broker_list(inv.args.value("broker-list")), brokers), brokers


def _note_unknown_brokers(inv: Invocation, error: BaseException) -> None:
    from kreassign.actions.generate import note_unknown_brokers

    try:
        unknown, brokers = _unknown_brokers(inv)
    except Exception:  # the original error is what counts
        return
    note_unknown_brokers(error, unknown, brokers)


def _generate_balanced(inv: Invocation, balanced, text: str):
    from kreassign.cli.commands.execute import sampling_window
    from kreassign.planning.pipeline import BalanceRequest

    args = inv.args
    request = BalanceRequest(
        text,
        args.value("broker-list"),
        rack_aware=not args.has("disable-rack-aware"),
        replication_factor=args.long_value("replication-factor"),
        engine=balanced.check_choice("engine", str(args.value("engine")), balanced.ENGINES),
        spark_master=args.value("spark-master"),
        spark_conf=balanced.parse_spark_conf([v for v in args.values.get("spark-conf", []) if v is not None]),
        max_disk_usage=balanced.parse_max_disk_usage(args.value("max-disk-usage")),
        move_budget=balanced.parse_move_budget(args.value("move-budget")),
        bytes_tolerance=balanced.parse_bytes_tolerance(args.value("bytes-tolerance")),
        traffic_tolerance=balanced.parse_traffic_tolerance(args.value("traffic-tolerance")),
        sample_rates=sampling_window(inv),
        texts=inv.json_mode,
    )
    from kreassign.actions.balanced_file import generate

    return generate(inv.port, request, inv.text_out)


def _other_plan(inv: Invocation, strategy: str):
    from kreassign.actions import plans
    from kreassign.actions.balanced import ENGINES, check_choice

    args = inv.args
    plans.check_plan_options(args)
    check_choice("engine", str(args.value("engine")), ENGINES)
    if strategy == "replace-broker":
        from kreassign.planning.replace import ReplaceError, parse_replacements

        try:  # a bad OLD=NEW list is reported before the cluster is read
            parse_replacements(str(args.value("replace-broker")))
        except ReplaceError as exc:
            from kreassign.errors import UsageError

            raise UsageError(str(exc)) from None
    text = _topics_text(inv)
    with _naming_topics_file(args.value("topics-to-move-json-file")):
        if strategy == "leaders":
            from kreassign.actions.balanced import parse_traffic_tolerance
            from kreassign.cli.commands.execute import sampling_window

            return plans.generate_leaders(
                inv.port,
                text,
                out=inv.text_out,
                sample_rates=sampling_window(inv),
                traffic_tolerance=parse_traffic_tolerance(args.value("traffic-tolerance")),
            )
        from kreassign.snapshot import SnapshotCluster

        live = not isinstance(inv.port, SnapshotCluster)
        return plans.generate_replacement(
            inv.port, text, str(args.value("replace-broker")), live=live, out=inv.text_out, err=inv.err
        )
