"""The width of the terminal a stream is on."""

from __future__ import annotations

import os
from collections.abc import Callable


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


def wrap_lines(text: str, width: int) -> str:
    """Each line of ``text`` longer than ``width`` wrapped at its blanks (the next rows keep the line's indent);
    a word longer than the width (a path) stays whole. Empty lines and the final newline are kept."""
    import textwrap

    rows = []
    for line in text.split("\n"):
        if len(line) <= width:
            rows.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        rows.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            or [line]
        )
    return "\n".join(rows)


def wrapping(write: Callable[[str], object], fd: int) -> Callable[[str], object]:
    """A writer for kreassign's own text on the terminal of ``fd``: what it writes wraps at word boundaries to
    the terminal's width (read at each write: the terminal may be resized)."""

    def wrapped(text: str) -> object:
        return write(wrap_lines(text, columns(fd)))

    return wrapped
