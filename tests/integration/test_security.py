"""Every action through --command-config on a cluster whose clients must use SASL_SSL (SCRAM-SHA-512
over TLS) and ACLs: truststores as JKS, PKCS12 and PEM; a user without the ACLs gets the Apache tool's
one-line authorization error; no password in any stdout, stderr or journal, KREASSIGN_DEBUG=1 included.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kreassign.cluster.client_config import ClientConfig
from kreassign.cluster.java_properties import parse_java_properties
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.security import TRUSTSTORE_TYPES
from kreassign.devcluster.topics import count_messages, create_topic
from kreassign.model import TopicPartition
from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES
from tests.integration.differential import Outcome, run_apache, strip_java_stack_trace, wait_until

pytestmark = pytest.mark.integration

TOPIC = "secure-moves"
LAYOUT = [[1, 2], [2, 3], [3, 1], [1, 3]]
# 3 MB a partition: more than a follower fetches before the replication quota holds it back
MESSAGES = 12000
THROTTLE_KEYS = BROKER_LEVEL_THROTTLES + TOPIC_LEVEL_THROTTLES
#: every stdout/stderr of this module, grepped for passwords by the last test
TRANSCRIPTS: list[str] = []
JOURNALS: list[Path] = []


@dataclass
class Secure:
    bootstrap: str
    configs: dict[str, str]  # name -> --command-config path
    passwords: list[str]
    port: KafkaCluster
    security: object


@pytest.fixture(scope="module")
def secure(secure_cluster, tmp_path_factory):
    security = secure_cluster.security
    folder = tmp_path_factory.mktemp("secure-configs")
    configs = {}

    def write(name: str, text: str) -> None:
        path = folder / f"{name}.properties"
        path.write_text(text)
        configs[name] = str(path)

    for store_type in TRUSTSTORE_TYPES:
        write(f"admin-{store_type}", security.client_properties("admin", store_type))
    write("operator", security.client_properties("operator", "PKCS12"))
    write("nobody", security.client_properties("nobody", "JKS"))
    write("wrong-password", security.client_properties("admin", "JKS", password="not-the-password-0"))
    bootstrap = secure_cluster.bootstrap_servers
    create_topic(bootstrap, TOPIC, LAYOUT, messages=MESSAGES, size=1000, security=security)
    _grant_describe_topic(bootstrap, security, "operator", TOPIC)
    port = KafkaCluster(
        bootstrap_servers=bootstrap,
        client_config=ClientConfig(parse_java_properties(Path(configs["admin-PEM"]).read_text())),
    )
    yield Secure(bootstrap, configs, security.passwords, port, security)
    port.close()


def _grant_describe_topic(bootstrap: str, security, user: str, topic: str) -> None:
    """ACL: ``user`` may describe ``topic`` (and nothing else)."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
    )
    from confluent_kafka.admin import ResourceType as AclResource

    admin = AdminClient({"bootstrap.servers": bootstrap, **security.librdkafka_config("admin")})
    binding = AclBinding(
        AclResource.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        f"User:{user}",
        "*",
        AclOperation.DESCRIBE,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([binding]).values():
        future.result(timeout=60)


def ours(secure: Secure, config: str, *args: str, timeout: float = 240) -> Outcome:
    """kreassign with ``--command-config`` and KREASSIGN_DEBUG=1 (tracebacks must hold no secret either)."""
    argv = [sys.executable, "-m", "kreassign", "--bootstrap-server", secure.bootstrap, *args]
    argv += ["--command-config", secure.configs[config]]
    env = {**os.environ, "KREASSIGN_DEBUG": "1"}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    TRANSCRIPTS.append(proc.stdout + proc.stderr)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def apache(secure: Secure, config: str, *args: str) -> Outcome:
    return run_apache(["--bootstrap-server", secure.bootstrap, *args, "--command-config", secure.configs[config]])


def write_plan(path: Path, layout: dict[int, list[int]]) -> str:
    partitions = [{"topic": TOPIC, "partition": p, "replicas": r} for p, r in layout.items()]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def assignment(secure: Secure) -> dict[int, tuple[int, ...]]:
    return {p.partition: p.replicas for p in secure.port.describe_topics([TOPIC])[TOPIC]}


def throttles(secure: Secure) -> dict:
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3)]
    resources.append(ConfigResource(ResourceType.TOPIC, TOPIC))
    described = secure.port.describe_configs(resources)
    return {r.name: v for r, values in described.items() if (v := {k: values[k] for k in THROTTLE_KEYS if k in values})}


