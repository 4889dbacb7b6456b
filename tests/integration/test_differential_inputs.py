"""Differential: bad command lines and bad inputs give the Apache tool's exit code and stdout.

Each case runs Apache's kafka-reassign-partitions (from the pinned jars) and kreassign on the same
cluster with the same files. stdout must be equal once the Java stack trace is removed from Apache's
(a documented difference); for usage errors both stdouts are empty and our stderr line is the first
line of Apache's.
"""

from __future__ import annotations

import json
import uuid

import pytest

from kreassign.devcluster.topics import create_topic
from tests.integration.differential import first_line, run_apache, run_ours, strip_java_stack_trace

pytestmark = [pytest.mark.integration, pytest.mark.differential]

TOPIC = "diff-inputs"


@pytest.fixture(scope="module")
def topic(kafka_cluster):
    create_topic(kafka_cluster.bootstrap_servers, TOPIC, [[1, 2], [2, 3], [3, 1]])
    return TOPIC


def _partition(**fields):
    base = {"topic": TOPIC, "partition": 0, "replicas": [1, 2]}
    base.update(fields)
    return base


def _plan(*partitions, version=1):
    return json.dumps({"version": version, "partitions": list(partitions)})


# (id, action, file content) -- file given with --reassignment-json-file (or topics file for generate)
JSON_CASES = [
    ("empty-file", "execute", ""),
    ("whitespace-only", "execute", "  \n"),
    ("not-json", "execute", "not json"),
    ("unterminated-object", "execute", "{"),
    ("unterminated-string", "execute", '{"version": "1'),
    ("top-level-array", "execute", "[]"),
    ("top-level-number", "execute", "42"),
    ("version-2", "execute", _plan(_partition(), version=2)),
    ("version-string", "execute", '{"version":"1","partitions":[]}'),
    ("version-float", "execute", '{"version":1.0,"partitions":[]}'),
    ("no-partitions-field", "execute", '{"version":1}'),
    ("empty-partitions", "execute", _plan()),
    ("partitions-object", "execute", '{"version":1,"partitions":{}}'),
    ("partition-entry-number", "execute", '{"version":1,"partitions":[1]}'),
    ("missing-topic", "execute", _plan({"partition": 0, "replicas": [1]})),
    ("missing-partition", "execute", _plan({"topic": TOPIC, "replicas": [1]})),
    ("missing-replicas", "execute", _plan({"topic": TOPIC, "partition": 0})),
    ("topic-number", "execute", _plan(_partition(topic=1))),
    ("topic-null", "execute", _plan(_partition(topic=None))),
    ("partition-string", "execute", _plan(_partition(partition="0"))),
    ("partition-float", "execute", _plan(_partition(partition=0.5))),
    ("partition-huge", "execute", _plan(_partition(partition=99999999999))),
    ("partition-bignum", "execute", _plan(_partition(partition=10**30))),
    ("replicas-number", "execute", _plan(_partition(replicas=1))),
    ("replicas-with-string", "execute", _plan(_partition(replicas=[1, "2"]))),
    ("replicas-nested", "execute", _plan(_partition(replicas=[[1], 2]))),
    ("replicas-empty", "execute", _plan(_partition(replicas=[]))),
    ("duplicate-partitions", "execute", _plan(_partition(), _partition(replicas=[2, 3]))),
    ("duplicate-replicas", "execute", _plan(_partition(replicas=[1, 1, 2]))),
    ("log-dirs-length", "execute", _plan(_partition(log_dirs=["any"]))),
    ("log-dirs-number", "execute", _plan(_partition(log_dirs=[1, 2]))),
    ("trailing-comma", "execute", '{"version":1,"partitions":[],}'),
    ("single-quotes", "execute", "{'version':1}"),
    ("nan", "execute", '{"version":NaN}'),
    ("leading-zero", "execute", '{"version":01}'),
    ("minus-alone", "execute", '{"version":-}'),
    ("decimal-point-alone", "execute", '{"version":1.}'),
    ("missing-colon", "execute", '{"version" 1}'),
    ("missing-comma", "execute", '{"version":1 "partitions":[]}'),
    ("bad-escape", "execute", '{"version":"\\x"}'),
    ("control-char-in-string", "execute", '{"v":"a\u0001"}'),
    ("unterminated-array", "execute", '{"partitions":[1,2'),
    ("mismatched-close", "execute", '{"partitions":[1}'),
    ("stray-close", "execute", "]"),
    ("bad-token", "execute", '{"version":tru}'),
    ("invalid-utf8", "execute", "\udcff{}"),
    ("deep-nesting", "execute", "[" * 1500),
    ("trailing-garbage-ignored", "execute", '{"version":1} trailing'),
    ("comment", "execute", '{"version":1 /* c */}'),
    ("unknown-broker", "execute", _plan(_partition(replicas=[1, 99]))),
    ("unknown-topic", "execute", _plan(_partition(topic="no-such-topic-xyz"))),
    ("unknown-partition", "execute", _plan(_partition(partition=7))),
    ("verify-empty-file", "verify", ""),
    ("verify-top-level-array", "verify", "[1,2]"),
    ("verify-version-2", "verify", _plan(_partition(), version=2)),
    ("verify-missing-topic", "verify", _plan({"partition": 0, "replicas": [1]})),
    ("verify-unknown-topic", "verify", _plan(_partition(topic="no-such-topic-xyz"))),
    ("verify-partition-out-of-range", "verify", _plan(_partition(partition=5))),
    ("cancel-not-json", "cancel", "}"),
    ("cancel-version-2", "cancel", _plan(_partition(), version=2)),
    ("generate-not-json", "generate", "nope"),
    ("generate-top-level-array", "generate", "[]"),
    ("generate-version-2", "generate", '{"version":2,"topics":[{"topic":"x"}]}'),
    ("generate-missing-topic-field", "generate", '{"version":1,"topics":[{"name":"x"}]}'),
    ("generate-topic-number", "generate", '{"version":1,"topics":[{"topic":1}]}'),
    ("generate-duplicate-topics", "generate", json.dumps({"topics": [{"topic": TOPIC}, {"topic": TOPIC}]})),
    ("generate-unknown-topic", "generate", '{"version":1,"topics":[{"topic":"no-such-topic-xyz"}]}'),
]


