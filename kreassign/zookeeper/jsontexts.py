"""Kafka 2.8's texts for bad JSON input, from the messages of the current (Kafka 4.4.0) readers (pure).

Kafka 2.8 read the same documents with the same rules; what differs is wording: Jackson 2.10 quotes the
document in error locations (``[Source: (String)"..."; ...]``, the first 500 characters, then
``"[truncated N chars]``) where Jackson 2.21 writes ``REDACTED``, and reports where its reader stopped (after
the bad character or token) where 2.21 reports where the bad token starts; Scala's decoders say ```Int``` and
``JSON array``, and Scala prints lists as ``List(1, 2)``. Checked against Kafka 2.8.2 on the documents of
``tests/unit/test_zookeeper_jsontexts.py``; Jackson 2.21's document limits (nesting depth, number length)
did not exist in 2.10 and are not translated.
"""

from __future__ import annotations

import re

from kreassign.javacompat.text import from_code_units, java_code_units, utf16_length

_REDACTED = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled);"
_SNIPPET_UNITS = 500
_SIZE_MISMATCH = re.compile(
    r"Size of replicas list \[(.*)\] is different from size of log dirs list \[(.*)\] for partition (.*)", re.S
)


def jackson_2_10_source(text: str) -> str:
    """``JsonLocation`` 2.10's description of a String source."""
    length = utf16_length(text)
    snippet = from_code_units(java_code_units(text)[:_SNIPPET_UNITS])
    truncated = f"[truncated {length - _SNIPPET_UNITS} chars]" if length > _SNIPPET_UNITS else ""
    return f'(String)"{snippet}"{truncated}'


_FINAL_LOCATION = re.compile(r"(\n at \[Source: .*; line: \d+, column: )(\d+)\]", re.S)
_UNRECOGNIZED_TOKEN = re.compile(r"Unrecognized token '(.*)': was expecting ", re.S)
_ONE_CHARACTER_ERRORS = (
    "Unexpected character (",
    "Illegal unquoted character",
    "Unrecognized character escape",
    "Unexpected close marker",
)
_ROOT_CLOSE = re.compile(r"Unexpected close marker '([\]}])': no open (?:Object|Array) to close")


def _jackson_2_10_position(message: str) -> str:
    """Move the final location from the start of the bad token to just after it, as Jackson 2.10 did; a
    close marker at the top level was reported as a mismatch with the root context."""
    root = _ROOT_CLOSE.match(message)
    if root:
        expected = "]" if root.group(1) == "}" else "}"
        start = message.split("\n at ", 1)[1]
        message = (
            f"Unexpected close marker '{root.group(1)}': expected '{expected}' (for root starting at "
            f"{start.rsplit('; line:', 1)[0]}; line: 1, column: 0])\n at {start}"
        )
    token = _UNRECOGNIZED_TOKEN.match(message)
    if token:
        shift = utf16_length(token.group(1))
    elif message.startswith(_ONE_CHARACTER_ERRORS):
        shift = 1
    else:
        return message
    return _FINAL_LOCATION.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + shift}]", message)


def kafka_2_8_message(message: str, document: str) -> str:
    """The message Kafka 2.8's tool gives for ``document`` where Kafka 4.4.0's gives ``message``."""
    message = _jackson_2_10_position(message)
    message = message.replace(_REDACTED, f"[Source: {jackson_2_10_source(document)};")
    message = message.replace("[Source: UNKNOWN; byte offset: #UNKNOWN]", "[Source: UNKNOWN; line: -1, column: -1]")
    message = message.replace("Expected `Integer` value, received ", "Expected `Int` value, received ")
    message = message.replace("Expected `JSON array` value, received ", "Expected JSON array, received ")
    mismatch = _SIZE_MISMATCH.fullmatch(message)
    if mismatch:
        replicas, dirs, partition = mismatch.groups()
        message = (
            f"Size of replicas list List({replicas}) is different from size of log dirs list List({dirs}) "
            f"for partition {partition}"
        )
    return message
