"""Java strings and Java's UTF-8 decoding.

A Java ``String`` is a sequence of UTF-16 code units; we hold the Python string whose UTF-16 encoding
(with ``surrogatepass``) is the same, valid surrogate pairs joined into one code point. The helpers here
give Java's view of such a string: its code units, its length, its order, ``String.split(",")``,
``Integer.parseInt``, a collection's ``toString()``, and what ``new String(bytes, UTF_8)`` makes of a file.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Iterable
from typing import Final

from kreassign.errors import CommandError
from kreassign.javacompat.arithmetic import INT_MAX

_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")
SURROGATE: Final = re.compile("[\ud800-\udfff]")


def utf16_units(text: str) -> bytes:
    """The UTF-16 (big-endian) code units of ``text``; lone surrogates kept, as Java keeps them."""
    return text.encode("utf-16-be", "surrogatepass")


def java_code_units(text: str) -> str:
    """One character per UTF-16 code unit, so that indexes and lengths are Java's."""
    if _ASTRAL.search(text) is None:
        return text
    units = array("H")
    units.frombytes(text.encode("utf-16-le", "surrogatepass"))
    return "".join(map(chr, units))


def from_code_units(units: str) -> str:
    """Back to the canonical Python form (valid surrogate pairs joined)."""
    if SURROGATE.search(units) is None:
        return units
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def has_supplementary_characters(text: str) -> bool:
    """Whether ``text`` has characters that Java stores as a surrogate pair."""
    return _ASTRAL.search(text) is not None


def utf16_length(text: str) -> int:
    """``String.length()`` of the Java string that ``text`` stands for."""
    return len(text) + len(_ASTRAL.findall(text))


def java_string_compare(a: str, b: str) -> int:
    """The sign of ``a.compareTo(b)``: Java compares UTF-16 code units, not code points.

    Python's code point order differs from it only between characters above U+FFFF and those in
    U+E000..U+FFFF, so ASCII strings compare directly.
    """
    if not (a.isascii() and b.isascii()):
        a_units, b_units = utf16_units(a), utf16_units(b)
        return (a_units > b_units) - (a_units < b_units)
    return (a > b) - (a < b)


def java_collection_text(items: Iterable[object]) -> str:
    """``AbstractCollection.toString()``: ``[a, b, c]``."""
    return "[" + ", ".join(map(str, items)) + "]"


def java_split_on_comma(text: str) -> list[str]:
    """``String.split(",")``: no separator gives the whole text; otherwise trailing empties are dropped."""
    parts = text.split(",")
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``: optional sign, then Unicode decimal digits (UTF-16 units), 32 bits."""
    units = java_code_units(text)
    if not units:
        raise _number_format_error(text)
    negative = units[0] == "-"
    digits = units[1:] if units[0] in "+-" else units
    if not digits:
        raise _number_format_error(text)
    value = 0
    for unit in digits:
        digit = unicodedata.decimal(unit, -1)
        if digit < 0:
            raise _number_format_error(text)
        value = value * 10 + digit
        if value > INT_MAX + negative:
            raise _number_format_error(text)
    return -value if negative else value


def _number_format_error(text: str) -> CommandError:
    """``NumberFormatException.forInputString(s, 10)``."""
    return CommandError(f'For input string: "{text}"')


def decode_utf8_like_java(data: bytes) -> str:
    """``new String(bytes, StandardCharsets.UTF_8)`` (what Kafka's ``Utils.readFileAsString`` does).

    A byte order mark is kept (Jackson then rejects it). Malformed input becomes U+FFFD, but not always
    as many as Python's ``errors="replace"`` makes: Java replaces e.g. ``ED A0`` (a truncated surrogate)
    with one U+FFFD, so the decoder's own rules are followed at every malformed position.
    """
    parts: list[str] = []
    position = 0
    while True:
        try:
            parts.append(data[position:].decode("utf-8"))
            return "".join(parts)
        except UnicodeDecodeError as error:
            bad = position + error.start
            parts.append(data[position:bad].decode("utf-8"))
            text, position = _java_utf8_malformed_step(data, bad)
            parts.append(text)
            if position >= len(data):
                return "".join(parts)


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _java_utf8_malformed_step(data: bytes, start: int) -> tuple[str, int]:
    """One iteration of JDK ``String.decodeUTF8_UTF16`` with replacement, at a malformed position.

    Returns the decoded text and the next position (``len(data)`` when Java stops decoding).
    """
    end = len(data)
    lead = data[start]
    position = start + 1
    if 0xC2 <= lead <= 0xDF:  # two-byte lead; the next byte was not a continuation, or is missing
        return "\ufffd", position
    if 0xE0 <= lead <= 0xEF:
        if position + 1 < end:
            second, third = data[position], data[position + 1]
            overlong = lead == 0xE0 and second & 0xE0 == 0x80
            if overlong or not _is_continuation(second) or not _is_continuation(third):
                return "\ufffd", start + (1 if overlong or not _is_continuation(second) else 2)
            return "\ufffd", position + 2  # a UTF-8 encoded surrogate
        if position < end and (
            (lead == 0xE0 and data[position] & 0xE0 == 0x80) or not _is_continuation(data[position])
        ):
            return "\ufffd", position
        return "\ufffd", end
    if 0xF0 <= lead <= 0xF7:
        if position + 2 < end:
            return "\ufffd", start + _java_utf8_malformed4_length(data, start)
        if lead > 0xF4 or (position < end and _is_malformed4_second(lead, data[position])):
            return "\ufffd", position
        position += 1
        if position < end and not _is_continuation(data[position]):
            return "\ufffd", position
        return "\ufffd", end
    return "\ufffd", position


def _is_malformed4_second(lead: int, second: int) -> bool:
    return (
        (lead == 0xF0 and not 0x90 <= second <= 0xBF)
        or (lead == 0xF4 and second & 0xF0 != 0x80)
        or not _is_continuation(second)
    )


def _java_utf8_malformed4_length(data: bytes, start: int) -> int:
    lead, second = data[start], data[start + 1]
    if lead > 0xF4 or _is_malformed4_second(lead, second):
        return 1
    return 2 if not _is_continuation(data[start + 2]) else 3
