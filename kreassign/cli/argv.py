"""Command-line parsing with the Apache tool's rules (jopt-simple 5 plus validateAndParseArgs).

Long options (``--name`` or ``--name=value``), exact names only (no abbreviations, like the Apache
tool's parser).

Parsing and validation happen in the Apache order, so that the same bad command line gets the same
first complaint: unknown options, then help and version, exactly one action, the bootstrap rules,
required arguments, and options that an action does not accept (reported in command-line order).
Typed values (``--throttle`` ...) are converted only when an action reads them, as jopt-simple does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kreassign.cli.spec import (
    ACTIONS,
    APACHE_ACTIONS,
    EXTENSIONS_PER_ACTION,
    REQUIRED_ARGS,
    SNAPSHOT_ACTION,
    SNAPSHOT_ACTION_ARGS,
    SPECS,
    ZOOKEEPER_FORBIDDEN_OPTIONS,
    ZOOKEEPER_PERMITTED_ARGS,
    Arity,
    OptionSpec,
    permitted_args,
)
from kreassign.errors import CommandError, UsageError, ZooKeeperUsageError

_JAVA_LONG = re.compile(r"[+-]?\d+")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


class OptionSyntaxError(UsageError):
    """What jopt-simple throws while parsing (the Apache tool dies with a stack trace on stderr)."""


@dataclass
class ParsedArgs:
    """Options in the order they were first seen, each with the raw values given to it."""

    raw: list[str]
    seen: list[OptionSpec] = field(default_factory=list)
    values: dict[str, list[str | None]] = field(default_factory=dict)
    non_options: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        return name in self.values

    def value(self, name: str) -> str | None:
        """jopt-simple's valueOf: the single value, the default, or an error if given twice."""
        spec = SPECS[name]
        given = self.values.get(name)
        if not given:
            return None if spec.default is None else str(spec.default)
        if len(given) > 1:
            raise CommandError(f"Found multiple arguments for option {name}, but you asked for only one")
        return given[0]

    def long_value(self, name: str) -> int | None:
        """Like jopt-simple's ``ofType(Long.class)``: Java Long.valueOf rules and message."""
        text = self.value(name)
        if text is None:
            return None
        if _JAVA_LONG.fullmatch(text):
            number = int(text)
            if _LONG_MIN <= number <= _LONG_MAX:
                return number
        raise CommandError(f"Cannot parse argument '{text}' of option {name}")

    @property
    def json_output(self) -> bool:
        """``--output json`` (the last one given)."""
        return self.values.get("output", [None])[-1:] == ["json"]


def _resolve_long_name(candidate: str) -> OptionSpec | None:
    """Exact names only: the Apache tool's parser is built with abbreviations turned off
    (``--li`` is "li is not a recognized option" there, observed on 4.3.1)."""
    return SPECS.get(candidate)


def _looks_like_option(token: str) -> bool:
    if token.startswith("--"):
        return len(token) > 2
    return token.startswith("-") and len(token) > 1 and not _JAVA_LONG.fullmatch(token)


def scan(argv: list[str]) -> ParsedArgs:
    """Tokenize ``argv`` as jopt-simple does. Raises OptionSyntaxError with jopt-simple's message."""
    parsed = ParsedArgs(raw=list(argv))
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            parsed.non_options.extend(tokens[i:])
            break
        if token.startswith("--"):
            body = token[2:]
        elif token == "-h":  # kreassign: -h is --help (the Apache tool fails: "h is not a recognized option")
            body = "help"
        elif token.startswith("-") and len(token) > 1:
            body = token[1:]
            name = body.split("=", 1)[0]
            if _resolve_long_name(name) is None:
                raise OptionSyntaxError(f"{body[0]} is not a recognized option")
        else:
            parsed.non_options.append(token)
            continue
        name, has_inline, inline = body.partition("=")
        spec = _resolve_long_name(name)
        if spec is None:
            raise OptionSyntaxError(f"{name} is not a recognized option")
        value: str | None = None
        if spec.arity is Arity.FLAG:
            if has_inline:
                raise OptionSyntaxError(f"Option {spec.name} does not accept arguments")
        elif has_inline:
            value = inline
        elif spec.arity is Arity.REQUIRED:
            if i >= len(tokens):
                raise OptionSyntaxError(f"Option {spec.name} requires an argument")
            value = tokens[i]
            i += 1
        elif i < len(tokens) and not _looks_like_option(tokens[i]):
            value = tokens[i]
            i += 1
        if spec.name not in parsed.values:
            parsed.seen.append(spec)
            parsed.values[spec.name] = []
        if spec.arity is not Arity.FLAG and (value is not None or spec.arity is Arity.REQUIRED):
            parsed.values[spec.name].append(value)
    return parsed


