"""Every SASL mechanism of the Apache tool with the same properties file, on the one secure cluster
(``secure_cluster``): Kerberos (GSSAPI) from a keytab over SASL_PLAINTEXT and from the ticket cache over
SASL_SSL, OAUTHBEARER with OIDC client credentials (tokens of a local identity provider, checked by Kafka's own
validator against its JWKS), unsecured OAUTHBEARER tokens (KIP-255), and SCRAM whose secrets come from config
providers (file, directory, env).

Per mechanism, as an operator runs it (no kreassign option, a fresh default state folder): ``--execute
--throttle`` of a plan kept in progress by the throttle, ``--list`` and ``--verify`` compared with the Apache
4.4.0 tool's stdout and exit code with the same file and ``KAFKA_OPTS``, ``--cancel``, ``--generate``, then a
batched run and ``--progress``. Failures (a wrong client secret, an unreachable token endpoint, a bad keytab,
an unknown principal, an expired ticket cache): one ``Error:`` line (Apache's), exit 1, no traceback, nothing
changed. The last test greps every output of the module (``KREASSIGN_DEBUG=1`` throughout), the journals and
the process listing taken during a run for every secret used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.jars import APACHE_TOOL_JVM_OPTS, apache_tool_command
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition
from tests.integration.differential import Outcome, strip_java_stack_trace, wait_until

pytestmark = pytest.mark.integration

LAYOUT = [[1, 2], [2, 3]]
MESSAGES = 200
SLOW = "mechanisms-slow"  # 3 MB: more than a follower fetches before the replication quota holds it back
PROVIDER_ENV = "KREASSIGN_TEST_SCRAM_USER"
TRANSCRIPTS: list[str] = []
JOURNALS: list[Path] = []
SECRETS: list[str] = []


@dataclass
class Mechanism:
    name: str
    bootstrap: str
    config: Path
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Setup:
    cluster: object
    security: object
    folder: Path
    env: dict[str, str]
    mechanisms: dict[str, Mechanism]
    admin: KafkaCluster


@pytest.fixture(scope="module")
def setup(secure_cluster, tmp_path_factory) -> Setup:
    security = secure_cluster.security
    folder = tmp_path_factory.mktemp("mechanisms")
    env = {**security.client_environment(), "KREASSIGN_DEBUG": "1"}
    keytab = security.kerberos_user("admin")
    cache = security.kdc.ticket_cache("admin", keytab, folder / "admin.ccache")
    secrets_dir = folder / "secrets"
    (secrets_dir / "store").mkdir(parents=True)
    (secrets_dir / "admin.properties").write_text(f"admin.password={security.users['admin']}\n")
    (secrets_dir / "store" / "truststore.password").write_text(security.store_password)
    scram_with_providers = (
        "config.providers=file,directory,env\n"
        "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
        f"config.providers.file.param.allowed.paths={secrets_dir}\n"
        "config.providers.directory.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\n"
        "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        "config.providers.env.param.allowlist.pattern=KREASSIGN_TEST_.*\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="${{env:{PROVIDER_ENV}}}" password="${{file:{secrets_dir}/admin.properties:admin.password}}";\n'
        "ssl.truststore.type=JKS\n"
        f"ssl.truststore.location={security.truststore('JKS')}\n"
        f"ssl.truststore.password=${{directory:{secrets_dir}/store:truststore.password}}\n"
    )
    plain = secure_cluster.bootstrap_for("SASL_PLAINTEXT")
    texts = {
        "kerberos-keytab": (plain, security.kerberos_properties("admin", keytab=keytab), {}),
        "kerberos-ticket-cache": (
            secure_cluster.bootstrap_servers,
            security.kerberos_properties("admin", ticket_cache=True, protocol="SASL_SSL"),
            {"KRB5CCNAME": f"FILE:{cache}"},
        ),
        "oauth-oidc": (plain, security.oauth_properties("kreassign-admin"), {}),
        "oauth-unsecured": (secure_cluster.bootstrap_for("UNSECURED"), security.unsecured_properties("admin"), {}),
        "oauth-jwt-bearer": (plain, security.jwt_bearer_properties("admin"), {}),
        "scram-config-providers": (secure_cluster.bootstrap_servers, scram_with_providers, {PROVIDER_ENV: "admin"}),
    }
    mechanisms = {}
    for name, (bootstrap, text, extra) in texts.items():
        path = folder / f"{name}.properties"
        path.write_text(text)
        mechanisms[name] = Mechanism(name, bootstrap, path, extra)
    for name in FLOWS:
        create_topic(secure_cluster.bootstrap_servers, name, LAYOUT, messages=MESSAGES, size=1000, security=security)
    create_topic(secure_cluster.bootstrap_servers, SLOW, [[1, 2]], security=security)
    _fill_in_small_batches(security, secure_cluster.bootstrap_servers, SLOW, 3000)
    SECRETS.extend(security.passwords)
    SECRETS.append(keytab.read_bytes().hex())
    admin = KafkaCluster(
        bootstrap_servers=secure_cluster.bootstrap_servers,
        client_config=ClientConfig(
            dict(line.split("=", 1) for line in security.client_properties("admin", "PEM").splitlines())
        ),
    )
    yield Setup(secure_cluster, security, folder, env, mechanisms, admin)
    admin.close()
    SECRETS.extend(security.identity.issued)  # every token issued during the module, Apache's included


def _fill_in_small_batches(security, bootstrap: str, topic: str, messages: int) -> None:
    """1 kB records in batches of about 16 kB: a follower then copies 64 kB per throttle window."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "batch.size": 16384,
            **security.librdkafka_config("admin"),
        }
    )
    for _ in range(messages):
        producer.produce(topic, value=b"s" * 1000, partition=0)
        producer.poll(0)
    assert producer.flush(120) == 0


