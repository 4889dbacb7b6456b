"""A cluster snapshot written from the real cluster: its content, its round trip, and --generate from it
gives what --generate against the live cluster gives."""

from __future__ import annotations

import io
import uuid

import pytest

import kreassign.cli.app as app
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.snapshot import load_snapshot, read_snapshot_lines, write_snapshot

pytestmark = pytest.mark.integration

LAYOUT = [[1, 2], [2, 3], [3, 1], [1, 3]]


def cli(argv: list[str], monkeypatch) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    code = app.run(argv, out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def live_topic(kafka_cluster):
    name = f"snapshot-{uuid.uuid4().hex[:10]}"
    create_topic(kafka_cluster.bootstrap_servers, name, LAYOUT, messages=400, size=200)
    adapter = KafkaCluster(kafka_cluster.bootstrap_servers)
    try:
        adapter.incremental_alter_configs(
            {ConfigResource(ResourceType.TOPIC, name): [ConfigOp("min.insync.replicas", OpType.SET, "2")]}
        )
    finally:
        adapter.close()
    return name


def test_snapshot_of_the_live_cluster_round_trips(kafka_cluster, live_topic, tmp_path, monkeypatch):
    topics = tmp_path / "topics.json"
    topics.write_text(f'{{"version":1,"topics":[{{"topic":"{live_topic}"}}]}}')
    path = tmp_path / "cluster.jsonl"
    bootstrap = kafka_cluster.bootstrap_servers
    code, out, err = cli(
        [
            "--bootstrap-server",
            bootstrap,
            "--write-cluster-snapshot",
            str(path),
            "--topics-to-move-json-file",
            str(topics),
        ],
        monkeypatch,
    )
    assert (code, out) == (0, ""), out
    assert err == f"Wrote cluster snapshot {path}: 3 broker(s), 1 topic(s), 4 partition(s).\n"

    snapshot = load_snapshot(str(path))
    assert {b.id: b.rack for b in snapshot.brokers} == kafka_cluster.broker_racks
    for broker in snapshot.brokers:
        assert sorted(broker.log_dirs) == sorted(str(d) for d in kafka_cluster.node(broker.id).log_dirs)
    topic = snapshot.topics[live_topic]
    assert topic.min_insync_replicas == 2
    assert [list(p.replicas) for p in topic.partitions] == LAYOUT
    for p in topic.partitions:
        assert p.size_bytes is not None and p.size_bytes > 20_000  # 100 records of 200 bytes each
        assert p.leader in p.replicas
        for broker, log_dir in zip(p.replicas, p.log_dirs, strict=True):
            assert log_dir in {str(d) for d in kafka_cluster.node(broker).log_dirs}

    text = path.read_text(encoding="utf-8")
    again = io.StringIO()
    write_snapshot(read_snapshot_lines(io.StringIO(text)), again)
    assert again.getvalue() == text

    # --generate from the snapshot prints what --generate against the live cluster prints
    for extra in (["--seed", "11"], ["--strategy", "balanced"], ["--strategy", "balanced", "--disable-rack-aware"]):
        common = ["--generate", "--topics-to-move-json-file", str(topics), "--broker-list", "1,2,3", *extra]
        live = cli(["--bootstrap-server", bootstrap, *common], monkeypatch)
        offline = cli(["--cluster-snapshot-file", str(path), *common], monkeypatch)
        assert live[0] == offline[0] == 0, live[1] + offline[1]
        assert offline[1] == live[1]
        assert offline[2] == live[2]


def test_a_full_snapshot_lists_every_topic(kafka_cluster, live_topic, tmp_path, monkeypatch):
    path = tmp_path / "all.jsonl"
    code, out, _ = cli(
        ["--bootstrap-server", kafka_cluster.bootstrap_servers, "--write-cluster-snapshot", str(path)], monkeypatch
    )
    assert (code, out) == (0, "")
    assert live_topic in load_snapshot(str(path)).topics


def test_snapshot_file_cannot_execute(tmp_path, kafka_cluster, live_topic, monkeypatch):
    """--execute on a snapshot is refused (the dry run that reads it is wired by the executor)."""
    path = tmp_path / "cluster.jsonl"
    code, _, _ = cli(
        ["--bootstrap-server", kafka_cluster.bootstrap_servers, "--write-cluster-snapshot", str(path)], monkeypatch
    )
    assert code == 0
    plan = tmp_path / "plan.json"
    plan.write_text(f'{{"version":1,"partitions":[{{"topic":"{live_topic}","partition":0,"replicas":[2,1]}}]}}')
    code, out, err = cli(
        ["--execute", "--cluster-snapshot-file", str(path), "--reassignment-json-file", str(plan)], monkeypatch
    )
    # refused before anything is printed (it printed the current assignment first: issue 26 item 10)
    assert (code, out) == (1, "")
    assert err.startswith("--execute with --cluster-snapshot-file needs --dry-run: a snapshot is read-only")
