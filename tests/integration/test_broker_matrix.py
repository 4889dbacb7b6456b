"""The broker matrix (issue 34): kreassign through --bootstrap-server on every Kafka release operators run.

One small cluster per release (4 brokers, racks rack-a/rack-b, two log dirs each), started from the Maven
Central jars by the project's harness while the tests of the release before run, and killed when its own are
done: at most two matrix clusters run at a time, and their nodes die with the test process (``die_with_parent``). On each release: --list,
--generate (rack-aware and --disable-rack-aware), the Apache --execute with --throttle, --verify until clean,
--additional and --cancel of moves in flight, a batched and throttled --execute to its end, --progress,
--write-cluster-snapshot and the balanced and leaders plans from it; on a few releases (``HEAVY``) a log-dir
move and a batched run cancelled from a second shell. Where the Apache 4.4.0 tool works
against the broker, kreassign's stdout and exit code are compared with it. docs/broker-matrix.md is the table.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.cluster import LocalKafkaCluster, ZooKeeperKafkaCluster, tiered_storage
from kreassign.devcluster.topics import create_topic
from kreassign.execution.watch import RATES_NOT_REPORTED
from kreassign.model import TopicPartition
from tests.integration.clusters import discard
from tests.integration.differential import Outcome, run_apache, run_ours, wait_until
from tests.terminal.screen import remove_throttles, throttles_once_applied

pytestmark = [pytest.mark.integration, pytest.mark.matrix]

#: (release, mode): the releases of docs/broker-matrix.md
RELEASES = [
    ("2.4.1", "zookeeper"),
    ("2.7.2", "zookeeper"),
    ("2.8.2", "zookeeper"),
    ("3.2.3", "zookeeper"),
    ("3.9.2", "zookeeper"),
    ("3.3.2", "kraft"),
    ("3.6.2", "kraft"),
    ("3.9.2", "kraft"),
    ("4.0.2", "kraft"),
    ("4.3.1", "kraft"),
    ("4.4.0", "kraft"),
]
BROKERS = "1,2,3,4"
#: the heavier flows rotate over a few releases (the time budget of the suite): the oldest, a KRaft 3.x, the newest
HEAVY = [("2.4.1", "zookeeper"), ("3.6.2", "kraft"), ("4.4.0", "kraft")]
#: the release whose cluster also keeps segments in remote storage (Kafka's LocalTieredStorage, from its storage test
#: jar on Maven Central, published up to 4.3.x: 4.4.0 has none)
TIERED = [("4.3.1", "kraft")]


def release_id(release: tuple[str, str]) -> str:
    return f"{release[0]}-{release[1]}"


def _new_cluster(release: tuple[str, str], tmp_path_factory) -> LocalKafkaCluster:
    version, mode = release
    cluster_class = ZooKeeperKafkaCluster if mode == "zookeeper" else LocalKafkaCluster
    folder = tmp_path_factory.mktemp(f"matrix-{version}-{mode}")
    broker_config, controller_config = {}, {}
    if release in TIERED:
        (folder / "remote").mkdir()
        broker_config, controller_config = tiered_storage(folder / "remote", version)
    return cluster_class(
        folder,
        brokers=4,
        kafka_version=version,
        start_timeout=150,
        broker_config=broker_config,
        controller_config=controller_config,
    )


class _Starter:
    """Starts the next release's cluster while the tests of the current one run (a start took about 40 s of
    each release's 2 minutes, mostly JVMs starting and brokers registering; the tests mostly wait on Kafka).
    One worker thread starts them all and lives until the module ends: Linux sends a broker its parent-death
    signal when the thread that started it ends (``die_with_parent``), and the test process's death ends it."""

    def __init__(self, tmp_path_factory, order: list[tuple[str, str]]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.tmp_path_factory = tmp_path_factory
        self.order = order
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="matrix-start")
        self.starting: dict[tuple[str, str], tuple[LocalKafkaCluster, object]] = {}

    def _submit(self, release: tuple[str, str]) -> None:
        if release not in self.starting:
            cluster = _new_cluster(release, self.tmp_path_factory)
            self.starting[release] = (cluster, self.pool.submit(cluster.start))

    def take(self, release: tuple[str, str]) -> LocalKafkaCluster:
        """This release's cluster, started (raises what its start raised); the next release's starts."""
        self._submit(release)
        cluster, started = self.starting.pop(release)
        try:
            started.result()
        except BaseException:
            discard(cluster)
            raise
        later = self.order[self.order.index(release) + 1 :] if release in self.order else []
        if later:
            self._submit(later[0])
        return cluster

    def close(self) -> None:
        for cluster, started in self.starting.values():  # started for a release no test then asked for
            started.exception()
            discard(cluster)
        self.starting.clear()
        self.pool.shutdown(wait=True)


