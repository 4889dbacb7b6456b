"""--progress, --fail-if-incomplete and --verify --output json through the command line (fake cluster)."""

from __future__ import annotations

import json

import pytest

import kreassign.actions.progress
import kreassign.cli.app
from kreassign.cli.app import run
from kreassign.errors import ClusterTimeoutError, UnknownTopicOrPartitionError
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    TopicPartition,
    TopicPartitionReplica,
)

BS = ["--bootstrap-server", "127.0.0.1:9092"]
T = TopicPartition


def R(partition: int, broker: int) -> TopicPartitionReplica:
    return TopicPartitionReplica("t", partition, broker)


class FakeCluster:
    """Topic t: partition 0 on (1, 2), partition 1 on (2, 3); optionally t-0 moving to (3, 2) with 3 behind."""

    def __init__(self, moving: bool = False, fail: Exception | None = None) -> None:
        self.moving = moving
        self.fail = fail
        self.altered: list = []
        self.closed = False

    def describe_brokers(self):
        if self.fail:
            raise self.fail
        return [Broker(1), Broker(2), Broker(3)]

    def list_reassignments(self, partitions=None):
        if self.moving:
            return {T("t", 0): PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,))}
        return {}

    def describe_topics(self, topics):
        if any(t != "t" for t in topics):
            raise UnknownTopicOrPartitionError("Topic not found.")
        p0 = PartitionInfo(0, (3, 2, 1), (1, 2), 1) if self.moving else PartitionInfo(0, (1, 2), (1, 2), 1)
        return {"t": [p0, PartitionInfo(1, (2, 3), (2, 3), 2)]}

    def replica_sizes(self, broker_ids):
        return {R(0, 1): 2000, R(0, 2): 2000, R(0, 3): 500, R(1, 2): 100, R(1, 3): 100}

    def replica_log_end_offsets(self, replicas):
        ends = {R(0, 1): 20, R(0, 2): 20, R(0, 3): 5, R(1, 2): 1, R(1, 3): 1}
        return {r: ends[r] for r in replicas if r in ends}

    def describe_replica_log_dirs(self, replicas):
        return {}

    def incremental_alter_configs(self, changes):
        self.altered.append(changes)

    def secrets(self):
        return []

    def close(self):
        self.closed = True


@pytest.fixture
def cluster(monkeypatch):
    holder: dict[str, FakeCluster] = {"port": FakeCluster()}
    monkeypatch.setattr(kreassign.cli.app, "open_cluster", lambda args: holder["port"])
    monkeypatch.setattr(kreassign.actions.progress, "DEFAULT_INTERVAL_S", 0.0)
    return holder


def plan_file(tmp_path, partitions) -> str:
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in partitions]}
        )
    )
    return str(path)


def invoke(argv):
    out: list[str] = []
    err: list[str] = []
    code = run(argv, out=out.append, err=err.append)
    return code, "".join(out), "".join(err)


AT_TARGET = [("t", 0, [1, 2]), ("t", 1, [2, 3])]
MOVING = [("t", 0, [3, 2]), ("t", 1, [2, 3])]
NOT_MOVING = [("t", 0, [2, 1])]
UNKNOWN_TOPIC = [("t", 0, [1, 2]), ("other", 0, [1])]

PROGRESS_CASES = [
    # (id, moving?, plan, flag?, exit code, a line of stdout)
    ("complete", False, AT_TARGET, False, 0, "t        1            3         In sync"),
    ("complete-flag", False, AT_TARGET, True, 0, "t        0            2         In sync"),
    ("moving", True, MOVING, False, 0, "Behind: 15 messages behind"),
    ("moving-flag", True, MOVING, True, 2, "Under-replicated only because of the reassignment: t-0 (adding 3)"),
    ("not-moving-flag", False, NOT_MOVING, True, 3, "t        0            2         In sync"),
    ("unknown-topic-flag", False, UNKNOWN_TOPIC, True, 3, "other    0            1         Unknown topic"),
    ("unknown-topic", False, UNKNOWN_TOPIC, False, 0, "Unknown topic"),
]


@pytest.mark.parametrize(
    ("moving", "plan", "flag", "code", "line"),
    [c[1:] for c in PROGRESS_CASES],
    ids=[c[0] for c in PROGRESS_CASES],
)
def test_progress_table_and_exit_codes(cluster, tmp_path, moving, plan, flag, code, line):
    cluster["port"] = FakeCluster(moving=moving)
    argv = [*BS, "--progress", "--reassignment-json-file", plan_file(tmp_path, plan)]
    got, out, err = invoke(argv + (["--fail-if-incomplete"] if flag else []))
    assert (got, err) == (code, "")
    assert out.startswith("Topic    Partition    Broker    Status")
    assert line in out
    assert cluster["port"].closed


def test_progress_json(cluster, tmp_path):
    cluster["port"] = FakeCluster(moving=True)
    argv = [*BS, "--progress", "--reassignment-json-file", plan_file(tmp_path, MOVING), "--output", "json"]
    code, out, err = invoke([*argv, "--fail-if-incomplete"])
    assert (code, err) == (2, "")
    document = json.loads(out)
    assert document["version"] == 1 and document["outcome"] == "in_progress"
    behind = document["partitions"][0]["replicas"][0]
    assert behind["status"] == "behind" and behind["messages_behind"] == 15 and behind["bytes_behind"] == 1500


