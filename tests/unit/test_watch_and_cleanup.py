"""What others do to a batched run (execution/watch.py) and how a run ends (execution/cleanup.py), on the
simulated cluster with its fake clock: a step cancelled by another client, a throttle removed by another client,
a topic deleted, the exact revert (Kafka keeps the cancelled step's order), the preferred leaders at the end,
and the registry of running runs that an Apache-form --cancel uses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution.journal import Journal
from kreassign.execution.registry import live_runs, register, registry_dir, unregister
from kreassign.execution.watch import METADATA_LAG_ALLOWANCE, RATES_NOT_REPORTED, Ended, ended_step
from kreassign.model import Broker, PartitionInfo, ReassignmentPlan, TopicPartition
from kreassign.planning.steps import Limits, Step

MB = 1_000_000
FOLLOWER_RATE = "follower.replication.throttled.rate"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


class Recorder:
    def __init__(self, on_progress=None):
        self.events: list[str] = []
        self.polls = 0
        self.on_progress = on_progress

    def event(self, message):
        self.events.append(message)

    def progress(self, progress):
        self.last = progress
        self.polls += 1
        if self.on_progress:
            self.on_progress(self.polls)


class Submitted(SimulatedCluster):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.submitted: list[tuple[TopicPartition, tuple[int, ...]]] = []

    def alter_reassignments(self, targets, allow_replication_factor_change=True):
        self.submitted += [(tp, tuple(t)) for tp, t in targets.items() if t is not None]
        return super().alter_reassignments(targets, allow_replication_factor_change)


def tp(p, topic="t"):
    return TopicPartition(topic, p)


def cluster() -> Submitted:
    return Submitted([Broker(i, None) for i in range(6)], bandwidth=10 * MB)


def run(sim, targets, tmp_path, limits, reporter, **options):
    out: list[str] = []
    outcome = execute_batched(
        sim,
        ExecuteRequest(
            ReassignmentPlan(tuple(targets.items())), limits=limits, journal_path=str(tmp_path / "j.json"), **options
        ),
        out.append,
        reporter,
        clock=sim.clock,
        sleep=sim.sleep,
    )
    return outcome, "".join(out)


def test_the_simulated_cluster_reverts_a_cancel_as_kafka_does():
    """Kafka drops the replicas being added and keeps the others in the reassignment's order."""
    sim = cluster()
    sim.add_topic("t", [(2, 3, 4)], size=MB)
    sim.alter_reassignments({tp(0): (1, 3, 4, 2)})
    assert sim.partitions[tp(0)].replicas == [1, 3, 4, 2]
    sim.alter_reassignments({tp(0): None})
    assert sim.partitions[tp(0)].replicas == [3, 4, 2]


def test_a_step_cancelled_by_another_client_stops_the_run_exactly_reverted_and_never_submitted_again(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)
    targets = {tp(p): (2, 1) for p in range(2)}  # a leader step: Kafka's revert would leave [1,0]

    def apache_cancel(n):  # another client cancels the step in flight, throttles kept (--preserve-throttles)
        if n == 3:
            assert sim.list_reassignments()
            sim.alter_reassignments(dict.fromkeys(sim.list_reassignments()))

    reporter = Recorder(apache_cancel)
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "cancelled"
    assert outcome.message == "step of t-0 cancelled by another client"
    assert "Batched reassignment cancelled (step of t-0 cancelled by another client)" in out
    # the step [0,1] -> [2,1,0] once, never again; then only the reorder back to the source's order; the run
    # went no further
    assert sim.submitted == [(tp(0), (2, 1, 0)), (tp(0), (0, 1))]
    assert sim.partitions[tp(0)].replicas == [0, 1] and sim.partitions[tp(0)].leader == 0  # the exact source
    assert sim.list_reassignments() == {} and sim.configs == {}
    journal = Journal(tmp_path / "j.json").load()
    assert journal.status == "cancelled" and journal.message == "step of t-0 cancelled by another client"
    assert journal.reverted == [tp(0)]
    assert any("cancelled by another client" in e for e in reporter.events)
    # replica lists are written one way in every line: [2,1,0], never [2, 1, 0] (issue 33)
    assert "t-0: its step to [2,1,0] was cancelled by another client (replicas are [1,0])" in reporter.events
    assert not [e for e in reporter.events if ", " in "".join(e.split("[")[1:]).split("]")[0]]


