"""--generate: the Apache placement (reproducible with --seed), or --strategy balanced."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode
from kreassign.errors import CommandError


def run(inv: Invocation) -> int:
    from kreassign.documents import dump, generate_document

    if inv.args.has("strategy") and inv.args.value("strategy") != "apache":
        result, quality, engine = _balanced(inv)
        inv.err(render_plan_report(quality, engine, terminal=inv.err_terminal))
        if inv.json_mode:
            from kreassign.documents import plan_report

            report = plan_report(quality, engine)
            inv.out(dump(generate_document(result.current_json, result.proposed_json, report)))
        return ExitCode.OK
    result = _apache(inv)
    if inv.json_mode:
        inv.out(dump(generate_document(result.current_json, result.proposed_json)))
    return ExitCode.OK


def render_plan_report(quality, engine: str, terminal: bool) -> str:
    """The balanced plan report (stderr): rich bars on a terminal, else plain text."""
    from kreassign.cli import render_plan_report as render

    if terminal:
        from kreassign.cli.tty import columns

        return render.render_plan_report_rich(quality, engine, width=columns(2))  # stderr's terminal, not stdout's
    return render.render_plan_report_text(quality, engine)


def _apache(inv: Invocation):
    from kreassign.actions.balanced import check_apache_strategy_options
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.generate import generate_assignment

    args = inv.args
    check_apache_strategy_options(args)
    path = args.value("topics-to-move-json-file")
    topics = read_input_file(path)
    broker_list = args.value("broker-list")
    seed = args.long_value("seed")
    rack_aware = not args.has("disable-rack-aware")
    with naming_input_file("--topics-to-move-json-file", path):
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
    from kreassign.actions.common import naming_input_file, read_input_file

    args = inv.args
    balanced.check_choice("strategy", str(args.value("strategy")), balanced.STRATEGIES)
    path = args.value("topics-to-move-json-file")
    text = read_input_file(path)
    with naming_input_file("--topics-to-move-json-file", path):
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
    args = inv.args
    return balanced.generate_balanced(
        inv.port,
        text,
        args.value("broker-list"),
        rack_aware=not args.has("disable-rack-aware"),
        replication_factor=args.long_value("replication-factor"),
        engine=balanced.check_choice("engine", str(args.value("engine")), balanced.ENGINES),
        spark_master=args.value("spark-master"),
        spark_conf=balanced.parse_spark_conf([v for v in args.values.get("spark-conf", []) if v is not None]),
        out=inv.text_out,
        max_disk_usage=balanced.parse_max_disk_usage(args.value("max-disk-usage")),
        move_budget=balanced.parse_move_budget(args.value("move-budget")),
        texts=inv.json_mode,
    )
