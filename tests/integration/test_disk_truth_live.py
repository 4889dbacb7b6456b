"""Disk truth on a real cluster (Kafka 4.3.1, issue 27): every broker has two log dirs on one volume (the
devcluster's data-0 and data-1 share the machine's disk), broker 2 has data-1 cordoned and broker 3 every
dir (``cordoned.log.dirs``, KIP-1066, set at run time). The snapshot counts each volume once and records
the cordons; the balanced plan, offline and live, places nothing on broker 3, and once executed nothing
lands in broker 2's cordoned dir."""

from __future__ import annotations

import io
import json
import os
import uuid
from pathlib import Path

import pytest

import kreassign.cli.app as app
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.cluster import LocalKafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.snapshot import load_snapshot
from tests.integration.clusters import discard
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

LAYOUT = [[1, 3], [3, 1]] * 3  # rack a only (brokers 1 and 3): the rack-aware plan needs broker 2 (rack b)


def cli(argv: list[str], monkeypatch) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    code = app.run([str(a) for a in argv], out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cordoned_cluster(tmp_path_factory):
    """3 brokers (racks a, b, a), two log dirs each; a topic on brokers 1 and 3; then the cordons."""
    cluster = LocalKafkaCluster(tmp_path_factory.mktemp("disk-truth"), brokers=3)
    cluster.start()
    try:
        topic = f"disk-{uuid.uuid4().hex[:8]}"
        create_topic(cluster.bootstrap_servers, topic, LAYOUT, messages=600, size=500)
        adapter = KafkaCluster(cluster.bootstrap_servers)
        try:
            adapter.incremental_alter_configs(
                {
                    ConfigResource(ResourceType.BROKER, "2"): [
                        ConfigOp("cordoned.log.dirs", OpType.SET, str(cluster.node(2).log_dirs[1]))
                    ],
                    ConfigResource(ResourceType.BROKER, "3"): [ConfigOp("cordoned.log.dirs", OpType.SET, "*")],
                }
            )
            wait_until(lambda: [d.cordoned for d in adapter.describe_log_dirs([3])[3]] == [True, True])
        finally:
            adapter.close()
        yield cluster, topic
    finally:
        discard(cluster)


def test_snapshot_counts_the_volume_once_and_plans_around_the_cordons(cordoned_cluster, tmp_path, monkeypatch):
    cluster, topic = cordoned_cluster
    bootstrap = cluster.bootstrap_servers
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    path = tmp_path / "cluster.jsonl"
    code, out, _ = cli(
        ["--bootstrap-server", bootstrap, "--write-cluster-snapshot", path, "--topics-to-move-json-file", topics],
        monkeypatch,
    )
    assert (code, out) == (0, ""), out

    stat = os.statvfs(cluster.node(1).log_dirs[0])
    disk = stat.f_blocks * stat.f_frsize  # the volume both dirs of every broker are on (java's getTotalSpace)
    snapshot = load_snapshot(str(path))
    for broker in snapshot.brokers:
        paths = [str(d) for d in cluster.node(broker.id).log_dirs]
        assert [d.path for d in broker.dirs] == sorted(paths)
        assert {d.volume for d in broker.dirs} == {broker.dirs[0].path}  # one volume
        assert [d.total_bytes for d in broker.dirs] == [disk, disk]
        # once, not per log dir: before issue 27 the snapshot recorded 2 * disk (541,106,348,032 for 252 GiB)
        assert broker.capacity_bytes == disk
        held = sum(p.size_bytes or 0 for p in snapshot.topics[topic].partitions if broker.id in p.replicas)
        assert sum(d.used_bytes for d in broker.dirs) == (held if broker.id != 2 else 0)
    cordoned = {b.id: b.cordoned_log_dirs for b in snapshot.brokers}
    assert cordoned == {
        1: (),
        2: (str(cluster.node(2).log_dirs[1]),),
        3: tuple(sorted(map(str, cluster.node(3).log_dirs))),
    }

    # the balanced plan, from the snapshot and from the live cluster: nothing on broker 3, broker 2 takes a
    # replica of every partition (rack b), racks kept
    common = ["--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3", "--strategy", "balanced"]
    offline = cli(["--cluster-snapshot-file", path, *common], monkeypatch)
    live = cli(["--bootstrap-server", bootstrap, *common], monkeypatch)
    assert offline[0] == live[0] == 0, offline[1] + live[1]
    assert offline[1] == live[1]
    proposal = json.loads(offline[1].splitlines()[4])
    assert sorted(sorted(p["replicas"]) for p in proposal["partitions"]) == [[1, 2]] * len(LAYOUT)
    # the bytes band from the live sizes: brokers 1 and 2 end with every partition (within the band), and the
    # plan copies exactly its lower bound: what the drained broker 3 holds must leave
    code, out, err = cli(["--bootstrap-server", bootstrap, *common, "--output", "json"], monkeypatch)
    assert code == 0, out
    report = json.loads(out)["report"]
    assert report["bytes_band"]["outside"] == [] and report["bytes_band"]["tolerance"] == 0.05
    held = {b["broker"]: b["bytes_before"] for b in report["brokers"]}
    assert report["bytes_moved"] == report["bytes_lower_bound"] == held[3] > 0
    assert "Bytes per broker: within 5% of the mean" in err

    # executed: broker 2's new replicas go to its dir that is not cordoned (the plan says "any": the broker
    # chooses, and Kafka 4.3 never chooses a cordoned dir); broker 3 is drained
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(proposal))
    code, out, _ = cli(["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan], monkeypatch)
    assert code == 0, out
    adapter = KafkaCluster(bootstrap)
    try:
        wait_until(lambda: not adapter.list_reassignments(), timeout=30)

        def drained() -> bool:  # the replicas broker 3 gave up are deleted a moment after the reassignment
            return not any(tp.topic == topic for d in adapter.describe_log_dirs([3])[3] for tp in d.replica_sizes)

        wait_until(drained, timeout=30)
        dirs = adapter.describe_log_dirs([1, 2, 3])
    finally:
        adapter.close()
    placed = {
        (b, Path(d.path).name): sorted(tp.partition for tp in d.replica_sizes if tp.topic == topic)
        for b, ds in dirs.items()
        for d in ds
    }
    assert placed[(2, "data-1")] == [], placed  # cordoned: nothing new in it
    assert placed[(2, "data-0")] == list(range(len(LAYOUT))), placed
    assert placed[(3, "data-0")] == placed[(3, "data-1")] == [], placed
