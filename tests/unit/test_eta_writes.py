"""One honest ETA (issue 35): bytes behind / (copy rate - the write rate of the partitions being copied), in the
estimator, --progress (and so --watch and its JSON) and the batched run's panel; ``not at this throttle`` where the
copy cannot overtake the writes."""

from __future__ import annotations

import pytest

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cli.live import PlainReporter, RichReporter, progress_line
from kreassign.cli.render_progress import render_progress_rich, summary_line
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.documents import progress_document
from kreassign.execution.journal import Journal
from kreassign.model import Broker, PartitionInfo, PartitionReassignment, ReassignmentPlan, TopicPartition
from kreassign.model import TopicPartitionReplica as R
from kreassign.planning.eta import Eta, estimate_eta
from kreassign.planning.progress import ReplicaSample, Throttles, compute_progress, with_throttles
from kreassign.planning.steps import Limits
from kreassign.planning.traffic import LogSample, WriteWindow
from tests.schema_check import check_document

MB = 1_000_000
T0 = TopicPartition("t", 0)


# ---------------------------------------------------------------------------------------------- the estimator
@pytest.mark.parametrize(
    ("measured", "span", "throttle", "writes", "expected"),
    [
        # bound by the throttle (nothing trusted measured): 4 MB / (500 kB/s - 100 kB/s)
        (None, None, 500_000, 100_000, Eta(10.0, 500_000.0, bound=True)),
        # a copy measured well under the throttle for long enough: 4 MB / (200 kB/s - 100 kB/s)
        (200_000, 30.0, 500_000, 100_000, Eta(40.0, 200_000, bound=False)),
        # not throttled: the measured copy rate less the writes
        (1_100_000, 30.0, None, 100_000, Eta(4.0, 1_100_000, bound=False)),
        # writes as fast as the throttle: the copy never overtakes them
        (None, None, 500_000, 500_000, Eta(None, 500_000.0, bound=True, losing=True)),
        (None, None, 500_000, 2_000_000, Eta(None, 500_000.0, bound=True, losing=True)),
        # a measured copy slower than the writes (no throttle): not at this rate
        (300_000, 30.0, None, 400_000, Eta(None, 300_000, bound=False, losing=True)),
    ],
)
def test_the_eta_divides_by_the_copy_rate_less_the_writes(measured, span, throttle, writes, expected):
    assert estimate_eta(4 * MB, measured, span, throttle=throttle, write_rate=writes) == expected


def test_nothing_left_is_done_even_when_the_writes_win():
    assert estimate_eta(0, None, None, throttle=500_000, write_rate=900_000).seconds == 0.0


