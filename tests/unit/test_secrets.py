"""Passwords of --command-config never reach stdout or stderr, even in an unexpected error's
traceback with KREASSIGN_DEBUG=1."""

from __future__ import annotations

import pytest

from kreassign.cli import app
from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.java_properties import parse_java_properties

SASL_PASSWORD = "sasl-Secret-7f3a9"
STORE_PASSWORD = "store-Secret-51c2e"
KEY_PASSWORD = "key-Secret-90ab1"

PROPERTIES = f"""security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{SASL_PASSWORD}";
ssl.truststore.location=/nonexistent/truststore.jks
ssl.truststore.password={STORE_PASSWORD}
ssl.keystore.location=/nonexistent/keystore.p12
ssl.keystore.type=PKCS12
ssl.keystore.password={STORE_PASSWORD}
ssl.key.password={KEY_PASSWORD}
"""


def test_client_config_lists_its_secrets():
    config = ClientConfig(parse_java_properties(PROPERTIES))
    assert set(config.secrets()) == {SASL_PASSWORD, STORE_PASSWORD, KEY_PASSWORD}
    assert SASL_PASSWORD not in repr(config)


@pytest.mark.parametrize("debug", ["", "1"], ids=["plain", "KREASSIGN_DEBUG"])
def test_an_unexpected_error_quoting_a_password_is_scrubbed(tmp_path, monkeypatch, debug):
    config = tmp_path / "client.properties"
    config.write_text(PROPERTIES)
    monkeypatch.setenv("KREASSIGN_DEBUG", debug)

    def explode(*_args, **_kwargs):
        try:
            raise ValueError(f"client refused password={SASL_PASSWORD}")
        except ValueError as exc:
            raise RuntimeError(f"wrapped: {STORE_PASSWORD} / {KEY_PASSWORD}") from exc

    from kreassign.cli.commands import listing

    monkeypatch.setattr(listing, "run", explode)
    out: list[str] = []
    err: list[str] = []
    argv = ["--bootstrap-server", "127.0.0.1:1", "--list", "--command-config", str(config)]
    assert app.run(argv, out.append, err.append) == 1
    text = "".join(out + err)
    assert out == ["Error: wrapped: **** / ****\n"]
    assert ("Traceback" in text) == bool(debug)
    for secret in (SASL_PASSWORD, STORE_PASSWORD, KEY_PASSWORD):
        assert secret not in text
