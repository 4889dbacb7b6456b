"""Jackson's exceptions as the Apache tool prints them, and the limits of ``StreamReadConstraints`` (nesting,
number and string lengths) with their messages."""

from __future__ import annotations

from typing import Final

from kreassign.errors import InvalidJsonError

# ---------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------

JSON_PARSE_EXCEPTION: Final = "com.fasterxml.jackson.core.JsonParseException"
JSON_EOF_EXCEPTION: Final = "com.fasterxml.jackson.core.io.JsonEOFException"
STREAM_CONSTRAINTS_EXCEPTION: Final = "com.fasterxml.jackson.core.exc.StreamConstraintsException"


class JacksonError(InvalidJsonError):
    """A Jackson ``JsonProcessingException``; ``message`` is exactly its ``getMessage()``."""

    def __init__(self, message: str, java_class: str) -> None:
        super().__init__(message)
        self.java_class = java_class


class JsonParseError(JacksonError):
    """``JsonParseException`` (or its subclass ``JsonEOFException``): malformed input."""


class StreamConstraintsError(JacksonError):
    """``StreamConstraintsException``: a document limit was exceeded. Not a ``JsonParseException``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, STREAM_CONSTRAINTS_EXCEPTION)


SOURCE_DESCRIPTION: Final = "REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)"
VALID_VALUES: Final = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
MAX_NESTING_DEPTH: Final = 1000
MAX_NUMBER_LENGTH: Final = 1000
MAX_STRING_LENGTH: Final = 20_000_000
MAX_ERROR_TOKEN_LENGTH: Final = 256


def location_text(line: int, column: int) -> str:
    return f"[Source: {SOURCE_DESCRIPTION}; line: {line}, column: {column}]"


def nesting_depth_error(depth: int) -> StreamConstraintsError:
    return StreamConstraintsError(
        f"Document nesting depth ({depth}) exceeds the maximum allowed ({MAX_NESTING_DEPTH}, "
        "from `StreamReadConstraints.getMaxNestingDepth()`)"
    )


def number_length_error(length: int) -> StreamConstraintsError:
    return StreamConstraintsError(
        f"Number value length ({length}) exceeds the maximum allowed ({MAX_NUMBER_LENGTH}, "
        "from `StreamReadConstraints.getMaxNumberLength()`)"
    )


def string_length_error(length: int) -> StreamConstraintsError:
    return StreamConstraintsError(
        f"String value length ({length}) exceeds the maximum allowed ({MAX_STRING_LENGTH}, "
        "from `StreamReadConstraints.getMaxStringLength()`)"
    )
