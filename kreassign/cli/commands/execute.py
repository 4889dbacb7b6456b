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
    auto = args.value("throttle") == "auto"  # --throttle auto: batched runs only (checked with the options)
    throttle = -1 if auto else args.long_value("throttle")
    log_dir_throttle = args.long_value("replica-alter-log-dirs-throttle")
    timeout_ms = args.long_value("timeout")
    with naming_input_file("--reassignment-json-file", path, plan_text):
        plan = formats.parse_reassignment_json(plan_text)
        formats.validate_execute_plan(plan)
    warn_low_throttles(inv, throttle=throttle, log_dir_throttle=log_dir_throttle)
    window = sampling_window(inv)
    if any(args.has(name) for name in (*BATCHED_OPTIONS, "dry-run", "order", "adaptive")):
        from kreassign.cli.commands.batched import run_batched

        auto_throttle = None
        if auto and not args.has("dry-run"):
            from kreassign.cli.commands.auto_throttle import measure_headroom

            auto_throttle = measure_headroom(inv, plan, window)
            throttle = auto_throttle.throttle
        if window is not None:  # under --throttle auto, each broker's own rate
            refuse_slow_moves(inv, plan, auto_throttle.rates() if auto_throttle else throttle, window)
        return run_batched(inv, plan, throttle, log_dir_throttle, auto_throttle)
    if window is not None:
        warn_slow_moves(inv, plan, throttle, window)
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


def sampling_window(inv: Invocation) -> int | None:
    """``--sample-rates SECONDS``: None when not given; below 1 second is a usage error."""
    from kreassign.errors import UsageError

    value = inv.args.long_value("sample-rates")
    if value is not None and value < 1:
        raise UsageError(f"--sample-rates must be at least 1 second, not {value}")
    return value


def warn_slow_moves(inv: Invocation, plan, throttle: int, window: int) -> None:
    """The Apache form: every move starts at once; each slow one is a warning on stderr (stdout unchanged).
    A sampling that fails is a warning too: the Apache run goes on and reports its own errors."""
    from kreassign.actions.traffic import find_slow_moves, slow_move_line
    from kreassign.errors import KreassignError

    if throttle < 0:
        inv.err("kreassign: warning: --sample-rates needs a --throttle to compare the rates with; not sampled.\n")
        return
    try:
        slow = find_slow_moves(inv.port, dict(plan.partitions), throttle, window)
    except KreassignError as exc:
        inv.err(f"kreassign: warning: the rates could not be sampled: {exc}\n")
        return
    for move in slow:
        inv.err(f"kreassign: warning: {slow_move_line(move)}: its copy may never catch up.\n")


def refuse_slow_moves(inv: Invocation, plan, throttle: int | dict[int, int], window: int) -> None:
    """A batched run: the moves at once per broker are bounded by its limits; a slow move refuses the run
    (one line) unless --allow-slow-moves, then it is named on stderr."""
    from kreassign.actions.traffic import find_slow_moves, slow_move_line
    from kreassign.errors import CommandError

    if not isinstance(throttle, dict) and throttle < 0:
        inv.err("kreassign: warning: --sample-rates needs a --throttle to compare the rates with; not sampled.\n")
        return
    args = inv.args
    limit = args.long_value("max-broker-movements") or args.long_value("max-partition-movements")
    proposed = dict(plan.partitions)
    concurrent = None
    if limit is not None:
        brokers = {b for replicas in proposed.values() for b in replicas}
        concurrent = dict.fromkeys(brokers, max(int(limit), 1))
    slow = find_slow_moves(inv.port, proposed, throttle, window, concurrent)
    if not slow:
        return
    if args.has("allow-slow-moves"):
        for move in slow:
            inv.err(f"kreassign: warning: {slow_move_line(move)}: its copy may never catch up.\n")
        return
    more = f" (and {len(slow) - 1} more)" if len(slow) > 1 else ""
    raise CommandError(
        f"{slow_move_line(slow[0])}{more}: its copy would never catch up; raise --throttle, or run anyway "
        "with --allow-slow-moves"
    )
