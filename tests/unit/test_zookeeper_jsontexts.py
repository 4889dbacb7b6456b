"""Kafka 2.8's texts for bad reassignment JSON: every message below was printed by Kafka 2.8.2's tool (the
``Error:`` line and its continuation, stack trace left out) for the document next to it."""

from __future__ import annotations

import pytest

from kreassign.errors import CommandError
from kreassign.zookeeper.command import parse_plan
from kreassign.zookeeper.jsontexts import jackson_2_10_source

KAFKA_2_8_2_MESSAGES = [
    (
        '{"a":"b\n"}',
        'Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped using backslash to be included in string value\n at [Source: (String)"{"a":"b\n"}"; line: 1, column: 9]',
    ),
    (
        '{"a":"\\q"}',
        'Unrecognized character escape \'q\' (code 113)\n at [Source: (String)"{"a":"\\q"}"; line: 1, column: 9]',
    ),
    (
        '{"a":-}',
        'Unexpected character (\'}\' (code 125)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value\n at [Source: (String)"{"a":-}"; line: 1, column: 8]',
    ),
    (
        '{"a":1.}',
        'Unexpected character (\'}\' (code 125)) in numeric value: Decimal point not followed by a digit\n at [Source: (String)"{"a":1.}"; line: 1, column: 8]',
    ),
    (
        '{"a":"\\u00zz"}',
        'Unexpected character (\'z\' (code 122)): expected a hex-digit for character escape sequence\n at [Source: (String)"{"a":"\\u00zz"}"; line: 1, column: 12]',
    ),
    (
        "}",
        "Unexpected close marker '}': expected ']' (for root starting at [Source: (String)\"}\"; line: 1, column: 0])\n at [Source: (String)\"}\"; line: 1, column: 2]",
    ),
    (
        '{"a":[1}',
        'Unexpected close marker \'}\': expected \']\' (for Array starting at [Source: (String)"{"a":[1}"; line: 1, column: 6])\n at [Source: (String)"{"a":[1}"; line: 1, column: 9]',
    ),
    (
        '\n\n  {"a":x}',
        "Unrecognized token 'x': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"\n\n  {\"a\":x}\"; line: 3, column: 9]",
    ),
    (
        '{"a":1e}',
        'Unexpected character (\'}\' (code 125)) in numeric value: Exponent indicator not followed by a digit\n at [Source: (String)"{"a":1e}"; line: 1, column: 8]',
    ),
    (
        '{"a":x}',
        "Unrecognized token 'x': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"{\"a\":x}\"; line: 1, column: 7]",
    ),
    (
        '{"a":xyz}',
        "Unrecognized token 'xyz': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"{\"a\":xyz}\"; line: 1, column: 9]",
    ),
    (
        "nonsense",
        "Unrecognized token 'nonsense': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"nonsense\"; line: 1, column: 9]",
    ),
    (
        '{"a":1,}',
        'Unexpected character (\'}\' (code 125)): was expecting double-quote to start field name\n at [Source: (String)"{"a":1,}"; line: 1, column: 9]',
    ),
    (
        '{"a" 1}',
        'Unexpected character (\'1\' (code 49)): was expecting a colon to separate field name and value\n at [Source: (String)"{"a" 1}"; line: 1, column: 7]',
    ),
    (
        "[1,2",
        'Unexpected end-of-input: expected close marker for Array (start marker at [Source: (String)"[1,2"; line: 1, column: 1])\n at [Source: (String)"[1,2"; line: 1, column: 5]',
    ),
    (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}',
        'Unexpected end-of-input: expected close marker for Array (start marker at [Source: (String)"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}"; line: 1, column: 27])\n at [Source: (String)"{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}"; line: 1, column: 72]',
    ),
    (
        '{"version":1,"partitions":[{"topic":"t","partition":"x","replicas":[1,2]}]}',
        'Expected `Int` value, received "x"',
    ),
    (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
        "Size of replicas list List(1, 2) is different from size of log dirs list List(any) for partition t-0",
    ),
    ('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":5}]}', "Expected JSON array, received 5"),
    ("", "The input string shouldn't be empty\n at [Source: UNKNOWN; line: -1, column: -1]"),
]


@pytest.mark.parametrize(("document", "message"), KAFKA_2_8_2_MESSAGES)
def test_messages_are_kafka_2_8s(document, message):
    with pytest.raises(CommandError) as caught:
        parse_plan(document)
    assert caught.value.message == message


def test_long_documents_are_truncated_like_jackson_2_10():
    assert jackson_2_10_source("x" * 500) == '(String)"' + "x" * 500 + '"'
    assert jackson_2_10_source("x" * 627) == '(String)"' + "x" * 500 + '"[truncated 127 chars]'
