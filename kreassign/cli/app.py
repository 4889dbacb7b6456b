"""The command: validates argv with the Apache rules, runs one action, maps errors to exit codes.

stdout carries exactly the Apache tool's text; everything else (warnings, help, hints) goes to stderr.
Each action is a module of ``kreassign.cli.commands``, found in its ``COMMANDS`` table. Heavy modules
(Kafka clients, rich) are imported only once an action needs them.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable
from contextlib import nullcontext

from kreassign.cli.argv import OptionSyntaxError, ParsedArgs, validate
from kreassign.cli.exit_codes import ExitCode, after_signal
from kreassign.errors import KreassignError, TerseError, UsageError, ZooKeeperUsageError
from kreassign.gcpause import gc_paused


def _stdout(text: str) -> None:
    _write(sys.stdout, 1, text)


def _stderr(text: str) -> None:
    _write(sys.stderr, 2, text)


def _write(stream, fd: int, text: str) -> None:
    """A write to stdout or stderr that survives its reader leaving (``| head -1``): like the Apache tool
    (Java's System.out ignores a broken pipe), the command goes on to its end and its exit status, quietly;
    what it would have printed there is dropped."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        discard_output(fd)


def discard_output(fd: int) -> None:
    """From now on fd 1 or 2 goes to /dev/null: later writes, and the interpreter's flush at exit, succeed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def run(argv: list[str], out: Callable[[str], None] = _stdout, err: Callable[[str], None] = _stderr) -> int:
    """The process's entry point (``kreassign.cli.entry``): ``out`` and ``err`` are where every write goes."""
    try:
        request = validate(argv)
    except (OptionSyntaxError, ZooKeeperUsageError) as exc:
        err(f"{exc.message}\n")
        return ExitCode.ERROR
    except UsageError as exc:
        err(f"{exc.message}\nRun with --help for the list of options.\n")
        return ExitCode.ERROR

    if request.kind == "help":
        if not argv:
            err(
                "This tool helps to move topic partitions between replicas.\nRun with --help for the list of options.\n"
            )
            return ExitCode.ERROR
        from kreassign.cli.typer_app import print_help

        print_help(out, terminal=out is _stdout and sys.stdout.isatty())
        return ExitCode.OK
    if request.kind == "version":
        from kreassign import KAFKA_COMPAT_VERSION, __version__

        out(f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)\n")
        return ExitCode.OK

    json_mode = request.args.json_output
    port = None
    # Passwords of --command-config never reach a terminal, a log or a traceback, whatever the error.
    configs: list = []  # the port, once open: it knows the secrets of its client config (some made on first use)
    terminal = out is _stdout and sys.stdout.isatty()
    err_terminal = err is _stderr and sys.stderr.isatty()
    out, err = _scrubbed(out, configs), _scrubbed(err, configs)
    if err_terminal:  # kreassign's hints wrap at word boundaries on the terminal
        from kreassign.cli.tty import wrapping

        hints_err = wrapping(err, 2)
    else:
        hints_err = err
    # --generate and snapshots build millions of objects and free none until the end
    bulk = request.kind == "generate" or request.args.has("cluster-snapshot-file")
    sigint = signal.getsignal(signal.SIGINT)  # a batched run ignores Ctrl-C once it has handled one
    with gc_paused() if bulk else nullcontext():
        try:
            from kreassign.cli.commands import COMMANDS, ZOOKEEPER, Invocation, command_module

            if request.args.has("zookeeper"):  # the deprecated legacy path
                command = command_module(ZOOKEEPER)
                port = command.open_port(request.args, out, err)
            else:
                command = command_module(COMMANDS[request.kind])
                port = open_cluster(request.args)
                configs.append(port)
                show_config_warnings(port, hints_err)
            return command.run(Invocation(request.kind, request.args, port, out, err, terminal, err_terminal))
        except UsageError as exc:  # a bad value of one of kreassign's own options: like the argv checks above
            err(f"{exc.message}\nRun with --help for the list of options.\n")
        except TerseError as exc:
            _report_error(exc.message, exc.message, exc, json_mode, out, hints_err)
        except KreassignError as exc:
            _report_error(f"Error: {exc.message}", exc.message, exc, json_mode, out, hints_err)
        except KeyboardInterrupt:
            err("Interrupted.\n")
            return after_signal(signal.SIGINT)
        except Exception as exc:  # an unexpected failure still ends with one line, never a traceback
            _report_error(f"Error: {exc}", str(exc), exc, json_mode, out, err)
            if os.environ.get("KREASSIGN_DEBUG"):
                err(traceback.format_exc())
        finally:
            if port is not None:
                port.close()
            if signal.getsignal(signal.SIGINT) is not sigint:
                signal.signal(signal.SIGINT, sigint)
    return ExitCode.ERROR


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


def show_config_warnings(port: object, err: Callable[[str], None]) -> None:
    """What ``--command-config`` had that takes no effect (a property Java's admin client does not know, a config
    provider placeholder left as it is: ``ClientConfig.warnings``), once each on stderr, never on stdout: the Apache
    text stays exact."""
    config = getattr(port, "config", None)
    for warning in dict.fromkeys(getattr(config, "warnings", ())):
        err(f"kreassign: warning: {warning}\n")


def open_cluster(args: ParsedArgs):
    """The Kafka adapter, configured like the Apache tool's Admin client (no connection yet)."""
    if args.has("cluster-snapshot-file"):  # kreassign: an offline snapshot instead of a cluster
        from kreassign.snapshot import SnapshotCluster

        return SnapshotCluster.open(str(args.value("cluster-snapshot-file")))  # the Kafka clients stay unloaded
    from kreassign.cluster.bootstrap import parse_bootstrap_addresses
    from kreassign.cluster.client_config import load_client_config
    from kreassign.cluster.kafka import KafkaCluster

    config = load_client_config(args.value("command-config")) if args.has("command-config") else None
    if args.has("bootstrap-controller"):
        controllers = args.value("bootstrap-controller")
        parse_bootstrap_addresses(controllers, "--bootstrap-controller")
        return KafkaCluster(bootstrap_controllers=controllers, client_config=config)
    servers = args.value("bootstrap-server")
    parse_bootstrap_addresses(servers)
    return KafkaCluster(bootstrap_servers=servers, client_config=config)
