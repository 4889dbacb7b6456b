"""Throttles by ownership (issue 39), on the simulated cluster with its fake clock: a run removes or restores only
what it wrote and still holds, never a throttle that still protects a reassignment in flight (whoever submitted
it), several runs on one cluster hand a broker's rates back in order (the last one out restores the value from
before the first), someone else's reassignment to the plan's target is the plan's progress, a cancel touches only
the journal's own steps, and the run's last count agrees with the cluster's."""

from __future__ import annotations

import pytest

from kreassign.actions.batched import execute_batched
from kreassign.actions.batched_cancel import cancel_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.errors import CommandError
from kreassign.execution.journal import Journal
from kreassign.execution.signals import Interrupted
from kreassign.execution.throttles import ThrottleLifecycle, record_throttles
from kreassign.model import ReassignmentPlan
from kreassign.planning.steps import Limits
from tests.unit.test_executor import MB, Recorder, cluster, killed_after_polls, run, tp

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"


def broker(b) -> ConfigResource:
    return ConfigResource(ResourceType.BROKER, str(b))


def topic(name="t") -> ConfigResource:
    return ConfigResource(ResourceType.TOPIC, name)


def set_config(sim, resource, **values) -> None:
    """``kafka-configs --alter --add-config`` (keys with dots given with underscores)."""
    sim.incremental_alter_configs(
        {resource: [ConfigOp(k.replace("_", "."), OpType.SET, str(v)) for k, v in values.items()]}
    )


# ---------------------------------------------------------------- 1: what the run wrote, and still holds


def test_the_journal_records_what_the_run_wrote_beside_what_was_there_before(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=50 * MB)
    set_config(sim, broker(2), follower_replication_throttled_rate=7 * MB)  # the operator's, before the run
    killed_after_polls(2, sim, {tp(0): (2, 1)}, tmp_path, Limits(partitions=1), throttle=MB)
    state = Journal(tmp_path / "j.json").load()
    assert state.recorded_throttles["broker"]["2"][FOLLOWER_RATE] == str(7 * MB)
    assert state.throttles_written["broker"]["2"] == {LEADER_RATE: str(MB), FOLLOWER_RATE: str(MB)}
    assert state.throttles_written["topic"]["t"] == {LEADER_REPLICAS: ["0:0", "0:1"], FOLLOWER_REPLICAS: ["0:2"]}


