"""A batched run of a plan that names log dirs, against the simulated cluster (which follows Kafka: a dir
named for a replica not hosted yet is where the broker creates it, a preference a restarted broker forgets;
a hosted replica moves between dirs at the log-dir rate). The live test is tests/integration/test_jbod_live.py."""

from __future__ import annotations

import pytest

from kreassign.errors import CommandError
from kreassign.execution.signals import Interrupted
from kreassign.model import Broker, TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import Limits
from tests.unit.test_executor import Recorder, killed_after_polls
from tests.unit.test_executor import run as batched

MB = 1_000_000


class Sim:
    """The simulated cluster, with brokers 0-3, broker 3 on two dirs /a and /b."""

    @staticmethod
    def make(bandwidth: float = 10 * MB):
        from kreassign.cluster.simulated import SimulatedCluster

        sim = SimulatedCluster([Broker(i, None) for i in range(4)], bandwidth=bandwidth)
        sim.set_log_dirs(3, ["/a", "/b"])
        return sim


def run(sim, targets, dirs, tmp_path, reporter=None, **options):
    """``dirs``: (partition, broker) -> the dir the plan names."""
    log_dirs = {TopicPartitionReplica(tp.topic, tp.partition, b): d for (tp, b), d in dirs.items()}
    return batched(sim, targets, tmp_path, Limits(partitions=1), reporter, log_dirs, **options)


def tp(p):
    return TopicPartition("t", p)


def where(sim, p, broker):
    (info,) = sim.describe_replica_log_dirs([TopicPartitionReplica("t", p, broker)]).values()
    return info.current, info.future


def test_new_replicas_are_created_in_their_dir_and_kept_ones_moved_there(tmp_path):
    sim = Sim.make()
    sim.add_topic("t", [(0, 1), (1, 3), (2, 0)], size=20 * MB)
    assert where(sim, 1, 3) == ("/a", None)
    targets = {tp(0): (0, 3), tp(1): (1, 3), tp(2): (2, 0)}
    recorder = Recorder()
    outcome, out = run(sim, targets, {(tp(0), 3): "/b", (tp(1), 3): "/b"}, tmp_path, recorder)
    assert outcome.status == "completed", out
    assert "2 replica(s) go to the log dir the plan names." in out
    assert where(sim, 0, 3) == ("/b", None) and where(sim, 1, 3) == ("/b", None)
    # t-0's replica was named before its step (no move after), t-1's was on broker 3 already: moved
    assert [e for e in recorder.events if "log dir" in e] == [
        "Moving t-1 on broker 3 to log dir /b",
        "t-1 on broker 3 is in log dir /b",
    ]
    named = sim.calls.index("alter_replica_log_dirs [('t-0-3', '/b')]")
    assert named < sim.calls.index("alter_reassignments [('t-0', (0, 3))]")


def test_a_broker_restarted_before_the_step_forgets_the_dir_and_the_replica_is_moved_after(tmp_path):
    sim = Sim.make()
    sim.add_topic("t", [(0, 1)], size=20 * MB)

    original = sim.alter_replica_log_dirs

    def forgetting(moves):
        accepted = original(moves)
        sim.stop_broker(3)
        sim.start_broker(3)  # the broker restarts between the preference and the step: it forgets it
        return accepted

    sim.alter_replica_log_dirs = forgetting
    recorder = Recorder()
    outcome, out = run(sim, {tp(0): (0, 3)}, {(tp(0), 3): "/b"}, tmp_path, recorder)
    assert outcome.status == "completed", out
    assert where(sim, 0, 3) == ("/b", None)
    assert "Moving t-0 on broker 3 to log dir /b" in recorder.events


def test_an_interrupted_run_stops_the_log_dir_moves_in_flight(tmp_path):
    sim = Sim.make(bandwidth=1 * MB)  # 20 s per copy, between dirs too
    sim.add_topic("t", [(1, 3)], size=20 * MB)

    def interrupt(n):
        if sim.dir_moves:
            raise Interrupted(2)

    outcome, out = run(sim, {tp(0): (1, 3)}, {(tp(0), 3): "/b"}, tmp_path, Recorder(interrupt))
    assert outcome.status == "interrupted", out
    assert where(sim, 0, 3) == ("/a", None) and not sim.dir_moves
    assert "alter_replica_log_dirs [('t-0-3', '/a')]" in sim.calls  # moved to the dir it is in: stopped


def test_a_run_resumed_after_a_crash_finishes_the_dir_moves(tmp_path):
    sim = Sim.make(bandwidth=1 * MB)
    sim.add_topic("t", [(1, 3), (0, 1)], size=20 * MB)
    targets = {tp(0): (1, 3), tp(1): (0, 1)}
    dirs = {(tp(0), 3): "/b"}
    log_dirs = {TopicPartitionReplica("t", 0, 3): "/b"}
    killed_after_polls(3, sim, targets, tmp_path, Limits(partitions=1), log_dirs=log_dirs)
    assert where(sim, 0, 3)[1] == "/b"  # the move the dead run started goes on
    outcome, out = run(sim, targets, dirs, tmp_path)
    assert outcome.status == "completed", out
    assert where(sim, 0, 3) == ("/b", None)


def test_a_dir_the_broker_lacks_is_refused_before_anything_changes(tmp_path):
    sim = Sim.make()
    sim.add_topic("t", [(0, 1)], size=20 * MB)
    with pytest.raises(
        CommandError,
        match=r"The plan puts t-0 in log dir /c of broker 3, which has no such log dir \(its log dirs: /a, /b\); nothing was changed",
    ):
        run(sim, {tp(0): (0, 3)}, {(tp(0), 3): "/c"}, tmp_path, throttle=MB)
    assert sim.calls == [] and sim.configs == {}
    assert not (tmp_path / "j.json").exists()
