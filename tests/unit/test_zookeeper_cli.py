"""The deprecated --zookeeper option on the command line: the refused combinations (one line on stderr,
exit 1, nothing done) and the validation order around them."""

from __future__ import annotations

import pytest

from kreassign.cli.app import run
from kreassign.cli.argv import validate
from kreassign.cli.spec import ACTIONS, SPECS, ZOOKEEPER_FORBIDDEN_OPTIONS, Arity
from kreassign.zookeeper.command import DEPRECATION_ADVICE, DEPRECATION_WARNING

ZK = ["--zookeeper", "127.0.0.1:1/kafka"]
BOTH = (
    "Please don't specify both --zookeeper and --bootstrap-server: --zookeeper is deprecated, "
    "use --bootstrap-server alone\n"
)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out: list[str] = []
    err: list[str] = []
    code = run(argv, out=out.append, err=err.append)
    return code, "".join(out), "".join(err)


def _needs(name: str) -> str:
    return f'You must specify --bootstrap-server when using "[{name}]"\n'


CASES = [
    ("with-bootstrap-server", [*ZK, "--bootstrap-server", "h:1", "--verify", "--reassignment-json-file", "f"], BOTH),
    ("bootstrap-server-first", ["--bootstrap-server", "h:1", *ZK, "--list"], BOTH),
    ("list", [*ZK, "--list"], _needs("list")),
    ("cancel", [*ZK, "--cancel", "--reassignment-json-file", "f"], _needs("cancel")),
    ("cancel-without-file", [*ZK, "--cancel"], _needs("cancel")),
    ("additional", [*ZK, "--execute", "--reassignment-json-file", "f", "--additional"], _needs("additional")),
    ("timeout", [*ZK, "--execute", "--reassignment-json-file", "f", "--timeout", "1"], _needs("timeout")),
    (
        "command-config",
        [*ZK, "--verify", "--reassignment-json-file", "f", "--command-config", "c"],
        _needs("command-config"),
    ),
    (
        "log-dir-throttle",
        [*ZK, "--execute", "--reassignment-json-file", "f", "--replica-alter-log-dirs-throttle", "1"],
        _needs("replica-alter-log-dirs-throttle"),
    ),
    (
        "disallow-rf-change",
        [*ZK, "--execute", "--reassignment-json-file", "f", "--disallow-replication-factor-change"],
        _needs("disallow-replication-factor-change"),
    ),
    ("bootstrap-controller", [*ZK, "--bootstrap-controller", "h:1", "--list"], _needs("bootstrap-controller")),
    ("first-in-argv-order", [*ZK, "--execute", "--timeout", "1", "--additional"], _needs("timeout")),
    (
        "missing-file-after-zookeeper-checks",
        [*ZK, "--execute"],
        'Missing required argument "[reassignment-json-file]"\nRun with --help for the list of options.\n',
    ),
    (
        "not-permitted",
        [*ZK, "--verify", "--reassignment-json-file", "f", "--throttle", "5"],
        'Option "[throttle]" can\'t be used with action "[verify]"\nRun with --help for the list of options.\n',
    ),
    (
        "unknown-option-first",
        [*ZK, "--list", "--max-partitions", "3"],
        "max-partitions is not a recognized option\n",
    ),
    (
        "one-action-first",
        [*ZK, "--list", "--verify"],
        "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list\n"
        "Run with --help for the list of options.\n",
    ),
]


@pytest.mark.parametrize(("argv", "stderr"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_command_lines(argv, stderr):
    assert _run(argv) == (1, "", stderr)


@pytest.mark.parametrize("name", ZOOKEEPER_FORBIDDEN_OPTIONS)
def test_every_forbidden_name_is_refused_or_unknown(name):
    """Each name that needs --bootstrap-server is refused once the spec knows it (batched executor,
    --progress ...); a name the spec does not know (yet) stays "not a recognized option"."""
    if name not in SPECS:
        assert _run([*ZK, f"--{name}"]) == (1, "", f"{name} is not a recognized option\n")
        return
    spec = SPECS[name]
    value = [] if spec.arity is Arity.FLAG else ["1"]
    if name in ACTIONS:
        argv = [*ZK, f"--{name}", *value, "--reassignment-json-file", "f"]
    else:
        argv = [*ZK, "--execute", "--reassignment-json-file", "f", f"--{name}", *value]
    assert _run(argv) == (1, "", _needs(name))


@pytest.mark.parametrize(
    "argv",
    [
        [
            *ZK,
            "--generate",
            "--topics-to-move-json-file",
            "t",
            "--broker-list",
            "1",
            "--disable-rack-aware",
            "--seed",
            "1",
        ],
        [*ZK, "--execute", "--reassignment-json-file", "f", "--throttle", "1000"],
        [*ZK, "--verify", "--reassignment-json-file", "f", "--preserve-throttles"],
    ],
    ids=["generate", "execute", "verify"],
)
def test_accepted_command_lines(argv):
    request = validate(argv)
    assert request.kind in ("generate", "execute", "verify")
    assert request.args.value("zookeeper") == "127.0.0.1:1/kafka"


def test_deprecation_warning_before_connecting(tmp_path, monkeypatch):
    """Kafka 2.8.2's first stdout line, byte for byte; kreassign's advice (the replacement) on stderr; then
    the action runs (here: the input file is missing)."""
    from kreassign.zookeeper import command

    closed = []

    class Store:
        def close(self):
            closed.append(True)

    monkeypatch.setattr("kreassign.zookeeper.store.connect", lambda connect_string: Store())
    code, out, err = _run([*ZK, "--verify", "--reassignment-json-file", str(tmp_path / "missing.json")])
    assert code == 1
    assert err.splitlines()[0] == DEPRECATION_ADVICE  # (main's error hints may follow, as "kreassign: ...")
    assert out == f"{DEPRECATION_WARNING}\nError: Unable to read file {tmp_path / 'missing.json'}\n"
    assert closed == [True]
    # kafka.admin.ReassignPartitionsCommand.main of Kafka 2.8.2: println("Warning: --zookeeper is deprecated, ...")
    assert command.DEPRECATION_WARNING == (
        "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka."
    )
    assert command.DEPRECATION_ADVICE == (
        "kreassign: --zookeeper is deprecated (Apache Kafka removed it in 3.0): use --bootstrap-server instead."
    )


def test_zookeeper_is_a_kreassign_extension_taking_a_value():
    assert not SPECS["zookeeper"].apache and SPECS["zookeeper"].arity.value == "required"


def test_help_shows_the_deprecated_option(capsys):
    from kreassign.cli.typer_app import print_help

    print_help()
    out = capsys.readouterr().out
    assert "--zookeeper" in out and "DEPRECATED" in out