def test_a_resume_keeps_a_rate_and_a_list_entry_someone_else_set_after_the_crash(tmp_path):
    """Before: the resume took every difference from the record as the dead run's own and removed it."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)
    targets = {tp(p): (2, 1) for p in range(2)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    # while the run is dead: the operator raises broker 2's rate, and throttles a move of their own of t-5
    set_config(sim, broker(2), follower_replication_throttled_rate=9 * MB)
    current = sim.configs[topic()][FOLLOWER_REPLICAS]
    set_config(sim, topic(), follower_replication_throttled_replicas=current + ",5:4")
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    assert outcome.status == "completed"
    assert sim.configs == {broker(2): {FOLLOWER_RATE: str(9 * MB)}, topic(): {FOLLOWER_REPLICAS: "5:4"}}


def test_a_cancel_after_a_crash_keeps_a_rate_someone_else_changed(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=50 * MB)
    targets = {tp(0): (2, 1)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    set_config(sim, broker(1), leader_replication_throttled_rate=3 * MB)
    out: list[str] = []
    cancel_batched(sim, ReassignmentPlan(tuple(targets.items())), str(tmp_path / "j.json"), out.append)
    assert sim.configs == {broker(1): {LEADER_RATE: str(3 * MB)}}
    assert f"Kept {LEADER_RATE} of broker 1 (3000000): changed by someone else" in "".join(out)
    assert Journal(tmp_path / "j.json").load().throttles_written == {}


def test_a_journal_of_an_earlier_version_resumes_with_what_that_run_wrote_guessed(tmp_path):
    """Journals written before this version do not say what the run wrote: its rate on the brokers it recorded and
    the entries of its steps in flight are taken as its own; a rate someone else set meanwhile is not."""
    import json

    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=50 * MB)
    targets = {tp(p): (2, 1) for p in range(2)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    journal = Journal(tmp_path / "j.json")
    journal.save(journal.load())
    data = json.loads(journal.path.read_text())
    del data["throttles_written"]
    journal.path.write_text(json.dumps(data))
    set_config(sim, broker(3), follower_replication_throttled_rate=4 * MB)  # not the plan's: never recorded
    set_config(sim, broker(1), follower_replication_throttled_rate=6 * MB)  # the plan's, changed by someone
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    assert outcome.status == "completed"
    assert sim.configs == {broker(3): {FOLLOWER_RATE: str(4 * MB)}, broker(1): {FOLLOWER_RATE: str(6 * MB)}}


def test_throttle_auto_moving_its_rates_leaves_one_someone_else_changed_to_them():
    """--throttle auto re-measures and moves its rates: a rate an operator changed since is theirs, neither
    overwritten at the next move nor removed at the end."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=MB)
    events: list[str] = []
    lifecycle = ThrottleLifecycle(sim, record_throttles(sim, ["t"], [1, 2]), sim.clock, event=events.append)
    lifecycle.set_rates([1, 2], MB, -1, respect_others=True)
    set_config(sim, broker(2), follower_replication_throttled_rate=5 * MB)
    lifecycle.set_rates([1, 2], 2 * MB, -1, respect_others=True)  # the re-measure
    assert sim.configs[broker(1)] == {LEADER_RATE: str(2 * MB), FOLLOWER_RATE: str(2 * MB)}
    assert sim.configs[broker(2)] == {LEADER_RATE: str(2 * MB), FOLLOWER_RATE: str(5 * MB)}
    lifecycle.restore()
    assert sim.configs == {broker(2): {FOLLOWER_RATE: str(5 * MB)}}
    assert events == [
        f"Kept {FOLLOWER_RATE} of broker 2 (5000000): changed by someone else after this run set it, it is theirs now"
    ]


# ---------------------------------------------------------------- 2: nothing removed while what it throttles moves