@pytest.fixture(scope="module")
def matrix_starter(request, tmp_path_factory) -> Iterator[_Starter]:
    order: list[tuple[str, str]] = []
    for item in request.session.items:  # the releases of the selected tests, in the order they run
        callspec = getattr(item, "callspec", None)
        release = callspec.params.get("matrix_cluster") if callspec is not None else None
        if release is not None and tuple(release) not in order:
            order.append(tuple(release))
    starter = _Starter(tmp_path_factory, order)
    yield starter
    starter.close()


@pytest.fixture(scope="module", params=RELEASES, ids=[release_id(r) for r in RELEASES])
def matrix_cluster(request, matrix_starter) -> Iterator[LocalKafkaCluster]:
    cluster = matrix_starter.take(tuple(request.param))
    try:
        yield cluster
    finally:
        discard(cluster)


@pytest.fixture(autouse=True)
def fresh_state(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def kr(cluster: LocalKafkaCluster, *args: str, timeout: float = 240) -> Outcome:
    result = run_ours(["--bootstrap-server", cluster.bootstrap_servers, *args], timeout=timeout)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def apache(cluster: LocalKafkaCluster, *args: str) -> Outcome:
    return run_apache(["--bootstrap-server", cluster.bootstrap_servers, *args], timeout=240)


def same_as_apache(ours: Outcome, theirs: Outcome) -> None:
    assert (ours.code, ours.stdout) == (theirs.code, theirs.stdout), f"ours: {ours}\nApache 4.4.0: {theirs}"


def new_topic(cluster: LocalKafkaCluster, layout: list[list[int]], messages: int = 0, size: int = 100) -> str:
    name = f"matrix-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, name, layout, messages=messages, size=size)
    return name


def plan_file(path: Path, topic: str, replicas: list[list[int]]) -> str:
    partitions = [{"topic": topic, "partition": p, "replicas": r} for p, r in enumerate(replicas)]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def verify_until_clean(cluster: LocalKafkaCluster, plan: str) -> Outcome:
    outcome: list[Outcome] = []

    def clean() -> bool:
        outcome[:] = [kr(cluster, "--verify", "--reassignment-json-file", plan)]
        return outcome[0].code == 0 and "in progress" not in outcome[0].stdout

    assert wait_until(clean, timeout=180, interval=1), outcome
    return outcome[0]


def test_list_and_generate(matrix_cluster, tmp_path):
    topic = new_topic(matrix_cluster, [[1, 2], [2, 3], [3, 4], [4, 1]])
    listed = kr(matrix_cluster, "--list")
    assert listed.code == 0 and listed.stdout == "No partition reassignments found.\n", listed
    same_as_apache(listed, apache(matrix_cluster, "--list"))

    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    racks = matrix_cluster.broker_racks
    for extra in ([], ["--disable-rack-aware"]):
        args = ["--generate", "--topics-to-move-json-file", str(topics), "--broker-list", BROKERS, *extra]
        ours = kr(matrix_cluster, *args, "--output", "json")
        assert ours.code == 0, ours
        proposed = json.loads(ours.stdout)["proposed"]["partitions"]
        assert sorted(p["partition"] for p in proposed) == [0, 1, 2, 3]
        for p in proposed:
            assert len(set(p["replicas"])) == 2 and set(p["replicas"]) <= {1, 2, 3, 4}
            if not extra:  # rack-aware: one replica on each rack
                assert {racks[b] for b in p["replicas"]} == {"rack-a", "rack-b"}
        # the current assignment (the first two lines) is the Apache tool's; the proposal is random in both
        text, theirs = kr(matrix_cluster, *args), apache(matrix_cluster, *args)
        assert text.code == theirs.code == 0, theirs
        assert text.stdout.splitlines()[:2] == theirs.stdout.splitlines()[:2]


def test_apache_execute_with_throttle_and_verify_until_clean(matrix_cluster, tmp_path):
    topic = new_topic(matrix_cluster, [[1, 2], [2, 3]], messages=400, size=500)
    plan = plan_file(tmp_path / "plan.json", topic, [[3, 4], [4, 1]])
    executed = kr(matrix_cluster, "--execute", "--reassignment-json-file", plan, "--throttle", "20000000")
    assert executed.code == 0, executed
    assert "Warning: You must run --verify periodically, until the reassignment completes" in executed.stdout
    assert "The inter-broker throttle limit was set to 20000000 B/s" in executed.stdout
    verify_until_clean(matrix_cluster, plan)
    # everything done and the throttles gone: both tools print the same
    same_as_apache(
        kr(matrix_cluster, "--verify", "--reassignment-json-file", plan),
        apache(matrix_cluster, "--verify", "--reassignment-json-file", plan),
    )


def test_additional_and_cancel_of_moves_in_flight(matrix_cluster, tmp_path):
    first = new_topic(matrix_cluster, [[1, 2]], messages=3000, size=1000)
    second = new_topic(matrix_cluster, [[2, 3]], messages=3000, size=1000)
    plan_a = plan_file(tmp_path / "a.json", first, [[3, 4]])
    plan_b = plan_file(tmp_path / "b.json", second, [[4, 1]])
    started = kr(matrix_cluster, "--execute", "--reassignment-json-file", plan_a, "--throttle", "10000")
    assert started.code == 0, started
    more = kr(matrix_cluster, "--execute", "--additional", "--reassignment-json-file", plan_b, "--throttle", "10000")
    assert more.code == 0, more
    assert f"Successfully started partition reassignment for {second}-0\n" in more.stdout
    listed = kr(matrix_cluster, "--list")
    assert listed.code == 0 and f"{first}-0: replicas: " in listed.stdout and f"{second}-0: replicas: " in listed.stdout
    same_as_apache(listed, apache(matrix_cluster, "--list"))

    both = tmp_path / "both.json"
    both.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": first, "partition": 0, "replicas": [3, 4]},
                    {"topic": second, "partition": 0, "replicas": [4, 1]},
                ],
            }
        )
    )
    cancelled = kr(matrix_cluster, "--cancel", "--reassignment-json-file", str(both))
    assert cancelled.code == 0, cancelled
    assert f"Successfully cancelled partition reassignments for: {first}-0,{second}-0" in cancelled.stdout or (
        f"Successfully cancelled partition reassignments for: {second}-0,{first}-0" in cancelled.stdout
    )
    after = kr(matrix_cluster, "--list")
    assert after.stdout == "No partition reassignments found.\n", after
    same_as_apache(after, apache(matrix_cluster, "--list"))


