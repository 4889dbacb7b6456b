"""Faults during batched, throttled runs on real clusters: brokers and the active controller stopped mid-run,
SIGINT / SIGTERM / SIGKILL of kreassign at seeded random moments, reassignments started by someone else.

After every fault the same command converges to the target, no throttle config is left behind, and every
message produced with acks=all can still be consumed (counted per partition).
"""

from __future__ import annotations

import random
import signal
import time

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.devcluster.cluster import LocalKafkaCluster
from kreassign.devcluster.topics import count_messages, create_topic
from kreassign.model import TopicPartition
from tests.integration.clusters import discard
from tests.integration.differential import run_apache, run_ours, wait_until
from tests.integration.test_batched import batched, start, state, throttles, throttles_once_applied, write_plan

pytestmark = pytest.mark.integration
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


@pytest.fixture(scope="module")
def port5(kafka_cluster5):
    port = KafkaCluster(bootstrap_servers=kafka_cluster5.bootstrap_servers)
    yield port
    port.close()


@pytest.fixture(scope="module")
def ha_cluster(tmp_path_factory):
    """3 brokers and 3 dedicated KRaft controllers, for controller failover."""
    cluster = LocalKafkaCluster(tmp_path_factory.mktemp("kafka-ha"), brokers=3, controllers=3)
    cluster.start()
    yield cluster
    discard(cluster)


def moving(port: KafkaCluster, topic: str, partitions: int) -> dict:
    return port.list_reassignments([TopicPartition(topic, p) for p in range(partitions)])


def at_target(port, topic, target) -> bool:
    return state(port, topic) == {p: (tuple(r), r[0]) for p, r in target.items()}


def test_a_destination_broker_stopped_mid_run_stalls_the_run_which_finishes_when_it_is_back(
    kafka_cluster5, port5, tmp_path
):
    bootstrap = kafka_cluster5.bootstrap_servers
    topic = "fault-broker"
    # 2 MB a partition at 100 KB/s: after Kafka's first burst (about 10 s worth of the rate) each copy
    # still takes seconds, so broker 4 goes away while a step needs it
    create_topic(bootstrap, topic, [[1, 2]] * 4, messages=8000, size=1000)
    target = {p: [1, 4] if p % 2 == 0 else [2, 3] for p in range(4)}
    plan = write_plan(tmp_path / "plan.json", topic, target)
    proc = start(
        batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "2", "--throttle", "100000")
    )
    try:
        assert wait_until(lambda: TopicPartition(topic, 0) in moving(port5, topic, 4), timeout=60, interval=0.1)
        kafka_cluster5.stop_node(4)
        # the cluster fences a stopped broker within seconds; the run sees it at its next poll
        assert wait_until(lambda: 4 not in {b.id for b in port5.describe_brokers()}, timeout=60, interval=0.2)
        time.sleep(3)
        assert proc.poll() is None, "the run must wait for the broker, not fail"
        kafka_cluster5.start_node(4)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        proc.kill()
        kafka_cluster5.start_node(4)
    assert proc.returncode == 0, stdout + stderr
    assert "Broker 4 is offline; steps that need it wait" in stderr
    assert "Broker 4 is back" in stderr
    assert at_target(port5, topic, target)
    assert throttles(port5, [topic]) == {}
    assert count_messages(bootstrap, topic, 4) == dict.fromkeys(range(4), 2000)