@dataclass(frozen=True)
class Request:
    """A validated command line: what to do."""

    kind: str  # "help", "version" or one of ACTIONS
    args: ParsedArgs


def validate(argv: list[str]) -> Request:
    """The Apache tool's validateAndParseArgs, in its order. Raises UsageError with its messages."""
    parsed = scan(argv)
    if not argv or parsed.has("help"):
        return Request("help", parsed)
    if parsed.has("version"):
        return Request("version", parsed)
    actions = [a for a in ACTIONS if parsed.has(a)]
    if not actions and parsed.has(SNAPSHOT_ACTION):
        return _validate_snapshot_action(parsed)
    if len(actions) != 1:
        # the Apache message names the Apache actions only (kreassign's --progress is documented apart)
        raise UsageError("Command must include exactly one action: " + ", ".join(f"--{a}" for a in APACHE_ACTIONS))
    action = actions[0]
    if parsed.has("zookeeper"):
        return _validate_zookeeper(parsed, action)
    has_server, has_controller = parsed.has("bootstrap-server"), parsed.has("bootstrap-controller")
    if has_server and has_controller:
        raise UsageError("Please don't specify both --bootstrap-server and --bootstrap-controller")
    has_snapshot = parsed.has("cluster-snapshot-file")  # kreassign: a snapshot replaces the cluster
    if has_snapshot and (has_server or has_controller):
        where = "--bootstrap-server" if has_server else "--bootstrap-controller"
        raise UsageError(f"Please don't specify both --cluster-snapshot-file and {where}")
    if not has_server and not has_controller and not has_snapshot:
        raise UsageError("Please specify either --bootstrap-server or --bootstrap-controller")
    required = REQUIRED_ARGS[action]
    optional = _not_required(action, parsed)
    for name in required:
        if not parsed.has(name) and name not in optional:
            raise UsageError(_missing(action, name, parsed))
    permitted = permitted_args(action, uses_bootstrap_server=has_server)
    for spec in parsed.seen:
        if spec.name != action and spec.name not in required and spec.name not in permitted:
            raise UsageError(f'Option "{spec}" can\'t be used with action "{SPECS[action]}"')
    _validate_extensions(action, parsed)
    return Request(action, parsed)


def _not_required(action: str, parsed: ParsedArgs) -> tuple[str, ...]:
    """Apache's required --generate options that kreassign's own make optional: --topics-regex stands for
    --topics-to-move-json-file; --strategy leaders and --replace-broker need no --broker-list. With only
    Apache options, the Apache rules hold."""
    if action != "generate":
        return ()
    optional = []
    if parsed.has("topics-regex"):
        optional.append("topics-to-move-json-file")
    if parsed.has("replace-broker") or parsed.values.get("strategy", [None])[-1:] == ["leaders"]:
        optional.append("broker-list")
    return tuple(optional)