def test_a_cancel_that_keeps_the_source_order_counts_once_the_metadata_lag_allowance_is_over():
    step = Step(tp(0), (0, 1), (0, 2))  # merged [0,2,1]; Kafka's revert: [0,1], the source's order
    shown = PartitionInfo(0, (0, 1), (0, 1), 0)
    assert ended_step(step, shown, 0.0) is Ended.LAGGING  # a broker that has not learned the step's end
    assert ended_step(step, shown, METADATA_LAG_ALLOWANCE) is Ended.CANCELLED
    assert ended_step(Step(tp(0), (0, 1), (2, 1)), PartitionInfo(0, (1, 0), (1, 0), 1), 0.0) is Ended.CANCELLED
    assert ended_step(step, PartitionInfo(0, (0, 2, 1), (0, 1), 0), 1e9) is Ended.LAGGING  # shown under way
    assert ended_step(step, PartitionInfo(0, (0, 2), (0, 2), 0), 0.0) is Ended.DONE
    assert ended_step(step, PartitionInfo(0, (4, 5), (4, 5), 4), METADATA_LAG_ALLOWANCE) is Ended.MOVED


def test_the_own_cancel_puts_back_the_source_order_and_its_leader(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(2, 3, 4)] * 2, size=50 * MB)
    journal = Journal(tmp_path / "j.json")

    def cancel(n):
        if n == 2:
            journal.request(cancel=True, by="--cancel (pid 1)")

    reporter = Recorder(cancel)
    targets = {tp(p): (1, 3, 4) for p in range(2)}
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=2, replicas=1), reporter, throttle=MB)
    assert outcome.status == "cancelled" and outcome.message == "cancelled by --cancel (pid 1)"
    assert sorted(outcome.reverted) == [tp(0), tp(1)]
    for p in range(2):  # Kafka alone would leave [3,4,2], led by 2 with 3 preferred
        assert sim.partitions[tp(p)].replicas == [2, 3, 4] and sim.partitions[tp(p)].leader == 2
    assert any("putting back the source's order [2,3,4]" in e for e in reporter.events)
    assert sim.list_reassignments() == {} and sim.configs == {}


def test_a_signal_reverts_to_the_source_order_too(tmp_path):
    from kreassign.execution.signals import Interrupted

    sim = cluster()
    sim.add_topic("t", [(2, 3, 4)], size=50 * MB)

    def interrupt(n):
        if n == 2:
            raise Interrupted(15)

    outcome, _ = run(sim, {tp(0): (1, 3, 4)}, tmp_path, Limits(partitions=1), Recorder(interrupt), throttle=MB)
    assert outcome.status == "interrupted" and outcome.reverted == [tp(0)]
    assert sim.partitions[tp(0)].replicas == [2, 3, 4] and sim.partitions[tp(0)].leader == 2


def removal(resource_type, name, config):
    return {ConfigResource(resource_type, name): [ConfigOp(config, OpType.DELETE)]}


