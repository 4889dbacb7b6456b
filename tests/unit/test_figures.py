"""Figures that hold (issue 39): one model of the throttle's shares and one ETA on every surface, no negative rate,
size or ETA, a run's "copied" that is what its new replicas received, on the simulated cluster (writes, per-broker
links, per-broker throttles)."""

from __future__ import annotations

import pytest

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution.copy_meter import throttle_of_copies
from kreassign.execution.journal import Journal
from kreassign.model import Broker, PartitionInfo, PartitionReassignment, ReassignmentPlan, TopicPartition
from kreassign.model import TopicPartitionReplica as R
from kreassign.planning.progress import ReplicaSample, Throttles, compute_progress, with_throttles
from kreassign.planning.steps import Limits
from kreassign.planning.traffic import slow_moves

MB = 1_000_000
T0 = TopicPartition("t", 0)


class Recorder:
    def __init__(self, stop_after: float | None = None, journal: str | None = None) -> None:
        self.events: list[str] = []
        self.snapshots = []
        self.stop_after, self.journal = stop_after, journal

    def event(self, message):
        self.events.append(message)

    def progress(self, progress):
        self.snapshots.append(progress)
        if self.stop_after is not None and progress.elapsed >= self.stop_after:
            Journal(self.journal).request(cancel=True)


def batched(sim, targets, tmp_path, throttle, limits=None, reporter=None, auto=None):
    reporter = reporter or Recorder()
    request = ExecuteRequest(
        ReassignmentPlan(tuple(targets.items()), {}),
        limits=limits or Limits(partitions=1),
        throttle=throttle,
        journal_path=str(tmp_path / "j.json"),
        auto_throttle=auto,
    )
    outcome = execute_batched(
        sim,
        request,
        lambda text: None,
        reporter,
        clock=sim.clock,
        sleep=sim.sleep,
    )
    return outcome, reporter


def remaining(outcome, snapshot) -> float:
    """What the run took after this frame."""
    return outcome.elapsed - snapshot.elapsed


# ------------------------------------------------------------------------------------- item 4: falling behind
def test_a_partitions_next_step_started_in_the_poll_its_last_ended_is_not_said_to_fall_behind(tmp_path):
    """Issue 39: the gaps were kept by partition and the steps named by (partition, target): the next step of a
    partition, started in the poll its previous step ended, was measured against the end of the previous one (a
    gap that grew from nothing, bytes held that fell from the whole partition) and named with write 0 and copy 0.
    t-0 takes 100 kB/s of writes and copies at 1 MB/s less what its leader sends its in-sync follower: each of its
    two copy steps (one replica at a time) overtakes them."""
    sim = SimulatedCluster([Broker(i) for i in range(1, 5)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2]], size=15 * MB, messages=15_000)
    sim.write(T0, 100_000)
    outcome, reporter = batched(sim, {T0: (3, 4)}, tmp_path, 1 * MB, Limits(partitions=1, replicas=1))
    assert outcome.status == "completed"
    assert len([e for e in reporter.events if e.startswith("Started")]) >= 2, reporter.events
    assert not [e for e in reporter.events if "falls behind" in e], reporter.events


