"""sasl.jaas.config, parsed as Kafka's JaasConfig parses it.

Expected values were produced by Kafka's JaasContext.loadClientContext (Kafka 4.3.1) on the same inputs.
"""

from __future__ import annotations

import pytest

from kreassign.cluster.jaas import parse_jaas_config

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"

JAAS_CASES = [
    pytest.param(f'{PLAIN} required username="alice" password="alice-secret";', ("alice", "alice-secret"), id="plain"),
    pytest.param(f'{SCRAM} required username="bob" password="b0b";', ("bob", "b0b"), id="scram"),
    pytest.param(f"{PLAIN} required username='alice' password='pw';", ("alice", "pw"), id="single-quotes"),
    pytest.param(f'{PLAIN} required username="alice" password="p\\"w\\\\x";', ("alice", 'p"w\\x'), id="escapes"),
    pytest.param(f"{PLAIN} required username=alice password=secret123;", ("alice", "secret123"), id="unquoted"),
    pytest.param(f'{PLAIN} /* c */ required // line\n username="a" password="b";', ("a", "b"), id="comments"),
    pytest.param(f'{PLAIN} Optional username="a" password="b";', ("a", "b"), id="any-flag-case"),
    pytest.param(f'{PLAIN} required username="a\\101" password="\\t";', ("aA", "\t"), id="octal-escape"),
    pytest.param(f'{PLAIN} required username=\u00e9l\u00e8ve password="c";', ("élève", "c"), id="latin-word"),
]


@pytest.mark.parametrize(("text", "expected"), JAAS_CASES)
def test_jaas_like_kafka(text: str, expected: tuple[str, str]) -> None:
    (entry,) = parse_jaas_config(text)
    assert (entry.options["username"], entry.options["password"]) == expected


JAAS_ERRORS = [
    pytest.param(
        f"{PLAIN} required username=alice password=123;", "Value not specified for key 'password'", id="number"
    ),
    pytest.param(f'{PLAIN} required username="a" password="b"', "not terminated by semi-colon", id="no-semicolon"),
    pytest.param(f'{PLAIN} mandatory username="a";', "Invalid login module control flag 'mandatory'", id="bad-flag"),
    pytest.param("   ", "Login module not specified in JAAS config", id="empty"),
    pytest.param(PLAIN, "Login module control flag not specified in JAAS config", id="no-flag"),
    pytest.param(f"{PLAIN} required username=;", "Value not specified for key 'username'", id="no-value"),
    pytest.param(f'{PLAIN} required username=alice@x.org password="x";', "for key 'null'", id="unquoted-at-sign"),
    pytest.param(f'{PLAIN} required username="a" path=/tmp/x password="b";', "for key 'path'", id="slash-comment"),
    pytest.param(f'{PLAIN} required username="a\nb" password="c";', "for key 'b'", id="newline-ends-quote"),
]


@pytest.mark.parametrize(("text", "message"), JAAS_ERRORS)
def test_jaas_errors_like_kafka(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_jaas_config(text)