def wait_done(secure: Secure, timeout: float = 120) -> None:
    tps = [TopicPartition(TOPIC, p) for p in range(len(LAYOUT))]
    assert wait_until(lambda: not secure.port.list_reassignments(tps), timeout)


# --------------------------------------------------------------------------------------------- actions
@pytest.mark.parametrize("store_type", TRUSTSTORE_TYPES)
def test_list_with_each_truststore_type(secure, store_type):
    result = ours(secure, f"admin-{store_type}", "--list")
    assert (result.code, result.stdout) == (0, "No partition reassignments found.\n"), result


def test_generate_execute_verify_through_sasl_ssl(secure, tmp_path):
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": TOPIC}]}))
    generated = ours(
        secure, "admin-JKS", "--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3"
    )
    assert generated.code == 0, generated
    assert "Proposed partition reassignment configuration" in generated.stdout

    target = {0: [2, 3], 1: [3, 1], 2: [1, 2], 3: [2, 1]}
    plan = write_plan(tmp_path / "plan.json", target)
    executed = ours(secure, "admin-PKCS12", "--execute", "--reassignment-json-file", plan, "--throttle", "50000000")
    assert executed.code == 0, executed
    assert "The inter-broker throttle limit was set to 50000000 B/s" in executed.stdout
    wait_done(secure)
    verified = ours(secure, "admin-PEM", "--verify", "--reassignment-json-file", plan)
    assert verified.code == 0, verified
    assert "Reassignment of partition secure-moves-0 is completed." in verified.stdout
    assert assignment(secure) == {p: tuple(r) for p, r in target.items()}
    assert throttles(secure) == {}


def test_batched_execute_with_throttle_and_a_private_journal(secure, tmp_path):
    target = {0: [3, 1], 1: [1, 2], 2: [2, 3], 3: [3, 2]}
    plan = write_plan(tmp_path / "plan.json", target)
    journal = tmp_path / "state" / "journal.json"
    result = ours(
        secure,
        "admin-JKS",
        "--execute",
        "--reassignment-json-file",
        plan,
        "--max-partition-movements",
        "1",
        "--throttle",
        "30000000",
        "--journal-file",
        str(journal),
        "--poll-interval-ms",
        "200",
    )
    assert result.code == 0, result
    assert f"Journal: {journal}" in result.stdout
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    JOURNALS.extend(p for p in journal.parent.iterdir() if p.is_file())
    assert assignment(secure) == {p: tuple(r) for p, r in target.items()}
    assert throttles(secure) == {}
    verified = ours(secure, "admin-JKS", "--verify", "--reassignment-json-file", plan)
    assert verified.code == 0 and "is completed" in verified.stdout, verified


