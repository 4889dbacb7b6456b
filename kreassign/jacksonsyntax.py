"""Syntax check of JSON text with Jackson 2.21's error messages (as Kafka's ObjectMapper reports them).

Python's json module finds the same errors but words them differently; the Apache tool prints
Jackson's text after ``Error: ``, so this scanner walks the first JSON value iteratively (no recursion
limit) and raises ``JacksonSyntaxError`` with Jackson's message and location. Text after the first
value is not read, as with Jackson's default ``FAIL_ON_TRAILING_TOKENS=false``.
"""

from __future__ import annotations

import re

SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)"
MAX_NESTING_DEPTH = 1000
_VALUE_EXPECTED = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
_TOKEN_CHARS = re.compile(r"[^\s\[\]{}:,\"]*")
_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_WS = " \t\r\n"


class JacksonSyntaxError(ValueError):
    pass


def _char_desc(ch: str) -> str:
    code = ord(ch)
    if code < 32:
        return f"(CTRL-CHAR, code {code})"
    if code > 255:
        return f"'{ch}' (code {code} / 0x{code:x})"
    return f"'{ch}' (code {code})"


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def where(self, index: int) -> str:
        line = self.text.count("\n", 0, index) + 1
        column = index - (self.text.rfind("\n", 0, index) + 1) + 1
        return f"{SOURCE}; line: {line}, column: {column}]"

    def fail(self, message: str, index: int) -> None:
        raise JacksonSyntaxError(f"{message}\n at {self.where(index)}")

    def skip_ws(self) -> str | None:
        text, n = self.text, len(self.text)
        while self.i < n and text[self.i] in _WS:
            self.i += 1
        if self.i < n and text[self.i] == "/":
            self.fail(
                "Unexpected character ('/' (code 47)): maybe a (non-standard) comment? (not recognized as one since "
                "Feature 'ALLOW_COMMENTS' not enabled for parser)",
                self.i,
            )
        return text[self.i] if self.i < n else None

    def string(self) -> None:
        """At the opening quote; leaves ``i`` after the closing quote."""
        text, n = self.text, len(self.text)
        self.i += 1
        while True:
            if self.i >= n:
                self.fail("Unexpected end-of-input: was expecting closing quote for a string value", n)
            ch = text[self.i]
            if ch == '"':
                self.i += 1
                return
            if ch == "\\":
                if self.i + 1 >= n:
                    self.fail("Unexpected end-of-input in character escape sequence", n)
                esc = text[self.i + 1]
                if esc == "u":
                    hexdigits = text[self.i + 2 : self.i + 6]
                    bad = next((k for k, c in enumerate(hexdigits) if c not in "0123456789abcdefABCDEF"), None)
                    if bad is not None:
                        c = hexdigits[bad]
                        self.fail(
                            f"Unexpected character ({_char_desc(c)}): expected a hex-digit for character escape sequence",
                            self.i + 2 + bad,
                        )
                    if len(hexdigits) < 4:
                        self.fail("Unexpected end-of-input in character escape sequence", n)
                    self.i += 6
                    continue
                if esc not in '"\\/bfnrt':
                    self.fail(f"Unrecognized character escape {_char_desc(esc)}", self.i + 1)
                self.i += 2
                continue
            if ord(ch) < 32:
                self.fail(
                    f"Illegal unquoted character ({_char_desc(ch)}): has to be escaped using backslash to be "
                    "included in string value",
                    self.i,
                )
            self.i += 1

    def number(self) -> None:
        text, start = self.text, self.i
        if text.startswith("-", start) and (start + 1 >= len(text) or not text[start + 1].isdigit()):
            nxt = text[start + 1] if start + 1 < len(text) else None
            if nxt is None:
                self.fail(
                    "Unexpected end-of-input in numeric value: expected digit (0-9) to follow minus sign", start + 1
                )
            if text.startswith(("Infinity", "INF"), start + 1):
                self.fail(
                    "Non-standard token '-Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow",
                    start + 9,
                )
            self.fail(
                f"Unexpected character ({_char_desc(nxt)}) in numeric value: expected digit (0-9) to follow minus "
                "sign, for valid numeric value",
                start + 1,
            )
        digits_start = start + (1 if text[start] == "-" else 0)
        if text[digits_start] == "0" and digits_start + 1 < len(text) and text[digits_start + 1].isdigit():
            self.fail("Invalid numeric value: Leading zeroes not allowed", digits_start + 1)
        match = _NUMBER.match(text, start)
        end = match.end()
        if end < len(text) and text[end] == ".":
            after = text[end + 1] if end + 1 < len(text) else None
            if after is None:
                self.fail("Unexpected end-of-input in numeric value: Decimal point not followed by a digit", end + 1)
            self.fail(
                f"Unexpected character ({_char_desc(after)}) in numeric value: Decimal point not followed by a digit",
                end + 1,
            )
        if end < len(text) and text[end] in "eE":
            after = text[end + 1 : end + 2] or None
            if after in ("+", "-"):
                after = text[end + 2 : end + 3] or None
            if after is None:
                self.fail(
                    "Unexpected end-of-input in numeric value: Exponent indicator not followed by a digit", len(text)
                )
            self.fail(
                f"Unexpected character ({_char_desc(after)}) in numeric value: Exponent indicator not followed by a digit",
                end + 1,
            )
        self.i = end

    def scalar(self, ch: str) -> None:
        if ch == '"':
            self.string()
        elif ch == "-" or (ch.isdigit() and ch.isascii()):
            self.number()
        else:
            start = self.i
            token = _TOKEN_CHARS.match(self.text, start).group(0)
            if token in ("true", "false", "null"):
                self.i += len(token)
                return
            if token in ("NaN", "Infinity", "+Infinity", "+INF", "INF"):
                self.fail(
                    f"Non-standard token '{token}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow",
                    start + len(token),
                )
            if ch.isalpha() and ch.isascii():
                self.fail(f"Unrecognized token '{token}': was expecting {_VALUE_EXPECTED}", start)
            self.fail(f"Unexpected character ({_char_desc(ch)}): expected a valid value {_VALUE_EXPECTED}", start)

    def check(self) -> None:
        """Validate the first value. Containers are tracked on an explicit stack."""
        stack: list[tuple[str, int]] = []  # ("{" or "[", index of the opening char)
        expect_value = True
        first_in_container = False
        while True:
            ch = self.skip_ws()
            if expect_value:
                if ch is None:
                    if stack:
                        self._eof_in_container(stack)
                    return  # empty document: Jackson yields a missing node
                if ch in "}]" and (first_in_container or not stack):
                    if not stack:
                        kind = "Object" if ch == "}" else "Array"
                        self.fail(f"Unexpected close marker '{ch}': no open {kind} to close", self.i)
                    if (ch == "]") == (stack[-1][0] == "["):
                        self.i += 1
                        stack.pop()
                        expect_value, first_in_container = False, False
                        if not stack:
                            return
                        continue
                    self._mismatched_close(ch, stack)
                if stack and stack[-1][0] == "{":
                    if ch != '"':
                        if ch in "}]" and ch == "]":
                            self._mismatched_close(ch, stack)
                        self.fail(
                            f"Unexpected character ({_char_desc(ch)}): was expecting double-quote to start field name",
                            self.i,
                        )
                    self.string()
                    ch = self.skip_ws()
                    if ch is None:
                        self._eof_in_container(stack)
                    if ch != ":":
                        self.fail(
                            f"Unexpected character ({_char_desc(ch)}): was expecting a colon to separate field name and value",
                            self.i,
                        )
                    self.i += 1
                    ch = self.skip_ws()
                    if ch is None:
                        self._eof_in_container(stack)
                if ch in "{[":
                    if len(stack) >= MAX_NESTING_DEPTH:
                        self.fail(
                            f"Document nesting depth ({len(stack) + 1}) exceeds the maximum allowed "
                            f"({MAX_NESTING_DEPTH}, from `StreamReadConstraints.getMaxNestingDepth()`)",
                            self.i,
                        )
                    stack.append((ch, self.i))
                    self.i += 1
                    expect_value, first_in_container = True, True
                    if ch == "{":
                        # an object starts with a field name (or '}')
                        continue
                    continue
                if ch in "}]":
                    if stack and stack[-1][0] == "{" and ch == "}":
                        self.fail(
                            f"Unexpected character ({_char_desc(ch)}): was expecting double-quote to start field name",
                            self.i,
                        )
                    self.fail(
                        f"Unexpected character ({_char_desc(ch)}): expected a valid value {_VALUE_EXPECTED}", self.i
                    )
                self.scalar(ch)
                if not stack:
                    return
                expect_value, first_in_container = False, False
                continue
            # after a value inside a container
            if ch is None:
                self._eof_in_container(stack)
            kind, _ = stack[-1]
            closer = "}" if kind == "{" else "]"
            if ch == ",":
                self.i += 1
                expect_value, first_in_container = True, False
                continue
            if ch == closer:
                self.i += 1
                stack.pop()
                if not stack:
                    return
                continue
            if ch in "}]":
                self._mismatched_close(ch, stack)
            what = "Object entries" if kind == "{" else "Array entries"
            self.fail(f"Unexpected character ({_char_desc(ch)}): was expecting comma to separate {what}", self.i)

    def _eof_in_container(self, stack: list[tuple[str, int]]) -> None:
        kind, start = stack[-1]
        name = "Object" if kind == "{" else "Array"
        self.fail(
            f"Unexpected end-of-input: expected close marker for {name} (start marker at {self.where(start)})",
            len(self.text),
        )

    def _mismatched_close(self, ch: str, stack: list[tuple[str, int]]) -> None:
        kind, start = stack[-1]
        if kind == "[":
            self.fail(
                f"Unexpected close marker '{ch}': expected ']' (for Array starting at {self.where(start)})", self.i
            )
        self.fail(f"Unexpected close marker '{ch}': expected '}}' (for Object starting at {self.where(start)})", self.i)


def check_json_syntax(text: str) -> None:
    """Raise JacksonSyntaxError (Jackson's message and location) if the first JSON value is malformed."""
    _Scanner(text).check()