def ours(setup: Setup, m: Mechanism, *args: str, state: Path | None = None) -> Outcome:
    argv = [
        sys.executable,
        "-m",
        "kreassign",
        "--bootstrap-server",
        m.bootstrap,
        *args,
        "--command-config",
        str(m.config),
    ]
    env = {**os.environ, **setup.env, **m.env, "XDG_STATE_HOME": str(state or setup.folder / f"state-{m.name}")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=240, env=env)
    TRANSCRIPTS.append(proc.stdout + proc.stderr)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def apache(setup: Setup, m: Mechanism, *args: str) -> Outcome:
    options = APACHE_TOOL_JVM_OPTS + tuple(setup.env["KAFKA_OPTS"].split())
    argv = [*apache_tool_command(java_opts=options), "--bootstrap-server", m.bootstrap, *args]
    env = {**os.environ, **m.env}
    proc = subprocess.run(
        [*argv, "--command-config", str(m.config)], capture_output=True, text=True, timeout=240, env=env
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def assignment(setup: Setup, topic: str) -> dict[int, tuple[int, ...]]:
    return {p.partition: p.replicas for p in setup.admin.describe_topics([topic])[topic]}


def plan(setup: Setup, topic: str, layout: dict[int, list[int]]) -> str:
    path = setup.folder / f"{topic}-{'-'.join(str(b) for r in layout.values() for b in r)}.json"
    partitions = [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def no_reassignment(setup: Setup, topic: str) -> bool:
    return not setup.admin.list_reassignments([TopicPartition(topic, p) for p in range(2)])


def same(ours_: Outcome, theirs: Outcome) -> None:
    assert (ours_.code, ours_.stdout) == (theirs.code, strip_java_stack_trace(theirs.stdout)), (ours_, theirs)


# --------------------------------------------------------------------------------------------- flows
FLOWS = ["kerberos-keytab", "oauth-oidc", "oauth-unsecured", "scram-config-providers"]


@pytest.mark.differential
@pytest.mark.parametrize("name", FLOWS)
def test_every_action_with_the_same_file_as_the_apache_tool(setup, name):
    m = setup.mechanisms[name]
    before = assignment(setup, SLOW)
    slow = plan(setup, SLOW, {0: [1, 3]})  # a new replica: 3 MB at 1 kB/s
    try:
        executed = ours(setup, m, "--execute", "--reassignment-json-file", slow, "--throttle", "1000")
        assert executed.code == 0, executed
        assert "Successfully started partition reassignment for mechanisms-slow-0" in executed.stdout
        # in progress: the Apache tool and kreassign, same file, same stdout
        same(ours(setup, m, "--list"), apache(setup, m, "--list"))
        verify = ("--verify", "--reassignment-json-file", slow)
        same(ours(setup, m, *verify), apache(setup, m, *verify))
        cancelled = ours(setup, m, "--cancel", "--reassignment-json-file", slow)
        assert cancelled.code == 0, cancelled
        assert "Successfully cancelled partition reassignment for: mechanisms-slow-0" in cancelled.stdout, cancelled
    finally:  # whatever failed, the next mechanism starts from no reassignment
        setup.admin.alter_reassignments({TopicPartition(SLOW, 0): None})
    assert wait_until(lambda: no_reassignment(setup, SLOW), 60)
    assert assignment(setup, SLOW) == before
    topics = setup.folder / f"{name}-topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": name}]}))
    generated = ours(setup, m, "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3")
    assert generated.code == 0 and "Proposed partition reassignment configuration" in generated.stdout, generated
    # a batched run, then --progress
    target = {0: [2, 3], 1: [3, 1]}
    batched = plan(setup, name, target)
    run = ours(
        setup,
        m,
        "--execute",
        "--reassignment-json-file",
        batched,
        "--max-partition-movements",
        "2",
        "--throttle",
        "50000000",
        "--poll-interval-ms",
        "200",
    )
    assert run.code == 0 and "Batched reassignment complete" in run.stdout, run
    progress = ours(setup, m, "--progress", "--reassignment-json-file", batched)
    assert progress.code == 0 and "In sync" in progress.stdout, progress
    assert assignment(setup, name) == {p: tuple(r) for p, r in target.items()}
    JOURNALS.extend(p for p in (setup.folder / f"state-{name}").rglob("*") if p.is_file())


