"""Log dirs on JBOD brokers, on a real cluster (issue 27): broker 4's second log dir is on another volume (a
directory of /dev/shm, a tmpfs, behind a symlink: Kafka reports the path as configured and the volume's
figures of the tmpfs). The balanced plan names that dir for the replicas it adds to broker 4 (the volume that
ends least full), "any" for every other replica; a batched run puts each new replica straight into its dir
(the dir is named before the step), moves a replica the plan keeps on its broker into the dir the plan names,
refuses a dir its broker does not have before changing anything, and, cancelled from a second shell the
Apache way, stops a log-dir move still copying (the replica stays where it was). A volume above
--max-disk-usage gives the replicas the plan keeps on it to the broker's other volume (the Apache --execute
and --verify carry the move out)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.cluster import LocalKafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartitionReplica
from tests.integration.clusters import discard
from tests.integration.test_disk_truth_live import cli
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

LAYOUT = [[1, 2], [2, 3], [3, 1]] * 2


@pytest.fixture(scope="module")
def jbod_cluster(tmp_path_factory):
    """4 brokers; broker 4's data-1 is a directory on /dev/shm; a topic on brokers 1-3."""
    shm = Path(tempfile.mkdtemp(prefix="kreassign-jbod-", dir="/dev/shm"))
    cluster = LocalKafkaCluster(tmp_path_factory.mktemp("jbod"), brokers=4)
    try:
        node = cluster.node(4)
        node.directory.mkdir(parents=True, exist_ok=True)
        (shm / "data-1").mkdir()
        os.symlink(shm / "data-1", node.log_dirs[1])
        cluster.start()
        topic = f"jbod-{uuid.uuid4().hex[:8]}"
        create_topic(cluster.bootstrap_servers, topic, LAYOUT, messages=600, size=1000)
        yield cluster, topic
    finally:
        discard(cluster)
        shutil.rmtree(shm, ignore_errors=True)


def throttle(config: str) -> bool:
    return "throttled.rate" in config or "alter.log.dirs" in config


def where(bootstrap: str, replicas: list[TopicPartitionReplica]):
    adapter = KafkaCluster(bootstrap)
    try:
        return adapter.describe_replica_log_dirs(replicas)
    finally:
        adapter.close()


def test_the_plan_names_the_emptier_volume_and_a_batched_run_puts_replicas_there(jbod_cluster, tmp_path, monkeypatch):
    cluster, topic = jbod_cluster
    bootstrap = cluster.bootstrap_servers
    shm_dir = str(cluster.node(4).log_dirs[1])
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    common = ["--bootstrap-server", bootstrap, "--generate", "--strategy", "balanced"]
    common += ["--topics-to-move-json-file", topics, "--broker-list", "1,2,3,4"]
    code, out, err = cli(common, monkeypatch)
    assert code == 0, out + err
    proposal = json.loads(out.splitlines()[4])["partitions"]
    named = {}
    for p in proposal:
        for broker, log_dir in zip(p["replicas"], p["log_dirs"], strict=True):
            if broker == 4:
                named[p["partition"]] = log_dir
            else:
                assert log_dir == "any", p  # one volume (brokers 1-3), or kept on its broker
    assert named and set(named.values()) == {shm_dir}  # the tmpfs is nearly empty: the least full volume
    assert f"Log dirs: {len(named)} new replica(s) given a dir on 1 broker(s) with several volumes" in err
    code, out, _ = cli([*common, "--output", "json"], monkeypatch)
    assert code == 0
    report = json.loads(out)["report"]["log_dirs"]
    assert report["replicas"] == len(named)
    assert sorted(v["volume"] for v in report["volumes"]) == sorted(map(str, cluster.node(4).log_dirs))

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": proposal}))
    run = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan]
    run += ["--max-partition-movements", "2", "--throttle", "10000000", "--journal-file", tmp_path / "journal.json"]
    code, out, err = cli([*run, "--dry-run"], monkeypatch)
    assert code == 0, out + err
    assert f"{len(named)} replica(s) go to the log dir the plan names: named before the step" in out
    code, out, err = cli(run, monkeypatch)
    assert code == 0, out + err
    assert f"{len(named)} replica(s) go to the log dir the plan names." in out
    assert "Moving " not in err  # each new replica was created in its dir: no log-dir move was needed
    replicas = [TopicPartitionReplica(topic, p, 4) for p in named]
    found = where(bootstrap, replicas)
    assert {r.partition: (i.current, i.future) for r, i in found.items()} == {p: (shm_dir, None) for p in named}
    code, out, _ = cli(["--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", plan], monkeypatch)
    assert code == 0, out
    for p in named:
        assert f"Reassignment of replica {topic}-{p}-4 completed successfully." in out


