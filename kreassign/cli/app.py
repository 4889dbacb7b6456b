"""The command: validates argv with the Apache rules, runs one action, maps errors to exit codes.

stdout carries exactly the Apache tool's text; everything else (warnings, help, hints) goes to stderr.
Heavy modules (Kafka clients, rich) are imported only once an action needs them.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from kreassign.cli.argv import OptionSyntaxError, ParsedArgs, validate
from kreassign.cli.spec import BATCHED_OPTIONS
from kreassign.errors import CommandError, KreassignError, TerseError, UsageError, ZooKeeperUsageError

EXIT_OK = 0
EXIT_ERROR = 1
# --fail-if-incomplete (--verify, --progress): opt-in statuses for scripts, instead of grepping stdout.
EXIT_IN_PROGRESS = 2  # moves still running, or a replica behind
EXIT_NOT_AT_TARGET = 3  # a partition neither moving nor at its target (unknown topic/partition/broker too)
OUTCOME_EXIT_CODES = {"complete": EXIT_OK, "in_progress": EXIT_IN_PROGRESS, "not_at_target": EXIT_NOT_AT_TARGET}


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def run(argv: list[str], out: Callable[[str], None] = _stdout, err: Callable[[str], None] = _stderr) -> int:
    try:
        request = validate(argv)
    except (OptionSyntaxError, ZooKeeperUsageError) as exc:
        err(f"{exc.message}\n")
        return EXIT_ERROR
    except UsageError as exc:
        err(f"{exc.message}\nRun with --help for the list of options.\n")
        return EXIT_ERROR

    if request.kind == "help":
        if not argv:
            err(
                "This tool helps to move topic partitions between replicas.\nRun with --help for the list of options.\n"
            )
            return EXIT_ERROR
        from kreassign.cli.typer_app import print_help

        print_help()
        return EXIT_OK
    if request.kind == "version":
        from kreassign import KAFKA_COMPAT_VERSION, __version__

        out(f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)\n")
        return EXIT_OK

    json_mode = wants_json(request.args)
    port = None
    # Passwords of --command-config never reach a terminal, a log or a traceback, whatever the error.
    configs: list = []  # the port, once open: it knows the secrets of its client config (some made on first use)
    terminal = out is _stdout and sys.stdout.isatty()
    out, err = _scrubbed(out, configs), _scrubbed(err, configs)
    try:
        if request.args.has("zookeeper"):  # the deprecated legacy path
            from kreassign.zookeeper.command import open_zookeeper, run_zookeeper_action

            port = open_zookeeper(request.args, err)
            run_zookeeper_action(request.kind, request.args, port, out)
            return EXIT_OK
        port = open_cluster(request.args)
        configs.append(port)
        return run_action(request.kind, request.args, port, out, terminal=terminal)
    except TerseError as exc:
        _report_error(exc.message, exc.message, exc, json_mode, out, err)
    except KreassignError as exc:
        _report_error(f"Error: {exc.message}", exc.message, exc, json_mode, out, err)
    except KeyboardInterrupt:
        err("Interrupted.\n")
        return 130
    except Exception as exc:  # an unexpected failure still ends with one line, never a traceback
        _report_error(f"Error: {exc}", str(exc), exc, json_mode, out, err)
        if os.environ.get("KREASSIGN_DEBUG"):
            err(traceback.format_exc())
    finally:
        if port is not None:
            port.close()
    return EXIT_ERROR


def wants_json(args: ParsedArgs) -> bool:
    return args.values.get("output", [None])[-1:] == ["json"]


def _report_error(
    line: str, message: str, exc: BaseException, json_mode: bool, out: Callable[[str], None], err: Callable[[str], None]
) -> None:
    """Text: the Apache line on stdout, kreassign's hints (exception notes) on stderr.
    --output json: one error document on stdout (message and hints), nothing on stderr."""
    hints = [str(note) for note in getattr(exc, "__notes__", ())]
    if json_mode:
        from kreassign.documents import dump, error_document

        out(dump(error_document(message, hints)))
        return
    out(f"{line}\n")
    for hint in hints:
        err(f"kreassign: {hint}\n")


def _scrubbed(write: Callable[[str], None], configs: list) -> Callable[[str], None]:
    """``write`` with every secret of the client config (in ``configs`` once read) replaced by ``****``."""

    def scrubbed(text: str) -> None:
        for config in configs:
            for secret in config.secrets():
                text = text.replace(secret, "****")
        write(text)

    return scrubbed


def open_cluster(args: ParsedArgs):
    """The Kafka adapter, configured like the Apache tool's Admin client (no connection yet)."""
    from kreassign.cluster.bootstrap import parse_bootstrap_addresses
    from kreassign.cluster.client_config import load_client_config
    from kreassign.cluster.kafka import KafkaCluster

    if args.has("cluster-snapshot-file"):  # kreassign: an offline snapshot instead of a cluster
        from kreassign.snapshot import SnapshotCluster

        return SnapshotCluster.open(str(args.value("cluster-snapshot-file")))
    config = load_client_config(args.value("command-config")) if args.has("command-config") else None
    if args.has("bootstrap-controller"):
        controllers = args.value("bootstrap-controller")
        parse_bootstrap_addresses(controllers)
        return KafkaCluster(bootstrap_controllers=controllers, client_config=config)
    servers = args.value("bootstrap-server")
    parse_bootstrap_addresses(servers)
    return KafkaCluster(bootstrap_servers=servers, client_config=config)


