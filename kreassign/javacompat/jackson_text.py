"""Text as Jackson sees it: Java's character classes on UTF-16 code units (identifiers, controls, hex
digits, how an unexpected character is described), and Jackson's ``TextBuffer`` segment growth, which decides
the length a too-long string is reported with."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Final

from kreassign.javacompat.jackson_errors import MAX_STRING_LENGTH, string_length_error

# ---------------------------------------------------------------------------------------------------
# Java character classification (on UTF-16 code units, as Jackson sees them)
# ---------------------------------------------------------------------------------------------------

_JAVA_ID_START_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"})
_JAVA_ID_PART_CATEGORIES: Final = _JAVA_ID_START_CATEGORIES | {"Nd", "Mn", "Mc", "Cf"}


@lru_cache(maxsize=4096)
def is_java_identifier_start(code: int) -> bool:
    """``Character.isJavaIdentifierStart(int)`` for a UTF-16 code unit."""
    return unicodedata.category(chr(code)) in _JAVA_ID_START_CATEGORIES


@lru_cache(maxsize=4096)
def is_java_identifier_part(code: int) -> bool:
    """``Character.isJavaIdentifierPart(char)``, identifier-ignorable controls included."""
    if code <= 0x08 or 0x0E <= code <= 0x1B or 0x7F <= code <= 0x9F:
        return True
    return unicodedata.category(chr(code)) in _JAVA_ID_PART_CATEGORIES


def is_iso_control(code: int) -> bool:
    return code <= 0x1F or 0x7F <= code <= 0x9F


def char_description(code: int) -> str:
    """Jackson's ``ParserMinimalBase._getCharDesc``."""
    if is_iso_control(code):
        return f"(CTRL-CHAR, code {code})"
    if code > 255:
        return f"'{chr(code)}' (code {code} / 0x{code:x})"
    return f"'{chr(code)}' (code {code})"


def hex_digit_value(code: int) -> int:
    """Jackson's ``CharTypes.charToHex``: it masks with 0xFF, so e.g. U+0130 counts as '0'."""
    low = chr(code & 0xFF)
    if "0" <= low <= "9":
        return ord(low) - 48
    if "a" <= low <= "f":
        return ord(low) - 87
    if "A" <= low <= "F":
        return ord(low) - 55
    return -1


class TextBufferModel:
    """Just enough of Jackson's ``TextBuffer`` to report the same length when a string is too long.

    Jackson validates the length of the segments it has filled, so the number in "String value
    length (N)" depends on how segments grew during the whole parse.
    """

    _DEFAULT_ALLOC = 200
    _MIN_SEGMENT = 500
    _MAX_SEGMENT = 0x10000

    def __init__(self) -> None:
        self.segment_length = 0  # length of the current segment (0: none allocated yet)
        self.current_size = 0
        self.segments_size = 0
        self.has_segments = False

    @staticmethod
    def _validate(length: int) -> None:
        if length > MAX_STRING_LENGTH:
            raise string_length_error(length)

    def _clear_segments(self) -> None:
        self.has_segments = False
        self.current_size = self.segments_size = 0

    def _grown(self, length: int) -> int:
        return min(max(length + (length >> 1), self._MIN_SEGMENT), self._MAX_SEGMENT)

    def _expand(self) -> None:
        self.has_segments = True
        self.segments_size += self.segment_length
        self.current_size = 0
        self.segment_length = self._grown(self.segment_length)

    def _finish_segment(self) -> None:
        self.has_segments = True
        self.segments_size += self.segment_length
        self.current_size = 0
        self._validate(self.segments_size)
        self.segment_length = self._grown(self.segment_length)

    def reset_with_shared(self) -> None:
        if self.has_segments:
            self._clear_segments()

    def reset_with_copy(self, length: int) -> None:
        if self.has_segments:
            self._clear_segments()
        elif self.segment_length == 0:
            self.segment_length = max(length, self._DEFAULT_ALLOC)
        self.current_size = self.segments_size = 0
        room = self.segment_length - self.current_size
        if room >= length:
            self.current_size += length
            return
        self._validate(self.segments_size + self.current_size + length)
        length -= room
        self.current_size = self.segment_length
        while length > 0:
            self._expand()
            amount = min(self.segment_length, length)
            self.current_size += amount
            length -= amount

    def current_segment_after_copy(self) -> None:
        if self.segment_length == 0:
            self.segment_length = self._DEFAULT_ALLOC
        elif self.current_size >= self.segment_length:
            self._expand()

    def unshare(self, shared_length: int) -> None:
        needed = shared_length + 1
        if self.segment_length == 0 or needed > self.segment_length:
            self.segment_length = max(needed, self._DEFAULT_ALLOC)
        self.segments_size = 0
        self.current_size = shared_length

    def empty_and_get_current_segment(self) -> None:
        self.current_size = 0
        if self.has_segments:
            self._clear_segments()
        if self.segment_length == 0:
            self.segment_length = self._DEFAULT_ALLOC

    def add_checking_before(self, count: int) -> None:
        """``if (outPtr >= outBuf.length) finishCurrentSegment(); outBuf[outPtr++] = c;`` count times."""
        while count > 0:
            if self.current_size >= self.segment_length:
                self._finish_segment()
            taken = min(count, self.segment_length - self.current_size)
            self.current_size += taken
            count -= taken

    def add_checking_after(self, count: int) -> None:
        """``outBuf[outPtr++] = c; if (outPtr >= outBuf.length) finishCurrentSegment();`` count times."""
        while count > 0:
            taken = min(count, self.segment_length - self.current_size)
            self.current_size += taken
            count -= taken
            if self.current_size >= self.segment_length:
                self._finish_segment()

    def validate_contents(self) -> None:
        self._validate(self.segments_size + self.current_size)