def test_a_broker_rate_removed_by_another_client_stops_the_run(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)

    def kafka_configs(n):  # kafka-configs --alter --delete-config follower.replication.throttled.rate
        if n == 3:
            sim.incremental_alter_configs(removal(ResourceType.BROKER, "2", FOLLOWER_RATE))

    reporter = Recorder(kafka_configs)
    outcome, _ = run(sim, {tp(p): (2, 1) for p in range(2)}, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    expected = f"throttle config {FOLLOWER_RATE} of broker 2 removed by another client"
    assert outcome.status == "cancelled" and outcome.message == expected
    assert outcome.reverted == [tp(0)] and sim.partitions[tp(0)].replicas == [0, 1]
    assert sim.list_reassignments() == {} and sim.configs == {}
    assert len(sim.submitted) == 2  # the step, and the reorder back to the source's order
    assert Journal(tmp_path / "j.json").load().message == expected


def test_a_topic_throttle_list_removed_by_another_client_stops_the_run(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)
    removed_at = []

    def kafka_configs(n):
        if n == 15:  # seconds after the run wrote the list
            sim.incremental_alter_configs(removal(ResourceType.TOPIC, "t", FOLLOWER_REPLICAS))
            removed_at.append(sim.now)

    outcome, _ = run(
        sim, {tp(p): (2, 1) for p in range(2)}, tmp_path, Limits(partitions=1), Recorder(kafka_configs), throttle=MB
    )
    assert outcome.status == "cancelled"
    assert outcome.message == f"throttle config {FOLLOWER_REPLICAS} of topic t removed by another client"
    assert sim.list_reassignments() == {} and sim.configs == {}
    assert outcome.elapsed - removed_at[0] <= 2.0  # seen at the next check (1 s), not left unthrottled


def test_a_throttle_the_run_has_just_written_is_not_taken_for_removed_while_brokers_learn_it(tmp_path):
    """A broker may answer DescribeConfigs with a value older than the run's last write: for THROTTLE_CONFIRM_S
    after a write, a missing value is the broker lagging, not another client."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3, size=10 * MB)

    class Lagging(Submitted):
        def describe_configs(self, resources):  # the topic lists read back without the last write, 1 s long
            answer = super().describe_configs(resources)
            for resource, values in answer.items():
                if resource.type is ResourceType.TOPIC and self.now - self.written < 1.0:
                    values.pop(FOLLOWER_REPLICAS, None)
            return answer

        def incremental_alter_configs(self, changes):
            if any(r.type is ResourceType.TOPIC for r in changes):
                self.written = self.now
            super().incremental_alter_configs(changes)

    sim.__class__ = Lagging
    sim.written = float("-inf")
    outcome, _ = run(sim, {tp(p): (2, 1) for p in range(3)}, tmp_path, Limits(partitions=1), Recorder(), throttle=MB)
    assert outcome.status == "completed" and sim.configs == {}


def test_a_rate_changed_by_another_client_is_kept_and_the_run_goes_on(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=20 * MB)

    def raise_rate(n):
        if n == 3:
            rate = ConfigResource(ResourceType.BROKER, "2")
            sim.incremental_alter_configs({rate: [ConfigOp(FOLLOWER_RATE, OpType.SET, str(5 * MB))]})

    reporter = Recorder(raise_rate)
    outcome, _ = run(sim, {tp(0): (2, 1)}, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "completed"
    # the operator's rate stays (docs/batched-runs.md), said once; the run's own rates went
    assert sim.configs == {ConfigResource(ResourceType.BROKER, "2"): {FOLLOWER_RATE: str(5 * MB)}}
    kept = [e for e in reporter.events if e.startswith("Kept ")]
    assert kept == [
        f"Kept {FOLLOWER_RATE} of broker 2 (5000000): changed by someone else after this run set it, it is theirs now"
    ]


def test_a_topic_deleted_during_the_run_is_dropped_and_the_run_goes_on_with_the_others(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3, size=20 * MB)
    sim.add_topic("u", [(0, 1)] * 3, size=20 * MB)
    targets = {tp(p, topic): (2, 1) for topic in "tu" for p in range(3)}

    def delete(n):
        if n == 3:
            sim.delete_topic("u")

    reporter = Recorder(delete)
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=2), reporter, throttle=5 * MB)
    assert outcome.status == "failed" and outcome.partitions_done == 3
    assert all(sim.partitions[tp(p)].replicas == [2, 1] for p in range(3))
    assert set(outcome.failures) == {tp(p, "u") for p in range(3)}
    assert set(outcome.failures.values()) == {"the topic was deleted during the run"}
    assert any(
        e.startswith("Topic u was deleted during the run: its 3 partition(s) are dropped") for e in reporter.events
    )
    assert not any("Clean-up incomplete" in e or "did not answer" in e for e in reporter.events)
    assert "Warning" not in out and sim.configs == {}
    assert outcome.elapsed < 60  # no wait for the stall timeout (300 s)
    # the display's total no longer counts what the deleted topic had left to copy
    assert reporter.last.bytes_total - outcome.bytes_moved < 20 * MB


def test_a_run_ends_with_preferred_leaders_elected_where_in_sync(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=20 * MB)

    def restart(n):  # broker 2 restarts once partition 0 has finished: another replica leads t-0 now
        if n == 20:
            assert sim.partitions[tp(0)].replicas == [2, 1]
            sim.stop_broker(2)
            sim.start_broker(2)
            assert sim.partitions[tp(0)].leader == 1

    reporter = Recorder(restart)
    outcome, _ = run(sim, {tp(p): (2, 1) for p in range(2)}, tmp_path, Limits(partitions=1), reporter, throttle=5 * MB)
    assert outcome.status == "completed"
    assert all(sim.partitions[tp(p)].leader == 2 for p in range(2))


def test_the_registry_lists_live_runs_of_a_plan_on_its_cluster_and_drops_stale_records(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    journal = Journal(tmp_path / "elsewhere" / "j.json")
    journal.check_location()
    # a live run on cluster c1: another process that holds the journal's lock and has registered
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from kreassign.execution.journal import Journal; "
            "from kreassign.execution.registry import register; j = Journal(sys.argv[1]); assert j.try_lock(); "
            "register('c1', 'abc', j, 'plan.json'); print('ready', flush=True); time.sleep(60)",
            str(journal.path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert holder.stdout.readline() == "ready\n"
        runs = live_runs("c1", "abc")
        assert [(r.pid, r.journal, r.plan_id) for r in runs] == [(holder.pid, journal.path.resolve(), "abc")]
        assert runs[0].plan_file == str((Path.cwd() / "plan.json").resolve())
        assert live_runs("c1") == runs  # every run of the cluster
        assert live_runs("c1", "other") == []
        assert live_runs("c2", "abc") == []  # the same plan on another cluster: not this run
    finally:
        holder.kill()
        holder.wait()
    assert live_runs("c1", "abc") == []  # its process is gone: stale, ignored and removed
    assert not list(registry_dir("c1").glob("abc-*.json"))
    dead = registry_dir("c2") / "other-999999999.json"  # a run of another plan and cluster killed with -9
    dead.parent.mkdir(parents=True)
    dead.write_text('{"pid": 999999999, "cluster_id": "c2", "journal": "/nowhere/j.json"}')
    own = register("c1", "abc", journal)  # this process's own record never counts (a cancel does not stop itself)
    assert not dead.exists()  # a run prunes the records of dead processes, of any plan and cluster
    assert own is not None and live_runs("c1", "abc") == []
    unregister(own)
    assert not own.exists()


def test_cancel_after_a_kill_puts_back_the_source_order(tmp_path):
    """kill -9, then --cancel --journal-file: the step left in flight is reverted to its source's exact order."""
    from kreassign.actions.batched_cancel import cancel_batched
    from tests.unit.test_executor import cluster as watched_cluster
    from tests.unit.test_executor import killed_after_polls

    limits = Limits(partitions=1)
    sim = watched_cluster(limits=limits)
    sim.add_topic("t", [(2, 3, 4)], size=100 * MB)
    targets = {tp(0): (1, 3, 4)}
    killed_after_polls(2, sim, targets, tmp_path, limits, throttle=MB)
    assert sim.list_reassignments() and sim.partitions[tp(0)].replicas == [1, 3, 4, 2]
    out: list[str] = []
    assert cancel_batched(sim, ReassignmentPlan(tuple(targets.items())), str(tmp_path / "j.json"), out.append)
    assert "reverted the steps in flight of t-0; throttles restored." in "".join(out)
    assert sim.partitions[tp(0)].replicas == [2, 3, 4] and sim.partitions[tp(0)].leader == 2  # Kafka: [3,4,2]
    assert sim.list_reassignments() == {} and sim.configs == {}


def test_the_apache_cancel_lists_the_steps_a_stopped_run_reverted_as_apache_would():
    """--cancel without --journal-file after stopping a run (stop_live_runs): nothing is active any more, and
    stdout is Apache's for the reassignments that were active when the cancel came."""
    from kreassign.actions.cancel import cancel_assignment

    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3)
    out: list[str] = []
    plan = ReassignmentPlan(tuple((tp(p), (2, 1)) for p in range(3)))
    cancel_assignment(sim, plan, preserve_throttles=True, timeout_ms=1000, out=out.append, cancelled_by_runs=[tp(1)])
    assert "".join(out) == (
        "Successfully cancelled partition reassignment for: t-1\nNone of the specified partition moves are active."
    )
    out.clear()
    cancel_assignment(sim, plan, preserve_throttles=True, timeout_ms=1000, out=out.append)
    assert "".join(out).startswith("None of the specified partition reassignments are active.\n")