# ------------------------------------------------------------------------------------- item 1: one model, one ETA
def test_the_run_the_progress_rows_and_the_slow_move_warnings_give_a_copy_the_same_share():
    """Issue 39: three models of a copy's share of the throttle (the slow-move warnings counted the receiving
    broker's copies only). t-0 and t-1 are copied into broker 3 and 4, both served by leader 1, whose throttle also
    carries t-0's writes (400 kB/s) to its in-sync follower 2: 1 MB/s less 400 kB/s, shared by two copies, is
    300 kB/s each, below the 1 MB/s each receiving broker gives. Every surface says 300 kB/s."""
    t1 = TopicPartition("t", 1)
    writes = {T0: 400_000.0, t1: 0.0}
    run = throttle_of_copies(1 * MB, {T0: ((3,), 1), t1: ((4,), 1)}, {1: 400_000.0})
    assert run == pytest.approx(600_000)  # the plan's bound: the two shares summed
    warned = slow_moves({T0: [3], t1: [4]}, writes, 1 * MB, None, {T0: 1, t1: 1}, {T0: 1, t1: 1})
    assert [(m.partition, m.share_bytes_per_s, m.broker, m.leader) for m in warned] == [(T0, 300_000, 1, True)]
    meta = {"t": [PartitionInfo(p, (3 + p, 2, 1), (1, 2), 1) for p in (0, 1)]}
    moving = {
        TopicPartition("t", p): PartitionReassignment((3 + p, 2, 1), adding=(3 + p,), removing=(1,)) for p in (0, 1)
    }

    def sample(at, written):
        sizes = {R("t", p, b): 5 * MB + (written if p == 0 else 0) for p in (0, 1) for b in (1, 2)}
        ends = {R("t", p, b): 5000 + (written // 1000 if p == 0 else 0) for p in (0, 1) for b in (1, 2)}
        return ReplicaSample(at, ends, {**sizes, R("t", 0, 3): 0, R("t", 1, 4): 0}, {T0: 1, t1: 1}, {T0: 0, t1: 0})

    report = compute_progress(list(zip(moving, [(3, 2), (4, 2)], strict=True)), meta, moving, (1, 2, 3, 4),
                              sample(11.0, int(writes[T0])), sample(10.0, 0))  # fmt: skip
    every = {b: 1 * MB for b in (1, 2, 3, 4)}
    lists = {"t": frozenset({"0:1", "1:1", "0:2", "1:2"})}
    followers = {"t": frozenset({"0:3", "1:4"})}
    report = with_throttles(report, Throttles(every, every, lists, followers))
    shares = [row.throttle_rate_bytes_per_s for p in report.partitions for row in p.replicas if row.status == "behind"]
    assert shares == [pytest.approx(300_000), pytest.approx(300_000)]
    assert sum(shares) == pytest.approx(run)


def test_a_burst_in_a_one_second_read_gives_no_time_to_a_copy_that_cannot_end():
    """Issue 39, blocker 4 (the burst): the one-off --progress at a terminal said ``ETA 32s`` for a copy that cannot
    overtake its writes, where JSON's summary said it never ends: the replica's row had its own formula, which
    divided by the rate of its second, and a throttled copy's second may hold a whole fetch. t-0 is written at
    170 kB/s; its leader's 300 kB/s throttle also sends those writes to its in-sync follower, which leaves the copy
    130 kB/s; the copy received 1 MB in the second read."""
    meta = {"t": [PartitionInfo(0, (3, 2, 1), (1, 2), 1)]}
    moving = {T0: PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,))}

    def sample(at, written, held):
        sizes = {R("t", 0, 1): 20 * MB + written, R("t", 0, 2): 20 * MB + written, R("t", 0, 3): held}
        ends = {
            R("t", 0, 1): 20_000 + written // 1000,
            R("t", 0, 2): 20_000 + written // 1000,
            R("t", 0, 3): held // 1000,
        }
        return ReplicaSample(at, ends, sizes, {T0: 1}, {T0: 0})

    report = compute_progress(
        [(T0, (3, 2))], meta, moving, (1, 2, 3), sample(11.0, 170_000, 5 * MB), sample(10.0, 0, 4 * MB)
    )
    rates = {b: 300_000 for b in (1, 2, 3)}
    report = with_throttles(
        report, Throttles(rates, rates, {"t": frozenset({"0:1", "0:2"})}, {"t": frozenset({"0:3"})})
    )
    [row] = [r for p in report.partitions for r in p.replicas if r.status == "behind"]
    assert row.rate_bytes_per_s == 1 * MB and row.throttle_rate_bytes_per_s == pytest.approx(130_000)
    assert row.eta_s is None  # was 18 s: 15.2 MB behind, closing at 1 MB/s less the writes
    assert (row.eta.seconds, row.eta.bound, row.eta.losing) == (None, True, True)
    assert (report.eta.seconds, report.eta.bound, report.eta.losing) == (None, True, True)