def test_the_end_of_a_run_keeps_the_rates_that_still_hold_back_someone_elses_throttled_copies(tmp_path):
    """Someone else's reassignment (throttled with list entries of theirs, no rate of theirs) copies into broker 2
    and out of broker 0 when our run ends: our rates there stay, the others go, and the run says so."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=5 * MB)
    sim.add_topic("u", [(0, 3)], size=500 * MB)

    def apache(n):
        if n == 2:
            set_config(sim, topic("u"), leader_replication_throttled_replicas="0:0,0:3")
            set_config(sim, topic("u"), follower_replication_throttled_replicas="0:2")
            assert sim.alter_reassignments({tp(0, "u"): (2, 3)}) == {}

    reporter = Recorder(apache)
    outcome, _ = run(sim, {tp(0): (2, 1)}, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "completed"
    assert tp(0, "u") in sim.list_reassignments()
    assert sim.configs == {
        broker(0): {LEADER_RATE: str(MB)},
        broker(2): {FOLLOWER_RATE: str(MB)},
        topic("u"): {LEADER_REPLICAS: "0:0,0:3", FOLLOWER_REPLICAS: "0:2"},
    }
    kept = [e for e in reporter.events if e.startswith("Kept the throttle rates")]
    assert kept == [
        "Kept the throttle rates of broker(s) 0,2: reassignments this run did not submit still copy under them "
        "(u-0). A --verify of their plan removes them once those complete (the Apache tool's too), or the next run "
        "of this plan does"
    ]


def test_a_cancel_after_a_crash_keeps_the_rates_under_someone_elses_throttled_copies(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=100 * MB)
    sim.add_topic("u", [(0, 3)], size=500 * MB)
    targets = {tp(0): (2, 1)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    set_config(sim, topic("u"), follower_replication_throttled_replicas="0:2")
    assert sim.alter_reassignments({tp(0, "u"): (2, 3)}) == {}
    out: list[str] = []
    cancel_batched(sim, ReassignmentPlan(tuple(targets.items())), str(tmp_path / "j.json"), out.append)
    assert sim.configs == {broker(2): {FOLLOWER_RATE: str(MB)}, topic("u"): {FOLLOWER_REPLICAS: "0:2"}}
    assert "Kept the throttle rates of broker(s) 2: reassignments this run did not submit still copy" in "".join(out)
    assert Journal(tmp_path / "j.json").load().throttles_written == {"broker": {"2": {FOLLOWER_RATE: str(MB)}}}


def live_run_throttles(sim, journal: Journal, run_topic: str, rate: int) -> ThrottleLifecycle:
    """The throttles of a live run (its journal's lock held) of a plan of ``run_topic``, its rates set on brokers
    0-2, holding them in the claims shared by the runs of the cluster."""
    from kreassign.execution.throttle_claims import claims_for

    journal.check_location()
    assert journal.try_lock()  # alive
    journal.path.write_text("{}")
    recorded = record_throttles(sim, [run_topic], [0, 1, 2])
    lifecycle = ThrottleLifecycle(sim, recorded, sim.clock, claims=claims_for(sim, journal.path))
    lifecycle.set_rates([0, 1, 2], rate, -1)
    return lifecycle


def test_two_live_runs_on_one_broker_the_last_one_out_restores_the_value_from_before_the_first(tmp_path):
    """Run A sets broker 2's rates, run B (another plan) sets them too while A goes on. Whichever ends first
    leaves the other's rate in place; the last one out puts back the operator's value from before both."""
    for first_out in ("A", "B"):
        sim = cluster()
        sim.add_topic("t", [(0, 1)], size=50 * MB)
        sim.add_topic("u", [(0, 1)], size=50 * MB)
        set_config(sim, broker(2), follower_replication_throttled_rate=20 * MB)  # the operator's
        a = Journal(tmp_path / first_out / "a.json")
        b = Journal(tmp_path / first_out / "b.json")
        runs = {"A": live_run_throttles(sim, a, "t", MB), "B": live_run_throttles(sim, b, "u", 2 * MB)}
        assert sim.configs[broker(2)] == {FOLLOWER_RATE: str(2 * MB), LEADER_RATE: str(2 * MB)}
        second_out = "B" if first_out == "A" else "A"
        runs[first_out].restore()
        # still throttled at the rate of the run that goes on
        expected = {"A": str(MB), "B": str(2 * MB)}[second_out]
        assert sim.configs[broker(2)] == {FOLLOWER_RATE: expected, LEADER_RATE: expected}
        runs[second_out].restore()
        assert sim.configs == {broker(2): {FOLLOWER_RATE: str(20 * MB)}}
        a.unlock()
        b.unlock()


def test_a_run_that_ends_inside_another_leaves_the_other_throttled_and_the_other_restores_all(tmp_path):
    """Two batched runs of two plans on the same brokers: the second starts and ends while the first goes on;
    the first's copies stay throttled (before, the second's end deleted the rates and the first stopped with
    "removed by another client"), and the first's end leaves nothing."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3, size=40 * MB)
    sim.add_topic("u", [(0, 1)], size=5 * MB)
    inner: list = []

    def second_run(n):
        if n == 3:
            out: list[str] = []
            inner.append(
                execute_batched(
                    sim,
                    ExecuteRequest(
                        ReassignmentPlan(((tp(0, "u"), (2, 1)),)),
                        limits=Limits(partitions=1),
                        journal_path=str(tmp_path / "u.json"),
                        throttle=MB,
                        additional=True,
                    ),
                    out.append,
                    Recorder(),
                    clock=sim.clock,
                    sleep=sim.sleep,
                )
            )
            assert sim.configs[broker(2)] == {LEADER_RATE: str(2 * MB), FOLLOWER_RATE: str(2 * MB)}

    targets = {tp(p): (2, 1) for p in range(3)}
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1), Recorder(second_run), throttle=2 * MB)
    assert inner[0].status == "completed"
    assert outcome.status == "completed", outcome.message
    assert sim.configs == {}


# ---------------------------------------------------------------- 3: someone else's reassignment of the plan


def apache_additional(sim, targets, throttle=None):
    """The Apache tool's ``--execute --additional`` of the plan: every partition to its final target at once,
    with ``--throttle`` its rates and lists over ours."""
    if throttle is not None:
        for b in {b for r in targets.values() for b in r} | {0, 1}:
            set_config(sim, broker(b), leader_replication_throttled_rate=throttle)
            set_config(sim, broker(b), follower_replication_throttled_rate=throttle)
    assert sim.alter_reassignments(targets) == {}


