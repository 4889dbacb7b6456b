"""--progress on a terminal and --watch (issue 26 item 5): the compact layout at 80 columns, the throttle-bound
ETA, partitions that wait for a batched run, the plain lines of a watch into a pipe, and --watch's optional value.
The live table itself is driven through a pseudo-terminal in tests/terminal/test_progress_watch.py."""

from __future__ import annotations

import json
import os
import re

import pytest

from kreassign.actions.progress import batched_run_running, watch_progress
from kreassign.cli.app import run
from kreassign.cli.argv import validate, watch_seconds
from kreassign.cli.render_progress import WatchLines, render_progress_rich, render_progress_table, summary_line
from kreassign.errors import UsageError
from kreassign.execution.journal import Journal, JournalState, RunStatus, plan_id
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    ReassignmentPlan,
    TopicPartition,
    TopicPartitionReplica,
)
from kreassign.planning.eta import TRUSTED_SPAN_S, Eta, estimate_eta
from kreassign.planning.progress import (
    PlanOutcome,
    ReplicaProgress,
    ReplicaSample,
    ReplicaStatus,
    Throttles,
    compute_progress,
    with_throttles,
)

T = TopicPartition
LONG = "payments.eu-west-1.settlement-events-v2"  # 40 characters


def R(partition: int, broker: int, topic: str = LONG) -> TopicPartitionReplica:
    return TopicPartitionReplica(topic, partition, broker)


def batched_report(batched_run: bool, rate_bytes: int = 0):
    """A batched plan of 4 partitions of a long-named topic, (1, 2) -> (3, 2): partition 0 done, 1 copying into
    broker 3 (``rate_bytes`` copied between samples 2 s apart), 2 and 3 not reached yet."""
    meta = {
        LONG: [
            PartitionInfo(0, (3, 2), (3, 2), 3),
            PartitionInfo(1, (3, 2, 1), (1, 2), 1),
            PartitionInfo(2, (1, 2), (1, 2), 1),
            PartitionInfo(3, (1, 2), (1, 2), 1),
        ]
    }
    moving = {T(LONG, 1): PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,))}
    sizes = {R(0, 3): 5_000_000, R(0, 2): 5_000_000, R(1, 1): 5_000_000, R(1, 2): 5_000_000, R(1, 3): 1_000_000}
    sizes |= {R(p, b): 5_000_000 for p in (2, 3) for b in (1, 2)}
    ends = {r: 5000 for r in sizes} | {R(1, 3): 1000}
    first = ReplicaSample(10.0, ends, sizes)
    last = ReplicaSample(
        12.0, {**ends, R(1, 3): 1000 + rate_bytes // 1000}, {**sizes, R(1, 3): 1_000_000 + 2 * rate_bytes}
    )
    targets = [(T(LONG, p), (3, 2)) for p in range(4)]
    return compute_progress(targets, meta, moving, (1, 2, 3), last, first, batched_run=batched_run)


THROTTLED = Throttles(
    leader_rates={1: 1_000_000},
    follower_rates={3: 250_000},
    leader_replicas={LONG: frozenset({"1:1", "1:2"})},
    follower_replicas={LONG: frozenset({"1:3"})},
)


# ------------------------------------------------------------------------------ the layout
@pytest.mark.parametrize("batched", [True, False], ids=["batched-run", "no-run"])
def test_the_terminal_layout_fits_80_columns_with_whole_state_words(batched):
    """Issue 26 item 5: at 80 columns "Broker does not host this partition" wrapped over 4 lines a row. Now one
    line per replica, a short state word that is never cut, and a long topic name cut with an ellipsis."""
    report = with_throttles(batched_report(batched), THROTTLED)
    text = render_progress_rich(report, width=80, color=False)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if re.match(r"payments\S*\s+\d+\s", line)]  # the table's (not the URP lines')
    assert len(rows) == 8  # one line per (partition, target broker): nothing wrapped
    words = [re.search(r"\s(\d+)\s+(in sync|copying|waiting|not started)\s", row).group(2) for row in rows]
    later = "waiting" if batched else "not started"
    assert words == ["in sync", "in sync", "copying", "in sync", later, "in sync", later, "in sync"]
    assert all(row.startswith("payments.eu-west-1.s…") for row in rows)  # the name is cut, not wrapped
    assert "Broker does not host" not in text


