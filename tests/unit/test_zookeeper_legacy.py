"""The --zookeeper actions over an in-memory znode tree: texts, znodes written, Scala orders, placement."""

from __future__ import annotations

import json

import pytest

from kreassign.errors import ClusterError, CommandError, TerseError
from kreassign.formats import parse_reassignment_json
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, TopicPartition
from kreassign.zookeeper import legacy, placement
from kreassign.zookeeper.scalaorder import scala_int_set_order, scala_set_order, scala_string_set_order


class FakeStore:
    """A ZnodeStore over a dict of path -> bytes (parents are implicit)."""

    def __init__(self, nodes: dict[str, object]) -> None:
        self.nodes = {p: json.dumps(v).encode() for p, v in nodes.items()}
        self.sequence = 0

    def get(self, path):
        return self.nodes.get(path)

    def children(self, path):
        prefix = path.rstrip("/") + "/"
        return sorted({p[len(prefix) :].split("/")[0] for p in self.nodes if p.startswith(prefix)})

    def exists(self, path):
        return path in self.nodes

    def set_or_create(self, path, data):
        self.nodes[path] = data

    def create(self, path, data, *, sequential=False):
        if sequential:
            path = f"{path}{self.sequence:010d}"
            self.sequence += 1
        if path in self.nodes:
            raise ClusterError(f"KeeperErrorCode = NodeExists for {path}")
        self.nodes[path] = data
        return path

    def json(self, path):
        return json.loads(self.nodes[path]) if path in self.nodes else None

    def changes(self):
        return [json.loads(v)["entity_path"] for p, v in sorted(self.nodes.items()) if p.startswith("/config/changes/")]


def _cluster(**extra) -> FakeStore:
    nodes = {f"/brokers/ids/{b}": {"rack": r, "host": "h", "port": 9092} for b, r in ((1, "a"), (2, "b"), (3, "a"))}
    nodes["/brokers/topics/t"] = {"version": 3, "partitions": {"0": [1, 2], "1": [2, 3]}}
    nodes.update(extra)
    return FakeStore(nodes)


def _plan(layout: dict[int, list[int]], topic: str = "t"):
    return parse_reassignment_json(
        json.dumps(
            {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]}
        )
    )


def _capture():
    lines: list[str] = []
    return lines, lines.append


def test_execute_with_throttle_writes_request_configs_and_notifications():
    store = _cluster(**{"/config/topics/t": {"version": 1, "config": {"retention.ms": "5"}}})
    out, write = _capture()
    legacy.execute_assignment(store, _plan({0: [2, 3], 1: [3, 1]}), throttle=1000, out=write)
    assert "".join(out) == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"t","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle "
        "is removed.\n"
        "The inter-broker throttle limit was set to 1000 B/s\n"
        "Successfully started partition reassignments for t-0,t-1\n"
    )
    assert store.json("/admin/reassign_partitions") == {
        "version": 1,
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [2, 3]},
            {"topic": "t", "partition": 1, "replicas": [3, 1]},
        ],
    }
    assert store.json("/config/topics/t")["config"] == {
        "retention.ms": "5",
        "leader.replication.throttled.replicas": "0:1,0:2,1:2,1:3",
        "follower.replication.throttled.replicas": "0:3,1:1",
    }
    for broker in (1, 2, 3):
        assert store.json(f"/config/brokers/{broker}") == {
            "version": 1,
            "config": {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "1000"},
        }
    assert store.changes() == ["topics/t", "brokers/1", "brokers/2", "brokers/3"]


def test_execute_without_throttle_touches_no_config():
    store = _cluster()
    out, write = _capture()
    legacy.execute_assignment(store, _plan({0: [2, 3]}), throttle=-1, out=write)
    assert out[-1] == "Successfully started partition reassignment for t-0\n"
    assert store.changes() == [] and not any(p.startswith("/config/") for p in store.nodes)


@pytest.mark.parametrize(
    ("plan", "error", "message"),
    [
        (
            {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [1]} for p in range(7)]},
            CommandError,
            "The proposed assignment contains non-existent partitions: List(t-5, t-4, t-6, t-3, t-2)",
        ),
        (
            {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 9, 8]}]},
            CommandError,
            "The proposed assignment contains non-existent brokerIDs: 9,8",
        ),
        (
            {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]},
            CommandError,
            "bootstrap-server needs to be provided when replica reassignments are present.",
        ),
        ({"version": 1, "partitions": []}, CommandError, "Partition reassignment list cannot be empty"),
    ],
    ids=["missing-partitions", "missing-brokers", "log-dirs", "empty"],
)
def test_execute_refusals_leave_the_cluster_alone(plan, error, message):
    store = _cluster()
    before = dict(store.nodes)
    with pytest.raises(error) as caught:
        legacy.execute_assignment(store, parse_reassignment_json(json.dumps(plan)), throttle=5, out=print)
    assert caught.value.message == message
    assert store.nodes == before


