"""``--help``, and the Typer declaration of the command, both built from the option table
(``kreassign.cli.spec``), the one declaration of kreassign's options. Parsing of real command lines follows
the Apache (jopt-simple) rules in ``kreassign.cli.argv``; the Typer command is never run.

The help text is rendered here, not by Typer's rich panels: those cut option names to fit their columns
at 80 columns (``--max-partition-movem…``), and draw boxes with trailing spaces into pipes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from kreassign.cli.spec import (
    COMMAND_HELP,
    COMMAND_NAME,
    COMMAND_SUMMARY,
    OPTIONS_PANEL,
    PANELS,
    SPECS,
    Arity,
    OptionSpec,
)

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


PLAIN_HELP_WIDTH = 80
"""The width of --help when stdout is not a terminal (a pipe, a file): the same text everywhere."""


def help_text(prog: str = COMMAND_NAME, width: int = PLAIN_HELP_WIDTH, styled: bool = False) -> str:
    """--help from the option table: each option's name and value on a line of its own, always whole, its
    description wrapped under it; the groups in the order of ``PANELS``. Plain text (no box drawing, no
    trailing spaces); ``styled`` (a terminal) adds bold to the names and headings."""
    import textwrap

    def bold(text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if styled else text

    def wrapped(text: str, indent: str) -> list[str]:
        # never break an option name (--max-partition-movements) or a path at its hyphens
        lines = textwrap.wrap(
            text, width=max(20, width - 1), initial_indent=indent, subsequent_indent=indent,
            break_long_words=False, break_on_hyphens=False,
        )  # fmt: skip
        return lines or [indent.rstrip()]

    lines = [f"Usage: {prog} [OPTIONS]", ""]
    lines += wrapped(COMMAND_SUMMARY, "")
    lines.append("")
    lines += wrapped(COMMAND_HELP, "")
    for panel in PANELS:
        specs = [spec for spec in SPECS.values() if spec.panel == panel]
        if not specs:
            continue
        lines += ["", bold(f"{panel}:")]
        for spec in specs:
            head = f"  {bold('--' + spec.name)}" + (f", {bold('-h')}" if spec.name == "help" else "")
            lines.append(head + value_shown(spec))
            description = spec.help
            if spec.default is not None and spec.arity is not Arity.FLAG:
                description += f" [default: {spec.default}]"
            lines += wrapped(description, "      ")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def value_shown(spec) -> str:
    """What --help shows after an option's name: `` FILE``, `` [SECONDS]`` for an optional value of kreassign's
    own (--watch); the Apache tool's options keep their usual form (--bootstrap-server's value is optional to its
    parser, but always given); nothing for a flag."""
    if not spec.metavar:
        return ""
    return f" [{spec.metavar}]" if spec.arity is Arity.OPTIONAL and not spec.apache else f" {spec.metavar}"


def option_head(spec) -> str:
    """An option's first line in --help, plain: ``  --watch [SECONDS]``, ``  --help, -h``."""
    return f"  --{spec.name}" + (", -h" if spec.name == "help" else "") + value_shown(spec)


PROGRAM_NAMES = (COMMAND_NAME, "kafka-reassign-partitions", "kafka-reassign-partitions.sh")
"""The names the command is installed under (the wheel's two scripts, and the Apache script's name for a
link): ``Usage:`` names the one it was invoked by."""


def program_name(argv0: str) -> str:
    """The name the command was invoked by, one of ``PROGRAM_NAMES``; anything else (``python -m kreassign``
    runs ``__main__.py``) is kreassign."""
    import os

    name = os.path.basename(argv0)
    return name if name in PROGRAM_NAMES else COMMAND_NAME


def print_help(out: Callable[[str], object] | None = None, terminal: bool | None = None) -> None:
    """--help, written to ``out`` (default: stdout): at the terminal's width on a terminal, else at
    ``PLAIN_HELP_WIDTH``."""
    import shutil
    import sys

    if terminal is None:
        terminal = sys.stdout.isatty()
    width = shutil.get_terminal_size((PLAIN_HELP_WIDTH, 24)).columns if terminal else PLAIN_HELP_WIDTH
    (out or sys.stdout.write)(help_text(program_name(sys.argv[0]), width, styled=terminal))
