"""The deprecated --zookeeper path: --generate, --execute (with --throttle) and --verify through ZooKeeper,
reading inputs in Kafka 2.8's order so that the first error matches."""

from __future__ import annotations

from kreassign.cli.argv import ParsedArgs
from kreassign.cli.commands import Invocation, Output
from kreassign.cli.exit_codes import ExitCode


def open_port(args: ParsedArgs, out: Output, err: Output):
    """Kafka 2.8.2's deprecation line on stdout (kreassign's advice on stderr), then the ZooKeeper store
    (closed by the caller)."""
    from kreassign.zookeeper.command import open_zookeeper

    return open_zookeeper(args, out, err)


def run(inv: Invocation) -> int:
    # argv validation lets only these three actions through with --zookeeper
    {"verify": _verify, "generate": _generate, "execute": _execute}[inv.action](inv)
    return ExitCode.OK


def _verify(inv: Invocation) -> None:
    from kreassign.actions.common import read_input_file
    from kreassign.zookeeper import legacy
    from kreassign.zookeeper.command import parse_plan

    plan = parse_plan(read_input_file(inv.args.value("reassignment-json-file")))
    legacy.verify_assignment(inv.port, plan, preserve_throttles=inv.args.has("preserve-throttles"), out=inv.out)


def _generate(inv: Invocation) -> None:
    from kreassign.actions.common import read_input_file
    from kreassign.zookeeper import legacy

    args = inv.args
    text = read_input_file(args.value("topics-to-move-json-file"))
    legacy.generate_assignment(
        inv.port,
        text,
        args.value("broker-list"),
        rack_aware=not args.has("disable-rack-aware"),
        seed=args.long_value("seed"),
        out=inv.out,
    )


def _execute(inv: Invocation) -> None:
    from kreassign.actions.common import read_input_file
    from kreassign.zookeeper import legacy
    from kreassign.zookeeper.command import parse_plan

    text = read_input_file(inv.args.value("reassignment-json-file"))
    throttle = inv.args.long_value("throttle")
    legacy.execute_assignment(inv.port, parse_plan(text), throttle=throttle, out=inv.out)