def test_under_throttle_auto_the_eta_uses_each_brokers_own_rate(tmp_path):
    """Issue 39: under --throttle auto the run's ETA divided by the lowest broker's rate. Broker 4 is busy (its
    headroom 200 kB/s), brokers 1 and 3 have 2 MB/s: t-0 is copied from 1 into 3 at 2 MB/s, and the ETA says the
    time that takes, not ten times it."""
    from kreassign.execution.auto_throttle import AutoThrottle
    from kreassign.planning.headroom import BrokerTraffic, Headroom

    sim = SimulatedCluster([Broker(i) for i in range(1, 5)], bandwidth=50 * MB)
    sim.add_topic("t", [[1, 2]], size=40 * MB, messages=40_000)
    sim.add_topic("u", [[4, 2]], size=MB, messages=1000)
    rooms = {b: Headroom(b, 200_000 if b == 4 else 2 * MB, 10 * MB, BrokerTraffic(), False) for b in (1, 2, 3, 4)}
    auto = AutoThrottle(None, {b: 10 * MB for b in rooms}, 0.8, rooms, measured_at=float("inf"))  # type: ignore[arg-type]
    outcome, reporter = batched(sim, {T0: (3, 2)}, tmp_path, auto.throttle, auto=auto)
    assert outcome.status == "completed"
    late = [s for s in reporter.snapshots if s.eta is not None and s.elapsed >= 2]
    assert late, reporter.snapshots
    assert late[0].eta == pytest.approx(remaining(outcome, late[0]), rel=0.1)


# ------------------------------------------------------------------------------------- item 3: what was received
def test_the_runs_copied_is_what_the_new_replica_received_when_its_leader_is_trimmed(tmp_path):
    """Issue 39 (tiered storage's local retention, as the simulated cluster has it): the partition is 30 MB when the
    run measures it; two seconds into the copy its leader's log is trimmed to 1 MB, and so is the new replica
    (which then is in sync). Before, the run said it copied 30 MB, the size at the start; the new replica received
    what it held before the trim."""
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2]], size=30 * MB, messages=30_000)
    reporter = Recorder()
    seen = {}

    def progress(p):
        reporter.snapshots.append(p)
        part = sim.partitions[T0]
        if p.elapsed >= 2 and "trimmed" not in seen and part.copied:
            seen["held"] = max(part.copied.values())  # what the new replica holds before the trim
            part.size, seen["trimmed"] = 1 * MB, True

    reporter.progress = progress
    outcome, _ = batched(sim, {T0: (3, 2)}, tmp_path, 1 * MB, reporter=reporter)
    assert outcome.status == "completed"
    assert 1.5 * MB <= seen["held"] <= 3 * MB, seen
    assert outcome.bytes_moved == pytest.approx(seen["held"], rel=0.15)
    assert outcome.bytes_total == outcome.bytes_moved
    frames = reporter.snapshots
    assert all(0 <= s.bytes_moved <= s.bytes_total for s in frames), [(s.bytes_moved, s.bytes_total) for s in frames]
    assert all(s.eta is None or s.eta >= 0 for s in frames)
    assert all(s.rate is None or s.rate >= 0 for s in frames)


# ------------------------------------------------------------------------------------- item 5: early and final
def test_the_eta_is_unknown_until_the_writes_are_measured_then_the_time_the_run_takes(tmp_path):
    """Issue 39: an early throttle-bound ETA read ~0:00:03 where the run took 14 s more: before the writes to the
    partition being copied were measured, the ETA took them for none. 20 MB copied under a 1 MB/s throttle while
    250 kB/s are written into it (its leader's throttle also sends them to the in-sync follower): the copy closes
    the gap at 500 kB/s. Every ETA the panel shows is within 10 % of the time the run then takes; at first it is
    unknown (the first second)."""
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2]], size=20 * MB, messages=20_000)
    sim.write(T0, 250_000)
    outcome, reporter = batched(sim, {T0: (3, 2)}, tmp_path, 1 * MB)
    assert outcome.status == "completed"
    shown = [s for s in reporter.snapshots if s.eta is not None and remaining(outcome, s) > 5]
    assert shown and shown[0].elapsed <= 2.5, [(s.elapsed, s.eta) for s in reporter.snapshots[:30]]
    # within 10 %, or the second the steps' ends take (the copy's end is not the run's)
    assert all(s.eta == pytest.approx(remaining(outcome, s), rel=0.1, abs=1.5) for s in shown), [
        (round(s.elapsed, 1), round(s.eta, 1), round(remaining(outcome, s), 1)) for s in shown[:5]
    ]