def run_action(action: str, args: ParsedArgs, port, out: Callable[[str], None], terminal: bool = False) -> int:
    """Reads inputs in the order the Apache tool's handleAction does, so the first error matches.
    Returns the exit status (0 unless ``--fail-if-incomplete`` asks for 2 or 3, or a batched run ends
    otherwise than completed)."""
    from kreassign import documents, formats
    from kreassign.actions.common import read_input_file

    json_mode = wants_json(args)
    text_out = _discard if json_mode else out
    if action == "verify":
        from kreassign.actions.verify import verify_assignment
        from kreassign.planning.progress import verify_outcome

        text = read_input_file(args.value("reassignment-json-file"))
        plan = formats.parse_reassignment_json(text)
        preserve = args.has("preserve-throttles")
        result = verify_assignment(port, plan, preserve, _discard if json_mode else out)
        outcome = verify_outcome(result.partitions, result.moves)
        if json_mode:
            from kreassign.cli.render_progress import render_verify_json

            out(render_verify_json(result, outcome, preserve))
        return _outcome_status(outcome, args)
    elif action == "progress":
        from kreassign.actions.progress import read_progress

        text = read_input_file(args.value("reassignment-json-file"))
        plan = formats.parse_reassignment_json(text)
        report = read_progress(port, plan)
        out(render_progress(report, json_mode, terminal=terminal))
        return _outcome_status(report.outcome, args)
    elif action == "generate" and args.has("strategy") and args.value("strategy") != "apache":
        from kreassign.actions import balanced

        balanced.check_choice("strategy", str(args.value("strategy")), balanced.STRATEGIES)
        text = read_input_file(args.value("topics-to-move-json-file"))
        result = balanced.generate_balanced(
            port,
            text,
            args.value("broker-list"),
            rack_aware=not args.has("disable-rack-aware"),
            replication_factor=args.long_value("replication-factor"),
            engine=balanced.check_choice("engine", str(args.value("engine")), balanced.ENGINES),
            spark_master=args.value("spark-master"),
            spark_conf=balanced.parse_spark_conf([v for v in args.values.get("spark-conf", []) if v is not None]),
            out=text_out,
            err=_stderr,
        )
        if json_mode:
            out(documents.dump(documents.generate_document(result.current_json, result.proposed_json)))
    elif action == "write-cluster-snapshot":
        from kreassign.actions.balanced import write_cluster_snapshot

        topics = args.value("topics-to-move-json-file")
        write_cluster_snapshot(
            port, str(args.value(action)), read_input_file(topics) if topics is not None else None, _stderr
        )
    elif action == "generate":
        from kreassign.actions.balanced import check_apache_strategy_options
        from kreassign.actions.generate import generate_assignment

        check_apache_strategy_options(args)

        topics = read_input_file(args.value("topics-to-move-json-file"))
        broker_list = args.value("broker-list")
        seed = args.long_value("seed")
        result = generate_assignment(
            port, topics, broker_list, rack_aware=not args.has("disable-rack-aware"), seed=seed, out=text_out
        )
        if json_mode:
            out(documents.dump(documents.generate_document(result.current_json, result.proposed_json)))
    elif action == "execute":
        from kreassign.actions.execute import execute_assignment

        additional = args.has("additional")
        plan_text = read_input_file(args.value("reassignment-json-file"))
        throttle = args.long_value("throttle")
        log_dir_throttle = args.long_value("replica-alter-log-dirs-throttle")
        timeout_ms = args.long_value("timeout")
        plan = formats.parse_reassignment_json(plan_text)
        formats.validate_execute_plan(plan)
        if any(args.has(name) for name in (*BATCHED_OPTIONS, "dry-run", "order", "adaptive")):
            return run_batched(args, port, plan, throttle, log_dir_throttle, out)
        result = execute_assignment(
            port,
            plan,
            additional=additional,
            inter_broker_throttle=throttle,
            log_dir_throttle=log_dir_throttle,
            timeout_ms=timeout_ms,
            allow_replication_factor_change=not args.has("disallow-replication-factor-change"),
            out=text_out,
        )
        if json_mode:
            document = documents.execute_document(
                result.rollback_json,
                result.started,
                result.inter_broker_throttle,
                result.log_dir_throttle,
                result.log_dir_moves,
            )
            out(documents.dump(document))
    elif action == "cancel":
        from kreassign.actions.cancel import cancel_assignment

        plan_text = read_input_file(args.value("reassignment-json-file"))
        preserve = args.has("preserve-throttles")
        timeout_ms = args.long_value("timeout")
        plan = formats.parse_reassignment_json(plan_text)
        from kreassign.actions.batched import cancel_batched

        batched = cancel_batched(port, plan, args.value("journal-file"), text_out)
        if batched is not None:
            if json_mode:
                out(documents.dump(batched.document()))
        else:
            cancelled, stopped = cancel_assignment(
                port, plan, preserve_throttles=preserve, timeout_ms=timeout_ms, out=text_out
            )
            if json_mode:
                out(documents.dump(documents.cancel_document(cancelled, stopped, not preserve)))
    elif action == "list":
        if json_mode:
            out(documents.dump(documents.list_document(port.list_reassignments())))
        else:
            from kreassign.actions.listing import list_reassignments

            list_reassignments(port, out)
    else:  # pragma: no cover - validate() only returns known actions
        raise CommandError("Unsupported action.")
    return EXIT_OK


