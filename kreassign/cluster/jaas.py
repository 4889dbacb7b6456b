"""``sasl.jaas.config`` as Kafka's ``JaasConfig`` parses it (``java.io.StreamTokenizer`` syntax)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    control_flag: str
    options: Mapping[str, str] = field(repr=False)


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """``sasl.jaas.config`` as Kafka's ``JaasConfig`` reads it with ``java.io.StreamTokenizer``:
    ``<LoginModule> <flag> key=value ... ;``. Values are words or quoted strings; an unquoted value
    that starts with a digit is a number token, which Java rejects ("Value not specified ...")."""
    tokens = _JaasTokenizer(text)
    entries = []
    while tokens.next() != _EOF:
        module = tokens.sval
        if tokens.next() == _EOF:
            raise ValueError("Login module control flag not specified in JAAS config")
        flag = tokens.sval
        if flag is None:
            raise ValueError("Login module control flag is not available in the JAAS config")
        if flag.upper() not in ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL"):
            raise ValueError(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        while tokens.next() != _EOF and tokens.ttype != ";":
            key = "null" if tokens.sval is None else tokens.sval  # Java formats a missing key as null
            if tokens.next() != "=" or tokens.next() == _EOF or tokens.sval is None:
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = tokens.sval
        if tokens.ttype != ";":
            raise ValueError("JAAS config entry not terminated by semi-colon")
        if not module:
            raise ValueError("Login module name not specified in JAAS config")
        entries.append(JaasEntry(module, flag.upper(), options))
    if not entries:
        raise ValueError("Login module not specified in JAAS config")
    return entries


def parse_jaas_file(text: str) -> dict[str, list[JaasEntry]]:
    """A JAAS login configuration file (``-Djava.security.auth.login.config``): ``Name { <entries> };`` sections,
    each entry as in ``sasl.jaas.config``."""
    tokens = _JaasTokenizer(text)
    sections: dict[str, list[JaasEntry]] = {}
    while tokens.next() != _EOF:
        name = tokens.sval
        if name is None:
            raise ValueError(f"expected a section name, found '{tokens.ttype}'")
        if tokens.next() != "{":
            raise ValueError(f"expected '{{' after {name}")
        start = tokens.pos
        depth_end = text.find("}", start)
        if depth_end < 0:
            raise ValueError(f"the section {name} has no closing '}}'")
        body = text[start:depth_end]
        sections[name] = parse_jaas_config(body) if body.strip() else []
        tokens.pos = depth_end + 1
        if tokens.next() not in (";", _EOF):
            raise ValueError(f"expected ';' after the section {name}")
    return sections


_EOF = "<EOF>"
_WORD = "<WORD>"
_NUMBER = "<NUMBER>"
_QUOTE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _JaasTokenizer:
    """The parts of ``java.io.StreamTokenizer``'s default syntax that Kafka's JaasConfig relies on,
    with ``//`` and ``/* */`` comments and ``-``, ``_``, ``$`` as word characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ttype: str = ""
        self.sval: str | None = None

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    @staticmethod
    def _is_alpha(char: str) -> bool:
        code = ord(char)
        return (char.isascii() and char.isalpha()) or char in "_$-" or code >= 160

    @staticmethod
    def _is_digit(char: str) -> bool:
        return char in "0123456789.-"

    def next(self) -> str:
        self.sval = None
        while True:
            char = self._peek()
            if not char:
                self.ttype = _EOF
                return self.ttype
            if ord(char) <= 32:
                self.pos += 1
                continue
            if self._is_digit(char):
                return self._number()
            if self._is_alpha(char):
                start = self.pos
                while self._peek() and (self._is_alpha(self._peek()) or self._is_digit(self._peek())):
                    self.pos += 1
                self.sval = self.text[start : self.pos]
                self.ttype = _WORD
                return self.ttype
            if char in "\"'":
                return self._quoted(char)
            if char == "/":
                self.pos += 1
                if self._peek() == "*":
                    end = self.text.find("*/", self.pos + 1)
                    self.pos = len(self.text) if end < 0 else end + 2
                else:  # "//" and a lone "/" (a comment character by default) both end the line
                    while self._peek() and self._peek() not in "\r\n":
                        self.pos += 1
                continue
            self.pos += 1
            self.ttype = char
            return self.ttype

    def _number(self) -> str:
        if self._peek() == "-":
            self.pos += 1
            if not self._peek() or self._peek() not in "0123456789.":
                self.ttype = "-"
                return self.ttype
        seen_dot = False
        while self._peek() and ((self._peek().isdigit() and self._peek().isascii()) or self._peek() == "."):
            if self._peek() == ".":
                if seen_dot:
                    break
                seen_dot = True
            self.pos += 1
        self.ttype = _NUMBER
        return self.ttype

    def _quoted(self, quote: str) -> str:
        self.pos += 1
        out: list[str] = []
        while self._peek() and self._peek() not in (quote, "\n", "\r"):
            char = self._peek()
            self.pos += 1
            if char == "\\" and self._peek():
                char = self._peek()
                self.pos += 1
                if char in "01234567":
                    digits = char
                    limit = 3 if char <= "3" else 2
                    while len(digits) < limit and self._peek() and self._peek() in "01234567":
                        digits += self._peek()
                        self.pos += 1
                    char = chr(int(digits, 8))
                else:
                    char = _QUOTE_ESCAPES.get(char, char)
            out.append(char)
        if self._peek() == quote:
            self.pos += 1
        self.sval = "".join(out)
        self.ttype = quote
        return self.ttype
