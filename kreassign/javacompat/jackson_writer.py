"""Jackson's JSON output: ``JsonNode.toString()`` / ``ObjectMapper.writeValueAsString`` (compact), with
Java 17's ``Double.toString`` for numbers and Jackson's string escaping."""

from __future__ import annotations

import math
import re
from typing import Final

from kreassign.javacompat.doubles import java_double_to_string
from kreassign.javacompat.jackson_nodes import MISSING, JsonValue

__all__ = ["node_to_string", "quote_json_string"]

_SHORT_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE: Final = re.compile(r'["\\\x00-\x1f]')


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04X}"


def quote_json_string(text: str) -> str:
    """Jackson's string output: only '"', '\\' and control characters below 0x20 are escaped."""
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _scalar_to_string(value: JsonValue) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        if math.isfinite(value):
            return java_double_to_string(value)
        return '"' + java_double_to_string(value) + '"'
    if type(value) is str:
        return quote_json_string(value)
    if value is MISSING:
        return ""
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def node_to_string(value: JsonValue) -> str:
    """Jackson's ``JsonNode.toString()`` (compact; same as ``ObjectMapper.writeValueAsString``)."""
    if type(value) is not dict and type(value) is not list:
        return _scalar_to_string(value)
    out: list[str] = []
    # Iterative: each pending entry is either text to emit or a container to open.
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if type(item) is str:
            out.append(item)
        elif type(item) is dict:
            pending.append("}")
            entries = list(item.items())
            for index in range(len(entries) - 1, -1, -1):
                key, child = entries[index]
                pending.append(child if type(child) in (dict, list) else _scalar_to_string(child))
                pending.append(("," if index else "") + quote_json_string(key) + ":")
            out.append("{")
        elif type(item) is list:
            pending.append("]")
            for index in range(len(item) - 1, -1, -1):
                child = item[index]
                pending.append(child if type(child) in (dict, list) else _scalar_to_string(child))
                if index:
                    pending.append(",")
            out.append("[")
    return "".join(out)
