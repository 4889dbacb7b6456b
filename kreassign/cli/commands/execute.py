"""--execute: the Apache reassignment, or the batched executor (KIP-435) with --max-*-movements or --dry-run. The
options become one request (``ExecuteRequest``), built here once and handed to the actions once."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode
from kreassign.cli.spec import BATCHED_OPTIONS


def run(inv: Invocation) -> int:
    request = build_request(inv)
    if request.batched:
        from kreassign.cli.commands.batched import run_batched

        return run_batched(inv, request)
    from kreassign.actions.execute import execute_apache_form

    result = execute_apache_form(inv.port, request, inv.text_out, inv.notes)
    if inv.json_mode:
        from kreassign.documents import dump, execute_document

        document = execute_document(
            result.rollback_json,
            result.started,
            result.inter_broker_throttle,
            result.log_dir_throttle,
            result.log_dir_moves,
            result.handed,
        )
        inv.out(dump(document))
    return ExitCode.OK


def build_request(inv: Invocation):
    """Reads inputs in the order the Apache tool's handleAction does, so that the first error matches; then
    kreassign's own options, each checked once."""
    from kreassign import formats
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.execute_request import ExecuteRequest

    args = inv.args
    path = args.value("reassignment-json-file")
    plan_text = read_input_file(path)
    auto = args.value("throttle") == "auto"  # --throttle auto: batched runs only (checked with the options)
    throttle = -1 if auto else args.long_value("throttle")
    log_dir_throttle = args.long_value("replica-alter-log-dirs-throttle")
    timeout_ms = args.long_value("timeout")
    with naming_input_file("--reassignment-json-file", path, plan_text):
        plan = formats.parse_reassignment_json(plan_text)
        formats.validate_execute_plan(plan)
    warn_low_throttles(inv, throttle=throttle, log_dir_throttle=log_dir_throttle)
    batched = any(args.has(name) for name in (*BATCHED_OPTIONS, "dry-run", "order", "adaptive"))
    common = {
        "plan": plan,
        "plan_file": path,
        "additional": args.has("additional"),
        "throttle": throttle,
        "log_dir_throttle": log_dir_throttle,
        "timeout_ms": timeout_ms,
        "allow_replication_factor_change": not args.has("disallow-replication-factor-change"),
        "sample_window": sampling_window(inv),
        "allow_slow_moves": args.has("allow-slow-moves"),
    }
    if not batched:
        return ExecuteRequest(batched=False, **common)
    from kreassign.actions.balanced import check_choice
    from kreassign.execution.executor import ORDERS
    from kreassign.planning.steps import Limits

    limits = Limits(
        partitions=_positive(inv, "max-partition-movements"),
        replicas=_positive(inv, "max-replica-movements"),
        leaders=_positive(inv, "max-leader-movements"),
        brokers=_positive(inv, "max-broker-movements"),
    )
    poll_ms = _positive(inv, "poll-interval-ms")
    return ExecuteRequest(
        batched=True,
        **common,
        auto=auto_request(inv) if auto and not args.has("dry-run") else None,
        limits=limits,
        journal_path=args.value("journal-file"),
        order=check_choice("order", str(args.value("order") or "plan"), ORDERS),
        adaptive=args.has("adaptive"),
        poll_interval=(poll_ms or 1000) / 1000.0,
        stall_timeout=(_positive(inv, "stall-timeout-ms") or 300000) / 1000.0,
        dry_run=args.has("dry-run"),
        output=args.value("output") or "text",
    )


def _positive(inv: Invocation, name: str) -> int | None:
    from kreassign.errors import CommandError

    value = inv.args.long_value(name)
    if value is not None and value < 1:
        raise CommandError(f"--{name} must be at least 1, not {value}")
    return value


def auto_request(inv: Invocation):
    """``--throttle auto``: --broker-capacity for every broker, or the capacities of --broker-capacity-file (a broker
    of the plan it does not name is refused once the plan's brokers are known), and --max-utilisation."""
    from kreassign.actions.common import read_input_file
    from kreassign.actions.execute_request import AutoThrottleRequest
    from kreassign.cli.argv import max_utilisation
    from kreassign.errors import UsageError
    from kreassign.planning.headroom import parse_capacities

    args = inv.args
    ceiling = max_utilisation(args.value("max-utilisation"))
    if args.has("broker-capacity"):
        return AutoThrottleRequest(capacity=float(args.long_value("broker-capacity") or 0), max_utilisation=ceiling)
    path = args.value("broker-capacity-file")
    try:
        found = parse_capacities(read_input_file(path))
    except ValueError as exc:
        raise UsageError(f"--broker-capacity-file {path}: {exc}") from None
    return AutoThrottleRequest(capacities=found, capacity_file=path, max_utilisation=ceiling)


#: the help's "at least 1 KB/s"; the Apache tool takes any value >= 0 and so does kreassign, with a warning
LOWEST_SENSIBLE_THROTTLE = 1000


def warn_low_throttles(inv: Invocation, **throttles: int | None) -> None:
    """A throttle under 1 KB/s is taken (as Apache does) but most likely a value in the wrong unit."""
    for name, value in throttles.items():
        if value is not None and 0 <= value < LOWEST_SENSIBLE_THROTTLE:
            option = "--throttle" if name == "throttle" else "--replica-alter-log-dirs-throttle"
            inv.err(
                f"kreassign: warning: {option} {value} is {value} bytes/s, under the 1 KB/s the help asks for: the "
                "copies will barely move. The value is in bytes per second (e.g. 50000000 for 50 MB/s).\n"
            )


def sampling_window(inv: Invocation) -> int | None:
    """``--sample-rates SECONDS``: None when not given; below 1 second is a usage error."""
    from kreassign.errors import UsageError

    value = inv.args.long_value("sample-rates")
    if value is not None and value < 1:
        raise UsageError(f"--sample-rates must be at least 1 second, not {value}")
    return value