def _args_for(action: str, path: str, bootstrap: str) -> list[str]:
    if action == "generate":
        return [
            "--bootstrap-server",
            bootstrap,
            "--generate",
            "--topics-to-move-json-file",
            path,
            "--broker-list",
            "1,2,3",
        ]
    return ["--bootstrap-server", bootstrap, f"--{action}", "--reassignment-json-file", path]


@pytest.mark.parametrize(("action", "content"), [c[1:] for c in JSON_CASES], ids=[c[0] for c in JSON_CASES])
def test_bad_json_inputs(topic, bootstrap, tmp_path, action, content):
    path = tmp_path / f"{uuid.uuid4().hex}.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    args = _args_for(action, str(path), bootstrap)
    apache, ours = run_apache(args), run_ours(args)
    assert (ours.code, ours.stdout) == (apache.code, strip_java_stack_trace(apache.stdout))
    assert "Traceback" not in ours.stderr


# (id, args after --bootstrap-server) -- files that do not exist, bad option values
ARG_CASES = [
    ("execute-missing-file", ["--execute", "--reassignment-json-file", "/nonexistent/plan.json"]),
    ("verify-missing-file", ["--verify", "--reassignment-json-file", "/nonexistent/plan.json"]),
    ("cancel-missing-file", ["--cancel", "--reassignment-json-file", "/nonexistent/plan.json"]),
    (
        "generate-missing-file",
        ["--generate", "--topics-to-move-json-file", "/nonexistent/t.json", "--broker-list", "1"],
    ),
    ("command-config-missing", ["--list", "--command-config", "/nonexistent/client.properties"]),
    ("execute-directory-as-file", ["--execute", "--reassignment-json-file", "/"]),
    ("throttle-not-a-number", ["--execute", "--reassignment-json-file", "{plan}", "--throttle", "abc"]),
    ("timeout-not-a-number", ["--cancel", "--reassignment-json-file", "{plan}", "--timeout", "1.5"]),
    ("throttle-twice", ["--execute", "--reassignment-json-file", "{plan}", "--throttle", "1", "--throttle", "2"]),
    ("broker-list-letters", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "a,b"]),
    ("broker-list-duplicates", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "1,2,1"]),
    ("broker-list-empty", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", ""]),
    ("broker-list-leading-comma", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", ",1"]),
    ("broker-list-space", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "1, 2"]),
]