def test_batched_execute_with_throttle_to_its_end_and_progress(matrix_cluster, tmp_path):
    # one step a partition (the leader stays, its follower moves), two at a time: two rounds of steps (a step
    # took about 7 s on the ZooKeeper-mode releases: the plan of two steps a partition, four rounds, a minute)
    topic = new_topic(matrix_cluster, [[1, 2], [2, 3], [3, 4], [4, 1]], messages=800, size=300)
    plan = plan_file(tmp_path / "plan.json", topic, [[1, 3], [2, 4], [3, 1], [4, 2]])
    batched = ["--execute", "--reassignment-json-file", plan, "--max-partition-movements", "2"]
    batched += ["--throttle", "5000000", "--poll-interval-ms", "300", "--output", "json"]
    result = kr(matrix_cluster, *batched)
    assert result.code == 0, result
    outcome = json.loads(result.stdout)
    assert (outcome["status"], outcome["partitions_done"], outcome["throttles_restored"]) == ("completed", 4, True)
    progress = kr(matrix_cluster, "--progress", "--reassignment-json-file", plan, "--output", "json")
    assert progress.code == 0, progress
    assert json.loads(progress.stdout)["kind"] == "progress"
    verified = kr(matrix_cluster, "--verify", "--reassignment-json-file", plan)
    same_as_apache(verified, apache(matrix_cluster, "--verify", "--reassignment-json-file", plan))