@pytest.mark.differential
def test_the_jwt_bearer_grant_with_an_assertion_signed_here(setup):
    """Kafka 4.1+'s JwtBearerJwtRetriever: both tools sign an assertion with the same key and trade it for a token
    the brokers accept."""
    m = setup.mechanisms["oauth-jwt-bearer"]
    same(ours(setup, m, "--list"), apache(setup, m, "--list"))
    topics = setup.folder / "jwt-topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": "oauth-oidc"}]}))
    generated = ours(setup, m, "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3")
    assert generated.code == 0 and "Current partition replica assignment" in generated.stdout, generated


def test_kerberos_from_the_ticket_cache_over_sasl_ssl(setup):
    m = setup.mechanisms["kerberos-ticket-cache"]
    same(ours(setup, m, "--list"), apache(setup, m, "--list"))
    topics = setup.folder / "cache-topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": "kerberos-keytab"}]}))
    generated = ours(setup, m, "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3")
    assert generated.code == 0 and "Current partition replica assignment" in generated.stdout, generated
    # every other call over kafka-python: topic names, log dirs, end offsets, consumer groups' offsets
    snapshot = setup.folder / "kerberos.jsonl"
    written = ours(setup, m, "--write-cluster-snapshot", str(snapshot), "--sample-rates", "1")
    assert written.code == 0, written
    assert '"topic": "kerberos-keytab"' in snapshot.read_text() or '"kerberos-keytab"' in snapshot.read_text()


# --------------------------------------------------------------------------------------------- failures
def _variant(setup: Setup, base: str, name: str, old: str, new: str) -> Mechanism:
    m = setup.mechanisms[base]
    text = m.config.read_text()
    assert old in text
    path = setup.folder / f"{name}.properties"
    path.write_text(text.replace(old, new))
    return Mechanism(name, m.bootstrap, path, dict(m.env))


def _fails_like_apache(setup: Setup, m: Mechanism, compare: bool) -> Outcome:
    before = assignment(setup, "oauth-oidc")
    result = ours(setup, m, "--execute", "--reassignment-json-file", plan(setup, "oauth-oidc", {0: [3, 1]}))
    assert result.code == 1, result
    assert result.stdout == "Error: Failed to create new KafkaAdminClient\n", result
    assert "Traceback" not in result.stderr and result.stderr.startswith("kreassign: "), result
    if compare:
        theirs = apache(setup, m, "--list")
        assert strip_java_stack_trace(theirs.stdout).startswith(result.stdout) and theirs.code == 1, theirs
    assert assignment(setup, "oauth-oidc") == before
    return result


@pytest.mark.differential
def test_a_wrong_client_secret(setup):
    secret = setup.security.oauth_clients["kreassign-admin"][0]
    m = _variant(setup, "oauth-oidc", "wrong-secret", secret, "not-the-secret-0")
    SECRETS.append("not-the-secret-0")
    result = _fails_like_apache(setup, m, compare=True)
    assert "401" in result.stderr and "invalid_client" in result.stderr


def test_an_unreachable_token_endpoint(setup):
    token_url = setup.security.identity.token_url
    m = _variant(setup, "oauth-oidc", "endpoint-down", token_url, "http://127.0.0.1:9/token")
    m.config.write_text(m.config.read_text() + "sasl.login.retry.backoff.max.ms=400\n")
    setup_env = dict(setup.env)
    setup.env["KAFKA_OPTS"] = "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=http://127.0.0.1:9/token"
    try:
        result = _fails_like_apache(setup, m, compare=False)
    finally:
        setup.env.clear()
        setup.env.update(setup_env)
    assert "could not be reached" in result.stderr


