"""A --verify beside a batched run of the same cluster, on the simulated cluster with its fake clock.

The Apache --verify clears every throttle once nothing is reassigning, which a batched run reaches between two of its
steps; the run, finding its protection removed by someone else, stopped (exit 4). kreassign's --verify first asks the
run (its control file, ``watch.ask_to_keep_throttles``) to put back its own throttles: the run does, says so once and
goes on. Without the request (the Apache tool's own --verify, ``kafka-configs --delete-config``), or once the process
that asked is long gone, the run stops as before: it cannot tell who removed them.
"""

from __future__ import annotations

import os
import subprocess
import sys

from kreassign.actions.common import clear_all_throttles
from kreassign.execution.journal import Journal
from kreassign.execution.watch import KEEP_AFTER_S, KEEP_AT_MOST_S, ThrottleKeeper, ask_to_keep_throttles
from kreassign.planning.steps import Limits
from tests.unit.test_executor import MB, Recorder, cluster, run, tp
from tests.unit.test_throttle_ownership import FOLLOWER_RATE, LEADER_RATE, broker, live_run_throttles, set_config

TARGETS = {tp(p): (2, 1) for p in range(3)}


def apache_verify_clears(sim) -> None:
    """What the Apache --verify does once nothing is reassigning: every broker's rates and the plan's topic lists go."""
    clear_all_throttles(sim, list(TARGETS.items()), lambda text: None)


def dead_pid() -> int:
    """The pid of a process that has ended (a --verify that has exited)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_a_verify_that_asked_first_has_the_run_put_its_throttles_back_and_go_on(tmp_path):
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3, size=20 * MB)
    journal = Journal(tmp_path / "j.json")

    def verify(n):  # a step of the run copies under its throttle
        if n == 3:
            assert sim.list_reassignments() and sim.configs[broker(2)] == {LEADER_RATE: str(MB), FOLLOWER_RATE: str(MB)}
            ask_to_keep_throttles(journal, "--verify")
            apache_verify_clears(sim)
            assert sim.configs == {}

    reporter = Recorder(verify)
    outcome, out = run(sim, TARGETS, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "completed", outcome.message
    said = [e for e in reporter.events if e.startswith("Put back ")]
    assert said == [
        "Put back the throttle rates of broker(s) 0,1,2 and the throttled-replica entries of topic(s) t: --verify "
        f"(pid {os.getpid()}) cleared them as the Apache tool does, having asked this run to keep its own; the run goes on"
    ], reporter.events
    assert "Put back" not in out  # stderr only
    assert sim.list_reassignments() == {} and sim.configs == {}  # and its end restored them as ever


def test_a_verify_whose_request_comes_while_the_run_polls_is_read_before_the_run_stops(tmp_path):
    """The request is on disk before the throttles go, but may come after the poll read the control file: a removal
    seen with no request read yet reads the control file once more first."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)] * 3, size=20 * MB)
    journal = Journal(tmp_path / "j.json")
    cleared = []

    class AskedMidPoll(type(sim)):
        def describe_configs(self, resources):
            if cleared and len(cleared) == 1:  # the watch reads the throttles back: the request has just come
                cleared.append(True)
                ask_to_keep_throttles(journal, "--verify")
            return super().describe_configs(resources)

    sim.__class__ = AskedMidPoll

    def verify(n):
        if n == 3:
            apache_verify_clears(sim)
            cleared.append(True)

    reporter = Recorder(verify)
    outcome, _ = run(sim, TARGETS, tmp_path, Limits(partitions=1), reporter, throttle=MB)
    assert outcome.status == "completed", outcome.message
    assert len([e for e in reporter.events if e.startswith("Put back ")]) == 1, reporter.events


def test_without_a_request_or_long_after_it_a_verify_that_clears_the_throttles_stops_the_run(tmp_path):
    """The Apache tool's own --verify asks nothing: the run cannot tell who removed its throttles and stops as it
    always did. A request covers only while its process lives, and KEEP_AFTER_S after."""
    for asked in (False, True):
        sim = cluster()
        sim.add_topic("t", [(0, 1)] * 3, size=20 * MB)
        journal = Journal(tmp_path / str(asked) / "j.json")
        pid = dead_pid()

        def verify(n, sim=sim, journal=journal, asked=asked, pid=pid):
            if asked and n == 1:  # a --verify that asked, cleared nothing, and exited
                journal.request(keep_throttles={"pid": pid, "by": "--verify"})
            if sim.now >= 20 and sim.list_reassignments() and not hasattr(sim, "cleared"):
                sim.cleared = True
                apache_verify_clears(sim)

        reporter = Recorder(verify)
        outcome, _ = run(sim, TARGETS, journal.path.parent, Limits(partitions=1), reporter, throttle=MB)
        assert outcome.status == "cancelled", (asked, outcome.message)
        assert "removed by another client" in outcome.message
        assert not [e for e in reporter.events if e.startswith("Put back ")]
        assert sim.list_reassignments() == {} and sim.configs == {}


def test_a_keep_request_covers_while_its_process_lives_and_a_moment_after():
    now = [0.0]
    alive = {7: True}
    keeper = ThrottleKeeper(lambda: now[0], alive=lambda pid: alive.get(pid, False))
    keeper.asked({"pid": 7, "by": "--verify"})
    keeper.asked({"pid": "7"})  # not a request: ignored
    keeper.asked(None)
    assert [a.by for a in keeper.covering()] == ["--verify (pid 7)"]
    now[0] = 60.0
    assert keeper.covering()  # a --verify against a slow cluster
    alive[7] = False
    assert keeper.covering()  # seen gone now: a broker may show its removal a moment later
    now[0] += KEEP_AFTER_S
    assert not keeper.covering()
    keeper.asked({"pid": 8, "by": "--cancel"})  # a pid reused by a process that lives on
    alive[8] = True
    now[0] += KEEP_AT_MOST_S + KEEP_AFTER_S
    assert not keeper.covering()


def test_a_rate_two_runs_share_is_put_back_at_the_value_of_its_top_holder(tmp_path):
    """Run A set broker 2's rates, run B (another plan) set its own over them: a verify clears them; whichever puts
    them back first writes B's rate, the one that was there (A's own would slow B's copies)."""
    sim = cluster()
    sim.add_topic("t", [(0, 1)], size=50 * MB)
    sim.add_topic("u", [(0, 1)], size=50 * MB)
    runs = {
        "a": live_run_throttles(sim, Journal(tmp_path / "a.json"), "t", MB),
        "b": live_run_throttles(sim, Journal(tmp_path / "b.json"), "u", 2 * MB),
    }
    set_config(sim, broker(0), follower_replication_throttled_rate=5 * MB)  # an operator's, after both: theirs
    apache_verify_clears(sim)
    set_config(sim, broker(0), follower_replication_throttled_rate=5 * MB)
    assert runs["a"].put_back([0, 1, 2]) == ["the throttle rates of broker(s) 0,1,2"]
    both = {LEADER_RATE: str(2 * MB), FOLLOWER_RATE: str(2 * MB)}
    assert sim.configs[broker(2)] == both and sim.configs[broker(1)] == both
    assert sim.configs[broker(0)] == {LEADER_RATE: str(2 * MB), FOLLOWER_RATE: str(5 * MB)}
    assert runs["b"].put_back([0, 1, 2]) == []  # nothing is missing any more