def test_execute_refused_while_a_legacy_request_exists():
    store = _cluster(**{"/admin/reassign_partitions": {"version": 1, "partitions": []}})
    with pytest.raises(TerseError, match=r"^Cannot execute because there is an existing partition assignment"):
        legacy.execute_assignment(store, _plan({0: [2, 3]}), throttle=5, out=print)


def test_verify_in_progress_keeps_throttles():
    store = _cluster(
        **{
            "/admin/reassign_partitions": {
                "version": 1,
                "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 3]}],
            },
            "/config/brokers/1": {"version": 1, "config": {"leader.replication.throttled.rate": "5"}},
        }
    )
    out, write = _capture()
    states, ongoing = legacy.verify_assignment(
        store, _plan({0: [2, 3], 1: [2, 3]}), preserve_throttles=False, out=write
    )
    assert ongoing and not states[TopicPartition("t", 0)].done
    assert "".join(out) == (
        legacy.VERIFY_RESULTS_MAY_BE_INCOMPLETE + "\n"
        "Status of partition reassignment:\n"
        "Reassignment of partition t-0 is still in progress.\n"
        "Reassignment of partition t-1 is complete.\n"
    )
    assert store.changes() == []


def test_verify_done_clears_throttles_only_where_set():
    store = _cluster(
        **{
            "/config/brokers/1": {"version": 1, "config": {"leader.replication.throttled.rate": "5", "x": "1"}},
            "/config/brokers/2": {"version": 1, "config": {"other": "1"}},
            "/config/topics/t": {"version": 1, "config": {"follower.replication.throttled.replicas": "0:3"}},
        }
    )
    out, write = _capture()
    legacy.verify_assignment(store, _plan({0: [3, 1], 1: [2, 3]}), preserve_throttles=False, out=write)
    assert out[1:] == [
        "Status of partition reassignment:\n"
        "There is no active reassignment of partition t-0, but replica set is 1,2 rather than 3,1.\n"
        "Reassignment of partition t-1 is complete.\n",
        "Clearing broker-level throttles on brokers 1,2,3\n",
        "Clearing topic-level throttles on topic t\n",
    ]
    assert store.json("/config/brokers/1")["config"] == {"x": "1"}
    assert store.json("/config/brokers/2")["config"] == {"other": "1"}
    assert store.json("/config/topics/t")["config"] == {}
    assert store.changes() == ["brokers/1", "topics/t"]


def test_verify_refuses_log_dirs():
    plan = parse_reassignment_json(
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/d"]}]}'
    )
    with pytest.raises(CommandError, match=r"^bootstrap-server needs to be provided"):
        legacy.verify_assignment(_cluster(), plan, preserve_throttles=False, out=print)


def test_generate_is_reproducible_with_a_seed_and_skips_missing_topics():
    store = _cluster()
    runs = []
    for _ in range(2):
        out, write = _capture()
        legacy.generate_assignment(
            store,
            '{"version":1,"topics":[{"topic":"t"},{"topic":"nope"}]}',
            "1,2,3",
            rack_aware=True,
            seed=4,
            out=write,
        )
        runs.append("".join(out))
    assert runs[0] == runs[1]
    current, proposed = runs[0].split("\n\nProposed partition reassignment configuration\n")
    assert current == (
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"t","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}'
    )
    assert [p["partition"] for p in json.loads(proposed)["partitions"]] == [0, 1]


