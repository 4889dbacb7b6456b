"""kreassign.javacompat's Jackson reader and writer, Double.toString and UTF-8 decoding against Jackson 2.21 / Java 17 as the Apache tool runs them.

Every expected value below was produced by the real libraries (jackson-databind 2.21.2 through
``new ObjectMapper().readTree(String)``, ``Double.toString`` and ``new String(bytes, UTF_8)`` on
OpenJDK 17) and pasted here; none comes from kreassign itself.
"""

from __future__ import annotations

import contextlib
import math
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign.errors import KreassignError
from kreassign.javacompat import jackson_reader
from kreassign.javacompat.doubles import java_double_to_string
from kreassign.javacompat.jackson_errors import JacksonError
from kreassign.javacompat.jackson_nodes import MISSING, is_int_node, is_long_node
from kreassign.javacompat.jackson_reader import read_tree, try_parse_full
from kreassign.javacompat.jackson_writer import node_to_string
from kreassign.javacompat.text import decode_utf8_like_java, java_code_units

PARSE = "com.fasterxml.jackson.core.JsonParseException"
EOF = "com.fasterxml.jackson.core.io.JsonEOFException"
LIMIT = "com.fasterxml.jackson.core.exc.StreamConstraintsException"


def src(line: int, column: int) -> str:
    """Jackson's location text (source description redacted, as by default since 2.16)."""
    return (
        f"[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}]"
    )


