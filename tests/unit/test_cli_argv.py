"""Command-line validation: the Apache tool's rules, order and messages (stderr, exit 1)."""

from __future__ import annotations

import pytest

from kreassign.cli.app import run
from kreassign.cli.argv import OptionSyntaxError, scan, validate
from kreassign.cli.spec import SPECS
from kreassign.errors import CommandError, UsageError

BS = ["--bootstrap-server", "127.0.0.1:9092"]
ONE_ACTION = "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"

USAGE_ERRORS = [
    ("no-action", [*BS], ONE_ACTION),
    ("two-actions", [*BS, "--list", "--verify"], ONE_ACTION),
    (
        "both-bootstraps",
        [*BS, "--list", "--bootstrap-controller", "h:1"],
        "Please don't specify both --bootstrap-server and --bootstrap-controller",
    ),
    ("no-bootstrap", ["--list"], "Please specify either --bootstrap-server or --bootstrap-controller"),
    ("verify-needs-file", [*BS, "--verify"], 'Missing required argument "[reassignment-json-file]"'),
    ("execute-needs-file", [*BS, "--execute"], 'Missing required argument "[reassignment-json-file]"'),
    ("cancel-needs-file", [*BS, "--cancel"], 'Missing required argument "[reassignment-json-file]"'),
    (
        "generate-needs-topics-first",
        [*BS, "--generate"],
        'Missing required argument "[topics-to-move-json-file]"',
    ),
    (
        "generate-needs-brokers",
        [*BS, "--generate", "--topics-to-move-json-file", "t"],
        'Missing required argument "[broker-list]"',
    ),
    (
        "throttle-with-verify",
        [*BS, "--verify", "--reassignment-json-file", "f", "--throttle", "5"],
        'Option "[throttle]" can\'t be used with action "[verify]"',
    ),
    (
        "first-bad-option-in-argv-order",
        [*BS, "--list", "--timeout", "5", "--additional"],
        'Option "[timeout]" can\'t be used with action "[list]"',
    ),
    (
        "additional-with-cancel",
        [*BS, "--cancel", "--reassignment-json-file", "f", "--additional"],
        'Option "[additional]" can\'t be used with action "[cancel]"',
    ),
    (
        "controller-with-execute",
        ["--bootstrap-controller", "h:1", "--execute", "--reassignment-json-file", "f"],
        'Option "[bootstrap-controller]" can\'t be used with action "[execute]"',
    ),
    (
        "server-with-list-via-controller-rules",
        ["--bootstrap-controller", "h:1", "--list", "--command-config", "c"],
        None,
    ),
    (
        "seed-with-execute",
        [*BS, "--execute", "--reassignment-json-file", "f", "--seed", "1"],
        'Option "[seed]" can\'t be used with action "[execute]"',
    ),
    (
        "broker-list-with-verify",
        [*BS, "--verify", "--reassignment-json-file", "f", "--broker-list", "1"],
        'Option "[broker-list]" can\'t be used with action "[verify]"',
    ),
]


@pytest.mark.parametrize(("argv", "message"), [c[1:] for c in USAGE_ERRORS], ids=[c[0] for c in USAGE_ERRORS])
def test_validation_messages(argv, message):
    if message is None:
        assert validate(argv).kind == "list"
        return
    with pytest.raises(UsageError) as info:
        validate(argv)
    assert info.value.message == message


SYNTAX_ERRORS = [
    ("unknown-long", ["--frobnicate"], "frobnicate is not a recognized option"),
    ("unknown-short", ["-x"], "x is not a recognized option"),
    ("ambiguous-prefix", ["--re"], "re is not a recognized option"),
    ("missing-argument", ["--list", "--throttle"], "Option throttle requires an argument"),
    ("flag-with-value", ["--list=yes"], "Option list does not accept arguments"),
]


@pytest.mark.parametrize(("argv", "message"), [c[1:] for c in SYNTAX_ERRORS], ids=[c[0] for c in SYNTAX_ERRORS])
def test_jopt_syntax_errors(argv, message):
    with pytest.raises(OptionSyntaxError) as info:
        scan(argv)
    assert info.value.message == message


def test_inline_values_and_no_abbreviations_like_the_apache_parser():
    parsed = scan(["--generate", "--bootstrap-server=h:1", "--broker-list", "1,2", "-disable-rack-aware"])
    assert [s.name for s in parsed.seen] == ["generate", "bootstrap-server", "broker-list", "disable-rack-aware"]
    assert parsed.value("bootstrap-server") == "h:1"
    with pytest.raises(OptionSyntaxError, match=r"^gen is not a recognized option$"):
        scan(["--gen"])


def test_required_argument_takes_next_token_even_if_it_looks_like_an_option():
    parsed = scan(["--throttle", "--list"])
    assert parsed.values["throttle"] == ["--list"]
    assert not parsed.has("list")


def test_non_option_arguments_are_ignored_like_apache():
    assert validate([*BS, "--list", "stray", "words"]).kind == "list"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("100", 100), ("+5", 5), ("-1", -1), ("9223372036854775807", 2**63 - 1)],
    ids=["plain", "plus", "negative", "long-max"],
)
def test_long_values(text, expected):
    assert scan(["--throttle", text]).long_value("throttle") == expected


@pytest.mark.parametrize("text", ["abc", " 5", "5L", "0x10", "9223372036854775808", "1.5", ""])
def test_bad_long_values_fail_when_read(text):
    parsed = scan(["--throttle", text])
    with pytest.raises(CommandError) as info:
        parsed.long_value("throttle")
    assert info.value.message == f"Cannot parse argument '{text}' of option throttle"


def test_option_given_twice_fails_when_read():
    with pytest.raises(CommandError, match="Found multiple arguments for option throttle"):
        scan(["--throttle", "1", "--throttle", "2"]).long_value("throttle")


def test_defaults():
    parsed = scan([])
    assert parsed.long_value("throttle") == -1
    assert parsed.long_value("timeout") == 10000


def test_usage_error_goes_to_stderr_with_exit_1():
    out, err = [], []
    assert run(["--list"], out=out.append, err=err.append) == 1
    assert out == []
    assert err[0].splitlines()[0] == "Please specify either --bootstrap-server or --bootstrap-controller"


def test_no_arguments_prints_usage_on_stderr_and_exits_1():
    out, err = [], []
    assert run([], out=out.append, err=err.append) == 1
    assert out == [] and err


def test_every_option_has_help():
    assert all(spec.help for spec in SPECS.values())