# Kafka 2.8.2's AdminUtils.assignReplicasToBrokers with fixedStartIndex (start index = shift = s),
# printed by the JVM: (brokers, racks, partitions, replication factor, s) -> replicas of partitions 0..n-1.
ADMIN_UTILS_GOLDEN = [
    ([1, 2, 3], None, 6, 2, 0, [[1, 2], [2, 3], [3, 1], [1, 3], [2, 1], [3, 2]]),
    ([1, 2, 3], None, 7, 3, 2, [[3, 1, 2], [1, 2, 3], [2, 3, 1], [3, 2, 1], [1, 3, 2], [2, 1, 3], [3, 1, 2]]),
    (
        [1, 2, 3, 4, 5], None, 11, 3, 4,
        [[5, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 1], [5, 2, 3], [1, 3, 4], [2, 4, 5], [3, 5, 1], [4, 1, 2], [5, 3, 4]],
    ),
    ([1, 2, 3], ["rack-a", "rack-b", "rack-a"], 6, 2, 1, [[2, 3], [3, 2], [1, 2], [2, 3], [3, 2], [1, 2]]),
    (
        [1, 2, 3, 4, 5, 6], ["a", "b", "c", "a", "b", "c"], 8, 3, 3,
        [[4, 3, 5], [5, 4, 6], [6, 5, 1], [1, 6, 2], [2, 1, 3], [3, 2, 4], [4, 2, 3], [5, 3, 4]],
    ),
    (
        [1, 2, 3, 4, 5], ["r2", "r1", "r1", "r3", "r2"], 10, 4, 2,
        [[4, 2, 1, 3], [3, 1, 4, 5], [5, 4, 3, 2], [2, 5, 4, 3], [1, 2, 4, 3],
         [4, 5, 2, 1], [3, 1, 4, 5], [5, 4, 3, 2], [2, 4, 5, 1], [1, 3, 4, 5]],
    ),
    ([1, 2, 3, 4], ["x", "x", "y", "y"], 5, 4, 0, [[1, 3, 2, 4], [3, 2, 4, 1], [2, 4, 1, 3], [4, 1, 3, 2], [1, 4, 3, 2]]),
]  # fmt: skip


class FixedStart:
    def __init__(self, value: int) -> None:
        self.value = value

    def next_int(self, bound: int) -> int:
        return self.value


@pytest.mark.parametrize(("ids", "racks", "partitions", "rf", "start", "expected"), ADMIN_UTILS_GOLDEN)
def test_assign_replicas_matches_kafka_2_8(ids, racks, partitions, rf, start, expected):
    brokers = [Broker(b, racks[i] if racks else None) for i, b in enumerate(ids)]
    assert placement.assign_replicas(brokers, partitions, rf, FixedStart(start)) == expected


@pytest.mark.parametrize(
    ("brokers", "rf", "message"),
    [
        ([Broker(1, "a")], 2, "Replication factor: 2 larger than available brokers: 1."),
        ([Broker(1, "a"), Broker(2)], 2, "Not all brokers have rack information for replica rack aware assignment."),
    ],
)
def test_assign_replicas_errors(brokers, rf, message):
    with pytest.raises(CommandError) as caught:
        placement.assign_replicas(brokers, 3, rf, JavaRandom(1))
    assert caught.value.message == message


def test_broker_metadata_is_sorted_and_checks_racks():
    brokers = [Broker(3, "a"), Broker(1, "b"), Broker(2, None)]
    assert placement.broker_metadata(brokers, [3, 1, 9], True) == [Broker(1, "b"), Broker(3, "a")]
    assert placement.broker_metadata(brokers, [1, 2], False) == [Broker(1), Broker(2)]
    with pytest.raises(CommandError, match=r"^Not all brokers have rack information\. Add --disable-rack-aware"):
        placement.broker_metadata(brokers, [1, 2], True)


# Iteration orders printed by Scala 2.13.5 (scala-library of Kafka 2.8.2) for sets built in this order
# (and, for the partitions above, for a Map[TopicPartition, _] of t-0..t-6: t-5,t-4,t-6,t-3,t-2,t-1,t-0).
def test_scala_set_orders_match_scala_2_13():
    assert scala_int_set_order([1, 2, 3]) == [1, 2, 3]
    assert scala_int_set_order([4, 3, 2, 1]) == [4, 3, 2, 1]
    assert ",".join(map(str, scala_int_set_order(range(1, 40)))) == (
        "5,10,14,1,6,9,13,2,12,18,11,8,4,15,24,37,25,20,29,21,33,28,38,17,32,34,22,27,7,39,3,35,16,31,26,23,36,30,19"
    )
    assert scala_string_set_order(["topic-a", "topic-b", "zk-1", "zk-22", "foo", "bar", "baz"]) == [
        "topic-b", "topic-a", "bar", "zk-1", "baz", "zk-22", "foo",
    ]  # fmt: skip
    assert scala_set_order(["a", "a", "b"], hash) == ["a", "b"]