def _missing(action: str, name: str, parsed: ParsedArgs) -> str:
    """Apache's message for a required option not given; on a command line with kreassign's own options, the
    topics file's also names --topics-regex, which stands for it there."""
    message = f'Missing required argument "{SPECS[name]}"'
    extensions = EXTENSIONS_PER_ACTION["generate"]
    if action == "generate" and name == "topics-to-move-json-file" and any(map(parsed.has, extensions)):
        message += " or --topics-regex REGEX"
    return message


AT_LEAST_ONE = ("max-partition-movements", "max-replica-movements", "max-leader-movements", "max-broker-movements")
AT_LEAST_ONE += ("poll-interval-ms", "stall-timeout-ms", "replication-factor", "sample-rates", "broker-capacity")
"""kreassign's own whole-number options that count something: 1 or more."""


def _validate_values(parsed: ParsedArgs) -> None:
    """Every value of kreassign's own options, before any file is read or the cluster asked: a bad one is a
    usage error (stderr, exit 1), as a bad option is. Apache's options keep Apache's rules (their values are
    read where the Apache tool reads them, with its messages)."""
    for spec in parsed.seen:
        if spec.apache or spec.arity is Arity.FLAG or spec.name == "watch":
            continue
        for text in parsed.values.get(spec.name, []):
            if text is None:
                continue
            if spec.value_type is int:
                if not _JAVA_LONG.fullmatch(text) or not _LONG_MIN <= int(text) <= _LONG_MAX:
                    raise UsageError(f"--{spec.name} takes a whole number, not '{text}'")
                if spec.name in AT_LEAST_ONE and int(text) < 1:
                    raise UsageError(f"--{spec.name} must be at least 1, not {text}")
            elif "|" in spec.metavar and text not in spec.metavar.split("|") and spec.name != "output":
                choices = ", ".join(spec.metavar.split("|"))
                raise UsageError(f"Invalid value '{text}' for --{spec.name}: expected one of {choices}")
    checks = {
        "max-disk-usage": "parse_max_disk_usage",
        "bytes-tolerance": "parse_bytes_tolerance",
        "traffic-tolerance": "parse_traffic_tolerance",
        "move-budget": "parse_move_budget",
    }
    for name, parser in checks.items():
        if parsed.has(name):
            from kreassign.actions import balanced

            getattr(balanced, parser)(parsed.value(name))


def _validate_extensions(action: str, parsed: ParsedArgs) -> None:
    """kreassign's own options, checked after the Apache rules so that Apache's messages come first."""
    _validate_values(parsed)
    output = parsed.value("output") if parsed.has("output") else "text"
    if output not in ("text", "json"):
        raise UsageError(f"--output must be text or json, not '{output}'")
    if parsed.has("watch"):
        watch_seconds(parsed)
        if output == "json":
            raise UsageError("--watch draws a table; with --output json, run --progress once per poll instead")
    if action == "generate" and parsed.has("topics-regex") and parsed.has("topics-to-move-json-file"):
        raise UsageError("--topics-regex and --topics-to-move-json-file are alternatives: give one")
    if action == "execute":
        _validate_auto_throttle(parsed)
    if action == "generate" and parsed.has("sample-rates") and parsed.has("cluster-snapshot-file"):
        raise UsageError(
            "--generate --sample-rates samples a live cluster (--bootstrap-server); a snapshot written with "
            "--write-cluster-snapshot --sample-rates carries its rates"
        )
    if action == "execute" and parsed.has("cluster-snapshot-file") and not parsed.has("dry-run"):
        # refused before anything is read or printed (the current assignment would come first otherwise)
        raise UsageError(
            "--execute with --cluster-snapshot-file needs --dry-run: a snapshot is read-only "
            "(to move partitions, use --bootstrap-server)"
        )


AUTO_THROTTLE_OPTIONS = ("broker-capacity", "broker-capacity-file", "max-utilisation")