def test_snapshot_and_the_balanced_and_leaders_plans_from_it(matrix_cluster, tmp_path):
    topic = new_topic(matrix_cluster, [[1, 2], [1, 2], [1, 3], [1, 3]], messages=200, size=200)
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    snapshot = tmp_path / "cluster.jsonl"
    wrote = kr(matrix_cluster, "--write-cluster-snapshot", str(snapshot), "--topics-to-move-json-file", str(topics))
    assert (wrote.code, wrote.stdout) == (0, ""), wrote
    assert wrote.stderr.startswith(f"Wrote cluster snapshot {snapshot}: 4 broker(s), 1 topic(s), 4 partition(s).")
    brokers = [json.loads(line) for line in snapshot.read_text().splitlines() if '"type":"broker"' in line]
    # DescribeLogDirs reports the volumes' total and usable bytes from Kafka 3.3 on (KIP-827): before, unknown
    reports_volumes = tuple(int(x) for x in matrix_cluster.kafka_version.split(".")[:2]) >= (3, 3)
    assert [b["capacity_bytes"] is not None for b in brokers] == [reports_volumes] * 4, brokers
    for strategy in ("balanced", "leaders"):
        offline = ["--cluster-snapshot-file", str(snapshot), "--generate", "--strategy", strategy]
        offline += ["--topics-to-move-json-file", str(topics), "--output", "json"]
        # leaders keeps the replica sets, so it takes no --broker-list
        generated = run_ours([*offline, "--broker-list", BROKERS] if strategy == "balanced" else offline)
        assert generated.code == 0, generated
        document = json.loads(generated.stdout)
        assert document["report"]["strategy"] == strategy
        assert sorted(p["partition"] for p in document["proposed"]["partitions"]) == [0, 1, 2, 3]


@pytest.mark.parametrize("matrix_cluster", HEAVY, ids=[release_id(r) for r in HEAVY], indirect=True)
def test_log_dir_move_where_the_broker_has_two_dirs(matrix_cluster, tmp_path):
    topic = new_topic(matrix_cluster, [[1, 2]], messages=300, size=200)
    dirs = matrix_cluster.node(1).log_dirs
    assert len(dirs) == 2
    (source,) = [d for d in dirs if (d / f"{topic}-0").is_dir()]
    (target,) = [d for d in dirs if d != source]
    plan = tmp_path / "plan.json"
    partition = {"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": [str(target), "any"]}
    plan.write_text(json.dumps({"version": 1, "partitions": [partition]}))
    executed = kr(matrix_cluster, "--execute", "--reassignment-json-file", str(plan))
    assert executed.code == 0, executed
    done = verify_until_clean(matrix_cluster, str(plan))
    assert f"Reassignment of replica {topic}-0-1 completed successfully." in done.stdout, done
    assert (target / f"{topic}-0").is_dir() and not (source / f"{topic}-0").is_dir()
    same_as_apache(
        kr(matrix_cluster, "--verify", "--reassignment-json-file", str(plan)),
        apache(matrix_cluster, "--verify", "--reassignment-json-file", str(plan)),
    )


#: the batched run cancelled from a second shell: two partitions, each moving one replica (one step each)
CANCELLED_SOURCE = [[1, 2], [2, 3]]
CANCELLED_TARGET = [[3, 2], [4, 3]]


class BatchedRun:
    """A topic of two partitions, each moving one replica (one step each, both in flight at once), and the
    batched, throttled --execute of its plan running in the background with its own default state folder
    (a fresh XDG_STATE_HOME, no --journal-file), as ``kreassign ... > out 2> err &``."""

    def __init__(self, cluster: LocalKafkaCluster, folder: Path) -> None:
        folder.mkdir()
        self.cluster, self.folder = cluster, folder
        # 8 MB a partition: a follower's first fetch (1 MB) passes the throttle, the rest takes minutes at 10 KB/s.
        # A ZooKeeper-mode broker applies a throttle when its config watch fires: on a loaded machine (CI) a
        # Kafka 2.4 follower copied 2 MB partitions whole before that, and the run ended before its cancel
        self.topic = new_topic(cluster, CANCELLED_SOURCE, messages=16000, size=1000)
        self.plan = plan_file(folder / "plan.json", self.topic, CANCELLED_TARGET)
        self.env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
        self.env.pop("KREASSIGN_DEBUG", None)
        args = ["--bootstrap-server", cluster.bootstrap_servers, "--execute", "--reassignment-json-file", self.plan]
        args += ["--max-partition-movements", "2", "--throttle", "10000", "--poll-interval-ms", "200"]
        with open(folder / "run.out", "w") as out, open(folder / "run.err", "w") as err:
            self.run = subprocess.Popen(
                [sys.executable, "-m", "kreassign", *args], stdout=out, stderr=err, env=self.env, cwd=folder
            )

    def second_shell(self, *args: str) -> subprocess.CompletedProcess:
        """kreassign as the Apache tool's drop-in, in a second process sharing the run's state folder."""
        command = [sys.executable, "-m", "kreassign", "--bootstrap-server", self.cluster.bootstrap_servers, *args]
        return subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=240)

    def partitions(self) -> list[TopicPartition]:
        return [TopicPartition(self.topic, p) for p in range(len(CANCELLED_SOURCE))]

    def copying(self, port: KafkaCluster) -> bool:
        """Both steps in flight, under the run's topic throttles."""
        moving = port.list_reassignments(self.partitions())
        applied = throttles_once_applied(port, [1, 2, 3, 4], [self.topic], settle=0)
        return set(moving) == set(self.partitions()) and f"topic:{self.topic}" in applied

    def layout(self, port: KafkaCluster) -> list[list[int]]:
        return [list(p.replicas) for p in port.describe_topics([self.topic])[self.topic]]

    def stderr(self) -> str:
        return (self.folder / "run.err").read_text()

    def outputs(self) -> str:
        return "".join(f"--- {name}\n{(self.folder / name).read_text()}" for name in ("run.out", "run.err"))

    def close(self, port: KafkaCluster) -> None:
        if self.run.poll() is None:
            self.run.kill()
            self.run.wait()
        port.alter_reassignments(dict.fromkeys(port.list_reassignments(self.partitions()), None))
        remove_throttles(port, [1, 2, 3, 4], [self.topic])