def test_while_the_cluster_keeps_failing_the_run_says_so_every_30_s():
    """No minutes of silence after "retrying": a reminder every FAILING_REMINDER_S with the time left."""
    import tempfile
    from pathlib import Path

    from kreassign.errors import TransientClusterError

    class Failing(Submitted):
        failing_until = 0.0

        def describe_brokers(self):
            if self.now < self.failing_until:
                raise TransientClusterError("org.apache.kafka.common.errors.TimeoutException: no answer")
            return super().describe_brokers()

    sim = Failing([Broker(i, None) for i in range(6)], bandwidth=10 * MB)
    sim.add_topic("t", [(0, 1)], size=20 * MB)

    def outage(n):
        if n == 3:
            sim.failing_until = sim.now + 75

    reporter = Recorder(outage)
    outcome, _ = run(sim, {tp(0): (2, 1)}, Path(tempfile.mkdtemp()), Limits(partitions=1), reporter, throttle=5 * MB)
    assert outcome.status == "completed"
    reminders = [e for e in reporter.events if e.startswith("The cluster has not answered for")]
    assert [r.split(" ")[6] for r in reminders] == ["30", "60"], reporter.events
    assert "stopping in 270 s (--stall-timeout-ms)" in reminders[0]


def test_the_throttle_watch_does_not_ask_an_offline_broker(tmp_path):
    """A broker of a step in flight stops: its configs cannot be read; the run waits for it as before, with no
    "did not answer" from the watch, and finishes once it is back."""
    from kreassign.errors import ClusterTimeoutError

    class Strict(Submitted):
        def describe_configs(self, resources):
            resources = list(resources)
            if any(r.type is ResourceType.BROKER and int(r.name) in self.offline for r in resources):
                raise ClusterTimeoutError("Timed out waiting for a node assignment. Call: describeConfigs")
            return super().describe_configs(resources)

    sim = Strict([Broker(i, None) for i in range(6)], bandwidth=10 * MB)
    sim.add_topic("t", [(0, 1)], size=50 * MB)

    def outage(n):
        if n == 3:
            sim.stop_broker(2)
        if n == 30:
            sim.start_broker(2)

    reporter = Recorder(outage)
    outcome, _ = run(sim, {tp(0): (2, 1)}, tmp_path, Limits(partitions=1), reporter, throttle=5 * MB)
    assert outcome.status == "completed", reporter.events
    assert not any("did not answer" in e for e in reporter.events), reporter.events
    assert "Broker 2 is offline; steps that need it wait" in reporter.events