def test_a_resumed_runs_final_panel_says_it_copied_all_it_had_to(tmp_path):
    """Issue 39: the final panel of a completed resumed run said ``copied 8.7 MiB of 44.9 MiB`` beside
    ``complete``: the total counted the plan's copies from its original assignment, the copied figure this run's.
    A run of two 10 MB partitions (one at a time) is cancelled once the first is done; the resumed run copies the
    second, and its panel ends with ``copied 9.5 MiB of 9.5 MiB``."""
    from kreassign.cli.live import RichReporter

    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2], [1, 2]], size=10 * MB, messages=10_000)
    targets = {T0: (3, 2), TopicPartition("t", 1): (3, 2)}
    journal = str(tmp_path / "j.json")

    class FirstDone(Recorder):
        def progress(self, progress):
            super().progress(progress)
            if progress.done >= 1:
                Journal(journal).request(cancel=True)

    first, _ = batched(sim, targets, tmp_path, 2 * MB, reporter=FirstDone())
    assert (first.status, first.partitions_done) == ("cancelled", 1)
    outcome, reporter = batched(sim, targets, tmp_path, 2 * MB)
    assert outcome.status == "completed"
    assert all(s.bytes_total == 10 * MB for s in reporter.snapshots), [s.bytes_total for s in reporter.snapshots]
    assert outcome.bytes_moved == outcome.bytes_total == 10 * MB
    panel: list[str] = []
    rich = RichReporter(panel.append)
    rich._last = reporter.snapshots[-1]
    rich.console.print(rich._render_outcome(outcome))
    text = "".join(panel)
    assert "9.5 MiB of 9.5 MiB" in text, text


# ------------------------------------------------------------------------------------- item 7: bad capacities
def run_cli(argv, sim, monkeypatch) -> tuple[int, str, str]:
    from kreassign.cli import app

    monkeypatch.setattr(app, "open_cluster", lambda args: sim)
    monkeypatch.setattr(sim, "close", lambda: None, raising=False)
    out, err = [], []
    code = app.run([str(a) for a in argv], out.append, err.append)
    return code, "".join(out), "".join(err)


def auto_run(tmp_path, *capacity):
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,2]}]}')
    return ["--bootstrap-server", "127.0.0.1:9", "--execute", "--reassignment-json-file", plan,
            "--max-partition-movements", "1", "--throttle", "auto", *capacity]  # fmt: skip


def test_an_infinite_capacity_is_one_line_and_exit_1(tmp_path, monkeypatch):
    """Issue 39: ``--broker-capacity-file`` with ``Infinity`` (JSON as Python reads it) ended in an OverflowError
    traceback after the sampling window."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)])
    sim.add_topic("t", [[1, 2]], size=MB)
    capacities = tmp_path / "capacities.json"
    capacities.write_text('{"1": 125000000, "2": Infinity, "3": 125000000}')
    code, out, err = run_cli(auto_run(tmp_path, "--broker-capacity-file", capacities), sim, monkeypatch)
    assert (code, out) == (1, "")
    assert err.splitlines()[0] == (
        f"--broker-capacity-file {capacities}: the capacity of broker 2 must be bytes/s above 0, not Infinity"
    ), err
    assert "Traceback" not in err and "OverflowError" not in err
    assert not sim.calls  # nothing applied


def test_throttle_auto_with_no_live_broker_of_the_plan_is_one_clear_line(tmp_path, monkeypatch):
    """Issue 39: under --throttle auto with none of the plan's brokers alive, the run's throttle was the min() of
    no rates: ``ValueError: min() arg is an empty sequence``. The run now checks the plan against the cluster
    before it samples anything, so Apache's own line comes first (a target broker that is not live), at once."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    sim = SimulatedCluster([Broker(i) for i in range(1, 5)])
    sim.add_topic("t", [[1, 2]], size=MB)
    for b in (1, 2, 3):
        sim.stop_broker(b)
    code, out, err = run_cli(auto_run(tmp_path, "--broker-capacity", "125000000"), sim, monkeypatch)
    assert code == 1
    assert out == "Error: Unknown broker id 2\n", (out, err)
    assert "Traceback" not in err and not sim.calls