@pytest.mark.parametrize("matrix_cluster", HEAVY, ids=[release_id(r) for r in HEAVY], indirect=True)
def test_batched_execute_cancelled_from_a_second_shell(matrix_cluster, tmp_path):
    """A batched run cancelled by kreassign's Apache-form --cancel from a second shell, then a run of the same
    shape cancelled by the Apache 4.4.0 tool (one after the other: each --cancel clears every broker's
    throttle rates, which would stop a run beside it): both print the same, and both runs stop (exit 4) with
    their partitions back on their original replicas, in their order, and no throttle left. On Kafka 2.4 each
    run says once on stderr that it cannot watch its throttle rates."""
    lacks_rates = matrix_cluster.kafka_version.startswith("2.4.")
    port = KafkaCluster(bootstrap_servers=matrix_cluster.bootstrap_servers)
    runs: list[BatchedRun] = []
    cancels: list[Outcome] = []
    try:
        for name in ("kreassign", "apache"):
            run = BatchedRun(matrix_cluster, tmp_path / name)
            runs.append(run)
            assert wait_until(lambda run=run: run.run.poll() is not None or run.copying(port), timeout=120)
            assert run.run.poll() is None, f"the run ended before it was cancelled: {run.outputs()}"
            if lacks_rates:  # said once the rates have had time to show
                assert wait_until(lambda run=run: RATES_NOT_REPORTED in run.stderr(), timeout=60), run.outputs()
            cancel = ["--cancel", "--reassignment-json-file", run.plan]
            if name == "kreassign":
                done = run.second_shell(*cancel)
                cancels.append(Outcome(done.returncode, done.stdout, done.stderr))
            else:
                cancels.append(apache(matrix_cluster, *cancel))
            assert run.run.wait(timeout=180) == 4, run.outputs()
            assert run.layout(port) == CANCELLED_SOURCE, run.outputs()
            assert port.list_reassignments(run.partitions()) == {}
            assert throttles_once_applied(port, [1, 2, 3, 4], [run.topic]) == {}, run.outputs()
            # Kafka 2.4's brokers leave the throttle rates out of DescribeConfigs: one line on stderr for the
            # whole run (it polled every 200 ms), never on stdout; on the other releases, none
            said = f"kreassign: {RATES_NOT_REPORTED}\n"
            assert run.stderr().count(said) == (1 if lacks_rates else 0), run.outputs()
            assert RATES_NOT_REPORTED not in (run.folder / "run.out").read_text()
        ours, theirs = cancels
        assert theirs.stdout.startswith(
            f"Successfully cancelled partition reassignments for: {runs[1].topic}-0,{runs[1].topic}-1\n"
        ), theirs
        assert (ours.code, ours.stdout.replace(runs[0].topic, "TOPIC")) == (
            theirs.code,
            theirs.stdout.replace(runs[1].topic, "TOPIC"),
        ), ours.stderr
        assert ours.code == 0
        # kreassign's own account of what it did is on stderr: it stopped the run of this plan
        assert "kreassign: stopped the batched run of this plan (pid " in ours.stderr, ours.stderr
    finally:
        for run in runs:
            run.close(port)
        port.close()


TIERED_BYTES = 30_000_000
LOCAL_RETENTION = 2 * 1024 * 1024
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