def test_many_rows_are_bounded_and_the_rows_not_in_sync_come_first():
    from rich.console import Console

    from kreassign.cli.render_progress import progress_view

    report = with_throttles(batched_report(True), THROTTLED)
    console = Console(width=80, record=True, color_system=None, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(progress_view(report, "heading", max_rows=3, width=80))
    lines = console.export_text().splitlines()
    rows = [line for line in lines if re.match(r"payments\S*\s+\d+\s", line)]
    assert [row.split()[2] for row in rows] == ["copying", "waiting", "waiting"]
    assert "... and 5 more replica(s)" in lines


def test_the_pipe_table_keeps_the_kip_179_texts():
    table = render_progress_table(batched_report(True))
    assert "Broker does not host this partition" in table and "waiting" not in table


# ------------------------------------------------------------------------------ throttle-bound rate and ETA
def test_a_copy_that_moved_nothing_between_samples_gets_the_throttle_bound_eta():
    """Issue 26 item 5: "0 B/s / ETA unknown" while a throttle held the rate low. 4 MB behind, nothing copied
    between the samples, broker 3's follower rate 250 kB/s (the leader's 1 MB/s is not the bound): ~16s."""
    row = with_throttles(batched_report(True), THROTTLED).partitions[1].replicas[0]
    assert (row.status, row.bytes_behind, row.rate_bytes_per_s) == (ReplicaStatus.BEHIND, 4_000_000, 0)
    assert row.throttle_rate_bytes_per_s == 250_000
    assert row.eta == Eta(pytest.approx(16.0), 250_000.0, bound=True)
    text = render_progress_rich(with_throttles(batched_report(True), THROTTLED), width=80, color=False)
    copying = next(line for line in text.splitlines() if " copying " in line)
    assert copying.split()[-4:] == ["MiB", "~244.1", "KiB/s", "~16s"]
    # the plan's ETA: its 4 MB behind and the 10 MB of the two partitions the batched run has not reached, at
    # the 250 kB/s the throttle lets through
    assert "13.4 MiB to copy, ETA ~56s" in text and "~ bound by the throttle" in text
    assert "0 B/s" not in copying and "unknown" not in copying


def test_a_replicas_eta_is_the_plans_estimate_of_one_copy():
    """Issue 39: the per-replica ETA had its own formula, without the throttle's bound, so one interval of 1 s
    with a burst in it gave a time where the summary said the copy could not end. Now a rate measured over one
    short interval is bound by the copy's share of the throttle, as the plan's is; measured well below it for long
    enough, it is the copy's own."""
    row = with_throttles(batched_report(True, rate_bytes=200_000), THROTTLED).partitions[1].replicas[0]
    assert row.rate_bytes_per_s == 200_000 and row.interval_s == 2.0
    assert row.eta == estimate_eta(3_600_000, 200_000, 2.0, throttle=250_000) == Eta(14.4, 250_000.0, bound=True)
    slow = ReplicaProgress(LONG, 1, 3, ReplicaStatus.BEHIND, bytes_behind=3_600_000, rate_bytes_per_s=100_000,
                           throttle_rate_bytes_per_s=250_000, interval_s=TRUSTED_SPAN_S)  # fmt: skip
    assert slow.eta == Eta(36.0, 100_000, bound=False)


def test_the_throttle_is_shared_by_the_copies_into_a_broker_and_only_binds_listed_replicas():
    report = batched_report(True)
    two = Throttles(follower_rates={3: 250_000}, follower_replicas={LONG: frozenset({"*"})})
    assert with_throttles(report, two).partitions[1].replicas[0].throttle_rate_bytes_per_s == 250_000
    unlisted = Throttles(follower_rates={3: 250_000}, follower_replicas={LONG: frozenset({"2:3"})})
    row = with_throttles(report, unlisted).partitions[1].replicas[0]
    assert row.throttle_rate_bytes_per_s is None and not row.eta.bound
    # a second copy into broker 3 halves its share
    doubled = compute_progress(
        [(T("a", 0), (3,)), (T("b", 0), (3,))],
        {t: [PartitionInfo(0, (3, 1), (1,), 1)] for t in "ab"},
        {T(t, 0): PartitionReassignment((3, 1), adding=(3,), removing=(1,)) for t in "ab"},
        (1, 3),
        ReplicaSample(2.0, {}, {TopicPartitionReplica(t, 0, 1): 1_000_000 for t in "ab"}),
        ReplicaSample(1.0, {}, {}),
    )
    both = Throttles(follower_rates={3: 100_000}, follower_replicas={"a": frozenset({"*"}), "b": frozenset({"*"})})
    shares = [p.replicas[0].throttle_rate_bytes_per_s for p in with_throttles(doubled, both).partitions]
    assert shares == [50_000, 50_000]


# ------------------------------------------------------------------------------ a batched run's waiting partitions
def test_partitions_a_running_batched_run_has_not_reached_are_in_progress_not_stuck():
    assert batched_report(True).outcome is PlanOutcome.IN_PROGRESS
    assert batched_report(False).outcome is PlanOutcome.NOT_AT_TARGET
    assert summary_line(batched_report(True)).startswith(
        "1 of 4 partitions done, 1 moving, 2 waiting; 13.4 MiB to copy"
    )
    assert summary_line(batched_report(False)).startswith("1 of 4 partitions done, 1 moving, 2 not started;")


def test_a_running_batched_run_is_found_from_its_journal(tmp_path):
    targets = {T("t", 0): (3, 2)}
    journal = Journal(tmp_path / "j.json")
    state = JournalState(plan_id(targets), RunStatus.RUNNING, {T("t", 0): (1, 2)}, dict(targets), {}, pid=os.getpid())
    assert not batched_run_running(targets, str(journal.path))  # no journal
    journal.save(state)
    assert batched_run_running(targets, str(journal.path))
    assert not batched_run_running({T("t", 0): (3, 1)}, str(journal.path))  # another plan
    state.pid = 2**22 + 12345  # above pid_max: no such process (a run killed with kill -9)
    journal.save(state)
    assert not batched_run_running(targets, str(journal.path))
    state.pid, state.status = os.getpid(), RunStatus.INTERRUPTED
    journal.save(state)
    assert not batched_run_running(targets, str(journal.path))


# ------------------------------------------------------------------------------ --watch into a pipe
def test_watch_lines_say_what_changed_and_a_summary_now_and_then():
    lines = WatchLines(summary_every_s=30)
    first = lines.lines(batched_report(True), 1000.0)
    assert len(first) == 9 and first[-1].endswith(
        "1 of 4 partitions done, 1 moving, 2 waiting; 13.4 MiB to copy, ETA unknown"
    )
    assert any(line.endswith(f"{LONG}-2 broker 3: waiting") for line in first)
    assert lines.lines(batched_report(True), 1002.0) == []  # nothing changed: nothing said
    later = lines.lines(batched_report(True), 1031.0)
    assert len(later) == 1 and "partitions done" in later[0]  # the periodic summary
    throttled = with_throttles(batched_report(True), THROTTLED)
    assert lines.lines(throttled, 1032.0) == []  # same words
    assert all(re.match(r"\d\d:\d\d:\d\d ", line) for line in first + later)


class Moving:
    """A cluster where t-0 moves (1, 2) -> (3, 2): broker 3 copies 1 MB per read of its size, done at the third read."""

    def __init__(self) -> None:
        self.reads = 0

    def describe_brokers(self):
        return [Broker(1), Broker(2), Broker(3)]

    def done(self) -> bool:
        return self.reads >= 2

    def list_reassignments(self, partitions=None):
        return {} if self.done() else {T("t", 0): PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,))}

    def describe_topics(self, topics):
        info = PartitionInfo(0, (3, 2), (3, 2), 3) if self.done() else PartitionInfo(0, (3, 2, 1), (1, 2), 1)
        return {"t": [info]}

    def replica_sizes(self, broker_ids):
        self.reads += 1
        copied = min(3, self.reads) * 1_000_000
        return {TopicPartitionReplica("t", 0, b): 3_000_000 for b in (1, 2)} | {
            TopicPartitionReplica("t", 0, 3): copied
        }

    def replica_log_end_offsets(self, replicas):
        return {}

    def describe_configs(self, resources):
        return {}

    def secrets(self):
        return []

    def close(self):
        pass