def test_a_bad_dir_is_refused_before_any_change(jbod_cluster, tmp_path, monkeypatch):
    cluster, topic = jbod_cluster
    bootstrap = cluster.bootstrap_servers
    adapter = KafkaCluster(bootstrap)
    try:
        replicas = adapter.describe_topics([topic])[topic][0].replicas
    finally:
        adapter.close()
    plan = tmp_path / "bad.json"
    entry = {"topic": topic, "partition": 0, "replicas": list(reversed(replicas)), "log_dirs": ["/nope", "any"]}
    plan.write_text(json.dumps({"version": 1, "partitions": [entry]}))
    argv = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan, "--throttle", "1000000"]
    argv += ["--max-partition-movements", "1", "--journal-file", tmp_path / "journal.json"]
    code, out, err = cli(argv, monkeypatch)
    assert code == 1
    text = out + err
    assert text.startswith(f"Error: The plan puts {topic}-0 in log dir /nope of broker {replicas[-1]}, which has no")
    assert text.count("\n") == 1 and "nothing was changed" in text
    adapter = KafkaCluster(bootstrap)
    try:
        assert not adapter.list_reassignments()
        assert adapter.describe_topics([topic])[topic][0].replicas == replicas
        configs = adapter.describe_configs([ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3, 4)])
        assert not any(throttle(k) for values in configs.values() for k in values), configs
    finally:
        adapter.close()
    assert not (tmp_path / "journal.json").exists()


