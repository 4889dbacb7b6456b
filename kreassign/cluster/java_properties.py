"""Java ``.properties`` files as ``java.util.Properties.load`` reads them (``--command-config``)."""

from __future__ import annotations

import os
import re

from kreassign.errors import ConfigError


def parse_java_properties(text: str) -> dict[str, str]:
    """``java.util.Properties.load``: ``key=value``, ``key:value`` or ``key value``; ``#``/``!``
    comment lines; a line ending in an odd number of backslashes continues on the next one (whose
    leading blanks are dropped); ``\\uXXXX``, ``\\t``, ``\\n``, ``\\r``, ``\\f`` escapes, any other
    escaped character stands for itself. The last of duplicate keys wins."""
    properties: dict[str, str] = {}
    for line in _logical_lines(text):
        key_end, value_start, has_separator, escaped = len(line), len(line), False, False
        for index, char in enumerate(line):
            if char in "=:" and not escaped:
                key_end, value_start, has_separator = index, index + 1, True
                break
            if char in " \t\f" and not escaped:
                key_end, value_start = index, index + 1
                break
            escaped = not escaped if char == "\\" else False
        while value_start < len(line):
            char = line[value_start]
            if char not in " \t\f":
                if has_separator or char not in "=:":
                    break
                has_separator = True
            value_start += 1
        properties[_unescape(line[:key_end])] = _unescape(line[value_start:])
    return properties


def _logical_lines(text: str) -> list[str]:
    natural = re.split(r"\r\n|\r|\n", text)
    logical: list[str] = []
    index = 0
    while index < len(natural):
        line = natural[index].lstrip(" \t\f")
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if index >= len(natural):
                break
            line += natural[index].lstrip(" \t\f")
            index += 1
        logical.append(line)
    return logical


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char != "\\" or index >= len(text):
            out.append(char)
            continue
        char = text[index]
        index += 1
        if char == "u":
            digits = text[index : index + 4]
            if len(digits) < 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(char, char))
    return "".join(out)


def read_java_properties_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """A properties file read like the Apache tool reads ``--command-config``: ISO-8859-1 text; a missing
    or unreadable file fails with its path as the whole message (Java's ``NoSuchFileException``)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("latin-1")
    except OSError as exc:
        raise ConfigError(_java_file_error(str(path), exc)) from exc
    return parse_java_properties(text)


def _java_file_error(path: str, exc: OSError) -> str:
    """``getMessage()`` of the exception Java's ``Files.newInputStream`` and ``read`` throw: the path
    alone for a missing or forbidden file, ``Is a directory`` for a folder (opened, then read), else
    the path and the system's text (``UnixException.translateToIOException``)."""
    import errno

    if exc.errno in (errno.ENOENT, errno.EACCES, errno.EPERM, None):
        return path
    if exc.errno == errno.EISDIR:
        return "Is a directory"
    if exc.errno == errno.ELOOP:
        return f"{path}: {exc.strerror} or unable to access attributes of symbolic link"
    return f"{path}: {exc.strerror}"