def _discard(_text: str) -> None:
    """Where the Apache text goes with --output json."""


EXIT_CANCELLED = 4
_EXIT_BY_OUTCOME = {"completed": EXIT_OK, "failed": EXIT_ERROR, "cancelled": EXIT_CANCELLED}


def _positive(args: ParsedArgs, name: str) -> int | None:
    value = args.long_value(name)
    if value is not None and value < 1:
        raise CommandError(f"--{name} must be at least 1, not {value}")
    return value


def run_batched(args: ParsedArgs, port, plan, throttle: int, log_dir_throttle: int, out: Callable[[str], None]) -> int:
    """--execute with --max-*-movements or --dry-run: the KIP-435 executor, attached until the plan is done."""
    import signal

    from kreassign.actions.batched import BatchedOptions, execute_batched
    from kreassign.cli.live import make_reporter
    from kreassign.execution.executor import Interrupted, signals_interrupt
    from kreassign.planning.steps import Limits

    limits = Limits(
        partitions=_positive(args, "max-partition-movements"),
        replicas=_positive(args, "max-replica-movements"),
        leaders=_positive(args, "max-leader-movements"),
        brokers=_positive(args, "max-broker-movements"),
    )
    from kreassign.actions.balanced import check_choice
    from kreassign.execution.executor import ORDERS

    order = check_choice("order", str(args.value("order") or "plan"), ORDERS)
    poll_ms = _positive(args, "poll-interval-ms")
    options = BatchedOptions(
        limits=limits,
        throttle=throttle,
        log_dir_throttle=log_dir_throttle,
        additional=args.has("additional"),
        allow_replication_factor_change=not args.has("disallow-replication-factor-change"),
        journal_path=args.value("journal-file"),
        order=order,
        adaptive=args.has("adaptive"),
        poll_interval=(poll_ms or 1000) / 1000.0,
        stall_timeout=(_positive(args, "stall-timeout-ms") or 300000) / 1000.0,
        dry_run=args.has("dry-run"),
        output=args.value("output") or "text",
    )
    reporter = make_reporter()
    try:
        with signals_interrupt():
            outcome = execute_batched(port, plan, options, out, reporter, on_start=reporter.start)
    except Interrupted as exc:  # before the executor started, or after it had finished and cleaned up
        reporter.stop()
        sys.stderr.write(f"Interrupted by {exc}.\n")
        return 128 + exc.signum
    finally:
        reporter.stop()
    if outcome is None:
        return EXIT_OK
    if outcome.status == "interrupted":
        return 128 + (signal.SIGTERM if "SIGTERM" in outcome.message else signal.SIGINT)
    return _EXIT_BY_OUTCOME.get(outcome.status, EXIT_ERROR)


def _outcome_status(outcome: str, args: ParsedArgs) -> int:
    return OUTCOME_EXIT_CODES[outcome] if args.has("fail-if-incomplete") else EXIT_OK


def render_progress(report, json_mode: bool, terminal: bool) -> str:
    """JSON with ``--output json``; rich on a terminal; else a plain tabulate table."""
    from kreassign.cli import render_progress as render

    if json_mode:
        return render.render_progress_json(report)
    if terminal:
        import shutil

        return render.render_progress_rich(report, width=shutil.get_terminal_size().columns)
    return render.render_progress_table(report)