@pytest.mark.differential
def test_a_bad_keytab(setup):
    bad = setup.folder / "bad.keytab"
    bad.write_bytes(b"not a keytab")
    keytab = setup.security.kdc.directory / "admin.keytab"
    m = _variant(setup, "kerberos-keytab", "bad-keytab", str(keytab), str(bad))
    result = _fails_like_apache(setup, m, compare=True)
    assert "not a keytab" in result.stderr


def test_an_unknown_principal(setup):
    keytab = setup.security.kerberos_user("ghost")
    setup.security.kdc.delete("ghost")
    m = _variant(
        setup, "kerberos-keytab", "unknown-principal", str(setup.security.kdc.directory / "admin.keytab"), str(keytab)
    )
    m.config.write_text(m.config.read_text().replace('principal="admin@', 'principal="ghost@'))
    result = _fails_like_apache(setup, m, compare=False)
    assert "ghost@KREASSIGN.TEST" in result.stderr


def _expire(cache: Path) -> None:
    """Rewrite the times of every credential of a FILE ticket cache (MIT's format, v3 or v4) to the past: the
    cache of a kinit made yesterday (the KDC refuses tickets shorter than its clock skew)."""
    data = bytearray(cache.read_bytes())

    def u32(at: int) -> int:
        return int.from_bytes(data[at : at + 4], "big")

    def principal(at: int) -> int:  # name type, count, the realm, then each component
        count, at = u32(at + 4), at + 8
        for _ in range(count + 1):
            at += 4 + u32(at)
        return at

    def tagged_list(at: int) -> int:  # addresses, authorization data: count, then (u16 type, u32 length, data)
        count, at = u32(at), at + 4
        for _ in range(count):
            at += 2 + 4 + u32(at + 2)
        return at

    version = int.from_bytes(data[0:2], "big")
    at = 2 + (2 + int.from_bytes(data[2:4], "big") if version == 0x0504 else 0)
    enctypes = 4 if version == 0x0503 else 2  # version 3 writes the key's enctype twice
    at = principal(at)  # the default principal
    past = int(time.time()) - 7200
    while at < len(data):
        at = principal(principal(at))  # client, server
        at += enctypes + 4 + u32(at + enctypes)  # the key block: enctype, length, key
        for index, value in enumerate((past, past, past + 600, past + 600)):  # auth, start, end, renew till
            data[at + 4 * index : at + 4 * index + 4] = value.to_bytes(4, "big")
        at = tagged_list(tagged_list(at + 16 + 1 + 4))  # times, is_skey, flags; addresses, authorization data
        at += 4 + u32(at)  # the ticket
        at += 4 + u32(at)  # the second ticket
    cache.write_bytes(bytes(data))


def test_an_expired_ticket_cache(setup):
    keytab = setup.security.kdc.directory / "admin.keytab"
    cache = setup.security.kdc.ticket_cache("admin", keytab, setup.folder / "expired.ccache")
    _expire(cache)
    m = Mechanism("expired", setup.mechanisms["kerberos-keytab"].bootstrap, setup.folder / "expired.properties")
    m.config.write_text(setup.security.kerberos_properties("admin", ticket_cache=True))
    m.env["KRB5CCNAME"] = f"FILE:{cache}"
    result = _fails_like_apache(setup, m, compare=False)
    assert "ticket cache" in result.stderr


# --------------------------------------------------------------------------------------------- secrets
def test_no_secret_in_any_output_journal_or_process_listing(setup):
    """Runs last: every stdout/stderr of this module (KREASSIGN_DEBUG=1 throughout), every journal file, and the
    command lines of every process while a run used the OIDC login."""
    m = setup.mechanisms["oauth-oidc"]
    env = {**os.environ, **setup.env, "XDG_STATE_HOME": str(setup.folder / "state-listing")}
    argv = [
        sys.executable,
        "-m",
        "kreassign",
        "--bootstrap-server",
        m.bootstrap,
        "--list",
        "--command-config",
        str(m.config),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    listings = []
    while proc.poll() is None:
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                listings.append(cmdline.read_bytes().decode(errors="replace"))
            except OSError:
                continue
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    TRANSCRIPTS.append(stdout + stderr)
    assert proc.returncode == 0, stdout + stderr
    texts = TRANSCRIPTS + listings + [p.read_text(errors="replace") for p in JOURNALS]
    assert len(TRANSCRIPTS) >= 20 and JOURNALS and listings
    for secret in {s for s in [*SECRETS, *setup.security.identity.issued] if s}:
        leaks = [t[:120] for t in texts if secret in t]
        assert not leaks, f"a secret appears in {len(leaks)} output(s)"
