"""The width of the terminal a stream is on."""

from __future__ import annotations

import os


def columns(fd: int, fallback: int = 80) -> int:
    """The columns of the terminal of ``fd`` (2 for what goes to stderr: with ``> plan.txt`` stdout is a file
    while stderr is still on the terminal); ``$COLUMNS`` wins, as with ``shutil.get_terminal_size``, which
    asks stdout only."""
    try:
        env = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        env = 0
    if env > 0:
        return env
    try:
        return os.get_terminal_size(fd).columns or fallback
    except (OSError, ValueError):
        return fallback