# ---------------------------------------------------------------------------------------------- the write window
def test_the_write_window_reads_the_leaders_log_and_starts_again_when_the_leader_moves():
    window = WriteWindow(30.0)
    for second in range(0, 41, 2):  # 1,000-byte messages at 200 kB/s, the size growing with them
        written = 200_000 * second
        window.add(float(second), {T0: (1, LogSample(0, written // 1000, 5 * MB + written))})
    assert window.rate(T0) == pytest.approx(200_000)
    # retention deletes a segment: the size drops, the offsets times the bytes per message still give the rate
    window = WriteWindow(30.0)
    window.add(0.0, {T0: (1, LogSample(0, 10_000, 10 * MB))})
    window.add(10.0, {T0: (1, LogSample(5_000, 12_000, 7 * MB))})
    assert window.rate(T0) == pytest.approx(2_000 * 1000 / 10)
    # the leader moved: the sizes are another replica's, the window starts again
    window.add(12.0, {T0: (2, LogSample(5_000, 12_200, 7_200_000))})
    assert window.rate(T0) is None
    window.add(14.0, {})
    assert window.rates() == {}  # a partition no longer copied is forgotten


# ---------------------------------------------------------------------------------------------- --progress
def progress_with_writes(written_per_s: float, throttle: int = 500_000):
    """t-0 moves from [1,2] to [3,2]: broker 3 holds nothing copied between two samples a second apart (a
    throttled copy moves in bursts), while the leader takes ``written_per_s``."""
    meta = {"t": [PartitionInfo(0, replicas=(3, 2, 1), isr=(1, 2), leader=1)]}
    moving = {T0: PartitionReassignment(replicas=(3, 2, 1), adding=(3,), removing=(1,))}
    size, offsets = 4 * MB, 4000

    def sample(at, written):
        return ReplicaSample(
            at=at,
            log_end_offsets={R("t", 0, 1): offsets + written // 1000, R("t", 0, 2): offsets + written // 1000},
            sizes={R("t", 0, 1): size + written, R("t", 0, 2): size + written, R("t", 0, 3): MB},
            leaders={T0: 1},
            log_starts={T0: 0},
        )

    first, last = sample(100.0, 0), sample(101.0, int(written_per_s))
    report = compute_progress([(T0, (3, 2))], meta, moving, {1, 2, 3}, last, first)
    throttles = Throttles(follower_rates={3: throttle}, follower_replicas={"t": frozenset({"0:3"})})
    return with_throttles(report, throttles)


def test_progress_measures_the_write_rate_from_the_leaders_log_and_the_eta_nets_it_out():
    report = progress_with_writes(100_000)
    assert report.write_rate == pytest.approx(100_000)
    row = report.partitions[0].replicas[0]
    assert row.write_bytes_per_s == pytest.approx(100_000)
    behind = 3 * MB + 100_000  # the leader's size now less what broker 3 holds
    assert report.bytes_left == behind
    assert report.eta == Eta(pytest.approx(behind / 400_000), 500_000.0, bound=True)
    assert row.eta == Eta(pytest.approx(behind / 400_000), 500_000.0, bound=True)
    document = progress_document(report)
    check_document(document)
    assert document["summary"]["write_bytes_per_s"] == 100_000
    assert document["summary"]["copy_slower_than_writes"] is False
    assert document["summary"]["eta_s"] == pytest.approx(round(behind / 400_000, 1))
    assert document["partitions"][0]["replicas"][0]["write_bytes_per_s"] == 100_000
    assert summary_line(report).endswith(f"to copy, written at 97.7 KiB/s, ETA ~{round(behind / 400_000)}s")


def test_progress_says_not_at_this_throttle_when_the_writes_outrun_the_throttle():
    report = progress_with_writes(600_000)
    eta = report.eta
    assert (eta.seconds, eta.losing, eta.bound) == (None, True, True)
    document = progress_document(report)
    check_document(document)
    assert document["summary"]["eta_s"] is None
    assert document["summary"]["copy_slower_than_writes"] is True
    assert summary_line(report).endswith("written at 585.9 KiB/s, ETA not at this throttle")
    row = report.partitions[0].replicas[0]
    assert row.eta == Eta(None, 500_000.0, bound=True, losing=True)
    screen = render_progress_rich(report, width=80, color=False)
    assert "never" in screen and "(not at this throttle)" in screen, screen


# ---------------------------------------------------------------------------------------------- the batched run
class Snapshots:
    def __init__(self):
        self.events: list[str] = []
        self.snapshots = []

    def event(self, message):
        self.events.append(message)

    def progress(self, progress):
        self.snapshots.append(progress)


def batched(sim, targets, tmp_path, throttle, reporter):
    return execute_batched(
        sim,
        ExecuteRequest(
            ReassignmentPlan(tuple(targets.items()), {}),
            limits=Limits(partitions=1),
            throttle=throttle,
            journal_path=str(tmp_path / "j.json"),
        ),
        lambda text: None,
        reporter,
        clock=sim.clock,
        sleep=sim.sleep,
    )


def test_the_batched_runs_eta_nets_out_the_writes_and_holds(tmp_path):
    """20 MB copied at a 1 MB/s throttle while a producer writes 250 kB/s into it: the leader's throttle also
    carries the replication of those writes to its in-sync follower, so the copy runs at 750 kB/s and closes the
    gap at 500 kB/s. The panel's ETA is the time the run then takes (40 s), not the 20 s the throttle alone
    gives."""
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2]], size=20 * MB, messages=20_000)
    sim.write(T0, 250_000)
    reporter = Snapshots()
    outcome = batched(sim, {T0: (3, 2)}, tmp_path, 1 * MB, reporter)
    assert outcome.status == "completed"
    measured = [s for s in reporter.snapshots if s.write_rate and s.eta is not None and s.elapsed >= 5]
    assert measured, reporter.snapshots
    first = measured[0]
    assert first.write_rate == pytest.approx(250_000, rel=0.05)
    # what the run took after that frame
    assert first.eta == pytest.approx(outcome.elapsed - first.elapsed, rel=0.1)
    assert "written at 244.1 KiB/s" in progress_line(first)


def test_a_batched_run_whose_partition_outruns_the_throttle_says_not_at_this_throttle(tmp_path):
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2]], size=5 * MB, messages=5_000)
    sim.write(T0, 600_000)
    reporter = Snapshots()
    control = Journal(str(tmp_path / "j.json"))
    reporter.progress = lambda p: (reporter.snapshots.append(p), p.elapsed >= 20 and control.request(cancel=True))
    outcome = batched(sim, {T0: (3, 2)}, tmp_path, 500_000, reporter)
    assert outcome.status == "cancelled"
    late = [s for s in reporter.snapshots if s.elapsed >= 10]
    assert late and all(s.eta_losing and s.eta is None for s in late), late
    line = progress_line(late[-1])
    assert "written at 585.9 KiB/s, ETA not at this throttle" in line, line
    written: list[str] = []
    PlainReporter(written.append, interval=0).progress(late[-1])
    assert "ETA not at this throttle" in written[0]
    panel: list[str] = []
    rich = RichReporter(panel.append)
    rich.console.print(rich._render(late[-1]))
    text = "".join(panel)
    assert "not at this throttle" in text and "585.9 KiB/s into the partitions being copied" in text, text