def test_watch_reads_until_the_plan_is_complete():
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    plan = ReassignmentPlan(((T("t", 0), (3, 2)),))
    reports = list(watch_progress(Moving(), plan, 2.0, clock=lambda: now[0], sleep=sleep))
    assert [r.outcome for r in reports] == [PlanOutcome.IN_PROGRESS] * 2 + [PlanOutcome.COMPLETE]
    assert slept == [2.0, 2.0]
    assert reports[1].partitions[0].replicas[0].rate_bytes_per_s == 500_000  # against the first sample


def test_watch_into_a_pipe_prints_plain_lines_and_exits_0_when_complete(monkeypatch, tmp_path):
    import kreassign.actions.progress
    import kreassign.cli.app

    monkeypatch.setattr(kreassign.cli.app, "open_cluster", lambda args: Moving())
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 2]}]}))
    out: list[str] = []
    err: list[str] = []
    argv = ["--bootstrap-server", "h:1", "--progress", "--watch=0.5", "--reassignment-json-file", str(plan)]
    assert run(argv, out=out.append, err=err.append) == 0
    text = "".join(out)
    assert err == [] and "\x1b" not in text
    lines = text.splitlines()
    assert re.fullmatch(r"\d\d:\d\d:\d\d t-0 broker 3: copying, 1\.9 MiB behind, \?, ETA unknown", lines[0])
    assert lines[-1].endswith("Complete: every partition at its target, every target replica in sync.")
    assert any(line.endswith("t-0 broker 3: in sync") for line in lines)


# ------------------------------------------------------------------------------ --watch [SECONDS]
BASE = ["--bootstrap-server", "h:1", "--progress", "--reassignment-json-file", "f"]