def test_resume_then_cancel_puts_back_the_source_order(tmp_path):
    """kill -9, the same command again (it adopts the step left in flight), then --cancel: exact revert."""
    from tests.unit.test_executor import cluster as watched_cluster
    from tests.unit.test_executor import killed_after_polls

    limits = Limits(partitions=1)
    sim = watched_cluster(limits=limits)
    sim.add_topic("t", [(2, 3, 4)], size=100 * MB)
    targets = {tp(0): (1, 3, 4)}
    killed_after_polls(2, sim, targets, tmp_path, limits, throttle=MB)
    assert sim.partitions[tp(0)].replicas == [1, 3, 4, 2]
    journal = Journal(tmp_path / "j.json")

    def cancel(n):
        if n == 2:
            journal.request(cancel=True)

    reporter = Recorder(cancel)
    outcome, _ = run(sim, targets, tmp_path, limits, reporter, throttle=MB)
    assert "Resumed 1 step(s) left in flight by the previous run" in reporter.events
    assert outcome.status == "cancelled" and outcome.reverted == [tp(0)]
    assert sim.partitions[tp(0)].replicas == [2, 3, 4] and sim.partitions[tp(0)].leader == 2
    assert sim.list_reassignments() == {} and sim.configs == {}


def test_a_rate_removed_from_a_broker_with_nothing_in_flight_stops_the_run_before_its_next_step(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=20 * MB)

    def kafka_configs(n):  # broker 3 copies nothing yet (t-0 moves to 2): its rate goes
        if n == 3:
            sim.incremental_alter_configs(removal(ResourceType.BROKER, "3", FOLLOWER_RATE))

    targets = {tp(0): (2, 1), tp(1): (3, 1)}
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1), Recorder(kafka_configs), throttle=5 * MB)
    assert outcome.status == "cancelled"
    assert outcome.message == f"throttle config {FOLLOWER_RATE} of broker 3 removed by another client"
    assert not any(t == tp(1) for t, _ in sim.submitted)  # t-1's step never started unthrottled
    assert sim.list_reassignments() == {} and sim.configs == {}


