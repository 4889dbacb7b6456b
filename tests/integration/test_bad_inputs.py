"""A corpus of bad and hostile inputs on the real cluster: one clear message, exit 1, no traceback,
and nothing changed on the cluster (topic assignments, reassignments, throttle configs).

This adds to ``test_differential_inputs.py`` (whose 98 cases it does not repeat): hostile JSON (100,000
nested arrays, 100,000-digit numbers, a 100 MB plan, invalid UTF-8, duplicate keys ...), wrong types,
paths that cannot be read, bad option combinations, and kreassign's own options. Where the Apache tool
takes the same input (``apache=True``) its stdout and exit code are the reference; where it crashes (a
100 MB plan: ``java.lang.OutOfMemoryError``) kreassign must still give one line.

Unreadable files: the tests may run as root, for whom ``chmod 000`` blocks nothing, so the unreadable
inputs are ones that fail for root too: a directory, a path through a regular file (ENOTDIR), a
symlink loop (ELOOP) and a dangling symlink.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES
from tests.integration.differential import Outcome, run_apache, run_ours, strip_java_stack_trace

pytestmark = pytest.mark.integration

TOPIC = "bad-inputs"
THROTTLE_KEYS = BROKER_LEVEL_THROTTLES + TOPIC_LEVEL_THROTTLES
HUNDRED_MB = 100 * 1024 * 1024


def _plan(*partitions, version=1) -> str:
    return json.dumps({"version": version, "partitions": list(partitions)})


def _p(**fields) -> dict:
    return {"topic": TOPIC, "partition": 0, "replicas": [2, 3], **fields}


def _big_plan(path: Path) -> None:
    """100 MB of partition entries, all the same partition (the Apache tool runs out of heap)."""
    entry = json.dumps(_p()).encode() + b","
    with open(path, "wb") as handle:
        handle.write(b'{"version":1,"partitions":[')
        handle.write(entry * (HUNDRED_MB // len(entry)))
        handle.write(json.dumps(_p()).encode() + b"]}")


def _big_string(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.write(b'{"version":1,"partitions":[{"topic":"')
        handle.write(b"a" * HUNDRED_MB)
        handle.write(b'","partition":0,"replicas":[1]}]}')


def _big_whitespace(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.write(b" " * HUNDRED_MB + b'{"version":1,"partitions":[]}')


@dataclass(frozen=True)
class Case:
    id: str
    argv: list[str]  # after --bootstrap-server; {name} is the path of files[name] (or of a fixed input)
    files: dict[str, object] = field(default_factory=dict)  # name -> text, bytes or a writer(path)
    apache: bool = True  # the Apache tool has this input: its stdout and exit code are the reference


def json_case(case_id: str, action: str, content: object, apache: bool = True) -> Case:
    """A bad file given to an action (--reassignment-json-file, or the topics file of --generate)."""
    if action == "generate":
        argv = ["--generate", "--topics-to-move-json-file", "{doc}", "--broker-list", "1,2,3"]
    else:
        argv = [f"--{action}", "--reassignment-json-file", "{doc}"]
    return Case(case_id, argv, {"doc": content}, apache)


def _deep(depth: int, opener: str = "[", closer: str = "") -> str:
    return opener * depth + closer * depth


BATCHED = ["--execute", "--reassignment-json-file", "{plan}", "--journal-file", "{journal}"]

CASES = [
    # ---- hostile JSON: nesting, numbers, sizes
    json_case("deep-arrays-100000", "execute", _deep(100_000)),
    json_case("deep-closed-arrays-100000", "verify", _deep(100_000, "[", "]")),
    json_case("deep-objects-100000", "cancel", '{"a":' * 100_000),
    json_case("deep-inside-partitions", "execute", '{"version":1,"partitions":' + _deep(5000, "[", "]") + "}"),
    json_case("deep-topics-file-100000", "generate", _deep(100_000)),
    json_case(
        "digits-100000-partition", "execute", _plan(_p()).replace('"partition": 0', '"partition": ' + "9" * 100_000)
    ),
    json_case("digits-100000-generate", "generate", '{"version":' + "1" * 100_000 + "}"),
    json_case("exponent-overflow-version", "verify", '{"version":1e999999,"partitions":[]}'),
    json_case("exponent-underflow-version", "execute", '{"version":1e-999999,"partitions":[]}'),
    json_case("replica-beyond-long", "execute", _plan(_p(replicas=[2**63, 2]))),
    json_case("replica-beyond-int", "execute", _plan(_p(replicas=[2**31, 2]))),
    json_case("negative-partition", "execute", _plan(_p(partition=-1))),
    json_case("negative-replica", "execute", _plan(_p(replicas=[-1, 2]))),
    json_case("big-plan-100mb", "execute", _big_plan, apache=False),  # Apache: OutOfMemoryError
    json_case("big-string-100mb", "execute", _big_string),
    json_case("big-whitespace-100mb", "execute", _big_whitespace),
    # ---- duplicate keys (Jackson keeps the last value)
    json_case("duplicate-version-key", "execute", '{"version":1,"version":2,"partitions":[]}'),
    json_case("duplicate-partitions-key", "execute", '{"version":1,"partitions":[{"topic":"x"}],"partitions":[]}'),
    json_case("duplicate-topic-key", "verify", '{"version":1,"partitions":[{"topic":"no-such-xyz","topic":1}]}'),
    json_case("duplicate-topics-key-generate", "generate", '{"version":1,"topics":[],"topics":"x"}'),
    # ---- encodings
    json_case(
        "invalid-utf8-topic",
        "verify",
        b'{"version":1,"partitions":[{"topic":"\xff\xfe","partition":0,"replicas":[1]}]}',
    ),
    json_case(
        "overlong-utf8", "cancel", b'{"version":1,"partitions":[{"topic":"\xc0\xaf","partition":0,"replicas":[1]}]}'
    ),
    # Apache: NullPointerException (the answer is for "?", its future is for the surrogate)
    json_case("lone-surrogate-escape", "verify", _plan(_p(topic="\ud800")), apache=False),
    json_case("lone-surrogate-escape-cancel", "cancel", _plan(_p(topic="\ud800")), apache=False),
    # librdkafka would cut the name at the NUL: "bad-inputs" and its throttles must stay untouched
    json_case("nul-in-topic-verify", "verify", _plan(_p(topic=TOPIC + "\u0000x"))),
    json_case("nul-in-topic-cancel", "cancel", _plan(_p(topic=TOPIC + "\u0000x"))),
    json_case("nul-in-topic-generate", "generate", json.dumps({"version": 1, "topics": [{"topic": TOPIC + "\u0000"}]})),
    json_case("utf8-bom", "execute", b"\xef\xbb\xbf" + _plan(_p()).encode()),
    json_case("utf16-file", "execute", _plan(_p()).encode("utf-16")),
    json_case("nul-bytes", "execute", b"\x00" * 1000),
    json_case("generate-invalid-utf8", "generate", b'{"version":1,"topics":[{"topic":"\xff"}]}'),
    # ---- empty and odd files
    json_case("generate-empty-file", "generate", ""),
    json_case("generate-whitespace-only", "generate", " \n\t"),
    json_case("cancel-empty-file", "cancel", ""),
    json_case("execute-null-document", "execute", "null"),
    json_case("verify-string-document", "verify", '"partitions"'),
    # ---- wrong types
    json_case("version-null", "execute", '{"version":null,"partitions":[]}'),
    json_case("version-true", "execute", '{"version":true,"partitions":[]}'),
    json_case("version-negative", "verify", _plan(_p(), version=-1)),
    json_case("partitions-null", "execute", '{"version":1,"partitions":null}'),
    json_case("partitions-string", "verify", '{"version":1,"partitions":"all"}'),
    json_case("partition-entry-null", "execute", '{"version":1,"partitions":[null]}'),
    json_case("partition-entry-array", "cancel", '{"version":1,"partitions":[["bad-inputs",0,[1]]]}'),
    json_case("partition-boolean", "execute", _plan(_p(partition=True))),
    json_case("partition-null", "verify", _plan(_p(partition=None))),
    json_case("replicas-null", "execute", _plan(_p(replicas=None))),
    json_case("replicas-null-element", "execute", _plan(_p(replicas=[2, None]))),
    json_case("replicas-float-element", "execute", _plan(_p(replicas=[2, 1.5]))),
    json_case("replicas-object", "execute", _plan(_p(replicas={"0": 1}))),
    json_case("log-dirs-null", "execute", _plan(_p(log_dirs=None))),
    json_case("log-dirs-string", "execute", _plan(_p(log_dirs="any"))),
    json_case("topic-array", "verify", _plan(_p(topic=[TOPIC]))),
    json_case("topic-empty-string", "execute", _plan(_p(topic=""))),
    json_case("topic-300-chars", "verify", _plan(_p(topic="t" * 300))),
    json_case("generate-topics-string", "generate", '{"version":1,"topics":"bad-inputs"}'),
    json_case("generate-topic-entry-null", "generate", '{"version":1,"topics":[null]}'),
    json_case("generate-topic-null", "generate", '{"version":1,"topics":[{"topic":null}]}'),
    json_case("generate-empty-topic-name", "generate", '{"version":1,"topics":[{"topic":""}]}'),
    # ---- paths that cannot be read (for root too)
    Case("verify-directory", ["--verify", "--reassignment-json-file", "{dir}"]),
    Case("cancel-directory", ["--cancel", "--reassignment-json-file", "{dir}"]),
    Case("generate-directory", ["--generate", "--topics-to-move-json-file", "{dir}", "--broker-list", "1"]),
    Case("execute-not-a-directory", ["--execute", "--reassignment-json-file", "{notdir}"]),
    Case("verify-symlink-loop", ["--verify", "--reassignment-json-file", "{loop}"]),
    Case("cancel-dangling-symlink", ["--cancel", "--reassignment-json-file", "{dangling}"]),
    Case("execute-empty-path", ["--execute", "--reassignment-json-file", ""]),
    Case("execute-dev-null", ["--execute", "--reassignment-json-file", "/dev/null"]),
    Case("command-config-directory", ["--list", "--command-config", "{dir}"]),
    Case("command-config-symlink-loop", ["--list", "--command-config", "{loop}"]),
    Case("command-config-under-a-file", ["--list", "--command-config", "{notdir}"]),
    Case("command-config-bad-unicode-escape", ["--list", "--command-config", "{cfg}"], {"cfg": "client.id=\\u12"}),
    Case("command-config-bad-protocol", ["--list", "--command-config", "{cfg}"], {"cfg": "security.protocol=TLS\n"}),
    Case(
        "command-config-bad-number",
        ["--list", "--command-config", "{cfg}"],
        {"cfg": "request.timeout.ms=99999999999999999999\n"},
    ),
    # ---- bad values and option combinations (Apache options)
    Case("generate-with-reassignment-file", ["--generate", "--reassignment-json-file", "{plan}", "--broker-list", "1"]),
    Case("list-with-reassignment-file", ["--list", "--reassignment-json-file", "{plan}"]),
    Case("cancel-with-throttle", ["--cancel", "--reassignment-json-file", "{plan}", "--throttle", "10"]),
    Case("verify-with-additional", ["--verify", "--reassignment-json-file", "{plan}", "--additional"]),
    Case("execute-with-broker-list", ["--execute", "--reassignment-json-file", "{plan}", "--broker-list", "1"]),
    Case("list-with-disallow-rf-change", ["--list", "--disallow-replication-factor-change"]),
    Case(
        "log-dir-throttle-not-a-number",
        ["--execute", "--reassignment-json-file", "{plan}", "--replica-alter-log-dirs-throttle", "1e6"],
    ),
    Case("broker-list-double-comma", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "1,,2"]),
    Case(
        "broker-list-int-overflow",
        ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "2147483648"],
    ),
    Case("broker-list-negative", ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "-1,2"]),
    Case("bootstrap-server-no-port", ["--list"], apache=True),  # the address is replaced below
    # ---- kreassign's own options
    Case("max-partition-movements-0", [*BATCHED, "--max-partition-movements", "0"], apache=False),
    Case("max-partition-movements-negative", [*BATCHED, "--max-partition-movements", "-1"], apache=False),
    Case("max-partition-movements-abc", [*BATCHED, "--max-partition-movements", "abc"], apache=False),
    Case("max-replica-movements-0", [*BATCHED, "--max-replica-movements", "0"], apache=False),
    Case("max-leader-movements-overflow", [*BATCHED, "--max-leader-movements", "9" * 20], apache=False),
    Case("poll-interval-0", [*BATCHED, "--max-partition-movements", "1", "--poll-interval-ms", "0"], apache=False),
    Case(
        "max-movements-twice",
        [*BATCHED, "--max-partition-movements", "1", "--max-partition-movements", "2"],
        apache=False,
    ),
    Case("output-xml", [*BATCHED, "--max-partition-movements", "1", "--dry-run", "--output", "xml"], apache=False),
    Case("dry-run-with-verify", ["--verify", "--reassignment-json-file", "{plan}", "--dry-run"], apache=False),
    Case("dry-run-with-list", ["--list", "--dry-run"], apache=False),
    Case("journal-file-with-list", ["--list", "--journal-file", "{journal}"], apache=False),
    Case(
        "max-movements-with-verify",
        ["--verify", "--reassignment-json-file", "{plan}", "--max-partition-movements", "1"],
        apache=False,
    ),
    Case("seed-with-execute", ["--execute", "--reassignment-json-file", "{plan}", "--seed", "1"], apache=False),
    Case(
        "seed-abc",
        ["--generate", "--topics-to-move-json-file", "{topics}", "--broker-list", "1", "--seed", "abc"],
        apache=False,
    ),
    Case(
        "journal-file-is-a-directory",
        [*BATCHED[:3], "--journal-file", "{dir}", "--max-partition-movements", "1"],
        apache=False,
    ),
    Case(
        "journal-file-corrupt",
        [*BATCHED[:3], "--journal-file", "{corrupt}", "--max-partition-movements", "1"],
        apache=False,
    ),
    Case(
        "journal-file-json-array",
        [*BATCHED[:3], "--journal-file", "{array}", "--max-replica-movements", "1"],
        apache=False,
    ),
    Case(
        "journal-file-of-another-plan",
        [*BATCHED[:3], "--journal-file", "{foreign}", "--max-partition-movements", "1"],
        apache=False,
    ),
    Case(
        "journal-file-under-a-file",
        [*BATCHED[:3], "--journal-file", "{notdir}", "--max-partition-movements", "1"],
        apache=False,
    ),
    Case(
        "cancel-corrupt-journal",
        ["--cancel", "--reassignment-json-file", "{plan}", "--journal-file", "{corrupt}"],
        apache=False,
    ),
    Case(
        "cancel-journal-directory",
        ["--cancel", "--reassignment-json-file", "{plan}", "--journal-file", "{dir}"],
        apache=False,
    ),
    Case(
        "dry-run-deep-json",
        ["--execute", "--reassignment-json-file", "{doc}", "--dry-run", "--max-partition-movements", "1"],
        {"doc": _deep(100_000)},
        apache=False,
    ),
]
IDS = [case.id for case in CASES]
assert len(set(IDS)) == len(IDS)


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def corpus(kafka_cluster, tmp_path_factory):
    """The topic, the fixed inputs, and a client to snapshot the cluster."""
    create_topic(kafka_cluster.bootstrap_servers, TOPIC, [[1, 2], [2, 3], [3, 1]])
    port = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    # someone else's throttle: a bad input must not clear it
    port.incremental_alter_configs(
        {
            ConfigResource(ResourceType.TOPIC, TOPIC): [
                ConfigOp("follower.replication.throttled.replicas", OpType.SET, "9:9")
            ]
        }
    )
    folder = tmp_path_factory.mktemp("bad-inputs")
    fixed = {
        "plan": folder / "plan.json",  # valid: partition 0 of TOPIC to [2, 3]
        "topics": folder / "topics.json",
        "dir": folder / "a-directory",
        "notdir": folder / "plan.json" / "child.json",
        "loop": folder / "loop.json",
        "dangling": folder / "dangling.json",
        "journal": folder / "journal.json",
        "corrupt": folder / "corrupt-journal.json",
        "array": folder / "array-journal.json",
        "foreign": folder / "foreign-journal.json",
    }
    fixed["plan"].write_text(_plan(_p()))
    fixed["topics"].write_text(json.dumps({"version": 1, "topics": [{"topic": TOPIC}]}))
    fixed["dir"].mkdir()
    os.symlink(fixed["loop"], fixed["loop"])
    os.symlink(folder / "missing.json", fixed["dangling"])
    fixed["corrupt"].write_text('{"kind": "kreassign-journal", "version": 1, "plan_id": ')
    fixed["array"].write_text("[]")
    fixed["foreign"].write_text(
        json.dumps({"kind": "kreassign-journal", "version": 1, "plan_id": "another", "status": "running"}).replace(
            "}", ', "partitions": []}'
        )
    )
    _wait_until_settled(port, kafka_cluster.bootstrap_servers)
    yield kafka_cluster.bootstrap_servers, folder, {k: str(v) for k, v in fixed.items()}, port
    port.close()


def _wait_until_settled(port: KafkaCluster, bootstrap: str, timeout: float = 60.0) -> None:
    """Every broker has applied the new topic and its throttle: a config or metadata read goes to any
    broker, so the first case's "before" could otherwise miss what its "after" sees (seen in CI)."""
    import time

    deadline = time.monotonic() + timeout
    settled = 0
    while settled < 5:
        state = snapshot(port, bootstrap)
        ready = len(state["topics"].get(TOPIC, {})) == 3 and state["throttles"].get(f"topic:{TOPIC}") == {
            "follower.replication.throttled.replicas": "9:9"
        }
        settled = settled + 1 if ready else 0
        assert time.monotonic() < deadline, f"the corpus topic did not settle: {state}"
        time.sleep(0.2)