@pytest.mark.parametrize(
    ("extra", "seconds"),
    [
        (["--watch"], 2.0),
        (["--watch", "5"], 5.0),
        (["--watch=0.5"], 0.5),
        (["--watch", "--fail-if-incomplete"], 2.0),  # the next word starts with -: not the value
        (["--watch", "1.5", "--journal-file", "j.json"], 1.5),
    ],
)
def test_watch_takes_an_optional_number_of_seconds(extra, seconds):
    assert watch_seconds(validate(BASE[:3] + extra + BASE[3:]).args) == seconds


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--watch", "x"], "--watch takes a number of seconds, at least 0.5, not 'x'"),
        (["--watch=0.1"], "--watch takes a number of seconds, at least 0.5, not '0.1'"),
        (["--watch", "nan"], "--watch takes a number of seconds, at least 0.5, not 'nan'"),
        (["--watch", "--output", "json"], "--watch draws a table; with --output json, run --progress once per poll"),
    ],
)
def test_bad_watch_values_are_usage_errors(extra, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        validate(BASE + extra)


def test_watch_is_for_progress_only():
    with pytest.raises(UsageError, match=re.escape('Option "[watch]" can\'t be used with action "[verify]"')):
        validate(["--bootstrap-server", "h:1", "--verify", "--reassignment-json-file", "f", "--watch"])


class NotStarted(Moving):
    """t-0 stays on (1, 2); nothing moves it to (3, 2). Broker 3 is away for the first reads."""

    def describe_brokers(self):
        return [Broker(1), Broker(2)] + ([Broker(3)] if self.reads >= 2 else [])

    def list_reassignments(self, partitions=None):
        return {}

    def describe_topics(self, topics):
        return {"t": [PartitionInfo(0, (1, 2), (1, 2), 1)]}


def test_watch_gives_up_on_a_plan_nothing_moves_only_after_a_while():
    """A broker away or a batched run about to start is not the end: the watch ends with not_at_target only once
    the plan has stayed so for STUCK_FOR_S (10 s) of reads."""
    from kreassign.actions.progress import STUCK_FOR_S

    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    plan = ReassignmentPlan(((T("t", 0), (3, 2)),))
    reports = list(watch_progress(NotStarted(), plan, 2.0, clock=lambda: now[0], sleep=sleep))
    assert all(r.outcome is PlanOutcome.NOT_AT_TARGET for r in reports)
    assert len(reports) == STUCK_FOR_S / 2 + 1 and now[0] == STUCK_FOR_S
    assert reports[0].partitions[0].replicas[0].status is ReplicaStatus.UNKNOWN_BROKER  # broker 3 away at first
    assert reports[-1].partitions[0].replicas[0].status is ReplicaStatus.NOT_HOSTED


def test_watch_of_a_plan_nothing_moves_exits_3(monkeypatch, tmp_path):
    import kreassign.actions.progress
    import kreassign.cli.app

    monkeypatch.setattr(kreassign.cli.app, "open_cluster", lambda args: NotStarted())
    monkeypatch.setattr(kreassign.actions.progress, "STUCK_FOR_S", 0.0)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 2]}]}))
    out: list[str] = []
    argv = ["--bootstrap-server", "h:1", "--progress", "--watch=0.5", "--reassignment-json-file", str(plan)]
    assert run(argv, out=out.append, err=out.append) == 3
    assert "".join(out).splitlines()[-1].endswith(" Not at target, and nothing is moving: t-0.")


class Flaky(Moving):
    """Moving, but the controller does not answer the first ``fails`` times it is asked for reassignments."""

    def __init__(self, fails: int) -> None:
        super().__init__()
        self.fails = fails

    def list_reassignments(self, partitions=None):
        from kreassign.errors import ClusterTimeoutError

        if self.fails:
            self.fails -= 1
            raise ClusterTimeoutError("Timed out waiting for a node assignment.")
        return super().list_reassignments(partitions)


def test_watch_rides_out_a_cluster_that_fails_for_a_while_and_stops_on_one_that_keeps_failing():
    from kreassign.actions.progress import FAILING_FOR_S
    from kreassign.errors import ClusterTimeoutError

    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    plan = ReassignmentPlan(((T("t", 0), (3, 2)),))
    reports = list(watch_progress(Flaky(fails=3), plan, 2.0, clock=lambda: now[0], sleep=sleep))
    assert reports[-1].outcome is PlanOutcome.COMPLETE and now[0] >= 6.0
    with pytest.raises(ClusterTimeoutError):
        list(watch_progress(Flaky(fails=10**6), plan, 2.0, clock=lambda: now[0], sleep=sleep))
    assert now[0] >= 6.0 + FAILING_FOR_S
