"""One module per action of the command line, dispatched from ``COMMANDS`` by ``kreassign.cli.app``.

Each module has ``run(invocation) -> exit status``; it reads its options, calls the action (``kreassign.actions``)
with the injected writers, and with ``--output json`` writes the one JSON document. Modules are imported only
when their action runs, so that start-up stays light.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from kreassign.actions.common import Output, discard
from kreassign.cli.argv import ParsedArgs
from kreassign.cli.exit_codes import ExitCode
from kreassign.planning.progress import PlanOutcome

COMMANDS: dict[str, str] = {
    "generate": "generate",
    "execute": "execute",
    "verify": "verify",
    "cancel": "cancel",
    "list": "listing",
    "progress": "progress",
    "write-cluster-snapshot": "snapshot",
}
"""Action -> module of this package."""

ZOOKEEPER = "zookeeper"
"""The module of the deprecated --zookeeper path (generate, execute and verify through ZooKeeper)."""


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


@dataclass(frozen=True)
class Invocation:
    """A validated command line, the cluster (or ZooKeeper store) it names, and where output goes."""

    action: str
    args: ParsedArgs
    port: object
    out: Output
    err: Output
    terminal: bool = False  # stdout is a terminal
    err_terminal: bool = False  # stderr is a terminal

    @property
    def json_mode(self) -> bool:
        return self.args.json_output

    @property
    def notes(self) -> Output:
        """Where kreassign's own lines on stderr go: wrapped at word boundaries on a terminal, one line each
        in a pipe or a file."""
        if not self.err_terminal:
            return self.err
        from kreassign.cli.tty import wrapping

        return wrapping(self.err, 2)

    @property
    def text_out(self) -> Output:
        """Where the Apache text goes: stdout, or nowhere with --output json."""
        return discard if self.json_mode else self.out

    def outcome_status(self, outcome: PlanOutcome) -> int:
        """--verify and --progress: 0, unless --fail-if-incomplete asks for 2 or 3."""
        return OUTCOME_EXIT_CODES[outcome] if self.args.has("fail-if-incomplete") else ExitCode.OK


OUTCOME_EXIT_CODES = {
    PlanOutcome.COMPLETE: ExitCode.OK,
    PlanOutcome.IN_PROGRESS: ExitCode.IN_PROGRESS,
    PlanOutcome.NOT_AT_TARGET: ExitCode.NOT_AT_TARGET,
}
"""--fail-if-incomplete: where the plan stands -> exit status."""