@pytest.mark.parametrize("argv", [c[1] for c in ARG_CASES], ids=[c[0] for c in ARG_CASES])
def test_bad_files_and_values(topic, bootstrap, tmp_path, argv):
    plan = tmp_path / "plan.json"
    plan.write_text(_plan(_partition(replicas=[1, 2])))
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": TOPIC}], "version": 1}))
    argv = [a.format(plan=plan, topics=topics) for a in argv]
    args = ["--bootstrap-server", bootstrap, *argv]
    apache, ours = run_apache(args), run_ours(args)
    assert (ours.code, ours.stdout) == (apache.code, strip_java_stack_trace(apache.stdout))
    assert "Traceback" not in ours.stderr


USAGE_CASES = [
    ("no-action", ["--bootstrap-server", "{bs}"]),
    ("two-actions", ["--bootstrap-server", "{bs}", "--list", "--verify"]),
    ("both-bootstraps", ["--bootstrap-server", "{bs}", "--bootstrap-controller", "{bs}", "--list"]),
    ("no-bootstrap", ["--list"]),
    ("verify-no-file", ["--bootstrap-server", "{bs}", "--verify"]),
    ("generate-no-topics", ["--bootstrap-server", "{bs}", "--generate", "--broker-list", "1"]),
    ("generate-no-brokers", ["--bootstrap-server", "{bs}", "--generate", "--topics-to-move-json-file", "x"]),
    (
        "throttle-with-verify",
        ["--bootstrap-server", "{bs}", "--verify", "--reassignment-json-file", "x", "--throttle", "1"],
    ),
    ("additional-with-list", ["--bootstrap-server", "{bs}", "--list", "--additional"]),
    (
        "timeout-with-generate",
        [
            "--bootstrap-server",
            "{bs}",
            "--generate",
            "--topics-to-move-json-file",
            "x",
            "--broker-list",
            "1",
            "--timeout",
            "5",
        ],
    ),
    (
        "preserve-with-execute",
        ["--bootstrap-server", "{bs}", "--execute", "--reassignment-json-file", "x", "--preserve-throttles"],
    ),
    (
        "rack-with-execute",
        ["--bootstrap-server", "{bs}", "--execute", "--reassignment-json-file", "x", "--disable-rack-aware"],
    ),
    ("controller-with-verify", ["--bootstrap-controller", "{bs}", "--verify", "--reassignment-json-file", "x"]),
    ("first-misuse-wins", ["--bootstrap-server", "{bs}", "--list", "--throttle", "1", "--additional"]),
    ("unknown-option", ["--bootstrap-server", "{bs}", "--list", "--frobnicate"]),
    ("missing-option-argument", ["--bootstrap-server", "{bs}", "--list", "--command-config"]),
    ("abbreviated-action-is-unknown", ["--bootstrap-server", "{bs}", "--li"]),
]


@pytest.mark.parametrize("argv", [c[1] for c in USAGE_CASES], ids=[c[0] for c in USAGE_CASES])
def test_usage_errors(bootstrap, argv):
    args = [a.format(bs=bootstrap) for a in argv]
    apache, ours = run_apache(args), run_ours(args)
    assert (ours.code, ours.stdout) == (apache.code, apache.stdout)
    assert apache.code == 1 and ours.stdout == ""
    assert first_line(ours.stderr) and first_line(ours.stderr) in first_line(apache.stderr)


def test_no_arguments(bootstrap):
    apache, ours = run_apache([]), run_ours([])
    assert (ours.code, ours.stdout) == (apache.code, apache.stdout) == (1, "")


def test_command_config_warnings_go_to_stderr_once_each_and_stdout_stays_apaches(bootstrap, tmp_path):
    """A property Java's admin client does not know, and a config provider placeholder left as it is: the Java client
    ignores both and goes on, and so does kreassign, saying so once each on stderr (it said nothing before)."""
    config = tmp_path / "client.properties"
    config.write_text(
        "config.providers=env\n"
        "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        "client.id=${env:KREASSIGN_TEST_NEVER_SET}\n"
        "acks=all\n"  # a producer's, copied from another file: unknown to the admin client
    )
    args = ["--bootstrap-server", bootstrap, "--list", "--command-config", str(config)]
    apache, ours = run_apache(args), run_ours(args)
    assert (ours.code, ours.stdout) == (apache.code, apache.stdout) == (0, apache.stdout)
    assert ours.stderr == (
        "kreassign: warning: The configuration 'acks' was supplied but isn't a known config.\n"
        "kreassign: warning: ${env:KREASSIGN_TEST_NEVER_SET} in client.id was left as it is (not found), as "
        "the Java client leaves it.\n"
    )
    as_json = run_ours([*args, "--output", "json"])
    assert json.loads(as_json.stdout)["kind"] == "list" and as_json.stderr == ours.stderr
