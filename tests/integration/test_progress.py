"""--progress and --fail-if-incomplete on the real cluster, and the two replica-state adapter calls.

The central check: ListOffsets sent to a broker as the debugging replica (id -2) answers with that
broker's own log end offset, so a new replica that a throttled reassignment is still filling reports
a smaller offset than its leader.
"""

from __future__ import annotations

import json

import pytest

from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.model import TopicPartition, TopicPartitionReplica
from tests.integration.differential import Outcome, run_ours
from tests.integration.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def R(topic: str, partition: int, broker: int) -> TopicPartitionReplica:
    return TopicPartitionReplica(topic, partition, broker)


# ------------------------------------------------------------------------------ adapter
def test_log_end_offsets_of_leaders_and_followers(adapter, topics) -> None:
    topic = topics([[1, 2], [2, 3]], messages=40)
    asked = [R(topic, 0, 1), R(topic, 0, 2), R(topic, 1, 2), R(topic, 1, 3)]
    not_hosted, unknown_topic, unknown_broker = R(topic, 0, 3), R("no-such-topic", 0, 1), R(topic, 0, 99)
    ends = wait_until(lambda: (e := adapter.replica_log_end_offsets(asked)) and len(e) == 4 and e)
    assert ends == dict.fromkeys(asked, 20)  # followers answer for themselves
    assert adapter.replica_log_end_offsets([not_hosted, unknown_topic, unknown_broker, asked[0]]) == {asked[0]: 20}
    assert adapter.replica_log_end_offsets([]) == {}


def test_replica_sizes_one_request_per_broker(adapter, topics) -> None:
    topic = topics([[1, 2], [2, 3]], messages=40, size=1000)
    sent: list[int] = []
    original = adapter._send_to_broker

    async def counting(broker_id, build, deadline):
        sent.append(broker_id)
        return await original(broker_id, build, deadline)

    adapter._send_to_broker = counting
    try:
        sizes = wait_until(lambda: (s := adapter.replica_sizes([1, 2, 3, 99])) and R(topic, 1, 3) in s and s)
        assert sorted(sent[-3:]) == [1, 2, 3]  # one DescribeLogDirs per known broker, none to 99
        sent.clear()
        adapter.replica_log_end_offsets([R(topic, 0, 1), R(topic, 0, 2), R(topic, 1, 2), R(topic, 1, 3)])
        assert sorted(sent) == [1, 2, 3]  # one ListOffsets per broker
    finally:
        del adapter._send_to_broker
    mine = {r: s for r, s in sizes.items() if r.topic == topic}
    assert set(mine) == {R(topic, 0, 1), R(topic, 0, 2), R(topic, 1, 2), R(topic, 1, 3)}
    assert all(s > 20 * 1000 for s in mine.values())
    assert adapter.replica_sizes([]) == {}


# ------------------------------------------------------------------------------ the command
def kreassign(bootstrap: str, *args: str) -> Outcome:
    return run_ours(["--bootstrap-server", bootstrap, *args], timeout=90)


