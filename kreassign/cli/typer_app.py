"""The Typer command of ``--help``, built from the option table (``kreassign.cli.spec``), the one
declaration of kreassign's options. Parsing of real command lines follows the Apache (jopt-simple) rules
in ``kreassign.cli.argv``; this command is never run, only asked for its help.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable
from typing import Annotated, Any

import typer

from kreassign.cli.spec import COMMAND_HELP, COMMAND_NAME, COMMAND_SUMMARY, OPTIONS_PANEL, SPECS, Arity, OptionSpec

_CLICK_OWN = ("help",)
"""Options click adds by itself (from ``help_option_names``)."""


def _python_type(spec: OptionSpec) -> Any:
    if spec.arity is Arity.FLAG:
        return bool
    if spec.repeated:
        return list[spec.value_type] | None  # type: ignore[name-defined]
    return spec.value_type if spec.default is not None else spec.value_type | None


def _parameter(spec: OptionSpec) -> inspect.Parameter:
    option = typer.Option(
        f"--{spec.name}",
        help=spec.help,
        metavar=spec.metavar or None,
        rich_help_panel=None if spec.panel == OPTIONS_PANEL else spec.panel,
    )
    default = False if spec.arity is Arity.FLAG else spec.default
    return inspect.Parameter(
        spec.name.replace("-", "_"),
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=default,
        annotation=Annotated[_python_type(spec), option],
    )


def _declaration() -> Callable[..., None]:
    """A function whose signature declares every option of the table, as Typer reads them."""

    def kreassign(**_options: object) -> None:
        """Declaration only: kreassign.cli.app.run does the work."""

    parameters = [_parameter(spec) for spec in SPECS.values() if spec.name not in _CLICK_OWN]
    kreassign.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    kreassign.__annotations__ = {p.name: p.annotation for p in parameters}
    return kreassign


def click_command():
    app = typer.Typer(
        name=COMMAND_NAME,
        add_completion=False,
        context_settings={"help_option_names": ["--help"]},
        help=COMMAND_SUMMARY,
    )
    app.command(help=COMMAND_HELP)(_declaration())
    return typer.main.get_command(app)


class _HelpBuffer(io.StringIO):
    """Where rich renders the help: kept for the injected writer, with the terminal's properties (colours,
    box characters) of the real stdout."""

    def __init__(self, terminal: bool, encoding: str) -> None:
        super().__init__()
        self._terminal, self._encoding = terminal, encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    def isatty(self) -> bool:
        return self._terminal


def print_help(out: Callable[[str], object] | None = None, terminal: bool | None = None) -> None:
    """Typer's (rich) help of the command, written to ``out`` (default: stdout)."""
    import contextlib
    import sys

    stdout = sys.stdout
    buffer = _HelpBuffer(stdout.isatty() if terminal is None else terminal, stdout.encoding or "utf-8")
    command = click_command()
    with (
        contextlib.redirect_stdout(buffer),
        command.make_context(COMMAND_NAME, ["--help"], resilient_parsing=True) as ctx,
    ):
        buffer.write(command.get_help(ctx) + "\n")
    (out or stdout.write)(buffer.getvalue())