def test_a_replica_kept_on_its_broker_moves_to_its_dir_and_a_cancel_stops_a_move_in_flight(
    jbod_cluster, tmp_path, monkeypatch
):
    cluster, _ = jbod_cluster
    bootstrap = cluster.bootstrap_servers
    topic = f"jbod-move-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, [[1, 2], [2, 1]], messages=1200, size=5000)  # 6 MB in partition 0
    dirs = [str(d) for d in cluster.node(1).log_dirs]
    found = where(bootstrap, [TopicPartitionReplica(topic, p, 1) for p in (0, 1)])
    current = {r.partition: i.current for r, i in found.items()}
    other = {p: next(d for d in dirs if d != current[p]) for p in (0, 1)}

    # partition 1: a small move, to its end
    plan = tmp_path / "move.json"
    entry = {"topic": topic, "partition": 1, "replicas": [2, 1], "log_dirs": ["any", other[1]]}
    plan.write_text(json.dumps({"version": 1, "partitions": [entry]}))
    argv = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan]
    argv += ["--max-partition-movements", "1", "--journal-file", tmp_path / "j1.json"]
    code, out, err = cli(argv, monkeypatch)
    assert code == 0, out + err
    assert f"Moving {topic}-1 on broker 1 to log dir {other[1]}" in err
    assert f"{topic}-1 on broker 1 is in log dir {other[1]}" in err
    (info,) = where(bootstrap, [TopicPartitionReplica(topic, 1, 1)]).values()
    assert (info.current, info.future) == (other[1], None)

    # partition 0: 6 MB at 20 kB/s, cancelled from a second shell with the Apache command
    plan = tmp_path / "slow.json"
    entry = {"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": [other[0], "any"]}
    plan.write_text(json.dumps({"version": 1, "partitions": [entry]}))
    base = [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen(
        [*base, "--execute", "--max-partition-movements", "1", "--replica-alter-log-dirs-throttle", "20000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:

        def copying() -> bool:
            (i,) = where(bootstrap, [TopicPartitionReplica(topic, 0, 1)]).values()
            return i.future == other[0]

        wait_until(copying, timeout=60)
        cancel = subprocess.run([*base, "--cancel"], capture_output=True, text=True, env=env, timeout=120)
        assert cancel.returncode == 0, cancel.stdout + cancel.stderr
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 4, out + err  # cancelled by --cancel

    def settled() -> bool:
        (i,) = where(bootstrap, [TopicPartitionReplica(topic, 0, 1)]).values()
        return (i.current, i.future) == (current[0], None)

    wait_until(settled, timeout=30)
    time.sleep(1)
    assert settled()
    adapter = KafkaCluster(bootstrap)
    try:
        configs = adapter.describe_configs([ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2)])
        assert not any(throttle(k) for values in configs.values() for k in values), configs
    finally:
        adapter.close()


def test_a_volume_above_the_limit_gives_kept_replicas_to_the_other_volume(jbod_cluster, tmp_path, monkeypatch):
    cluster, _ = jbod_cluster
    bootstrap = cluster.bootstrap_servers
    root_dir, shm_dir = (str(d) for d in cluster.node(4).log_dirs)
    topic = f"jbod-full-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, [[4], [4], [4]], messages=300, size=1000)
    replicas = [TopicPartitionReplica(topic, p, 4) for p in range(3)]
    adapter = KafkaCluster(bootstrap)
    try:  # every replica on the root volume first
        adapter.alter_replica_log_dirs(dict.fromkeys(replicas, root_dir))
    finally:
        adapter.close()

    def in_dir(path: str) -> bool:
        return all((i.current, i.future) == (path, None) for i in where(bootstrap, replicas).values())

    wait_until(lambda: in_dir(root_dir), timeout=60)
    # --max-disk-usage at half the share of the root volume Kafka reports in use (total - usable bytes): the
    # root volume is above it, the tmpfs far below
    stat = os.statvfs(root_dir)
    limit = f"{(1 - stat.f_bavail / stat.f_blocks) / 2:.3f}"
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    argv = ["--bootstrap-server", bootstrap, "--generate", "--strategy", "balanced", "--broker-list", "4"]
    argv += ["--topics-to-move-json-file", topics, "--max-disk-usage", limit]
    code, out, err = cli(argv, monkeypatch)
    assert code == 0, out + err
    proposal = json.loads(out.splitlines()[4])["partitions"]
    assert [(p["replicas"], p["log_dirs"]) for p in proposal] == [([4], [shm_dir])] * 3
    assert "Log dirs: 3 replica(s) (" in err and ") moved to another volume of their broker" in err
    # three small replicas cannot bring the root volume within the limit: the report says so
    assert "Log dirs above --max-disk-usage after the plan: " in err and " of broker 4, " in err

    # the Apache way: --execute, then --verify until done
    plan = tmp_path / "relief.json"
    plan.write_text(json.dumps({"version": 1, "partitions": proposal}))
    base = ["--bootstrap-server", bootstrap, "--reassignment-json-file", plan]
    code, out, err = cli([*base, "--execute"], monkeypatch)
    assert code == 0, out + err

    def verified() -> bool:
        code, out, _ = cli([*base, "--verify"], monkeypatch)
        return code == 0 and all(
            f"Reassignment of replica {topic}-{p}-4 completed successfully." in out for p in range(3)
        )

    wait_until(verified, timeout=60)
    assert in_dir(shm_dir)