# ------------------------------------------------------------------------------------- item 6: windows
def test_a_one_second_progress_measures_the_writes_over_the_interval_of_its_sizes(tmp_path):
    """Issue 39: per-replica write rates from a 1 s --progress were noisy (234,512 B/s for about 170,000), and
    biased high: the sample's time was taken after its last call, and the first round's calls set up their
    connections (here the offsets' calls of the first round take 0.3 s more), so the interval was short by that.
    Measured on the real cluster, 10 one-off --progress of a partition written at 170 kB/s: 152 to 210 kB/s
    (median 187) before, 167 to 182 kB/s (median 174) after. The time is now that of the sizes' read."""
    from kreassign.actions.progress import read_progress

    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=1 * MB)  # broker 3 is behind at both samples
    sim.add_topic("t", [[1, 2]], size=5 * MB, messages=5_000)
    sim.write(T0, 170_000)
    sim.alter_reassignments({T0: (3, 2)}, True)
    first_round = {"slow": True}
    ends = sim.replica_log_end_offsets

    def offsets(replicas):
        if first_round.pop("slow", False):
            sim.advance(0.3)  # the first round's connections
        return ends(replicas)

    sim.replica_log_end_offsets = offsets
    plan = ReassignmentPlan(((T0, (3, 2)),), {})
    report = read_progress(sim, plan, clock=sim.clock, sleep=sim.sleep)
    [row] = [r for p in report.partitions for r in p.replicas if r.status == "behind"]
    assert row.write_bytes_per_s == pytest.approx(170_000, rel=0.01), row
    assert report.write_rate == pytest.approx(170_000, rel=0.01)


def test_a_read_rate_is_measured_between_the_commits_seen_not_over_the_window():
    """Issue 39: a read rate over a 30 s window was 15 % low against a group committing every 5 s (60 s was exact):
    the committed offset moves in steps, so a window sees the commits that fell in it, up to one commit interval's
    worth more or less than its length. Here a group reads all of the 200 kB/s written and commits every 7 s, the
    last time as the window starts: the window's two offsets are 28 s of reads apart in 30 s (187,000 B/s, -6.5 %).
    Read every second during the window, its commits are seen and the rate is measured between the first and the
    last (within 1 %)."""
    from kreassign.execution.sampling import sample_rates

    sim = SimulatedCluster([Broker(i) for i in range(1, 3)])
    sim.add_topic("t", [[1, 2]], size=MB, messages=10_000)
    sim.write(T0, 200_000, bytes_per_message=100)  # 2,000 messages/s
    part = sim.partitions[T0]
    commits = {"every": 7.0, "next": 7.0}
    part.committed["g"] = part.end_offset

    def sleep(seconds):
        end = sim.now + seconds
        while commits["next"] <= end:  # the group reads everything, and commits where it is now and then
            sim.advance(commits["next"] - sim.now)
            part.committed["g"] = part.end_offset
            commits["next"] += commits["every"]
        sim.advance(end - sim.now)

    rates = sample_rates(sim, [T0], 30, sleep=sleep, clock=sim.clock)
    assert rates[T0].write_bytes_per_s == pytest.approx(200_000, rel=0.01)
    assert rates[T0].read_bytes_per_s == pytest.approx(200_000, rel=0.01)