def test_the_plan_submitted_again_by_someone_else_is_the_plans_progress_not_a_failure(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 6, size=30 * MB)
    targets = {tp(p): (2, 3) for p in range(6)}  # two steps each with one replica movement at a time
    throttled: list[tuple[set[str], set[str]]] = []

    def second_shell(n):
        if n == 3:
            apache_additional(sim, targets)
        if n == 4:  # the run throttles their copies too (the follower list names each new replica)
            adding = {f"{p.partition}:{b}" for p, r in sim.list_reassignments().items() for b in r.adding}
            throttled.append((adding, set(sim.configs[topic()][FOLLOWER_REPLICAS].split(","))))

    reporter = Recorder(second_shell)
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=2, replicas=1), reporter, throttle=MB)
    assert outcome.status == "completed", out
    assert outcome.partitions_done == 6 and not outcome.failures
    assert all(sim.partitions[tp(p)].replicas == [2, 3] for p in range(6))
    assert not [e for e in reporter.events if "leaving it alone" in e]
    assert any("being reassigned by someone else to the plan's target" in e for e in reporter.events)
    # at the next poll the run's follower list names every copy of theirs in flight
    moving, listed = throttled[0]
    assert moving and moving <= listed
    assert sim.configs == {}


def test_a_ctrl_c_while_someone_elses_moves_of_the_plan_run_keeps_their_throttles(tmp_path):
    """Before: the run failed (exit 1) and its clean-up deleted the broker rates while the moves went on."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 4, size=100 * MB)
    targets = {tp(p): (2, 3) for p in range(4)}

    def second_shell_then_ctrl_c(n):
        if n == 3:
            apache_additional(sim, targets)
        if n == 6:
            raise Interrupted(2)

    reporter = Recorder(second_shell_then_ctrl_c)
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1, replicas=1), reporter, throttle=MB)
    assert outcome.status == "interrupted" and outcome.reverted == []  # their reassignments are not ours
    assert set(sim.list_reassignments()) == set(targets)
    # the rates that hold their copies back stay: out of 0 and 1 (leader side), into 2 and 3 (follower side)
    assert {b: sim.configs[broker(b)] for b in range(4)} == {
        0: {LEADER_RATE: str(MB)},
        1: {LEADER_RATE: str(MB)},
        2: {FOLLOWER_RATE: str(MB)},
        3: {FOLLOWER_RATE: str(MB)},
    }
    assert set(sim.configs[topic()][FOLLOWER_REPLICAS].split(",")) == {f"{p}:{b}" for p in range(4) for b in (2, 3)}
    assert any(e.startswith("Kept the throttle rates of broker(s) 0,1,2,3 and the throttled-replica entries of")
               for e in reporter.events)  # fmt: skip
    # the same command again (no --additional: their reassignments are the plan's): it waits for them, under its
    # throttle (the rates it kept are still its own), and leaves nothing behind
    again = Recorder()
    outcome, out = run(sim, targets, tmp_path, Limits(partitions=1, replicas=1), again, throttle=2 * MB)
    assert outcome.status == "completed" and outcome.partitions_done == 4, out
    assert sim.configs == {}


def test_a_ctrl_c_right_after_someone_else_replaced_the_step_in_flight_leaves_their_reassignment_running(tmp_path):
    """The second shell's submission lands between two polls and the Ctrl-C comes before the next: the clean-up
    cancels only what is still the run's own step (before, it cancelled their reassignment)."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=100 * MB)
    targets = {tp(p): (2, 3) for p in range(2)}

    def second_shell_and_ctrl_c(n):
        if n == 3:
            apache_additional(sim, targets)
            raise Interrupted(2)

    reporter = Recorder(second_shell_and_ctrl_c)
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1, replicas=1), reporter, throttle=MB)
    assert outcome.status == "interrupted" and outcome.reverted == []
    assert set(sim.list_reassignments()) == set(targets)
    assert sim.configs[broker(2)] == {FOLLOWER_RATE: str(MB)}