def test_a_cancelled_step_that_lagging_metadata_still_shows_under_way_is_not_taken_for_done(tmp_path):
    """A step that adds a replica and drops none ([0,1] -> [2,1,0]) shows its target as its replicas while it
    runs: a broker whose metadata lags behind another client's cancel still shows [2,1,0]. Only an ISR holding
    every target replica says the step finished (the controller ends a reassignment only then); taken for done,
    the cancelled step was counted, its election elected the reverted partition's first replica, and the
    partition stayed at Kafka's [1,0] (seen on the real cluster with Apache's own --cancel)."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)
    targets = {tp(p): (2, 1) for p in range(2)}
    lagging_reads = []

    class Lagging(Submitted):
        def describe_topics(self, topics):
            described = super().describe_topics(topics)
            if lagging_reads and "t" in described:
                lagging_reads.pop()
                infos = described["t"]
                infos[0] = PartitionInfo(0, (2, 1, 0), (1, 0), 0)  # the step under way, 2 not yet in sync
            return described

    sim.__class__ = Lagging

    def apache_cancel(n):
        if n == 3:
            assert sim.list_reassignments()
            sim.alter_reassignments(dict.fromkeys(sim.list_reassignments()))
            lagging_reads.extend([1] * 4)

    reporter = Recorder(apache_cancel)
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "cancelled", out
    assert outcome.message == "step of t-0 cancelled by another client"
    assert sim.submitted == [(tp(0), (2, 1, 0)), (tp(0), (0, 1))]
    assert sim.partitions[tp(0)].replicas == [0, 1] and sim.partitions[tp(0)].leader == 0
    assert Journal(tmp_path / "j.json").load().reverted == [tp(0)]


def test_brokers_that_never_report_their_throttle_rates_do_not_stop_the_run(tmp_path):
    """A Kafka 2.4 broker leaves follower/leader.replication.throttled.rate out of DescribeConfigs (seen in the
    broker matrix): a rate the brokers never show is not taken for one removed by another client, and the run
    ends (it was cancelled after its first steps before). The run says once that it cannot watch the rates."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 4, size=20 * MB)

    class WithoutRates(Submitted):
        def describe_configs(self, resources):
            described = super().describe_configs(resources)
            return {r: ({} if r.type is ResourceType.BROKER else v) for r, v in described.items()}

    sim.__class__ = WithoutRates
    targets = {tp(p): (2 + p % 3, 1) for p in range(4)}
    reporter = Recorder()
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=1), reporter, throttle=5 * MB)
    assert outcome.status == "completed", outcome.message
    assert sim.list_reassignments() == {}
    # one line, for the whole run (it polled many times), never on stdout
    assert reporter.events.count(RATES_NOT_REPORTED) == 1, reporter.events
    assert RATES_NOT_REPORTED not in out


def test_brokers_that_report_their_throttle_rates_are_not_said_to_lack_them(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 4, size=20 * MB)
    targets = {tp(p): (2 + p % 3, 1) for p in range(4)}
    reporter = Recorder()
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1), reporter, throttle=5 * MB)
    assert outcome.status == "completed", outcome.message
    assert RATES_NOT_REPORTED not in reporter.events