READ_CASES = [
    pytest.param(
        '{"a":1} xyz',
        '{"a":1}',
        id="trailing-garbage-after-object",
    ),
    pytest.param(
        "[1]]",
        "[1]",
        id="trailing-garbage-after-array",
    ),
    pytest.param(
        "1 x",
        "1",
        id="root-number-then-space-garbage",
    ),
    pytest.param(
        "123abc",
        (
            PARSE,
            (("Unexpected character ('a' (code 97)): Expected space separating root-level values\n at ") + src(1, 4)),
        ),
        id="root-number-glued-garbage",
    ),
    pytest.param(
        "{}",
        "{}",
        id="empty-object",
    ),
    pytest.param(
        " \t\r\n",
        "",
        id="whitespace-only",
    ),
    pytest.param(
        "null",
        "null",
        id="null-root",
    ),
    pytest.param(
        '{"a":1,"b":2,"a":3}',
        '{"a":3,"b":2}',
        id="duplicate-keys-last-wins-first-position",
    ),
    pytest.param(
        '{"a":null}',
        '{"a":null}',
        id="null-value-kept",
    ),
    pytest.param(
        ("[2147483647,2147483648,-2147483648,-2147483649,9223372036854775807,9223372036854775808,-0,0.0,-0.0]"),
        ("[2147483647,2147483648,-2147483648,-2147483649,9223372036854775807,9223372036854775808,0,0.0,-0.0]"),
        id="number-kinds",
    ),
    pytest.param(
        ("[1.0,1e10,1e-5,0.002,1e7,1e-3,123456789.0,1.0E-4,1.5,100,1e2,1e23,2.773e21]"),
        (
            "[1.0,1.0E10,1.0E-5,0.002,1.0E7,0.001,1.23456789E8,1.0E-4,1.5,100,"
            "100.0,9.999999999999999E22,2.7729999999999997E21]"
        ),
        id="doubles",
    ),
    pytest.param(
        "[1e400,-1e400]",
        '["Infinity","-Infinity"]',
        id="infinity-from-overflow",
    ),
    pytest.param(
        '["\\u0000\\u001f\\u007f/\\\\\\"\\b\\t\\n\\f\\r\\u2028\\ud83d\\ude00\\ud800 é"]',
        '["\\u0000\\u001F\x7f/\\\\\\"\\b\\t\\n\\f\\r\u2028😀\ud800 é"]',
        id="string-escapes-output",
    ),
    pytest.param(
        '["\\uİİŁı"]',
        '["¡"]',
        id="masked-hex-escape",
    ),
    pytest.param(
        "-",
        (EOF, ("Unexpected end-of-inputNo digit following sign\n at " + src(1, 2))),
        id="minus-alone",
    ),
    pytest.param(
        "-x",
        (
            PARSE,
            (
                (
                    "Unexpected character ('x' (code 120)) in numeric value: expected "
                    "digit (0-9) to follow minus sign, for valid numeric value\n at "
                )
                + src(1, 2)
            ),
        ),
        id="minus-letter",
    ),
    pytest.param(
        "+1",
        (
            PARSE,
            (
                (
                    "Unexpected character ('+' (code 43)) in numeric value: JSON spec does "
                    "not allow numbers to have plus signs: enable "
                    "`JsonReadFeature.ALLOW_LEADING_PLUS_SIGN_FOR_NUMBERS` to allow\n at "
                )
                + src(1, 2)
            ),
        ),
        id="plus-number",
    ),
    pytest.param(
        "+",
        (EOF, ("Unexpected end-of-input in a Number value\n at " + src(1, 2))),
        id="plus-alone",
    ),
    pytest.param(
        "+I",
        (EOF, ("Unexpected end-of-input in a Number value\n at " + src(1, 3))),
        id="plus-I-eof",
    ),
    pytest.param(
        "+In",
        (
            PARSE,
            (
                (
                    "Unrecognized token '+In': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="plus-In",
    ),
    pytest.param(
        "+INF",
        (
            PARSE,
            (
                ("Non-standard token '+INF': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at ")
                + src(1, 5)
            ),
        ),
        id="plus-INF",
    ),
    pytest.param(
        "[-Infinity]",
        (
            PARSE,
            (
                ("Non-standard token '-Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at ")
                + src(1, 11)
            ),
        ),
        id="minus-Infinity",
    ),
    pytest.param(
        "NaN",
        (
            PARSE,
            (
                ("Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at ")
                + src(1, 4)
            ),
        ),
        id="NaN",
    ),
    pytest.param(
        '{"a":Infinity}',
        (
            PARSE,
            (
                ("Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow\n at ")
                + src(1, 14)
            ),
        ),
        id="Infinity",
    ),
    pytest.param(
        "Nope",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'Nope': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="unknown-token",
    ),
    pytest.param(
        "[nul]",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'nul': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="truncated-null",
    ),
    pytest.param(
        "nullx",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'nullx': was expecting (JSON String, Number, Array,"
                    " Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="null-glued",
    ),
    pytest.param(
        "true1",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'true1': was expecting (JSON String, Number, Array,"
                    " Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="true-glued-digit",
    ),
    pytest.param(
        '[true"x"]',
        (
            PARSE,
            (
                ("Unexpected character ('\"' (code 34)): was expecting comma to separate Array entries\n at ")
                + src(1, 6)
            ),
        ),
        id="true-then-quote",
    ),
    pytest.param(
        (
            "[xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxx]"
        ),
        (
            PARSE,
            (
                (
                    "Unrecognized token 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
                    ": was expecting (JSON String, Number, Array, Object or token 'null', "
                    "'true' or 'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="long-token-truncated",
    ),
    pytest.param(
        "[1.]",
        (
            PARSE,
            (
                ("Unexpected character (']' (code 93)) in numeric value: Decimal point not followed by a digit\n at ")
                + src(1, 3)
            ),
        ),
        id="decimal-point-no-digit-in-array",
    ),
    pytest.param(
        "1.",
        (
            PARSE,
            (
                ("Unexpected character ('.' (code 46)) in numeric value: Decimal point not followed by a digit\n at ")
                + src(1, 2)
            ),
        ),
        id="decimal-point-no-digit-at-end",
    ),
    pytest.param(
        "1.e5",
        (
            PARSE,
            (
                ("Unexpected character ('e' (code 101)) in numeric value: Decimal point not followed by a digit\n at ")
                + src(1, 2)
            ),
        ),
        id="decimal-point-then-exponent",
    ),
    pytest.param(
        "1e",
        (EOF, ("Unexpected end-of-inputexpected a digit for number exponent\n at " + src(1, 3))),
        id="exponent-at-end",
    ),
    pytest.param(
        "1e+",
        (EOF, ("Unexpected end-of-inputexpected a digit for number exponent\n at " + src(1, 4))),
        id="exponent-sign-at-end",
    ),
    pytest.param(
        "[1e]",
        (
            PARSE,
            (
                (
                    "Unexpected character (']' (code 93)) in numeric value: Exponent "
                    "indicator not followed by a digit\n at "
                )
                + src(1, 3)
            ),
        ),
        id="exponent-no-digit-in-array",
    ),
    pytest.param(
        "[1.5e]",
        (
            PARSE,
            (
                (
                    "Unexpected character (']' (code 93)) in numeric value: Exponent "
                    "indicator not followed by a digit\n at "
                )
                + src(1, 3)
            ),
        ),
        id="fraction-then-bad-exponent",
    ),
    pytest.param(
        "01",
        (PARSE, ("Invalid numeric value: Leading zeroes not allowed\n at " + src(1, 2))),
        id="leading-zero-root",
    ),
    pytest.param(
        "[01]",
        (PARSE, ("Invalid numeric value: Leading zeroes not allowed\n at " + src(1, 3))),
        id="leading-zero-in-array",
    ),
    pytest.param(
        "-01",
        (PARSE, ("Invalid numeric value: Leading zeroes not allowed\n at " + src(1, 3))),
        id="negative-leading-zero",
    ),
    pytest.param(
        "0x",
        (
            PARSE,
            (("Unexpected character ('x' (code 120)): Expected space separating root-level values\n at ") + src(1, 2)),
        ),
        id="zero-then-letter-root",
    ),
    pytest.param(
        "[1x]",
        (
            PARSE,
            (
                ("Unexpected character ('x' (code 120)): was expecting comma to separate Array entries\n at ")
                + src(1, 3)
            ),
        ),
        id="number-glued-in-array",
    ),
    pytest.param(
        '"abc',
        (EOF, (("Unexpected end-of-input: was expecting closing quote for a string value\n at ") + src(1, 5))),
        id="unterminated-string",
    ),
    pytest.param(
        '"a\nb"',
        (
            PARSE,
            (
                (
                    "Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped "
                    "using backslash to be included in string value\n at "
                )
                + src(1, 3)
            ),
        ),
        id="newline-in-string",
    ),
    pytest.param(
        '{"a\nb":1}',
        (
            PARSE,
            (
                (
                    "Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped "
                    "using backslash to be included in name\n at "
                )
                + src(1, 4)
            ),
        ),
        id="newline-in-name",
    ),
    pytest.param(
        '"\\x"',
        (PARSE, ("Unrecognized character escape 'x' (code 120)\n at " + src(1, 3))),
        id="bad-escape",
    ),
    pytest.param(
        '"\\u12"',
        (
            PARSE,
            (
                ("Unexpected character ('\"' (code 34)): expected a hex-digit for character escape sequence\n at ")
                + src(1, 6)
            ),
        ),
        id="short-unicode-escape",
    ),
    pytest.param(
        '"\\u12g4"',
        (
            PARSE,
            (
                ("Unexpected character ('g' (code 103)): expected a hex-digit for character escape sequence\n at ")
                + src(1, 6)
            ),
        ),
        id="bad-unicode-escape",
    ),
    pytest.param(
        '["\\',
        (EOF, ("Unexpected end-of-input in character escape sequence\n at " + src(1, 4))),
        id="escape-at-end",
    ),
    pytest.param(
        "[1,]",
        (
            PARSE,
            (
                (
                    "Unexpected character (']' (code 93)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 4)
            ),
        ),
        id="trailing-comma-array",
    ),
    pytest.param(
        '{"a":1,}',
        (
            PARSE,
            (
                ("Unexpected character ('}' (code 125)): was expecting double-quote to start field name\n at ")
                + src(1, 8)
            ),
        ),
        id="trailing-comma-object",
    ),
    pytest.param(
        "[1,}",
        (PARSE, ("Unexpected character ('}' (code 125)): expected a value\n at " + src(1, 4))),
        id="close-curly-after-comma-in-array",
    ),
    pytest.param(
        "[1 2]",
        (
            PARSE,
            (("Unexpected character ('2' (code 50)): was expecting comma to separate Array entries\n at ") + src(1, 4)),
        ),
        id="missing-comma",
    ),
    pytest.param(
        '{"a":1 "b":2}',
        (
            PARSE,
            (
                ("Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries\n at ")
                + src(1, 8)
            ),
        ),
        id="missing-comma-object",
    ),
    pytest.param(
        '{"a" 1}',
        (
            PARSE,
            (
                ("Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value\n at ")
                + src(1, 6)
            ),
        ),
        id="missing-colon",
    ),
    pytest.param(
        '{"a":}',
        (
            PARSE,
            (
                (
                    "Unexpected character ('}' (code 125)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 6)
            ),
        ),
        id="missing-value",
    ),
    pytest.param(
        '{"a"',
        (EOF, ("Unexpected end-of-input within/between Object entries\n at " + src(1, 5))),
        id="eof-after-name",
    ),
    pytest.param(
        '{"a":',
        (EOF, ("Unexpected end-of-input within/between Object entries\n at " + src(1, 6))),
        id="eof-after-colon",
    ),
    pytest.param(
        '{"ab',
        (EOF, ("Unexpected end-of-input in field name\n at " + src(1, 5))),
        id="eof-in-name",
    ),
    pytest.param(
        '{"a":1',
        (
            EOF,
            (
                ("Unexpected end-of-input: expected close marker for Object (start marker at ")
                + src(1, 1)
                + ")\n at "
                + src(1, 7)
            ),
        ),
        id="eof-after-value",
    ),
    pytest.param(
        "[1,",
        (PARSE, ("Unexpected end-of-input within/between Array entries\n at " + src(1, 4))),
        id="eof-after-comma",
    ),
    pytest.param(
        "{",
        (
            EOF,
            (
                ("Unexpected end-of-input: expected close marker for Object (start marker at ")
                + src(1, 1)
                + ")\n at "
                + src(1, 2)
            ),
        ),
        id="open-curly-only",
    ),
    pytest.param(
        "[",
        (
            EOF,
            (
                ("Unexpected end-of-input: expected close marker for Array (start marker at ")
                + src(1, 1)
                + ")\n at "
                + src(1, 2)
            ),
        ),
        id="open-bracket-only",
    ),
    pytest.param(
        "]",
        (PARSE, ("Unexpected close marker ']': no open Array to close\n at " + src(1, 1))),
        id="close-bracket-only",
    ),
    pytest.param(
        "}",
        (PARSE, ("Unexpected close marker '}': no open Object to close\n at " + src(1, 1))),
        id="close-curly-only",
    ),
    pytest.param(
        "[}",
        (
            PARSE,
            ("Unexpected close marker '}': expected ']' (for Array starting at " + src(1, 1) + ")\n at " + src(1, 2)),
        ),
        id="mismatched-close-array",
    ),
    pytest.param(
        "{]",
        (
            PARSE,
            ("Unexpected close marker ']': expected '}' (for Object starting at " + src(1, 1) + ")\n at " + src(1, 2)),
        ),
        id="mismatched-close-object",
    ),
    pytest.param(
        "{1:2}",
        (
            PARSE,
            (
                ("Unexpected character ('1' (code 49)): was expecting double-quote to start field name\n at ")
                + src(1, 2)
            ),
        ),
        id="number-name",
    ),
    pytest.param(
        "{'a':1}",
        (
            PARSE,
            (
                ("Unexpected character (''' (code 39)): was expecting double-quote to start field name\n at ")
                + src(1, 2)
            ),
        ),
        id="single-quoted-name",
    ),
    pytest.param(
        "['a']",
        (
            PARSE,
            (
                (
                    "Unexpected character (''' (code 39)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="single-quoted-value",
    ),
    pytest.param(
        "/* c */ {}",
        (
            PARSE,
            (
                (
                    "Unexpected character ('/' (code 47)): maybe a (non-standard) comment? "
                    "(not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for "
                    "parser)\n at "
                )
                + src(1, 1)
            ),
        ),
        id="block-comment",
    ),
    pytest.param(
        "// c\n{}",
        (
            PARSE,
            (
                (
                    "Unexpected character ('/' (code 47)): maybe a (non-standard) comment? "
                    "(not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for "
                    "parser)\n at "
                )
                + src(1, 1)
            ),
        ),
        id="line-comment",
    ),
    pytest.param(
        "# c\n{}",
        (
            PARSE,
            (
                (
                    "Unexpected character ('#' (code 35)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="hash-comment",
    ),
    pytest.param(
        "\x00",
        (
            PARSE,
            (
                (
                    "Illegal character ((CTRL-CHAR, code 0)): only regular white space (\\r,"
                    " \\n, \\t) is allowed between tokens\n at "
                )
                + src(1, 2)
            ),
        ),
        id="nul-character",
    ),
    pytest.param(
        "[1,\x01 2]",
        (
            PARSE,
            (
                (
                    "Illegal character ((CTRL-CHAR, code 1)): only regular white space (\\r,"
                    " \\n, \\t) is allowed between tokens\n at "
                )
                + src(1, 5)
            ),
        ),
        id="control-between-tokens",
    ),
    pytest.param(
        "\x1e[]",
        (
            PARSE,
            (
                (
                    "Illegal character ((CTRL-CHAR, code 30)): only regular white space "
                    "(\\r, \\n, \\t) is allowed between tokens (consider enabling "
                    "`JsonReadFeature.ALLOW_RS_CONTROL_CHAR` to allow use of Record "
                    "Separators (\\u001E))\n at "
                )
                + src(1, 2)
            ),
        ),
        id="record-separator",
    ),
    pytest.param(
        "\ufeff{}",
        (
            PARSE,
            (
                (
                    "Unexpected character ('\ufeff' (code 65279 / 0xfeff)): expected a valid "
                    "value (JSON String, Number, Array, Object or token 'null', 'true' or "
                    "'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="byte-order-mark",
    ),
    pytest.param(
        "�{}",
        (
            PARSE,
            (
                (
                    "Unexpected character ('�' (code 65533 / 0xfffd)): expected a valid "
                    "value (JSON String, Number, Array, Object or token 'null', 'true' or "
                    "'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="replacement-character",
    ),
    pytest.param(
        "été",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'été': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="non-ascii-identifier-start",
    ),
    pytest.param(
        "[😀]",
        (
            PARSE,
            (
                (
                    "Unexpected character ('\ud83d' (code 55357 / 0xd83d)): expected a valid "
                    "value (JSON String, Number, Array, Object or token 'null', 'true' or "
                    "'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="astral-char-value",
    ),
    pytest.param(
        "tr😀",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'tr': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 1)
            ),
        ),
        id="astral-char-in-token",
    ),
    pytest.param(
        '["😀😀", x]',
        (
            PARSE,
            (
                (
                    "Unrecognized token 'x': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 10)
            ),
        ),
        id="astral-chars-shift-columns",
    ),
    pytest.param(
        "[.5]",
        (
            PARSE,
            (
                (
                    "Unexpected character ('.' (code 46)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="leading-period",
    ),
    pytest.param(
        "-.5",
        (
            PARSE,
            (
                (
                    "Unexpected character ('.' (code 46)): expected a valid value (JSON "
                    "String, Number, Array, Object or token 'null', 'true' or 'false')\n at "
                )
                + src(1, 2)
            ),
        ),
        id="minus-period",
    ),
    pytest.param(
        "[-]",
        (
            PARSE,
            (
                (
                    "Unexpected character (']' (code 93)) in numeric value: expected digit "
                    "(0-9) to follow minus sign, for valid numeric value\n at "
                )
                + src(1, 3)
            ),
        ),
        id="minus-in-array",
    ),
    pytest.param(
        "[-,1]",
        (
            PARSE,
            (
                (
                    "Unexpected character (',' (code 44)) in numeric value: expected digit "
                    "(0-9) to follow minus sign, for valid numeric value\n at "
                )
                + src(1, 3)
            ),
        ),
        id="minus-comma",
    ),
    pytest.param(
        "[-Ix]",
        (
            PARSE,
            (
                (
                    "Unexpected character ('x' (code 120)) in numeric value: expected "
                    "digit (0-9) to follow minus sign, for valid numeric value\n at "
                )
                + src(1, 4)
            ),
        ),
        id="minus-I-other",
    ),
    pytest.param(
        "\r\n\r\n  x",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'x': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(3, 3)
            ),
        ),
        id="crlf-lines",
    ),
    pytest.param(
        "\n\n[1,\n2,\n x]",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'x': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(5, 2)
            ),
        ),
        id="lf-lines",
    ),
    pytest.param(
        "\r\r[x]",
        (
            PARSE,
            (
                (
                    "Unrecognized token 'x': was expecting (JSON String, Number, Array, "
                    "Object or token 'null', 'true' or 'false')\n at "
                )
                + src(3, 2)
            ),
        ),
        id="cr-lines",
    ),
    pytest.param(
        '{"a":[1,\n  {"b":',
        (EOF, ("Unexpected end-of-input within/between Object entries\n at " + src(2, 8))),
        id="eof-in-nested-reports-inner-start",
    ),
    pytest.param(
        "[" * 1000 + "]" * 1000,
        (
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
        ),
        id="depth-1000-ok",
    ),
    pytest.param(
        "[" * 1001 + "]" * 1001,
        (
            LIMIT,
            (
                "Document nesting depth (1001) exceeds the maximum allowed (1000, from "
                "`StreamReadConstraints.getMaxNestingDepth()`)"
            ),
        ),
        id="depth-1001",
    ),
    pytest.param(
        "[" * 100000,
        (
            LIMIT,
            (
                "Document nesting depth (1001) exceeds the maximum allowed (1000, from "
                "`StreamReadConstraints.getMaxNestingDepth()`)"
            ),
        ),
        id="depth-100000",
    ),
    pytest.param(
        '{"a":' * 1001 + "1" + "}" * 1001,
        (
            LIMIT,
            (
                "Document nesting depth (1001) exceeds the maximum allowed (1000, from "
                "`StreamReadConstraints.getMaxNestingDepth()`)"
            ),
        ),
        id="object-depth-1001",
    ),
    pytest.param(
        "[" + "1" * 1000 + "]",
        (
            "[111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "1111111111111111111111111111111111111111111111111111111111111111111111"
            "111111111111111111111]"
        ),
        id="int-1000-digits",
    ),
    pytest.param(
        "[" + "1" * 1001 + "]",
        (
            LIMIT,
            (
                "Number value length (1001) exceeds the maximum allowed (1000, from "
                "`StreamReadConstraints.getMaxNumberLength()`)"
            ),
        ),
        id="int-1001-digits",
    ),
    pytest.param(
        "[1." + "1" * 1000 + "]",
        (
            LIMIT,
            (
                "Number value length (1001) exceeds the maximum allowed (1000, from "
                "`StreamReadConstraints.getMaxNumberLength()`)"
            ),
        ),
        id="float-1001-digits",
    ),
    pytest.param(
        "[0." + "1" * 1000 + "]",
        "[0.1111111111111111]",
        id="float-quirk-zero-leading-counts-one-less",
    ),
    pytest.param(
        "[" + " " * 3997 + "1.]" + " " * 40000,
        (
            PARSE,
            (
                ("Unexpected character (']' (code 93)) in numeric value: Decimal point not followed by a digit\n at ")
                + src(1, 4001)
            ),
        ),
        id="chunked-decimal-point-before-boundary",
    ),
    pytest.param(
        "[" + " " * 3998 + "1.]" + " " * 40000,
        (
            PARSE,
            (
                ("Unexpected character (']' (code 93)) in numeric value: Decimal point not followed by a digit\n at ")
                + src(1, 4002)
            ),
        ),
        id="chunked-decimal-point-at-boundary",
    ),
    pytest.param(
        "[" + " " * 3998 + "-]" + " " * 40000,
        (
            PARSE,
            (
                (
                    "Unexpected character (']' (code 93)) in numeric value: expected digit "
                    "(0-9) to follow minus sign, for valid numeric value\n at "
                )
                + src(1, 4001)
            ),
        ),
        id="chunked-minus-at-boundary",
    ),
]

DOUBLE_CASES = [
    pytest.param(0.0, "0.0", id="0.0"),
    pytest.param(-0.0, "-0.0", id="-0.0"),
    pytest.param(1.0, "1.0", id="1.0"),
    pytest.param(0.1, "0.1", id="0.1"),
    pytest.param(0.002, "0.002", id="0.002"),
    pytest.param(0.001, "0.001", id="0.001"),
    pytest.param(1e-3, "0.001", id="0.001"),
    pytest.param(1e-4, "1.0E-4", id="1.0E-4"),
    pytest.param(1e7, "1.0E7", id="1.0E7"),
    pytest.param(9999999.0, "9999999.0", id="9999999.0"),
    pytest.param(1e23, "9.999999999999999E22", id="9.999999999999999E22"),
    pytest.param(2e23, "1.9999999999999998E23", id="1.9999999999999998E23"),
    pytest.param(2.773e21, "2.7729999999999997E21", id="2.7729999999999997E21"),
    pytest.param(1.793336797545e18, "1.79333679754499994E18", id="1.79333679754499994E18"),
    pytest.param(3.009606e20, "3.0096060000000003E20", id="3.0096060000000003E20"),
    pytest.param(5e-324, "4.9E-324", id="4.9E-324"),
    pytest.param(1.7976931348623157e308, "1.7976931348623157E308", id="1.7976931348623157E308"),
    pytest.param(123456789.0, "1.23456789E8", id="1.23456789E8"),
    pytest.param(1e-5, "1.0E-5", id="1.0E-5"),
    pytest.param(1.1e-322, "1.1E-322", id="1.1E-322"),
    pytest.param(4.35, "4.35", id="4.35"),
    pytest.param(100.0, "100.0", id="100.0"),
    pytest.param(1234567.0, "1234567.0", id="1234567.0"),
    pytest.param(12345678.0, "1.2345678E7", id="1.2345678E7"),
    pytest.param(0.3, "0.3", id="0.3"),
    pytest.param(2.0**-1074 * 3, "1.5E-323", id="1.5E-323"),
]

UTF8_CASES = [
    pytest.param(b"\xef\xbb\xbf{}", "\ufeff{}", id="b'\\xef\\xbb\\xbf{}'"),
    pytest.param(b"\xed\xa0\x80", "�", id="b'\\xed\\xa0\\x80'"),
    pytest.param(b"\xed\xa0", "�", id="b'\\xed\\xa0'"),
    pytest.param(b"\xbf\xed\xb1", "��", id="b'\\xbf\\xed\\xb1'"),
    pytest.param(b"\xf0\x9f\x98\x80", "😀", id="b'\\xf0\\x9f\\x98\\x80'"),
    pytest.param(b"\xf0\x9f\x98", "�", id="b'\\xf0\\x9f\\x98'"),
    pytest.param(b"\xf4\x90\x80\x80", "����", id="b'\\xf4\\x90\\x80\\x80'"),
    pytest.param(b"\xc0\xaf", "��", id="b'\\xc0\\xaf'"),
    pytest.param(b"\xe0\x80\xaf", "���", id="b'\\xe0\\x80\\xaf'"),
    pytest.param(b"\xc3", "�", id="b'\\xc3'"),
    pytest.param(b"A\xec\x8f\x9f\xed\xbf\xa0", "A쏟�", id="b'A\\xec\\x8f\\x9f\\xed\\xbf\\xa0'"),
    pytest.param(b"\xf1\xed\xa0\xf4\xc0\xc1\x90J", "������J", id="b'\\xf1\\xed\\xa0\\xf4\\xc0\\xc1\\x90J'"),
    pytest.param(b"\xff\xfe", "��", id="b'\\xff\\xfe'"),
    pytest.param(b"\xe1\x80", "�", id="b'\\xe1\\x80'"),
    pytest.param(b"\xe1\x80A", "�A", id="b'\\xe1\\x80A'"),
]


@pytest.mark.parametrize(("text", "expected"), READ_CASES)
def test_read_tree_matches_jackson(text: str, expected: str | tuple[str, str]) -> None:
    if isinstance(expected, str):
        assert node_to_string(read_tree(text)) == expected
        return
    with pytest.raises(JacksonError) as raised:
        read_tree(text)
    assert (raised.value.java_class, raised.value.message) == expected


@pytest.mark.parametrize(("text", "expected"), READ_CASES)
def test_token_by_token_reader_agrees(text: str, expected: str | tuple[str, str]) -> None:
    """The exact emulation alone (no Python scanner shortcut) gives the same answers."""
    reader = jackson_reader._JacksonTreeReader(java_code_units(text))
    reader.python_may_read_children = False
    if isinstance(expected, str):
        assert node_to_string(reader.read_document()) == expected
        return
    with pytest.raises(JacksonError) as raised:
        reader.read_document()
    assert (raised.value.java_class, raised.value.message) == expected


# Node classes Jackson gave for each number of
# [2147483647,2147483648,-2147483648,-2147483649,9223372036854775807,9223372036854775808,-0,1.0]
NUMBER_NODE_CLASSES = [
    "IntNode",
    "LongNode",
    "IntNode",
    "LongNode",
    "LongNode",
    "BigIntegerNode",
    "IntNode",
    "DoubleNode",
]


def _node_class(value: object) -> str:
    if is_int_node(value):
        return "IntNode"
    if is_long_node(value):
        return "LongNode"
    return "BigIntegerNode" if type(value) is int else "DoubleNode"


def test_number_node_classes() -> None:
    values = read_tree("[2147483647,2147483648,-2147483648,-2147483649,9223372036854775807,9223372036854775808,-0,1.0]")
    assert [_node_class(value) for value in values] == NUMBER_NODE_CLASSES  # type: ignore[union-attr]


def test_missing_node() -> None:
    assert read_tree(" \n") is MISSING
    assert node_to_string(MISSING) == ""


def test_empty_input_is_kafkas_own_error() -> None:
    with pytest.raises(JacksonError) as raised:
        try_parse_full("")
    assert raised.value.message == "The input string shouldn't be empty\n at [Source: UNKNOWN; byte offset: #UNKNOWN]"


@pytest.mark.parametrize(("value", "expected"), DOUBLE_CASES)
def test_java_17_double_to_string(value: float, expected: str) -> None:
    assert java_double_to_string(value) == expected


def test_non_finite_doubles_are_quoted_like_jackson() -> None:
    assert node_to_string([math.inf, -math.inf]) == '["Infinity","-Infinity"]'


@pytest.mark.parametrize(("data", "expected"), UTF8_CASES)
def test_decode_utf8_like_java(data: bytes, expected: str) -> None:
    assert decode_utf8_like_java(data) == expected


# ------------------------------------------------------------------------------------------ properties

JSON_ALPHABET = string.printable + '\x00\x01\x1e\x7f\u00e9\u0130\u2028\ufeff\ufffd\U0001f600"\\[]{}:,'


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=JSON_ALPHABET, max_size=60))
def test_reader_only_raises_its_own_errors_on_text(text: str) -> None:
    with contextlib.suppress(KreassignError):
        read_tree(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_reader_only_raises_its_own_errors_on_bytes(data: bytes) -> None:
    with contextlib.suppress(KreassignError):
        read_tree(decode_utf8_like_java(data))


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_written_json_reads_back_to_the_same_text(value: object) -> None:
    text = node_to_string(value)  # type: ignore[arg-type]
    assert node_to_string(read_tree(text)) == text


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\r\n", "x", "]"]))
def test_python_scanner_shortcut_matches_the_exact_reader(value: object, suffix: str) -> None:
    text = "[" + node_to_string(value) + "]" + suffix  # type: ignore[arg-type]
    reader = jackson_reader._JacksonTreeReader(java_code_units(text))
    reader.python_may_read_children = False
    assert node_to_string(read_tree(text)) == node_to_string(reader.read_document())


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_text_reads_back_to_the_same_double(value: float) -> None:
    assert float(java_double_to_string(value)) == value
