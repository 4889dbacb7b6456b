"""Config providers in --command-config as Java's AbstractConfig resolves them (KIP-297, KIP-887): file, directory,
env, allowed.paths, placeholders anywhere, unresolved ones left as they are, an unknown class named."""

from __future__ import annotations

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.config_providers import (
    DIRECTORY_PROVIDER,
    ENV_PROVIDER,
    FILE_PROVIDER,
    resolve_config_providers,
)
from kreassign.errors import ConfigError

SECRET = "pr0vided-Secret-77"


@pytest.fixture
def secrets_dir(tmp_path):
    (tmp_path / "app.properties").write_text(f"password={SECRET}\nuser=alice\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "token").write_text("tok-en\n")
    return tmp_path


def providers(**params: str) -> dict[str, str]:
    props = {
        "config.providers": "file,directory,env",
        "config.providers.file.class": FILE_PROVIDER,
        "config.providers.directory.class": DIRECTORY_PROVIDER,
        "config.providers.env.class": ENV_PROVIDER,
    }
    props.update(params)
    return props


def test_every_provider_anywhere_in_a_value(secrets_dir):
    props = providers(
        **{
            "sasl.jaas.config": f'x required username="${{file:{secrets_dir}/app.properties:user}}" '
            f'password="${{file:{secrets_dir}/app.properties:password}}" t="${{directory:{secrets_dir}/dir:token}}" '
            f'e="${{env:KREASSIGN_X}}";'
        }
    )
    resolved = resolve_config_providers(props, {"KREASSIGN_X": "from-env"})
    assert resolved.properties["sasl.jaas.config"] == (
        f'x required username="alice" password="{SECRET}" t="tok-en\n" e="from-env";'
    )
    assert ("sasl.jaas.config", SECRET) in resolved.provided and resolved.notes == []


def test_without_providers_nothing_changes():
    props = {"client.id": "${file:/etc/x:y}"}
    assert resolve_config_providers(props).properties == props


@pytest.mark.parametrize(
    ("value", "why"),
    [
        pytest.param("${file:{d}/app.properties:missing}", "not found", id="missing-key"),
        pytest.param("${vault:secret/kafka:pw}", "no provider of that name", id="unknown-provider-name"),
        pytest.param("${env:NOT_ALLOWED}", "not found", id="env-outside-the-allowlist"),
    ],
)
def test_unresolved_placeholders_stay_as_java_leaves_them(secrets_dir, value, why):
    value = value.replace("{d}", str(secrets_dir))
    props = providers(**{"client.id": value, "config.providers.env.param.allowlist.pattern": "KREASSIGN_.*"})
    resolved = resolve_config_providers(props, {"NOT_ALLOWED": "x"})
    assert resolved.properties["client.id"] == value
    assert len(resolved.notes) == 1 and why in resolved.notes[0]


def test_allowed_paths(secrets_dir, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "x.properties").write_text("k=v\n")
    props = providers(
        **{
            "config.providers.file.param.allowed.paths": str(secrets_dir),
            "a": f"${{file:{secrets_dir}/app.properties:user}}",
            "b": f"${{file:{elsewhere}/x.properties:k}}",
            "c": f"${{file:{secrets_dir}/../{elsewhere.name}/x.properties:k}}",  # normalized before the check
        }
    )
    resolved = resolve_config_providers(props).properties
    assert (resolved["a"], resolved["b"], resolved["c"]) == ("alice", props["b"], props["c"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"config.providers.file.param.allowed.paths": "relative/dir"},
            "Path relative/dir is not absolute",
            id="relative",
        ),
        pytest.param(
            {"config.providers.file.param.allowed.paths": "/no/such/dir"},
            "Path /no/such/dir does not exist",
            id="missing",
        ),
        pytest.param(
            {"config.providers.file.class": "com.example.Vault"},
            "Invalid value com.example.Vault for configuration config.providers.file.class: Could not load config "
            "provider class or one of its dependencies",
            id="unknown-class",
        ),
        pytest.param(
            {"x": "${env:/path:KEY}"},
            "Path is not supported for EnvVarConfigProvider, invalid value '/path'",
            id="env-path",
        ),
        pytest.param(
            {"x": "${file:/no/such/file:k}"}, "Could not read properties from file /no/such/file", id="unreadable"
        ),
    ],
)
def test_java_errors(params, message):
    with pytest.raises(ConfigError) as failure:
        ClientConfig(providers(**params))
    assert failure.value.message == message


def test_the_automatic_config_providers_system_property(secrets_dir):
    props = providers(**{"client.id": f"${{file:{secrets_dir}/app.properties:user}}"})
    env = {"KAFKA_OPTS": f"-Dorg.apache.kafka.automatic.config.providers={FILE_PROVIDER}"}
    with pytest.raises(ConfigError) as failure:
        ClientConfig(props, environ=env)
    assert failure.value.message.startswith(f"{DIRECTORY_PROVIDER} is not allowed. Update System property")


def test_provided_passwords_are_secrets_usernames_not_and_provider_keys_no_warning(secrets_dir):
    props = providers(
        **{
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="${{file:{secrets_dir}/app.properties:user}}" '
            f'password="${{file:{secrets_dir}/app.properties:password}}";',
            "ssl.truststore.password": f"${{directory:{secrets_dir}/dir:token}}",
        }
    )
    config = ClientConfig(props)
    assert config.librdkafka_config()["sasl.password"] == SECRET
    assert SECRET in config.secrets() and "tok-en\n" in config.secrets()
    assert "alice" not in config.secrets()  # a username read through a provider is not scrubbed from output
    assert config.warnings == ()


def test_a_failed_login_names_the_placeholders_left_unresolved(secrets_dir, tmp_path_factory):
    from kreassign.cluster.kafka import KafkaCluster

    outside = tmp_path_factory.mktemp("outside")
    (outside / "pw.properties").write_text("pw=x\n")
    props = providers(
        **{
            "config.providers.file.param.allowed.paths": str(secrets_dir),
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="u" password="${{file:{outside}/pw.properties:pw}}";',
        }
    )
    cluster = KafkaCluster(bootstrap_servers="127.0.0.1:1", client_config=ClientConfig(props))
    notes = cluster.errors.sasl_failure("Authentication failed").__notes__
    assert notes[0].startswith("The cluster at 127.0.0.1:1 refused the SASL login")
    assert (
        notes[1]
        == f"${{file:{outside}/pw.properties:pw}} in sasl.jaas.config was left as it is (its path is not in allowed.paths), as the Java client leaves it."
    )