def snapshot(port: KafkaCluster, bootstrap: str) -> dict:
    """Replicas of every topic, reassignments in progress, throttle configs of brokers and topics."""
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30)
    topics = {
        name: {p: tuple(m.replicas) for p, m in t.partitions.items()}
        for name, t in metadata.topics.items()
        if not name.startswith("__")
    }
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in sorted(metadata.brokers)]
    resources += [ConfigResource(ResourceType.TOPIC, name) for name in sorted(topics)]
    configs = {
        f"{r.type.value}:{r.name}": {k: v[k] for k in THROTTLE_KEYS if k in v}
        for r, v in port.describe_configs(resources).items()
    }
    return {"topics": topics, "moving": port.list_reassignments(), "throttles": configs}


_RESULTS: dict[str, tuple[list[str], Outcome]] = {}


def _argv(case: Case, corpus) -> list[str]:
    bootstrap, folder, fixed, _ = corpus
    paths = dict(fixed)
    for name, content in case.files.items():
        path = folder / f"{case.id}-{name}"
        if not path.exists():
            if callable(content):
                content(path)
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_bytes(str(content).encode("utf-8", "surrogateescape"))
        paths[name] = str(path)
    server = "127.0.0.1" if case.id == "bootstrap-server-no-port" else bootstrap
    return ["--bootstrap-server", server, *(a.format(**paths) for a in case.argv)]