@pytest.mark.parametrize("matrix_cluster", TIERED, ids=[release_id(r) for r in TIERED], indirect=True)
def test_a_tiered_topic_moved_while_local_retention_trims_it(matrix_cluster, tmp_path):
    """Issue 39: a topic in tiered storage (30 MB written, its segments uploaded to remote storage) moved while
    local retention (2 MiB) trims its leader. The new replica's fetch position falls below the leader's local log,
    so it starts again from there, and local retention trims it too: its log shrinks while it is filled. Before,
    --progress gave it a negative rate (-991,141 B/s, two runs out of two), and the run said it copied the
    partition's size at the start (28.9 MiB) where the new replica received a few MB. Now no rate, size or ETA is
    below 0, and the run's "copied" is what the new replica was seen receiving."""
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient, NewTopic

    from kreassign.actions.progress import read_progress
    from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
    from kreassign.documents import progress_document
    from kreassign.model import ReassignmentPlan, TopicPartitionReplica
    from tests.schema_check import check_document

    bootstrap = matrix_cluster.bootstrap_servers
    topic = f"tiered-{uuid.uuid4().hex[:8]}"
    # everything kept locally (-2: as retention.bytes, -1) until the run has measured the partition
    configs = {"remote.storage.enable": "true", "segment.bytes": str(1024 * 1024), "local.retention.bytes": "-2"}
    refused: list[Exception] = []

    def created() -> bool:  # a cluster just started may refuse it while its remote storage starts
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic(topic, replica_assignments={0: [1]}, topic_configs=configs)])
            return True
        except Exception as exc:
            refused.append(exc)
            return "TopicAlreadyExists" in type(exc).__name__
        finally:
            admin.close()

    assert wait_until(created, timeout=60, interval=1), refused
    port = KafkaCluster(bootstrap_servers=bootstrap)
    assert wait_until(lambda: topic in port.list_topic_names(), timeout=30)
    partition = TopicPartition(topic, 0)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": 1})
    for i in range(TIERED_BYTES // 1000):
        producer.produce(topic, value=os.urandom(1000), partition=0)  # incompressible: 30 MB on disk
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    plan = plan_file(tmp_path / "plan.json", topic, [[2]])
    run_args = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan]
    run_args += ["--max-partition-movements", "1", "--throttle", "500000"]
    err = tmp_path / "run.err"
    with err.open("w") as stderr:
        run = subprocess.Popen([sys.executable, "-m", "kreassign", *run_args], stdout=subprocess.PIPE, stderr=stderr, text=True)  # fmt: skip
    documents = []
    try:
        assert wait_until(lambda: "Started " in err.read_text() or run.poll() is not None, timeout=60), err.read_text()
        resource = ConfigResource(ResourceType.TOPIC, topic)
        port.incremental_alter_configs(
            {resource: [ConfigOp("local.retention.bytes", OpType.SET, str(LOCAL_RETENTION))]}
        )
        reassignment = ReassignmentPlan(((partition, (2,)),), {})
        while run.poll() is None:  # --progress meanwhile, as often as it reads (two samples 1 s apart)
            documents.append(progress_document(read_progress(port, reassignment)))
        held = port.replica_sizes([2], [partition]).get(TopicPartitionReplica(topic, 0, 2), 0)
    finally:
        if run.poll() is None:
            run.kill()
        out = run.communicate(timeout=60)[0]
        port.alter_reassignments(dict.fromkeys(port.list_reassignments([partition]), None))
        remove_throttles(port, [1, 2, 3, 4], [topic])
        port.close()
    assert run.returncode == 0, out + err.read_text()
    rows = [r for d in documents for p in d["partitions"] for r in p["replicas"] if r["status"] == "behind"]
    copied = re.search(r", ([\d.]+) (B|KiB|MiB|GiB) copied in ", out)
    assert copied, out
    moved = float(copied.group(1)) * UNITS[copied.group(2)]
    print(f"{len(documents)} --progress reads, rates {[r['rate_bytes_per_s'] for r in rows]}; the run: {copied[0]!r}; "
          f"the new replica holds {held} B")  # fmt: skip
    for document in documents:
        check_document(document)  # the schema says: no rate, size or ETA below 0
    assert rows, "no --progress read saw the copy"
    assert all(r[k] is None or r[k] >= 0 for r in rows for k in ("rate_bytes_per_s", "eta_s", "bytes_behind"))
    assert held - UNITS[copied.group(2)] / 10 <= moved < TIERED_BYTES / 2, (held, moved, out)  # printed to 0.1
