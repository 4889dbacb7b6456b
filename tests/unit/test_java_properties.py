"""Java properties files, read as java.util.Properties.load reads them.

Expected values of the parsing table were produced by java.util.Properties.load (Kafka 4.3.1's JVM) on the
same inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreassign.cluster.client_config import load_client_config
from kreassign.cluster.java_properties import parse_java_properties
from kreassign.errors import ConfigError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"

PROPERTIES_CASES = [
    pytest.param("a=b\n", {"a": "b"}, id="equals"),
    pytest.param("a:b\n", {"a": "b"}, id="colon"),
    pytest.param("a b\n", {"a": "b"}, id="space"),
    pytest.param("a = b\n", {"a": "b"}, id="spaced-equals"),
    pytest.param("a\t:\tb\n", {"a": "b"}, id="tabs"),
    pytest.param("# x=y\n! z=w\n   # indented=1\na=b\n", {"a": "b"}, id="comments"),
    pytest.param("a=b\\\n   c\n", {"a": "bc"}, id="continuation"),
    pytest.param("a=b\\\\\nc=d\n", {"a": "b\\", "c": "d"}, id="even-backslashes"),
    pytest.param("a\\:b=c\nd\\=e=f\ng\\ h=i\n", {"a:b": "c", "d=e": "f", "g h": "i"}, id="escaped-key"),
    pytest.param("a=\\u0041\\u00e9\n", {"a": "Aé"}, id="unicode-escape"),
    pytest.param("a=x\\ty\\nz\\rw\\fv\n", {"a": "x\ty\nz\rw\fv"}, id="control-escapes"),
    pytest.param("a\n", {"a": ""}, id="key-only"),
    pytest.param("a=\n", {"a": ""}, id="empty-value"),
    pytest.param("a=b  \n", {"a": "b  "}, id="trailing-spaces-kept"),
    pytest.param("a=1\na=2\n", {"a": "2"}, id="last-duplicate-wins"),
    pytest.param("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}, id="crlf-and-cr"),
    pytest.param("a=b\\", {"a": "b"}, id="continuation-at-eof"),
    pytest.param("# c\\\na=b\n", {"a": "b"}, id="comment-never-continues"),
    pytest.param("a==b\n", {"a": "=b"}, id="double-equals"),
    pytest.param("a b=c\n", {"a": "b=c"}, id="space-separator-then-equals"),
    pytest.param("a = = b\n", {"a": "= b"}, id="second-equals-is-value"),
    pytest.param("a=\\q\\\\\\#\n", {"a": "q\\#"}, id="other-escapes"),
    pytest.param("a=b\\\n\nc=d\n", {"a": "b", "c": "d"}, id="continuation-then-blank"),
    pytest.param("a=b\\\n# not comment\n", {"a": "b# not comment"}, id="continuation-is-not-comment"),
    pytest.param("a=   b\n", {"a": "b"}, id="leading-blanks-of-value"),
    pytest.param("a=b:c=d\n", {"a": "b:c=d"}, id="separators-in-value"),
    pytest.param("   \n\t\n a=b\n", {"a": "b"}, id="blank-lines"),
    pytest.param(
        f'sasl.jaas.config={PLAIN} required \\\n    username="alice" \\\n    password="alice-secret";\n',
        {"sasl.jaas.config": f'{PLAIN} required username="alice" password="alice-secret";'},
        id="multi-line-jaas",
    ),
]


@pytest.mark.parametrize(("text", "expected"), PROPERTIES_CASES)
def test_properties_like_java(text: str, expected: dict[str, str]) -> None:
    assert parse_java_properties(text) == expected


def test_malformed_unicode_escape_fails_like_java() -> None:
    with pytest.raises(ConfigError) as failure:
        parse_java_properties("a=\\u00zz\n")
    assert failure.value.message == "Malformed \\uxxxx encoding."


def test_file_is_read_as_iso_8859_1(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_bytes("client.id=caf\u00e9\n".encode("latin-1"))
    assert load_client_config(path).client_id == "café"


def test_missing_file_fails_with_its_path_like_java() -> None:
    with pytest.raises(ConfigError) as failure:
        load_client_config("/nonexistent/client.properties")
    assert failure.value.message == "/nonexistent/client.properties"
