"""Jackson 2.21's JSON reader as Apache Kafka 4.4.0's tools use it: ``ObjectMapper.readTree(String)``.

The Apache ``kafka-reassign-partitions`` tool parses its JSON files with a default Jackson
``ObjectMapper.readTree(String)`` (through ``org.apache.kafka.server.util.Json``) and prints Jackson's
exception messages verbatim. To keep our output byte-identical this module reproduces:

* which documents Jackson accepts (strict JSON, but anything after the first complete root value is
  ignored: ``{"a":1} xyz`` is accepted);
* the parsed values (see :mod:`kreassign.javacompat.jackson_nodes`);
* Jackson's error messages, including the ``line``/``column`` location (counted in UTF-16 code units,
  like Java), its nesting (1000), number (1000 digits) and string (20,000,000) limits.

Documents are first given to Python's C ``json`` scanner when they are containers without anything
Jackson could treat differently; the exact emulation of Jackson's ``ReaderBasedJsonParser`` (iterative,
so deep nesting cannot hit Python's recursion limit) handles everything else, including every error.

Strings are returned in canonical form: a Java string maps to the Python string whose UTF-16 encoding
(with ``surrogatepass``) is the same, valid surrogate pairs joined into one code point.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Final

from kreassign.gcpause import gc_paused
from kreassign.javacompat.jackson_errors import (
    JSON_EOF_EXCEPTION,
    JSON_PARSE_EXCEPTION,
    MAX_ERROR_TOKEN_LENGTH,
    MAX_NESTING_DEPTH,
    MAX_NUMBER_LENGTH,
    MAX_STRING_LENGTH,
    VALID_VALUES,
    JsonParseError,
    location_text,
    nesting_depth_error,
    number_length_error,
)
from kreassign.javacompat.jackson_nodes import MISSING, JsonValue
from kreassign.javacompat.jackson_text import (
    TextBufferModel,
    char_description,
    hex_digit_value,
    is_java_identifier_part,
    is_java_identifier_start,
)
from kreassign.javacompat.text import SURROGATE, from_code_units, java_code_units, utf16_length

# ---------------------------------------------------------------------------------------------------
# Reading: public entry points
# ---------------------------------------------------------------------------------------------------


def read_tree(text: str) -> JsonValue:
    """Jackson 2.21 ``new ObjectMapper().readTree(text)``.

    Returns :data:`MISSING` for an empty or whitespace-only document. Raises :class:`JsonParseError`
    or :class:`StreamConstraintsError` with Jackson's exact message.
    """
    with gc_paused():
        value = _read_with_python_scanner(text)
        if value is not _NOT_HANDLED:
            return value
        return _JacksonTreeReader(java_code_units(text)).read_document()


def try_parse_full(text: str) -> JsonValue:
    """Kafka's ``org.apache.kafka.server.util.Json.tryParseFull``."""
    if not text:
        raise JsonParseError(
            "The input string shouldn't be empty\n at [Source: UNKNOWN; byte offset: #UNKNOWN]",
            JSON_PARSE_EXCEPTION,
        )
    return read_tree(text)


# ---------------------------------------------------------------------------------------------------
# Reading: fast path through Python's C scanner
# ---------------------------------------------------------------------------------------------------


class _NotHandled:
    pass


_NOT_HANDLED: Final = _NotHandled()


class _UseJacksonReader(Exception):
    """Raised inside the C scanner's hooks when only the exact reader can decide."""


def _reject_constant(_name: str) -> float:
    raise _UseJacksonReader


def _parse_float_checked(text: str) -> float:
    if len(text) > MAX_NUMBER_LENGTH:
        raise _UseJacksonReader
    return float(text)


_PYTHON_DECODER: Final = json.JSONDecoder(parse_float=_parse_float_checked, parse_constant=_reject_constant)
_LEADING_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_COMMA_AND_SPACES: Final = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_LONG_DIGIT_RUN: Final = re.compile(f"[0-9]{{{MAX_NUMBER_LENGTH + 1}}}")