def test_cancel_a_running_batched_run_through_sasl_ssl(secure, tmp_path):
    before = assignment(secure)
    # each partition keeps its leader and gets one new replica: slow under the throttle, no step done
    target = {p: [replicas[0], next(b for b in (1, 2, 3) if b not in replicas)] for p, replicas in before.items()}
    plan = write_plan(tmp_path / "plan.json", target)
    journal = tmp_path / "journal.json"
    args = ["--execute", "--reassignment-json-file", plan, "--journal-file", str(journal)]
    args += ["--max-partition-movements", "1", "--throttle", "20000", "--poll-interval-ms", "200"]
    argv = [sys.executable, "-m", "kreassign", "--bootstrap-server", secure.bootstrap, *args]
    argv += ["--command-config", secure.configs["admin-JKS"]]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "KREASSIGN_DEBUG": "1"}
    )
    try:
        assert wait_until(lambda: bool(secure.port.list_reassignments()), 90)
        listed = ours(secure, "admin-PKCS12", "--list")
        assert listed.code == 0 and "Current partition reassignments:" in listed.stdout, listed
        cancelled = ours(
            secure, "admin-PEM", "--cancel", "--reassignment-json-file", plan, "--journal-file", str(journal)
        )
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        proc.kill()
    TRANSCRIPTS.append(stdout + stderr)
    JOURNALS.extend(p for p in tmp_path.iterdir() if p.is_file() and p.name.startswith("journal"))
    assert cancelled.code == 0, cancelled
    assert "Cancelled the batched reassignment" in cancelled.stdout
    assert proc.returncode == 4, stdout + stderr
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    wait_done(secure)
    assert throttles(secure) == {}
    assert assignment(secure) == before
    assert count_messages_secure(secure) == dict.fromkeys(range(len(LAYOUT)), MESSAGES // len(LAYOUT))


def count_messages_secure(secure: Secure) -> dict[int, int]:
    return count_messages(secure.bootstrap, TOPIC, len(LAYOUT), client=secure.security.librdkafka_config("admin"))


# --------------------------------------------------------------------------------------------- refusals
_VARIABLE = [
    (re.compile(r"connectionId=[^,]*"), "connectionId=*"),
    (re.compile(r"Session@[0-9a-f]+"), "Session@*"),
    (re.compile(r"processor=\d+"), "processor=*"),
    (re.compile(r"buffer=java\.nio\.HeapByteBuffer\[[^\]]*\]"), "buffer=*"),
]


def _normalized(text: str) -> str:
    """The broker's text for a refused forwarded request names its connection: not part of the contract."""
    for pattern, replacement in _VARIABLE:
        text = pattern.sub(replacement, text)
    return text


REFUSALS = [
    ("nobody-list", "nobody", ["--list"]),
    ("nobody-generate", "nobody", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "1,2"]),
    ("nobody-execute", "nobody", ["--execute", "--reassignment-json-file", "{plan}"]),
    ("nobody-verify", "nobody", ["--verify", "--reassignment-json-file", "{plan}"]),
    ("nobody-cancel", "nobody", ["--cancel", "--reassignment-json-file", "{plan}"]),
    ("operator-execute", "operator", ["--execute", "--reassignment-json-file", "{plan}"]),
    ("operator-list", "operator", ["--list"]),
    ("wrong-password-list", "wrong-password", ["--list"]),
    ("wrong-password-execute", "wrong-password", ["--execute", "--reassignment-json-file", "{plan}"]),
]


@pytest.mark.differential
@pytest.mark.parametrize(("config", "argv"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_refused_user_gets_the_apache_one_line_error(secure, tmp_path, config, argv):
    plan = write_plan(tmp_path / "plan.json", {0: [3, 2]})
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": TOPIC}]}))
    args = [a.format(plan=plan, topics=topics) for a in argv]
    before = assignment(secure)
    theirs, result = apache(secure, config, *args), ours(secure, config, *args)
    assert result.code == 1, result
    assert len(result.stdout.splitlines()) == 1 and result.stdout.startswith("Error: "), result
    assert "Traceback" not in result.stderr
    assert _normalized(result.stdout) == _normalized(strip_java_stack_trace(theirs.stdout))
    assert theirs.code == 1
    assert assignment(secure) == before


# --------------------------------------------------------------------------------------------- secrets
def test_no_password_in_any_output_or_journal(secure):
    """Runs last: every stdout/stderr of this module (KREASSIGN_DEBUG=1 throughout) and every journal file."""
    assert len(TRANSCRIPTS) >= 20 and JOURNALS
    texts = TRANSCRIPTS + [p.read_text(errors="replace") for p in JOURNALS]
    for secret in [*secure.passwords, "not-the-password-0"]:
        leaks = [t[:200] for t in texts if secret in t]
        assert not leaks, f"a password appears in {len(leaks)} output(s)"
