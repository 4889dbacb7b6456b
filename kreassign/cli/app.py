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
from kreassign.errors import CommandError, KreassignError, TerseError, UsageError

EXIT_OK = 0
EXIT_ERROR = 1


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def run(argv: list[str], out: Callable[[str], None] = _stdout, err: Callable[[str], None] = _stderr) -> int:
    try:
        request = validate(argv)
    except OptionSyntaxError as exc:
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

    port = None
    try:
        port = open_cluster(request.args)
        run_action(request.kind, request.args, port, out)
        return EXIT_OK
    except TerseError as exc:
        out(f"{exc.message}\n")
    except KreassignError as exc:
        out(f"Error: {exc.message}\n")
    except KeyboardInterrupt:
        err("Interrupted.\n")
        return 130
    except Exception as exc:  # an unexpected failure still ends with one line, never a traceback
        out(f"Error: {exc}\n")
        if os.environ.get("KREASSIGN_DEBUG"):
            err(traceback.format_exc())
    finally:
        if port is not None:
            port.close()
    return EXIT_ERROR


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


def run_action(action: str, args: ParsedArgs, port, out: Callable[[str], None]) -> None:
    """Reads inputs in the order the Apache tool's handleAction does, so the first error matches."""
    from kreassign import formats
    from kreassign.actions.common import read_input_file

    if action == "verify":
        from kreassign.actions.verify import verify_assignment

        text = read_input_file(args.value("reassignment-json-file"))
        plan = formats.parse_reassignment_json(text)
        verify_assignment(port, plan, args.has("preserve-throttles"), out)
    elif action == "generate" and args.has("strategy") and args.value("strategy") != "apache":
        from kreassign.actions import balanced

        balanced.check_choice("strategy", str(args.value("strategy")), balanced.STRATEGIES)
        text = read_input_file(args.value("topics-to-move-json-file"))
        balanced.generate_balanced(
            port,
            text,
            args.value("broker-list"),
            rack_aware=not args.has("disable-rack-aware"),
            replication_factor=args.long_value("replication-factor"),
            engine=balanced.check_choice("engine", str(args.value("engine")), balanced.ENGINES),
            spark_master=args.value("spark-master"),
            spark_conf=balanced.parse_spark_conf([v for v in args.values.get("spark-conf", []) if v is not None]),
            out=out,
            err=_stderr,
        )
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

        text = read_input_file(args.value("topics-to-move-json-file"))
        broker_list = args.value("broker-list")
        seed = args.long_value("seed")
        generate_assignment(port, text, broker_list, rack_aware=not args.has("disable-rack-aware"), seed=seed, out=out)
    elif action == "execute":
        from kreassign.actions.execute import execute_assignment

        additional = args.has("additional")
        text = read_input_file(args.value("reassignment-json-file"))
        throttle = args.long_value("throttle")
        log_dir_throttle = args.long_value("replica-alter-log-dirs-throttle")
        timeout_ms = args.long_value("timeout")
        plan = formats.parse_reassignment_json(text)
        formats.validate_execute_plan(plan)
        execute_assignment(
            port,
            plan,
            additional=additional,
            inter_broker_throttle=throttle,
            log_dir_throttle=log_dir_throttle,
            timeout_ms=timeout_ms,
            allow_replication_factor_change=not args.has("disallow-replication-factor-change"),
            out=out,
        )
    elif action == "cancel":
        from kreassign.actions.cancel import cancel_assignment

        text = read_input_file(args.value("reassignment-json-file"))
        preserve = args.has("preserve-throttles")
        timeout_ms = args.long_value("timeout")
        plan = formats.parse_reassignment_json(text)
        cancel_assignment(port, plan, preserve_throttles=preserve, timeout_ms=timeout_ms, out=out)
    elif action == "list":
        from kreassign.actions.listing import list_reassignments

        list_reassignments(port, out)
    else:  # pragma: no cover - validate() only returns known actions
        raise CommandError("Unsupported action.")