def _read_with_python_scanner(text: str) -> JsonValue | _NotHandled:
    """Parse a container document with Python's ``json``, when the result is surely Jackson's."""
    if not text.isascii() and SURROGATE.search(text) is not None:
        return _NOT_HANDLED
    start = _LEADING_WHITESPACE.match(text).end()  # type: ignore[union-attr]
    if start >= len(text) or text[start] not in "[{" or _has_long_digit_run(text):
        return _NOT_HANDLED
    try:
        value, end = _PYTHON_DECODER.raw_decode(text, start)
    except (ValueError, RecursionError, _UseJacksonReader):
        return _NOT_HANDLED
    document = text[start:end] if start or end < len(text) else text
    if _may_nest_too_deep(document) or _may_hold_too_long_string(document, value):
        return _NOT_HANDLED
    return value


_STRING_TOKEN: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_BRACKET_DEPTH_CHANGE: Final = {"[": 1, "{": 1, "]": -1, "}": -1}
_PLAIN_STRING_TOKEN: Final = re.compile(r'"[^"]*"')
_KEEP_QUOTES_AND_BRACKETS: Final = {code: None for code in range(128) if chr(code) not in '"[]{}'}
_DIGITS_TO_ZERO: Final = {code: ("0" if chr(code).isdigit() else " ") for code in range(128)}
_LONG_DIGIT_RUN_MARK: Final = "0" * (MAX_NUMBER_LENGTH + 1)


def _may_nest_too_deep(text: str, start: int = 0, end: int | None = None, outer_depth: int = 0) -> bool:
    """Whether valid JSON ``text[start:end]``, inside ``outer_depth`` containers, nests deeper than
    Jackson allows."""
    room = MAX_NESTING_DEPTH - outer_depth
    end = len(text) if end is None else end
    if text.count("[", start, end) + text.count("{", start, end) <= room:
        return False
    document = text[start:end]
    brackets = _brackets_outside_strings(document)
    return max(accumulate(map(_BRACKET_DEPTH_CHANGE.__getitem__, brackets))) > room


def _brackets_outside_strings(document: str) -> str:
    """The structural brackets of a valid JSON document, in order."""
    if document.isascii() and "\\" not in document:
        # Quotes and brackets only. Strings without brackets become '""' pairs; a bracket inside a
        # string would leave a quote behind (it sits after an odd number of quotes).
        reduced = document.translate(_KEEP_QUOTES_AND_BRACKETS)
        brackets = reduced.replace('""', "")
        if '"' not in brackets:
            return brackets
        return _PLAIN_STRING_TOKEN.sub("", reduced)
    return _NOT_BRACKET.sub("", _STRING_TOKEN.sub("", document))


def _has_long_digit_run(text: str) -> bool:
    """Whether a number may have more digits than Jackson allows (1000)."""
    if text.isascii():
        return _LONG_DIGIT_RUN_MARK in text.translate(_DIGITS_TO_ZERO)
    return _LONG_DIGIT_RUN.search(text) is not None


def _may_hold_too_long_string(document: str, value: JsonValue) -> bool:
    """Whether a string or name is longer than Jackson allows (20,000,000 UTF-16 units)."""
    return _may_have_long_string_token(document) and _longest_string(value) > MAX_STRING_LENGTH


def _may_have_long_string_token(document: str) -> bool:
    """Whether a string may be longer than Jackson allows (20,000,000 UTF-16 units).

    Such a string has at least 10,000,000 characters between its quotes, so (without escaped quotes)
    some aligned block of 5,000,000 characters holds no quote.
    """
    if 2 * len(document) <= MAX_STRING_LENGTH:
        return False
    if '\\"' in document:
        return True
    block = MAX_STRING_LENGTH // 4
    return any(document.find('"', offset, offset + block) < 0 for offset in range(0, len(document) - block + 1, block))


def _longest_string(value: JsonValue) -> int:
    longest = 0
    pending: list[JsonValue] = [value]
    while pending:
        node = pending.pop()
        if type(node) is dict:
            for key, child in node.items():
                longest = max(longest, utf16_length(key))
                pending.append(child)
        elif type(node) is list:
            pending.extend(node)
        elif type(node) is str:
            longest = max(longest, utf16_length(node))
    return longest


