"""--execute: the Apache reassignment, or the batched executor (KIP-435) with --max-*-movements or --dry-run."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode
from kreassign.cli.spec import BATCHED_OPTIONS


def run(inv: Invocation) -> int:
    """Reads inputs in the order the Apache tool's handleAction does, so that the first error matches."""
    from kreassign import formats
    from kreassign.actions.common import naming_input_file, read_input_file
    from kreassign.actions.execute import execute_assignment

    args = inv.args
    path = args.value("reassignment-json-file")
    plan_text = read_input_file(path)
    throttle = args.long_value("throttle")
    log_dir_throttle = args.long_value("replica-alter-log-dirs-throttle")
    timeout_ms = args.long_value("timeout")
    with naming_input_file("--reassignment-json-file", path, plan_text):
        plan = formats.parse_reassignment_json(plan_text)
        formats.validate_execute_plan(plan)
    warn_low_throttles(inv, throttle=throttle, log_dir_throttle=log_dir_throttle)
    if any(args.has(name) for name in (*BATCHED_OPTIONS, "dry-run", "order", "adaptive")):
        from kreassign.cli.commands.batched import run_batched

        return run_batched(inv, plan, throttle, log_dir_throttle)
    result = execute_assignment(
        inv.port,
        plan,
        additional=args.has("additional"),
        inter_broker_throttle=throttle,
        log_dir_throttle=log_dir_throttle,
        timeout_ms=timeout_ms,
        allow_replication_factor_change=not args.has("disallow-replication-factor-change"),
        out=inv.text_out,
    )
    if inv.json_mode:
        from kreassign.documents import dump, execute_document

        document = execute_document(
            result.rollback_json,
            result.started,
            result.inter_broker_throttle,
            result.log_dir_throttle,
            result.log_dir_moves,
        )
        inv.out(dump(document))
    return ExitCode.OK


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