def _validate_auto_throttle(parsed: ParsedArgs) -> None:
    """``--throttle auto`` (batched runs) and the options it takes."""
    from kreassign.cli.spec import BATCHED_OPTIONS

    auto = parsed.values.get("throttle", [None])[-1] == "auto"
    given = [name for name in AUTO_THROTTLE_OPTIONS if parsed.has(name)]
    if not auto:
        if given:
            raise UsageError(f"--{given[0]} is for --throttle auto")
        return
    if not any(parsed.has(name) for name in (*BATCHED_OPTIONS, "dry-run", "order", "adaptive")):  # as execute
        raise UsageError(
            "--throttle auto is for a batched run (--max-partition-movements and the like); the Apache form takes "
            "a rate in bytes/s"
        )
    if parsed.has("broker-capacity") == parsed.has("broker-capacity-file"):
        raise UsageError(
            "--throttle auto needs each broker's network capacity: give --broker-capacity BYTES/S or "
            "--broker-capacity-file FILE (one of them)"
        )
    if parsed.has("max-utilisation"):
        max_utilisation(parsed.value("max-utilisation"))


def max_utilisation(text: str | None) -> float:
    """``--max-utilisation F``: 0 < F <= 1, default 0.8."""
    from kreassign.planning.headroom import DEFAULT_MAX_UTILISATION

    if text is None:
        return DEFAULT_MAX_UTILISATION
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise UsageError(f"--max-utilisation must be a share of the capacity, 0 < F <= 1, not '{text}'")
    return value


MIN_WATCH_S = 0.5


def watch_seconds(parsed: ParsedArgs) -> float:
    """``--watch [SECONDS]``: an optional value (jopt-simple's rule: the next word unless it looks like an
    option, or ``--watch=SECONDS``); the spec's default without one."""
    text = str(parsed.value("watch"))
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds >= MIN_WATCH_S or seconds == float("inf"):
        raise UsageError(f"--watch takes a number of seconds, at least {MIN_WATCH_S:g}, not '{text}'")
    return seconds


def _validate_zookeeper(parsed: ParsedArgs, action: str) -> Request:
    """The deprecated --zookeeper path (a kreassign extension; Apache removed it in 3.0). After the
    unknown-option, help and one-action checks: not with --bootstrap-server; nothing that needs
    --bootstrap-server (first one in command-line order); then the required and permitted options."""
    if parsed.has("bootstrap-server"):
        raise ZooKeeperUsageError(
            "Please don't specify both --zookeeper and --bootstrap-server: --zookeeper is deprecated, "
            "use --bootstrap-server alone"
        )
    for spec in parsed.seen:
        if spec.name in ZOOKEEPER_FORBIDDEN_OPTIONS or (spec.name == action and action not in ZOOKEEPER_PERMITTED_ARGS):
            raise ZooKeeperUsageError(f'You must specify --bootstrap-server when using "{spec}"')
    required = REQUIRED_ARGS[action]
    for name in required:
        if not parsed.has(name):
            raise UsageError(f'Missing required argument "{SPECS[name]}"')
    permitted = ZOOKEEPER_PERMITTED_ARGS[action]
    for spec in parsed.seen:
        if spec.name != action and spec.name not in required and spec.name not in permitted:
            raise UsageError(f'Option "{spec}" can\'t be used with action "{SPECS[action]}"')
    return Request(action, parsed)


def _validate_snapshot_action(parsed: ParsedArgs) -> Request:
    """``--write-cluster-snapshot FILE``: needs --bootstrap-server; takes only its own options."""
    if not parsed.has("bootstrap-server"):
        raise UsageError(f"--{SNAPSHOT_ACTION} needs --bootstrap-server")
    for spec in parsed.seen:
        if spec.name != SNAPSHOT_ACTION and spec.name not in SNAPSHOT_ACTION_ARGS:
            raise UsageError(f'Option "{spec}" can\'t be used with action "{SPECS[SNAPSHOT_ACTION]}"')
    _validate_values(parsed)  # --sample-rates
    return Request(SNAPSHOT_ACTION, parsed)