# ---------------------------------------------------------------------------------------------------
# Reading: exact emulation of Jackson's ReaderBasedJsonParser + JsonNodeDeserializer
# ---------------------------------------------------------------------------------------------------

# Jackson copies a String of up to 0x8000 chars into one buffer; longer ones are read through a
# StringReader into 4000-char buffers, and a few number paths depend on where a buffer ends.
_WHOLE_BUFFER_LIMIT: Final = 0x8000
_READER_BUFFER_SIZE: Final = 4000
_STRING_STOP: Final = re.compile(r'["\\\x00-\x1f]')
_SIMPLE_ESCAPES: Final = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "/": "/", "\\": "\\"}
_DIGITS: Final = frozenset("0123456789")


class _Context:
    __slots__ = ("index", "is_array", "start_column", "start_line")

    def __init__(self, is_array: bool, start_line: int, start_column: int) -> None:
        self.is_array = is_array
        self.start_line = start_line
        self.start_column = start_column
        self.index = -1

    def type_description(self) -> str:
        return "Array" if self.is_array else "Object"

    def expect_comma(self) -> bool:
        self.index += 1
        return self.index > 0


class _JacksonTreeReader:
    """Reads one document the way ``ObjectMapper.readTree(String)`` does, error for error."""

    def __init__(self, units: str) -> None:
        self.s = units
        self.n = len(units)
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.token_line = 1
        self.token_column = 0
        self.contexts: list[_Context] = []
        self.text_buffer = TextBufferModel()
        # Complete containers near the top may be read by Python's scanner when nothing in the
        # document can make Jackson see them differently (see _read_with_python_scanner).
        self.python_may_read_children = (
            SURROGATE.search(units) is None
            and not _has_long_digit_run(units)
            and not _may_have_long_string_token(units)
        )

    # -- locations and errors ----------------------------------------------------------------------

    def _current_location(self) -> str:
        return location_text(self.line, self.pos - self.line_start + 1)

    def _location_minus_one(self) -> str:
        return location_text(self.line, self.pos - self.line_start)

    def _error(self, message: str, location: str, java_class: str = JSON_PARSE_EXCEPTION) -> JsonParseError:
        return JsonParseError(f"{message}\n at {location}", java_class)

    def _eof_error(self, detail: str) -> JsonParseError:
        return self._error("Unexpected end-of-input" + detail, self._current_location(), JSON_EOF_EXCEPTION)

    def _unexpected_char(self, char: str, comment: str) -> JsonParseError:
        message = f"Unexpected character ({char_description(ord(char))}): {comment}"
        return self._error(message, self._location_minus_one())

    def _unexpected_number_char(self, char: str, comment: str) -> JsonParseError:
        message = f"Unexpected character ({char_description(ord(char))}) in numeric value: {comment}"
        return self._error(message, self._location_minus_one())

    def _invalid_space(self, char: str) -> JsonParseError:
        message = (
            f"Illegal character ({char_description(ord(char))}): "
            "only regular white space (\\r, \\n, \\t) is allowed between tokens"
        )
        if char == "\x1e":
            message += (
                " (consider enabling `JsonReadFeature.ALLOW_RS_CONTROL_CHAR` to allow use of "
                "Record Separators (\\u001E))"
            )
        return self._error(message, self._current_location())

    def _unquoted_control(self, char: str, where: str) -> JsonParseError:
        message = (
            f"Illegal unquoted character ({char_description(ord(char))}): "
            f"has to be escaped using backslash to be included in {where}"
        )
        return self._error(message, self._location_minus_one())

    def _comment_error(self) -> JsonParseError:
        return self._unexpected_char(
            "/",
            "maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' "
            "not enabled for parser)",
        )

    def _invalid_token(self, matched: str) -> JsonParseError:
        start = self.pos - len(matched)
        location = location_text(self.line, start - self.line_start + 1)
        token = matched
        while self.pos < self.n:
            code = ord(self.s[self.pos])
            if not is_java_identifier_part(code):
                break
            self.pos += 1
            token += self.s[self.pos - 1]
            if len(token) >= MAX_ERROR_TOKEN_LENGTH:
                token += "..."
                break
        return self._error(f"Unrecognized token '{token}': was expecting {VALID_VALUES}", location)

    @staticmethod
    def _context_start(context: _Context) -> str:
        return location_text(context.start_line, context.start_column)

    # -- buffers -----------------------------------------------------------------------------------

    def _buffer_end(self, index: int) -> int:
        """End of the Jackson input buffer holding the character at ``index``."""
        if self.n <= _WHOLE_BUFFER_LIMIT:
            return self.n
        return min(self.n, (index // _READER_BUFFER_SIZE + 1) * _READER_BUFFER_SIZE)

    # -- white space -------------------------------------------------------------------------------

    def _skip_carriage_return(self) -> None:
        if self.pos < self.n and self.s[self.pos] == "\n":
            self.pos += 1
        self.line += 1
        self.line_start = self.pos

    def _skip_space_char(self, char: str) -> None:
        """Handle one character below 0x21 read between tokens."""
        if char == "\n":
            self.line += 1
            self.line_start = self.pos
        elif char == "\r":
            self._skip_carriage_return()
        elif char != " " and char != "\t":
            raise self._invalid_space(char)

    def _next_significant(self) -> str | None:
        """Skip white space; '/' starts an (unsupported) comment. None at end of input."""
        s, n = self.s, self.n
        while self.pos < n:
            char = s[self.pos]
            self.pos += 1
            if char > " ":
                if char == "/":
                    raise self._comment_error()
                return char
            self._skip_space_char(char)
        return None

    def _skip_ws_or_end(self) -> str | None:
        char = self._next_significant()
        if char is None and self.contexts:
            context = self.contexts[-1]
            raise self._eof_error(
                f": expected close marker for {context.type_description()} "
                f"(start marker at {self._context_start(context)})"
            )
        return char

    def _skip_comma(self, char: str) -> str:
        context = self.contexts[-1]
        if char != ",":
            raise self._unexpected_char(char, f"was expecting comma to separate {context.type_description()} entries")
        following = self._next_significant()
        if following is None:
            raise self._error(
                f"Unexpected end-of-input within/between {context.type_description()} entries",
                self._current_location(),
            )
        return following

    def _skip_colon(self) -> str:
        got_colon = False
        s, n = self.s, self.n
        while self.pos < n:
            char = s[self.pos]
            self.pos += 1
            if char > " ":
                if char == "/":
                    raise self._comment_error()
                if got_colon:
                    return char
                if char != ":":
                    raise self._unexpected_char(char, "was expecting a colon to separate field name and value")
                got_colon = True
                continue
            self._skip_space_char(char)
        raise self._eof_error(" within/between Object entries")

    def _update_location(self) -> None:
        self.token_line = self.line
        self.token_column = self.pos - self.line_start

    # -- scopes ------------------------------------------------------------------------------------

    def _open_scope(self, is_array: bool) -> None:
        depth = len(self.contexts) + 1
        self.contexts.append(_Context(is_array, self.token_line, self.token_column))
        if depth > MAX_NESTING_DEPTH:
            raise nesting_depth_error(depth)

    def _close_scope(self, char: str) -> None:
        self._update_location()
        context = self.contexts[-1] if self.contexts else None
        if context is None:
            scope = "Object" if char == "}" else "Array"
            raise self._error(f"Unexpected close marker '{char}': no open {scope} to close", self._location_minus_one())
        if context.is_array != (char == "]"):
            expected = "]" if context.is_array else "}"
            raise self._error(
                f"Unexpected close marker '{char}': expected '{expected}' "
                f"(for {context.type_description()} starting at {self._context_start(context)})",
                self._location_minus_one(),
            )
        self.contexts.pop()

    # -- strings -----------------------------------------------------------------------------------

    def _decode_escape(self) -> str:
        if self.pos >= self.n:
            raise self._eof_error(" in character escape sequence")
        char = self.s[self.pos]
        self.pos += 1
        simple = _SIMPLE_ESCAPES.get(char)
        if simple is not None:
            return simple
        if char != "u":
            raise self._error(
                f"Unrecognized character escape {char_description(ord(char))}", self._location_minus_one()
            )
        value = 0
        for _ in range(4):
            if self.pos >= self.n:
                raise self._eof_error(" in character escape sequence")
            digit_char = self.s[self.pos]
            self.pos += 1
            digit = hex_digit_value(ord(digit_char))
            if digit < 0:
                raise self._unexpected_char(digit_char, "expected a hex-digit for character escape sequence")
            value = (value << 4) | digit
        return chr(value)

    def _read_string_value(self) -> str:
        """``_finishString`` + ``getText()``: the opening quote has been read."""
        s, start = self.s, self.pos
        end = self._buffer_end(start - 1)
        match = _STRING_STOP.search(s, start, end)
        if match is not None and s[match.start()] == '"':
            self.pos = match.end()
            self.text_buffer.reset_with_shared()
            return from_code_units(s[start : match.start()])
        stop = match.start() if match is not None else end
        buffer = self.text_buffer
        buffer.reset_with_copy(stop - start)
        buffer.current_segment_after_copy()
        parts = [s[start:stop]]
        self.pos = stop
        while True:
            match = _STRING_STOP.search(s, self.pos)
            if match is None:
                buffer.add_checking_before(self.n - self.pos)
                self.pos = self.n
                raise self._eof_error(": was expecting closing quote for a string value")
            buffer.add_checking_before(match.start() - self.pos)
            parts.append(s[self.pos : match.start()])
            self.pos = match.end()
            char = s[match.start()]
            if char == '"':
                break
            if char != "\\":
                raise self._unquoted_control(char, "string value")
            parts.append(self._decode_escape())
            buffer.add_checking_before(1)
        buffer.validate_contents()
        return from_code_units("".join(parts))

    def _read_name(self) -> str:
        """``_parseName``: the opening quote has been read."""
        s, start = self.s, self.pos
        end = self._buffer_end(start - 1)
        match = _STRING_STOP.search(s, start, end)
        if match is not None and s[match.start()] == '"':
            self.pos = match.end()
            return from_code_units(s[start : match.start()])
        stop = match.start() if match is not None else end
        buffer = self.text_buffer
        buffer.reset_with_shared()
        buffer.unshare(stop - start)
        parts = [s[start:stop]]
        self.pos = stop
        while True:
            match = _STRING_STOP.search(s, self.pos)
            if match is None:
                buffer.add_checking_after(self.n - self.pos)
                self.pos = self.n
                raise self._eof_error(" in field name")
            buffer.add_checking_after(match.start() - self.pos)
            parts.append(s[self.pos : match.start()])
            self.pos = match.end()
            char = s[match.start()]
            if char == '"':
                break
            if char != "\\":
                raise self._unquoted_control(char, "name")
            parts.append(self._decode_escape())
            buffer.add_checking_after(1)
        if buffer.has_segments:
            buffer.validate_contents()
        return from_code_units("".join(parts))

    # -- literals ----------------------------------------------------------------------------------

    def _match_token(self, token: str, matched: int) -> None:
        """``_matchToken``: the first ``matched`` characters of ``token`` have been read."""
        s, n = self.s, self.n
        for index in range(matched, len(token)):
            if self.pos >= n or s[self.pos] != token[index]:
                raise self._invalid_token(token[:index])
            self.pos += 1
        if self.pos < n:
            char = s[self.pos]
            if char >= "0" and char not in "]}" and is_java_identifier_part(ord(char)):
                raise self._invalid_token(token)

    def _non_standard_token(self, token: str) -> JsonParseError:
        return self._error(
            f"Non-standard token '{token}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow",
            self._current_location(),
        )

    def _odd_value(self, char: str) -> JsonParseError:
        """``_handleOddValue``: always an error with the default features."""
        if char == "N":
            self._match_token("NaN", 1)
            return self._non_standard_token("NaN")
        if char == "I":
            self._match_token("Infinity", 1)
            return self._non_standard_token("Infinity")
        if char == "+":
            if self.pos >= self.n:
                return self._eof_error(" in a Number value")
            following = self.s[self.pos]
            self.pos += 1
            return self._invalid_number_start(following, negative=False, has_sign=True)
        if is_java_identifier_start(ord(char)):
            return self._invalid_token(char)
        return self._unexpected_char(char, "expected a valid value " + VALID_VALUES)

    def _invalid_number_start(self, char: str, negative: bool, has_sign: bool) -> JsonParseError:
        if char == "I":
            if self.pos >= self.n:
                return self._eof_error(" in a Number value")
            char = self.s[self.pos]
            self.pos += 1
            sign = "-" if negative else "+"
            if char == "N":
                self._match_token(sign + "INF", 3)
                return self._non_standard_token(sign + "INF")
            if char == "n":
                self._match_token(sign + "Infinity", 3)
                return self._non_standard_token(sign + "Infinity")
        if has_sign and not negative:
            return self._unexpected_number_char(
                "+",
                "JSON spec does not allow numbers to have plus signs: enable "
                "`JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow",
            )
        if negative:
            return self._unexpected_number_char(
                char, "expected digit (0-9) to follow minus sign, for valid numeric value"
            )
        return self._unexpected_number_char(char, "expected digit (0-9) for valid numeric value")

    # -- numbers -----------------------------------------------------------------------------------

    def _verify_root_space(self, char: str) -> None:
        """Called with ``pos`` at ``char``, the character after a root-level number."""
        self.pos += 1
        if char in " \t":
            return
        if char == "\r":
            self.pos -= 1
            return
        if char == "\n":
            self.line += 1
            self.line_start = self.pos
            return
        raise self._unexpected_char(char, "Expected space separating root-level values")

    @staticmethod
    def _integer(text: str, digits: int) -> int:
        if digits > MAX_NUMBER_LENGTH:
            raise number_length_error(digits)
        return int(text)

    @staticmethod
    def _floating(text: str, digits: int) -> float:
        if digits > MAX_NUMBER_LENGTH:
            raise number_length_error(digits)
        return float(text)

    def _read_number(self, first: str) -> int | float:
        """``_parseUnsignedNumber`` / ``_parseSignedNumber``: ``first`` ('-' or a digit) has been read."""
        s = self.s
        start = self.pos - 1
        end = self._buffer_end(start)
        negative = first == "-"
        ptr = self.pos
        if negative:
            if ptr >= end:
                return self._read_number_slowly(True, start)
            char = s[ptr]
            ptr += 1
            if char not in _DIGITS:
                self.pos = ptr
                if char == ".":
                    raise self._odd_value(".")
                raise self._invalid_number_start(char, negative=True, has_sign=True)
            first = char
        if first == "0":
            return self._read_number_slowly(negative, start)
        int_length = 1
        while True:
            if ptr >= end:
                return self._read_number_slowly(negative, start)
            char = s[ptr]
            ptr += 1
            if char not in _DIGITS:
                break
            int_length += 1
        if char == "." or char in "eE":
            self.pos = ptr
            return self._read_fraction_and_exponent(char, start, ptr, end, negative, int_length)
        ptr -= 1
        self.pos = ptr
        self.text_buffer.reset_with_shared()
        if not self.contexts:
            self._verify_root_space(char)
        return self._integer(s[start:ptr], int_length)

    def _read_fraction_and_exponent(
        self, char: str, start: int, ptr: int, end: int, negative: bool, int_length: int
    ) -> int | float:
        """``_parseFloat``: ``pos`` stays after the '.' or 'e', which is where its errors point."""
        s = self.s
        fraction_length = 0
        if char == ".":
            while True:
                if ptr >= end:
                    return self._read_number_slowly(negative, start)
                char = s[ptr]
                ptr += 1
                if char not in _DIGITS:
                    break
                fraction_length += 1
            if fraction_length == 0:
                raise self._unexpected_number_char(char, "Decimal point not followed by a digit")
        exponent_length = 0
        if char in "eE":
            if ptr >= end:
                return self._read_number_slowly(negative, start)
            char = s[ptr]
            ptr += 1
            if char in "-+":
                if ptr >= end:
                    return self._read_number_slowly(negative, start)
                char = s[ptr]
                ptr += 1
            while char in _DIGITS:
                exponent_length += 1
                if ptr >= end:
                    return self._read_number_slowly(negative, start)
                char = s[ptr]
                ptr += 1
            if exponent_length == 0:
                raise self._unexpected_number_char(char, "Exponent indicator not followed by a digit")
        ptr -= 1
        self.pos = ptr
        self.text_buffer.reset_with_shared()
        if not self.contexts:
            self._verify_root_space(char)
        return self._floating(s[start:ptr], int_length + fraction_length + exponent_length)

    def _next_number_char(self, eof_message: str) -> str:
        if self.pos >= self.n:
            raise self._error("Unexpected end-of-input" + eof_message, self._current_location(), JSON_EOF_EXCEPTION)
        char = self.s[self.pos]
        self.pos += 1
        return char

    def _skip_leading_zeroes(self) -> str:
        """``_verifyNoLeadingZeroes``: a '0' has been read."""
        if self.pos < self.n and self.s[self.pos] in _DIGITS:
            raise self._error("Invalid numeric value: Leading zeroes not allowed", self._current_location())
        return "0"

    def _read_number_slowly(self, negative: bool, start: int) -> int | float:
        """``_parseNumber2``: the path Jackson takes for numbers that start with 0 or cross a buffer."""
        s, n = self.s, self.n
        buffer = self.text_buffer
        buffer.empty_and_get_current_segment()
        self.pos = start + 1 if negative else start
        if negative:
            buffer.current_size += 1
        char = self._next_number_char("No digit following sign")
        if char == "0":
            char = self._skip_leading_zeroes()
        at_end = False
        int_length = 0
        while char in _DIGITS:
            int_length += 1
            if self.pos >= n:
                char = "\0"
                at_end = True
                break
            char = s[self.pos]
            self.pos += 1
        buffer.add_checking_before(int_length)
        if int_length == 0:
            raise self._invalid_number_start(char, negative=negative, has_sign=False)
        fraction_length = -1
        if char == ".":
            fraction_length = 0
            while True:
                if self.pos >= n:
                    at_end = True
                    break
                char = s[self.pos]
                self.pos += 1
                if char not in _DIGITS:
                    break
                fraction_length += 1
            buffer.add_checking_before(1 + fraction_length)
            if fraction_length == 0:
                raise self._unexpected_number_char(char, "Decimal point not followed by a digit")
        exponent_length = -1
        if char in "eE":
            exponent_length = 0
            buffer.add_checking_before(1)
            char = self._next_number_char("expected a digit for number exponent")
            if char in "-+":
                buffer.add_checking_before(1)
                char = self._next_number_char("expected a digit for number exponent")
            while char in _DIGITS:
                exponent_length += 1
                if self.pos >= n:
                    at_end = True
                    break
                char = s[self.pos]
                self.pos += 1
            buffer.add_checking_before(exponent_length)
            if exponent_length == 0:
                raise self._unexpected_number_char(char, "Exponent indicator not followed by a digit")
        if not at_end:
            self.pos -= 1
        text = s[start : self.pos]
        if not at_end and not self.contexts:
            self._verify_root_space(char)
        if fraction_length < 0 and exponent_length < 0:
            return self._integer(text, int_length)
        return self._floating(text, int_length + fraction_length + exponent_length)

    # -- values ------------------------------------------------------------------------------------

    def _read_scalar_or_open(self, char: str) -> tuple[JsonValue, bool]:
        """The value starting with ``char`` (already read). For '[' or '{' returns a new empty container
        and True; the caller opens its scope."""
        if char == '"':
            return self._read_string_value(), False
        if char == "[":
            return [], True
        if char == "{":
            return {}, True
        if char == "t":
            self._match_token("true", 1)
            return True, False
        if char == "f":
            self._match_token("false", 1)
            return False, False
        if char == "n":
            self._match_token("null", 1)
            return None, False
        if char == "-" or char in _DIGITS:
            return self._read_number(char), False
        raise self._odd_value(char)

    def read_document(self) -> JsonValue:
        char = self._skip_ws_or_end()
        if char is None:
            return MISSING
        if char in "]}":
            self._close_scope(char)
        self._update_location()
        root, is_container = self._read_scalar_or_open(char)
        if not is_container:
            return root
        self._open_scope(type(root) is list)
        self._fill_containers(root)  # type: ignore[arg-type]
        return root

    def _read_child_value(self, char: str) -> tuple[JsonValue, bool]:
        if char in "[{" and self.python_may_read_children and len(self.contexts) <= 2:
            value = self._read_valid_container_with_python()
            if value is not _NOT_HANDLED:
                return value, False
        return self._read_scalar_or_open(char)

    def _read_valid_container_with_python(self) -> JsonValue | _NotHandled:
        """A whole container Jackson would accept, read at C speed (so that an error late in a big
        document is found quickly); ``_NOT_HANDLED`` when it has to be read token by token."""
        start = self.pos - 1
        try:
            value, end = _PYTHON_DECODER.raw_decode(self.s, start)
        except (ValueError, RecursionError, _UseJacksonReader):
            return _NOT_HANDLED
        if _may_nest_too_deep(self.s, start, end, len(self.contexts)):
            return _NOT_HANDLED
        self._count_lines(start, end)
        self.pos = end
        return value

    def _count_lines(self, start: int, end: int) -> None:
        """Line breaks in valid JSON between ``start`` and ``end`` (only white space holds them)."""
        s = self.s
        breaks = s.count("\n", start, end) + s.count("\r", start, end) - s.count("\r\n", start, end)
        if breaks:
            self.line += breaks
            self.line_start = max(s.rfind("\n", start, end), s.rfind("\r", start, end)) + 1

    def _read_valid_elements_with_python(self, array: list[JsonValue]) -> None:
        """Following elements of ``array`` that are whole containers Jackson would accept, read at
        C speed until something needs a closer look."""
        s = self.s
        context = self.contexts[-1]
        depth = len(self.contexts)
        while True:
            separator = _COMMA_AND_SPACES.match(s, self.pos)
            if separator is None or context.index < 0:
                return
            start = separator.end()
            if start >= self.n or s[start] not in "[{":
                return
            try:
                value, end = _PYTHON_DECODER.raw_decode(s, start)
            except (ValueError, RecursionError, _UseJacksonReader):
                return
            if _may_nest_too_deep(s, start, end, depth):
                return
            self._count_lines(self.pos, end)
            context.index += 1
            array.append(value)
            self.pos = end

    def _fill_containers(self, root: dict[str, JsonValue] | list[JsonValue]) -> None:
        open_containers: list[dict[str, JsonValue] | list[JsonValue]] = [root]
        while open_containers:
            container = open_containers[-1]
            if type(container) is list and self.python_may_read_children and len(self.contexts) <= 2:
                self._read_valid_elements_with_python(container)
            char = self._skip_ws_or_end()
            assert char is not None  # end of input inside a container raised already
            if char in "]}":
                self._close_scope(char)
                open_containers.pop()
                continue
            if self.contexts[-1].expect_comma():
                char = self._skip_comma(char)
            if type(container) is dict:
                if char != '"':
                    raise self._unexpected_char(char, "was expecting double-quote to start field name")
                name = self._read_name()
                char = self._skip_colon()
                self._update_location()
                value, is_container = self._read_child_value(char)
                container[name] = value
            else:
                self._update_location()
                if char == "}":  # after a comma: nextToken's own case, not _handleOddValue
                    raise self._unexpected_char(char, "expected a value")
                value, is_container = self._read_child_value(char)
                container.append(value)  # type: ignore[union-attr]
            if is_container:
                self._open_scope(type(value) is list)
                open_containers.append(value)  # type: ignore[arg-type]