# ---------------------------------------------------------------------------------------------- falling behind
def run_until(sim, targets, tmp_path, throttle, seconds, output="text"):
    """A batched run of ``targets`` (two at a time), cancelled after ``seconds`` unless it ends before."""
    reporter, out = Snapshots(), []
    control = Journal(str(tmp_path / "j.json"))
    reporter.progress = lambda p: p.elapsed >= seconds and control.request(cancel=True)
    outcome = execute_batched(
        sim,
        ExecuteRequest(
            ReassignmentPlan(tuple(targets.items()), {}),
            limits=Limits(partitions=2),
            throttle=throttle,
            journal_path=str(tmp_path / "j.json"),
            output=output,
        ),
        out.append,
        reporter,
        clock=sim.clock,
        sleep=sim.sleep,
    )
    return outcome, reporter.events, "".join(out)


def test_a_step_falling_behind_faster_than_it_copies_is_named_once_with_its_rates(tmp_path):
    """t-0 is written at 300 kB/s; under a 500 kB/s throttle its leader sends 300 kB/s of those writes to its
    in-sync follower, which leaves the copy 200 kB/s: it falls behind. t-1 takes no writes and copies."""
    import json

    sim = SimulatedCluster([Broker(i) for i in range(1, 5)], bandwidth=10 * MB)
    sim.add_topic("t", [[1, 2], [2, 1]], size=5 * MB, messages=5_000)
    sim.write(T0, 300_000)
    targets = {T0: (3, 2), TopicPartition("t", 1): (4, 1)}
    outcome, events, out = run_until(sim, targets, tmp_path, 500_000, 60, output="json")
    assert outcome.status == "cancelled"
    behind = [e for e in events if "falls behind" in e]
    assert behind == [
        "t-0 falls behind faster than it copies: written at 293.0 KiB/s, copied at 195.3 KiB/s under the "
        "throttle; its step to 3,2,1 will not end at this throttle"
    ], events
    document = json.loads(out)
    check_document(document)
    [named] = document["falling_behind"]
    assert (named["topic"], named["partition"], named["target"]) == ("t", 0, [3, 2, 1])
    assert (named["write_bytes_per_s"], named["copy_bytes_per_s"]) == (pytest.approx(300_000), pytest.approx(200_000))


@pytest.mark.parametrize(("writes", "throttle", "ended"), [(100_000, 1 * MB, "completed"), (300_000, -1, "cancelled")])
def test_a_copy_that_overtakes_its_writes_or_is_not_throttled_is_not_named(tmp_path, writes, throttle, ended):
    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=250_000 if throttle < 0 else 10 * MB)
    sim.add_topic("t", [[1, 2]], size=5 * MB, messages=5_000)
    sim.write(T0, writes)
    outcome, events, _ = run_until(sim, {T0: (3, 2)}, tmp_path, throttle, 40)
    assert outcome.status == ended
    assert not [e for e in events if "falls behind" in e], events
