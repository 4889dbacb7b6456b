"""The SASL logins of --command-config beyond PLAIN and SCRAM: OAUTHBEARER tokens (unsecured, a real local
token endpoint, a token file), Kerberos settings, AWS MSK IAM tokens from the signer library (from a profile,
and from a role assumed through a local STS stand-in), and how each reaches both clients."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs

import pytest

from kreassign.cluster.aws_iam import AwsIamTokens, describe_token, region_of
from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kerberos import KerberosLogin, java_host_name
from kreassign.cluster.oauth_tokens import EndpointTokens, UnsecuredTokens, jwt_claims
from kreassign.devcluster.identity import IdentityProvider
from kreassign.errors import ConfigError

OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
SECRET = "client-Secret-4242"


@pytest.fixture(scope="module")
def idp(tmp_path_factory):
    provider = IdentityProvider(
        tmp_path_factory.mktemp("idp"), {"ops": (SECRET, "ops-user")}, lifetime_s=600, assertion_clients=("jwt-client",)
    ).start()
    yield provider
    provider.stop()


def oidc(url: str, secret: str = SECRET, **extra: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": HANDLER,
        "sasl.oauthbearer.token.endpoint.url": url,
        "sasl.jaas.config": f'{OAUTH} required clientId="ops" clientSecret="{secret}" scope="kafka";',
        **extra,
    }


def allowing(url: str, *files: str) -> dict[str, str]:
    allowed = f" -Dorg.apache.kafka.sasl.oauthbearer.allowed.files={','.join(files)}" if files else ""
    return {"KAFKA_OPTS": f"-Xmx1g -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={url}{allowed}"}


# ------------------------------------------------------------------------------------------------ OIDC
def test_client_credentials_from_a_real_token_endpoint(idp):
    config = ClientConfig(oidc(idp.token_url), environ=allowing(idp.token_url))
    assert isinstance(config.sasl, EndpointTokens) and config.mechanism == "OAUTHBEARER"
    config.log_in("broker:9092")
    token = config.sasl.token()
    assert token.principal == "ops-user" and token.expires_at > time.time() + 500
    assert jwt_claims(token.value)["scope"] == "kafka"
    assert config.sasl.token() is token  # one fetch until the refresh time
    rd = config.librdkafka_config()
    assert rd["sasl.mechanism"] == "OAUTHBEARER" and rd["oauth_cb"](None)[:1] == (token.value,)
    kp = config.kafka_python_config()
    assert kp["sasl_mechanism"] == "OAUTHBEARER" and kp["sasl_oauth_token_provider"].token() == token.value
    assert {SECRET, token.value} <= set(config.secrets())
    assert SECRET not in repr(config) and token.value not in repr(token)


def test_properties_win_over_the_jaas_options(idp):
    props = oidc(idp.token_url, secret="stale", **{"sasl.oauthbearer.client.credentials.client.secret": SECRET})
    config = ClientConfig(props, environ=allowing(idp.token_url))
    config.log_in("b:1")
    assert config.sasl.token().principal == "ops-user"


def test_a_wrong_secret_is_java_s_failure_with_the_answer_in_a_note(idp):
    config = ClientConfig(oidc(idp.token_url, secret="wrong"), environ=allowing(idp.token_url))
    with pytest.raises(ConfigError) as failure:
        config.log_in("b:1")
    assert failure.value.message == "Failed to create new KafkaAdminClient"
    assert failure.value.__notes__[0].startswith(
        'The response code 401 and error response {"invalid_client" - "Invalid client credentials"}'
    )


def test_an_unreachable_endpoint_is_retried_then_fails(unused_port):
    url = f"http://127.0.0.1:{unused_port}/token"
    props = oidc(url, **{"sasl.login.retry.backoff.ms": "10", "sasl.login.retry.backoff.max.ms": "40"})
    config = ClientConfig(props, environ=allowing(url))
    started = time.monotonic()
    with pytest.raises(ConfigError) as failure:
        config.log_in("b:1")
    assert time.monotonic() - started < 15  # generous: the test may share the CPU with a Kafka test run
    assert "could not be reached" in failure.value.__notes__[0]


def test_a_token_url_kafka_4_does_not_allow_is_refused_like_java(idp):
    with pytest.raises(ConfigError) as failure:
        ClientConfig(oidc(idp.token_url), environ={})
    assert failure.value.message == "Failed to create new KafkaAdminClient"
    assert failure.value.__notes__[0] == (
        f"Invalid value {idp.token_url} for configuration sasl.oauthbearer.token.endpoint.url: The URL cannot be "
        "accessed due to restrictions. Update the system property 'org.apache.kafka.sasl.oauthbearer.allowed.urls' "
        "to allow the URL to be accessed."
    )


def assertion_props(idp, **extra: str) -> dict[str, str]:
    props = oidc(idp.token_url, **extra)
    props["sasl.jaas.config"] = f'{OAUTH} required clientId="jwt-client" scope="kafka";'
    props.update(
        {
            "sasl.oauthbearer.assertion.private.key.file": str(idp.assertion_keys["jwt-client"].pem),
            "sasl.oauthbearer.assertion.claim.iss": "jwt-client",
            "sasl.oauthbearer.assertion.claim.sub": "jwt-user",
            "sasl.oauthbearer.assertion.claim.aud": idp.url,
            "sasl.oauthbearer.assertion.claim.jti.include": "true",
        }
    )
    return props


@pytest.mark.parametrize("grant", ["jwt-bearer", "client-assertion"])
def test_a_jwt_assertion_signed_here_is_accepted_by_the_identity_provider(idp, grant):
    extra = {
        "sasl.oauthbearer.jwt.retriever.class": "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"
    }
    props = assertion_props(idp, **(extra if grant == "jwt-bearer" else {}))
    with pytest.raises(ConfigError) as failure:
        ClientConfig(props, environ=allowing(idp.token_url))
    assert "The file cannot be accessed due to restrictions" in failure.value.__notes__[0]
    config = ClientConfig(props, environ=allowing(idp.token_url, str(idp.assertion_keys["jwt-client"].pem)))
    config.log_in("b:1")
    token = config.sasl.token()
    assert token.principal == "jwt-user"
    assertion = config.sasl._assertions[-1]
    claims = jwt_claims(assertion)
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("jwt-client", "jwt-user", idp.url)
    assert claims["exp"] - claims["iat"] == 300 and claims["iat"] - claims["nbf"] == 60 and len(claims["jti"]) == 36
    assert idp.assertion_keys["jwt-client"].verifies(assertion)
    assert assertion in config.secrets()  # an assertion is a credential


def test_an_assertion_from_a_file_and_refusals(idp, tmp_path):
    key = idp.assertion_keys["jwt-client"]
    now = int(time.time())
    path = tmp_path / "assertion.jwt"
    path.write_text(key.jwt({"iss": "jwt-client", "sub": "from-file", "exp": now + 60, "iat": now}) + "\n")
    props = assertion_props(idp, **{"sasl.oauthbearer.assertion.file": str(path)})
    key_file = str(idp.assertion_keys["jwt-client"].pem)
    config = ClientConfig(props, environ=allowing(idp.token_url, key_file, str(path)))
    config.log_in("b:1")
    assert config.sasl.token().principal == "from-file"
    for name, value, message in [
        (
            "sasl.oauthbearer.assertion.algorithm",
            "ES256",
            "sasl.oauthbearer.assertion.algorithm ES256 is not supported",
        ),
        ("sasl.oauthbearer.assertion.private.key.passphrase", "pw", "an encrypted private key is not supported"),
    ]:
        with pytest.raises(ConfigError) as failure:
            ClientConfig(assertion_props(idp, **{name: value}), environ=allowing(idp.token_url, key_file))
        assert message in failure.value.message


def test_a_token_file(idp, tmp_path):
    token = idp.token("ops")
    path = tmp_path / "token.jwt"
    path.write_text(token + "\n")
    config = ClientConfig(
        oidc(f"file:{path}"), environ={"KAFKA_OPTS": f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.files={path}"}
    )
    config.log_in("b:1")
    assert config.sasl.token().value == token


def test_the_refresh_time_follows_java_s_window():
    source = UnsecuredTokens({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "1000"})
    source.token()
    # 80 % of the lifetime would be within the 300 s buffer before expiry: the buffer wins, as in Java
    assert 690 <= source._refresh_at - time.time() <= 700
    long_lived = UnsecuredTokens({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "10000"})
    long_lived.token()
    assert 7990 <= long_lived._refresh_at - time.time() <= 8000


# ------------------------------------------------------------------------------------------------ unsecured
def test_an_unsecured_token_has_java_s_shape():
    config = ClientConfig(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{OAUTH} required unsecuredLoginStringClaim_sub="admin" '
            'unsecuredLoginListClaim_roles=",a,b" unsecuredLoginNumberClaim_n="2" unsecuredLoginExtension_tenant="t1";',
        }
    )
    token = config.sasl.token()
    header, _payload, signature = token.value.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "none"} and signature == ""
    claims = jwt_claims(token.value)
    assert (claims["sub"], claims["roles"], claims["n"]) == ("admin", ["a", "b"], 2.0)
    assert claims["exp"] - claims["iat"] == 3600
    assert token.extensions == {"tenant": "t1"} and token.principal == "admin"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param('unsecuredLoginStringClaim_iat="1"', "Cannot explicitly set the 'iat' claim", id="reserved"),
        pytest.param('unsecuredLoginStringClaim_name="x"', "Required claim missing: sub", id="no-subject"),
    ],
)
def test_unsecured_token_errors(options, message):
    with pytest.raises(ConfigError) as failure:
        UnsecuredTokens(dict(o.split("=", 1) for o in [options.replace('"', "")]))
    assert failure.value.message == message


# ------------------------------------------------------------------------------------------------ Kerberos
def kerberos(jaas: str, **extra: str) -> dict[str, str]:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": jaas, **extra}


def test_kerberos_settings_from_the_file_and_kafka_opts():
    config = ClientConfig(
        kerberos(
            f'{KRB5} required useKeyTab=true storeKey=true keyTab="/k/ops.keytab" principal="ops@EX.COM";',
            **{"sasl.kerberos.service.name": "kafka"},
        ),
        environ={"KAFKA_OPTS": "-Djava.security.krb5.conf=/etc/krb5-test.conf"},
    )
    login = config.sasl
    assert isinstance(login, KerberosLogin) and config.mechanism == "GSSAPI"
    assert (login.principal, login.keytab, login.service_name, login.krb5_conf) == (
        "ops@EX.COM",
        "/k/ops.keytab",
        "kafka",
        "/etc/krb5-test.conf",
    )
    assert not config.librdkafka_can_connect


def test_kerberos_from_a_jaas_file(tmp_path):
    jaas = tmp_path / "client_jaas.conf"
    jaas.write_text(f"KafkaClient {{\n  {KRB5} required\n  useTicketCache=true;\n}};\nOther {{ x required; }};\n")
    config = ClientConfig(
        {"security.protocol": "SASL_SSL", "sasl.kerberos.service.name": "kafka"},
        environ={"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"},
    )
    assert config.sasl.use_ticket_cache and config.sasl.keytab is None


@pytest.mark.parametrize(
    ("jaas", "extra", "message"),
    [
        pytest.param(
            f"{KRB5} required;", {"sasl.kerberos.service.name": "kafka"}, "asks for a password", id="password"
        ),
        pytest.param(f"{KRB5} required useTicketCache=true;", {}, "No serviceName defined", id="no-service"),
        pytest.param(
            f'{KRB5} required useKeyTab=true principal="a@B";',
            {"sasl.kerberos.service.name": "kafka"},
            "useKeyTab=true needs keyTab",
            id="no-keytab",
        ),
    ],
)
def test_kerberos_refusals(jaas, extra, message):
    with pytest.raises(ConfigError) as failure:
        ClientConfig(kerberos(jaas, **extra))
    assert message in failure.value.message


def test_a_broker_address_is_named_as_java_names_it():
    assert java_host_name("127.0.0.1") == "localhost"
    assert java_host_name("broker-1.example.com") == "broker-1.example.com"


# ------------------------------------------------------------------------------------------------ AWS MSK IAM
AWS_IAM = {
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "AWS_MSK_IAM",
    "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
}
MSK = "b-1.demo.abc123.c2.kafka.eu-west-3.amazonaws.com:9098"


@pytest.fixture
def aws_home(tmp_path, monkeypatch):
    (tmp_path / "credentials").write_text(
        "[ops]\naws_access_key_id = AKIAOPSEXAMPLE000001\naws_secret_access_key = opsSecretKeyExample0001\n"
    )
    (tmp_path / "config").write_text("[profile ops]\nregion = us-west-2\n")
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


def test_the_aws_documented_file_gives_a_signed_token_from_a_profile(aws_home):
    config = ClientConfig(
        {**AWS_IAM, "sasl.jaas.config": 'software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="ops";'}
    )
    assert isinstance(config.sasl, AwsIamTokens) and config.mechanism == "OAUTHBEARER"
    config.log_in(MSK)
    token = config.sasl.token()
    described = describe_token(token.value)
    assert described["action"] == "kafka-cluster:Connect"
    assert (described["host"], described["region"], described["service"]) == (
        "kafka.eu-west-3.amazonaws.com",
        "eu-west-3",
        "kafka-cluster",
    )
    assert described["expires_s"] == 900 and described["access_key"] == "AKIAOPSEXAMPLE000001"
    assert 880 <= token.expires_at - time.time() <= 901
    assert config.librdkafka_config()["sasl.mechanism"] == "OAUTHBEARER"
    assert "opsSecretKeyExample0001" not in token.value


def test_the_region_comes_from_the_profile_when_the_host_names_none(aws_home):
    source = AwsIamTokens({"awsProfileName": "ops"}).for_bootstrap("10.0.0.1:9098")
    assert describe_token(source.token().value)["region"] == "us-west-2"


class _StsStandIn(BaseHTTPRequestHandler):
    """AssumeRole on 127.0.0.1, answering as AWS STS does (XML)."""

    calls: ClassVar[list[dict]] = []

    def log_message(self, *_args: object) -> None:
        return

    def do_POST(self) -> None:
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        _StsStandIn.calls.append({k: v[0] for k, v in form.items()} | {"auth": self.headers.get("Authorization", "")})
        expiry = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        body = (
            '<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>'
            "<AccessKeyId>ASIAROLEEXAMPLE00001</AccessKeyId><SecretAccessKey>roleSecretExample01</SecretAccessKey>"
            f"<SessionToken>roleSessionToken01</SessionToken><Expiration>{expiry}</Expiration></Credentials>"
            "<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/ops/kreassign</Arn>"
            "<AssumedRoleId>AROA:kreassign</AssumedRoleId></AssumedRoleUser></AssumeRoleResult>"
            "<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleResponse>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_role_is_assumed_through_sts_with_the_profile_s_credentials(aws_home, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StsStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        options = {
            "awsProfileName": "ops",
            "awsRoleArn": "arn:aws:iam::123456789012:role/ops",
            "awsRoleSessionName": "kreassign",
            "awsStsRegion": "eu-west-3",
        }
        source = AwsIamTokens(options).for_bootstrap(MSK)
        described = describe_token(source.token().value)
    finally:
        server.shutdown()
    call = _StsStandIn.calls[-1]
    assert (call["Action"], call["RoleArn"], call["RoleSessionName"]) == (
        "AssumeRole",
        options["awsRoleArn"],
        "kreassign",
    )
    assert "AKIAOPSEXAMPLE000001/" in call["auth"] and "/eu-west-3/sts/" in call["auth"]
    assert described["access_key"] == "ASIAROLEEXAMPLE00001" and described["region"] == "eu-west-3"


def test_the_region_in_an_msk_host_name():
    assert (
        region_of("b-2.x.kafka.ap-south-1.amazonaws.com:9098,b-1.x.kafka.ap-south-1.amazonaws.com:9098") == "ap-south-1"
    )
    assert region_of("boot-abc.c1.kafka-serverless.us-east-2.amazonaws.com:9098") == "us-east-2"
    assert region_of("127.0.0.1:9092") is None


def test_without_the_extra_one_line_names_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_signer(name, *args, **kwargs):
        if name.startswith("aws_msk_iam_sasl_signer"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_signer)
    with pytest.raises(ConfigError) as failure:
        ClientConfig({**AWS_IAM, "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;"})
    assert failure.value.message == (
        "AWS MSK IAM needs the AWS signer library, which is not installed: pip install 'kreassign[aws]'"
    )


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_host_without_the_gss_api_library_gets_one_line_naming_its_package(monkeypatch):
    from kreassign.cluster import gssapi_binding

    monkeypatch.setattr(gssapi_binding, "_LIBRARY", None)
    monkeypatch.setattr(gssapi_binding, "LIBRARY_NAMES", ("libgssapi_krb5-absent.so.9",))
    monkeypatch.delenv("KREASSIGN_GSSAPI_LIBRARY", raising=False)
    with pytest.raises(ConfigError) as failure:
        gssapi_binding.load_gssapi_library()
    assert failure.value.message.startswith("sasl.mechanism GSSAPI needs the system's Kerberos GSS-API library")
    assert "libgssapi-krb5-2 (Debian, Ubuntu), krb5-libs (RHEL" in failure.value.message


def test_the_library_an_executable_carries_is_loaded_first(monkeypatch):
    from kreassign.cluster import gssapi_binding

    monkeypatch.setattr(gssapi_binding, "_LIBRARY", None)
    monkeypatch.setenv("KREASSIGN_GSSAPI_LIBRARY", "libgssapi_krb5.so.2")
    assert gssapi_binding.load_gssapi_library()._name == "libgssapi_krb5.so.2"