def test_someone_elses_reassignment_elsewhere_names_its_real_target_and_the_steps_stay_counted(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(1, 2)] * 3, size=30 * MB)
    targets = {tp(p): (4, 5) for p in range(3)}

    def elsewhere(n):
        if n == 2:
            assert sim.alter_reassignments({tp(p): (1, 3) for p in range(3)}) == {}

    reporter = Recorder(elsewhere)
    outcome, _ = run(sim, targets, tmp_path, Limits(partitions=1, replicas=1), reporter, throttle=MB)
    assert outcome.status == "failed"
    assert "t-1: is being reassigned by someone else (to [1,3]); leaving it alone" in reporter.events
    last = reporter.snapshots[-1]
    assert last.steps_total >= 6, last  # the failed partitions' steps stay in the total (never "0 of 0")


# ---------------------------------------------------------------- 4: a cancel touches only the journal's own steps


def test_a_cancel_after_a_crash_leaves_alone_a_reassignment_that_is_not_the_journals_step(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=100 * MB)
    targets = {tp(0): (2, 1)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    sim.alter_reassignments({tp(0): None})  # someone cancels the dead run's step and submits their own
    assert sim.alter_reassignments({tp(0): (4, 5)}) == {}
    out: list[str] = []
    cancel_batched(sim, ReassignmentPlan(tuple(targets.items())), str(tmp_path / "j.json"), out.append)
    assert tp(0) in sim.list_reassignments()
    said = "".join(out)
    assert "t-0: the reassignment running (to [4,5]) is not the step this run left in flight (to [2,1,0])" in said


def test_a_resume_refuses_a_reassignment_of_its_in_flight_partition_that_goes_elsewhere(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 2, size=100 * MB)
    targets = {tp(p): (2, 1) for p in range(2)}
    killed_after_polls(2, sim, targets, tmp_path, Limits(partitions=1), throttle=MB)
    sim.alter_reassignments({tp(0): None})
    assert sim.alter_reassignments({tp(0): (4, 5)}) == {}
    with pytest.raises(CommandError, match="A reassignment not started by this plan is running on t-0"):
        run(sim, targets, tmp_path, Limits(partitions=1), throttle=MB, additional=True)


# ---------------------------------------------------------------- 5: counts that agree


def test_steps_kafka_finished_just_before_a_cancel_count_as_done(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 4, size=10 * MB)
    targets = {tp(p): (0, 2) for p in range(4)}  # one step each
    journal = Journal(tmp_path / "j.json")

    def second_shell_cancel(n):
        if n == 2:
            sim.advance(60)  # the steps in flight finish before the run's next poll ...
            journal.request(cancel=True, by="--cancel (pid 1)")  # ... which reads the cancel first

    outcome, out = run(sim, targets, tmp_path, Limits(partitions=2), Recorder(second_shell_cancel), throttle=MB)
    at_target = sum(sim.partitions[p].replicas == list(t) for p, t in targets.items())
    assert outcome.status == "cancelled" and at_target == 2
    assert outcome.partitions_done == at_target
    assert f"{at_target} of 4 partition(s) at their target" in out


# ---------------------------------------------------------------- 6: the end of a run


def test_the_end_of_a_run_waits_for_no_broker_it_holds_no_rate_on(tmp_path):
    """A broker of the plan that is away at the end was looked for again for 4 s (a fenced broker may be back),
    even when the run held no rate there (no --throttle): nothing to restore, nothing to wait for."""
    sim = cluster()
    sim.add_topic("t", [(0, 5)], size=10 * MB)
    waits: list[float] = []

    sleep = sim.sleep

    def counted(seconds):
        waits.append(seconds)
        sleep(seconds)
        if sim.partitions[tp(0)].replicas == [0, 1] and 5 not in sim.offline:
            sim.stop_broker(5)  # decommissioned: stopped once its replica has gone

    out: list[str] = []
    outcome = execute_batched(
        sim,
        ExecuteRequest(
            ReassignmentPlan(((tp(0), (0, 1)),)), limits=Limits(partitions=1), journal_path=str(tmp_path / "j.json")
        ),
        out.append,
        Recorder(),
        clock=sim.clock,
        sleep=counted,
    )
    assert outcome.status == "completed"
    assert 5 in sim.offline and waits.count(1.0) == 0, waits