def write_plan(path, moves: list[tuple[str, int, list[int]]]) -> str:
    partitions = [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def test_throttled_move_is_behind_then_in_sync(kafka_cluster, adapter, topics, tmp_path) -> None:
    """4 MB on (1, 2) moved to (3, 2) at 10 kB/s: broker 3 copies one fetch (about 1 MB) and then
    waits on the throttle, so it stays behind until the throttle is raised."""
    bootstrap = kafka_cluster.bootstrap_servers
    topic = topics([[1, 2]], messages=4000, size=1000)
    plan = write_plan(tmp_path / "plan.json", [(topic, 0, [3, 2])])
    moved = R(topic, 0, 3)
    try:
        started = kreassign(bootstrap, "--execute", "--reassignment-json-file", plan, "--throttle", "10000")
        assert started.code == 0, started.stdout

        # The adding replica on broker 3 reports its own, smaller log end offset (debugging replica id).
        ends = wait_until(
            lambda: (e := adapter.replica_log_end_offsets([R(topic, 0, b) for b in (1, 2, 3)])) and moved in e and e
        )
        assert ends[R(topic, 0, 1)] == ends[R(topic, 0, 2)] == 4000  # leader and in-sync follower
        assert 0 <= ends[moved] < 4000

        progress = kreassign(
            bootstrap, "--progress", "--reassignment-json-file", plan, "--fail-if-incomplete", "--output", "json"
        )
        assert progress.code == 2, progress.stdout
        document = json.loads(progress.stdout)
        assert document["version"] == 1 and document["outcome"] == "in_progress"
        partition = document["partitions"][0]
        assert partition["state"] == "moving" and partition["urp"] == "reassigning"
        assert partition["adding_replicas"] == [3] and partition["removing_replicas"] == [1]
        behind, in_sync = partition["replicas"]
        assert behind["broker"] == 3 and behind["status"] == "behind"
        assert behind["messages_behind"] > 0 and behind["bytes_behind"] > 0
        assert behind["status_text"] == f"Behind: {behind['messages_behind']} messages behind"
        assert in_sync == {**in_sync, "broker": 2, "status": "in_sync", "status_text": "In sync"}

        text = kreassign(bootstrap, "--progress", "--reassignment-json-file", plan)
        assert text.code == 0  # without the flag, as the Apache tool's --verify
        lines = text.stdout.splitlines()
        assert lines[0].split() == ["Topic", "Partition", "Broker", "Status", "Bytes", "behind", "Rate", "(B/s)", "ETA"]
        assert lines[2].split()[:5] == [topic, "0", "3", "Behind:", lines[2].split()[4]]
        assert int(lines[2].split()[4]) > 0 and "messages behind" in lines[2]
        assert lines[3].split()[:5] == [topic, "0", "2", "In", "sync"]
        assert lines[4] == f"Under-replicated only because of the reassignment: {topic}-0 (adding 3)"

        verify = kreassign(bootstrap, "--verify", "--reassignment-json-file", plan, "--fail-if-incomplete")
        assert (verify.code, verify.stdout) == (
            2,
            f"Status of partition reassignment:\nReassignment of partition {topic}-0 is still in progress.\n\n",
        )
        unknown = write_plan(tmp_path / "unknown.json", [(topic, 0, [3, 2]), (topic, 9, [1]), (topic, 0, [3, 42])])
        assert kreassign(bootstrap, "--progress", "--reassignment-json-file", unknown, "--fail-if-incomplete").code == 3
    finally:
        # Finish the move: lift the throttle (as --additional allows), wait, and let --verify clear it.
        raised = kreassign(
            bootstrap, "--execute", "--additional", "--reassignment-json-file", plan, "--throttle", "1000000000"
        )
        assert raised.code == 0, raised.stdout
        wait_until(lambda: TopicPartition(topic, 0) not in adapter.list_reassignments(), timeout=90)

    done = wait_until(
        lambda: (
            (o := kreassign(bootstrap, "--progress", "--reassignment-json-file", plan, "--fail-if-incomplete"))
            and o.code == 0
            and o
        ),
        timeout=60,
    )
    rows = [line.split() for line in done.stdout.splitlines()[2:]]
    assert rows == [[topic, "0", "3", "In", "sync", "-", "-", "-"], [topic, "0", "2", "In", "sync", "-", "-", "-"]]

    verify = kreassign(
        bootstrap, "--verify", "--reassignment-json-file", plan, "--fail-if-incomplete", "--output", "json"
    )
    assert verify.code == 0, verify.stdout
    document = json.loads(verify.stdout)
    assert document["outcome"] == "complete" and document["partitions"][0]["state"] == "completed"
    assert document["throttles"]["cleared"] is True
    brokers = [ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3)]
    wait_until(lambda: all(not set(THROTTLE_KEYS) & set(c) for c in adapter.describe_configs(brokers).values()))