def test_a_broker_that_stays_away_ends_the_run_cleanly_and_the_journal_resumes_later(kafka_cluster5, port5, tmp_path):
    bootstrap = kafka_cluster5.bootstrap_servers
    topic = "fault-broker-gone"
    create_topic(bootstrap, topic, [[1, 2]] * 2, messages=2000, size=1000)
    target = {0: [1, 5], 1: [2, 5]}
    plan = write_plan(tmp_path / "plan.json", topic, target)
    args = batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "1", "--throttle", "50000")
    proc = start([*args, "--stall-timeout-ms", "8000"])
    try:
        assert wait_until(lambda: moving(port5, topic, 2), timeout=60)
        kafka_cluster5.stop_node(5)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 1, stdout + stderr
        assert "Error: broker 5 has been offline for" in stdout
        assert "Run the same command again to resume" in stdout
        assert moving(port5, topic, 2) == {}
        # broker 5 cannot be asked (nor changed) while stopped: its rates wait for the resume
        assert throttles(port5, [topic], brokers=[1, 2, 3, 4]) == {}
    finally:
        proc.kill()
        kafka_cluster5.start_node(5)
        wait_until(lambda: 5 in {b.id for b in port5.describe_brokers()}, timeout=60)
    result = run_ours(args, timeout=180)
    assert result.code == 0, result.stdout + result.stderr
    assert "Resuming the batched run of this plan that " in result.stdout
    assert at_target(port5, topic, target)
    assert count_messages(bootstrap, topic, 2) == {0: 1000, 1: 1000}


def test_the_run_survives_the_active_controller_being_stopped(ha_cluster, tmp_path):
    bootstrap = ha_cluster.bootstrap_servers
    port = KafkaCluster(bootstrap_servers=bootstrap)
    try:
        topic = "fault-controller"
        create_topic(bootstrap, topic, [[1, 2]] * 4, messages=4000, size=1000)
        target = {p: [3, 1] if p % 2 == 0 else [2, 3] for p in range(4)}
        plan = write_plan(tmp_path / "plan.json", topic, target)
        args = batched(bootstrap, plan, tmp_path / "j.json", "--max-partition-movements", "1")
        proc = start([*args, "--max-replica-movements", "1", "--throttle", "200000"])
        try:
            assert wait_until(lambda: moving(port, topic, 4), timeout=60)
            leader = ha_cluster.active_controller()
            ha_cluster.stop_node(leader)
            assert wait_until(lambda: ha_cluster.active_controller() != leader, timeout=60)
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            proc.kill()
            ha_cluster.start_node(leader)
        assert proc.returncode == 0, stdout + stderr
        assert at_target(port, topic, target)
        assert throttles(port, [topic], brokers=[1, 2, 3]) == {}
        assert count_messages(bootstrap, topic, 4) == dict.fromkeys(range(4), 1000)
    finally:
        port.close()


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)


def test_signals_at_12_seeded_moments_always_converge_and_leave_no_throttle(kafka_cluster5, port5, tmp_path):
    """SIGINT, SIGTERM and SIGKILL in turn, each 4 times, at a seeded moment of a batched run (0.2 to 4 s in);
    then the rerun resumes to the target and leaves no throttle (21 moments took 330 s of the suite's time)."""
    bootstrap = kafka_cluster5.bootstrap_servers
    topic = "fault-signals"
    create_topic(bootstrap, topic, [[1, 2]] * 4, messages=4000, size=500)
    layouts = [{p: [1, 2] for p in range(4)}, {p: [3, 4] for p in range(4)}, {p: [5, 1] for p in range(4)}]
    rng = random.Random(435)
    report = []
    for i in range(12):
        signum = SIGNALS[i % 3]
        target = layouts[(i + 1) % 3]
        plan = write_plan(tmp_path / f"plan-{i}.json", topic, target)
        journal = tmp_path / f"j-{i}.json"
        args = batched(bootstrap, plan, journal, "--max-partition-movements", "2", "--max-replica-movements", "1")
        proc = start([*args, "--throttle", "150000"])
        delay = rng.uniform(0.2, 4.0)
        time.sleep(delay)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=120)
        if signum != signal.SIGKILL:
            # the process has exited: no throttle of ours may be left, and nothing of ours moving
            assert throttles_once_applied(port5, [topic]) == {}, (i, signum, stdout, stderr)
            assert moving(port5, topic, 4) == {}, (i, signum, stdout)
            # 0: it had finished; 128+n: it stopped itself; -n: the signal came before Python set up the
            # handler (nothing had been changed yet)
            if proc.returncode not in (0, 128 + signum, -signum):
                pytest.fail(f"run {i} ({signum.name}) exited {proc.returncode}:\n{stdout[-2000:]}\n{stderr[-2000:]}")
            assert "Traceback" not in stderr
        result = run_ours(args, timeout=180)
        assert result.code == 0, (i, signum, result.stdout, result.stderr)
        assert at_target(port5, topic, target), (i, signum)
        assert throttles_once_applied(port5, [topic]) == {}, (i, signum, "the resume must clear what a killed run left")
        report.append((signum.name, round(delay, 2), proc.returncode))
    assert count_messages(bootstrap, topic, 4) == dict.fromkeys(range(4), 1000)
    assert len(report) == 12


