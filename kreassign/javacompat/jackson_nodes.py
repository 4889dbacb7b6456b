"""The values of Jackson's JSON tree (``JsonNode``) as Python values, shared by the reader and the writer.

Objects are ``dict`` (first position and last value of a duplicate key), arrays ``list``, integers ``int``
(Jackson's ``IntNode`` when they fit in 32 bits, ``LongNode``/``BigIntegerNode`` otherwise, see
:func:`is_int_node`), numbers with a fraction or exponent ``float``, ``MissingNode`` :data:`MISSING`.
"""

from __future__ import annotations

from typing import Final, TypeAlias

from kreassign.javacompat.arithmetic import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN

__all__ = ["INT_MAX", "INT_MIN", "LONG_MAX", "LONG_MIN", "MISSING", "JsonValue", "is_int_node", "is_long_node"]


class _MissingNode:
    """Jackson's ``MissingNode``: what ``readTree`` returns for a document with no content."""

    _instance: _MissingNode | None = None

    def __new__(cls) -> _MissingNode:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _MissingNode()

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | _MissingNode | None"


def is_int_node(value: object) -> bool:
    """Jackson's ``JsonNode.isInt()``: an integer token that fits in a Java ``int``."""
    return type(value) is int and INT_MIN <= value <= INT_MAX


def is_long_node(value: object) -> bool:
    """Jackson's ``JsonNode.isLong()``: an integer token that fits in a ``long`` but not an ``int``."""
    return type(value) is int and LONG_MIN <= value <= LONG_MAX and not INT_MIN <= value <= INT_MAX