def _one_message(result: Outcome, prelude: bool) -> bool:
    """One ``Error: <message>`` line on stdout (Jackson's location may follow on one ``at [Source`` line),
    or a usage message on stderr followed by the --help hint. Before the error only what the Apache
    tool prints first for such an input (``--cancel`` reports what it found, then fails)."""
    if result.stdout:
        lines = result.stdout.splitlines()
        errors = [i for i, line in enumerate(lines) if line.startswith("Error: ")]
        if len(errors) != 1 or (errors[0] != 0 and not prelude) or len(lines[errors[0]]) <= len("Error: "):
            return False
        return all(line.startswith(" at [") for line in lines[errors[0] + 1 :])
    lines = result.stderr.splitlines()
    return 1 <= len(lines) <= 2 and lines[-1 if len(lines) == 2 else 0] != "" and "Traceback" not in result.stderr


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_input_gives_one_line_and_changes_nothing(corpus, case):
    bootstrap, _, _, port = corpus
    before = snapshot(port, bootstrap)
    argv = _argv(case, corpus)
    result = run_ours(argv, timeout=300)
    _RESULTS[case.id] = (argv, result)
    assert result.code == 1, result
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert _one_message(result, case.apache or "--cancel" in case.argv), result
    assert snapshot(port, bootstrap) == before


@pytest.mark.differential
@pytest.mark.parametrize("case", [c for c in CASES if c.apache], ids=[c.id for c in CASES if c.apache])
def test_bad_input_matches_the_apache_tool(corpus, case):
    if case.id in _RESULTS:
        argv, ours = _RESULTS[case.id]
    else:
        argv = _argv(case, corpus)
        ours = run_ours(argv, timeout=300)
    apache = run_apache(argv, timeout=300, operator_jvm=case.id.endswith("-100mb"))
    assert (ours.code, ours.stdout) == (apache.code, strip_java_stack_trace(apache.stdout))
    if not ours.stdout:  # a usage error: our line is the first of Apache's
        assert ours.stderr.splitlines()[0] in apache.stderr


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 60