def test_someone_elses_reassignments_are_left_alone_or_reported(kafka_cluster5, port5, tmp_path):
    """An Apache-tool reassignment of another topic runs all along (throttled): our run, with --additional,
    leaves it and its throttles alone. Mid-run, someone reassigns a partition of our plan (slowed by a
    throttle of their own): our run reports it, leaves it alone, finishes the rest, exits 1."""
    bootstrap = kafka_cluster5.bootstrap_servers
    other, ours = "external-other", "external-ours"
    create_topic(bootstrap, other, [[1, 2]] * 2, messages=2000, size=1000)
    create_topic(bootstrap, ours, [[3, 4]] * 3, messages=6000, size=1000)
    other_plan = write_plan(tmp_path / "other.json", other, {0: [1, 5], 1: [2, 5]})
    started = run_apache(
        ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", other_plan, "--throttle", "30000"]
    )
    assert started.code == 0, started.stdout
    # their throttle for their own move of external-ours-2 to broker 5, set before our run
    theirs = {ConfigResource(ResourceType.TOPIC, ours): [ConfigOp(FOLLOWER_REPLICAS, OpType.SET, "2:5")]}
    port5.incremental_alter_configs(theirs)
    idle = TopicPartition(ours, 2)
    try:
        # a broker applies a config change a moment after the controller accepts it
        assert wait_until(
            lambda: throttles(port5, [ours]).get(f"topic:{ours}") == {FOLLOWER_REPLICAS: "2:5"}, timeout=30
        )
        before = throttles(port5, [other, ours])
        our_target = {0: [3, 1], 1: [4, 2], 2: [3, 2]}
        our_plan = write_plan(tmp_path / "ours.json", ours, our_target)
        args = batched(
            bootstrap, our_plan, tmp_path / "j.json", "--max-partition-movements", "1", "--throttle", "200000"
        )
        proc = start([*args, "--additional"])
        try:
            assert wait_until(lambda: TopicPartition(ours, 0) in moving(port5, ours, 3), timeout=60, interval=0.1)
            assert port5.alter_reassignments({idle: [5, 4, 3]}) == {}
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            proc.kill()
        assert proc.returncode == 1, stdout + stderr
        assert f"{idle}: is being reassigned by someone else (to [5,4,3])" in stdout
        assert idle in port5.list_reassignments(), "their reassignment was left running"
        assert {p: s for p, s in state(port5, ours).items() if p != 2} == {0: ((3, 1), 3), 1: ((4, 2), 4)}
        # our clean-up left the other reassignments' throttles as they were
        assert throttles(port5, [other, ours]) == before
    finally:
        port5.alter_reassignments({idle: None})
        wait_until(lambda: not port5.list_reassignments(), timeout=180, interval=1)
        run_ours(["--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", other_plan])
        port5.incremental_alter_configs(
            {r: [ConfigOp(op.name, OpType.DELETE) for op in ops] for r, ops in theirs.items()}
        )
    assert count_messages(bootstrap, other, 2) == {0: 1000, 1: 1000}
    assert count_messages(bootstrap, ours, 3) == dict.fromkeys(range(3), 2000)
    assert throttles(port5, [other, ours]) == {}