def test_progress_error_exits_1_even_with_the_flag(cluster, tmp_path):
    cluster["port"] = FakeCluster(fail=ClusterTimeoutError("org.apache.kafka.common.errors.TimeoutException: x"))
    argv = [*BS, "--progress", "--reassignment-json-file", plan_file(tmp_path, AT_TARGET), "--fail-if-incomplete"]
    assert invoke(argv) == (1, "Error: org.apache.kafka.common.errors.TimeoutException: x\n", "")


VERIFY_TEXT_MOVING = (
    "Status of partition reassignment:\n"
    "Reassignment of partition t-0 is still in progress.\n"
    "Reassignment of partition t-1 is completed.\n"
    "\n"
)
VERIFY_TEXT_DONE = (
    "Status of partition reassignment:\n"
    "Reassignment of partition t-0 is completed.\n"
    "Reassignment of partition t-1 is completed.\n"
    "\n"
    "Clearing broker-level throttles on brokers 1,2,3\n"
    "Clearing topic-level throttles on topic t\n"
)
VERIFY_TEXT_STUCK = (
    "Status of partition reassignment:\n"
    "There is no active reassignment of partition t-0, but replica set is 1,2 rather than 2,1.\n"
    "\n"
    "Clearing broker-level throttles on brokers 1,2,3\n"
    "Clearing topic-level throttles on topic t\n"
)

VERIFY_CASES = [
    ("moving", True, MOVING, VERIFY_TEXT_MOVING, 2),
    ("done", False, AT_TARGET, VERIFY_TEXT_DONE, 0),
    ("not-at-target", False, NOT_MOVING, VERIFY_TEXT_STUCK, 3),
]


@pytest.mark.parametrize(
    ("moving", "plan", "text", "code"), [c[1:] for c in VERIFY_CASES], ids=[c[0] for c in VERIFY_CASES]
)
def test_verify_text_is_unchanged_and_the_flag_sets_the_exit_code(cluster, tmp_path, moving, plan, text, code):
    argv = [*BS, "--verify", "--reassignment-json-file", plan_file(tmp_path, plan)]
    cluster["port"] = FakeCluster(moving=moving)
    assert invoke(argv) == (0, text, "")
    cluster["port"] = FakeCluster(moving=moving)
    assert invoke([*argv, "--fail-if-incomplete"]) == (code, text, "")


def test_verify_json_replaces_the_text_and_still_clears_throttles(cluster, tmp_path):
    argv = [*BS, "--verify", "--reassignment-json-file", plan_file(tmp_path, AT_TARGET), "--output", "json"]
    code, out, err = invoke(argv)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["version"] == 1 and document["outcome"] == "complete"
    assert [p["state"] for p in document["partitions"]] == ["completed", "completed"]
    assert document["throttles"] == {"cleared": True, "preserved": False, "reassignments_running_in_cluster": False}
    assert len(cluster["port"].altered) == 2  # broker-level, then topic-level throttles removed


def test_verify_json_with_preserved_throttles(cluster, tmp_path):
    argv = [*BS, "--verify", "--reassignment-json-file", plan_file(tmp_path, AT_TARGET), "--output=json"]
    code, out, _ = invoke([*argv, "--preserve-throttles"])
    assert code == 0
    assert json.loads(out)["throttles"] == {
        "cleared": False,
        "preserved": True,
        "reassignments_running_in_cluster": False,
    }
    assert cluster["port"].altered == []


USAGE_CASES = [
    ("progress-needs-file", [*BS, "--progress"], 'Missing required argument "[reassignment-json-file]"'),
    (
        "progress-takes-no-throttle",
        [*BS, "--progress", "--reassignment-json-file", "f", "--throttle", "1"],
        'Option "[throttle]" can\'t be used with action "[progress]"',
    ),
    (
        "flag-not-for-list",
        [*BS, "--list", "--fail-if-incomplete"],
        'Option "[fail-if-incomplete]" can\'t be used with action "[list]"',
    ),
    (
        "bad-output",
        [*BS, "--progress", "--reassignment-json-file", "f", "--output", "xml"],
        "--output must be text or json, not 'xml'",
    ),
    (
        "progress-not-with-controllers",
        ["--bootstrap-controller", "h:1", "--progress", "--reassignment-json-file", "f"],
        'Option "[bootstrap-controller]" can\'t be used with action "[progress]"',
    ),
]


@pytest.mark.parametrize(("argv", "message"), [c[1:] for c in USAGE_CASES], ids=[c[0] for c in USAGE_CASES])
def test_usage_errors(argv, message):
    assert invoke(argv) == (1, "", f"{message}\nRun with --help for the list of options.\n")


def test_progress_on_a_terminal_is_drawn_by_rich(cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setattr("shutil.get_terminal_size", lambda: __import__("os").terminal_size((100, 24)))
    code = run([*BS, "--progress", "--reassignment-json-file", plan_file(tmp_path, AT_TARGET)])
    out = capsys.readouterr().out
    assert code == 0
    assert "Reassignment progress" in out and "in sync" in out and "Broker does not host" not in out
