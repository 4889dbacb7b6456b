"""What kreassign remembers belongs to the cluster it was made on (issue 39), on simulated clusters with their own ids
sharing one state folder (one ops host, staging and prod with the same topic names), through the command line as an
operator types it (no kreassign option first), and through the actions where a fake clock is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kreassign.actions.batched
import kreassign.cli.app
from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import AutoThrottleRequest, ExecuteRequest
from kreassign.cli.app import run as cli_run
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution import executor as executor_module
from kreassign.execution import journal as journal_module
from kreassign.execution.journal import Journal, RunStatus, cluster_journal_path, plan_id, state_dir
from kreassign.execution.memory import KEEP_DAYS_VARIABLE, prune, set_aside_legacy
from kreassign.execution.registry import legacy_registry_dir, live_runs
from kreassign.formats import format_reassignment_json
from kreassign.model import Broker, ReassignmentPlan, TopicPartition
from kreassign.planning.steps import Limits
from tests.schema_check import check_document
from tests.unit.test_executor import Recorder

MB = 1_000_000
A, B = "staging-id", "prod-id"
T0, T1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
TARGETS = {T0: (3, 2), T1: (3, 1)}
FOLLOWER_RATE = "follower.replication.throttled.rate"


def cluster(cluster_id: str, layout=((1, 2), (1, 2))) -> SimulatedCluster:
    sim = SimulatedCluster([Broker(b) for b in (1, 2, 3)], bandwidth=10 * MB, cluster_id=cluster_id)
    sim.add_topic("orders", layout, size=100 * MB)
    return sim


@pytest.fixture
def host(tmp_path, monkeypatch):
    """One ops host: one state folder; ``cli(port, *argv)`` runs the command line against that cluster."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv(KEEP_DAYS_VARIABLE, raising=False)
    plan = tmp_path / "x.json"
    plan.write_text(plan_json(TARGETS))
    ports: list = []
    monkeypatch.setattr(kreassign.cli.app, "open_cluster", lambda args: ports[-1])
    run_on_sim_time = kreassign.actions.batched.execute_batched

    def on_sim_time(port, *args, **kwargs):  # a batched run from the command line, on the cluster's fake clock
        return run_on_sim_time(port, *args, **{"clock": port.clock, "sleep": port.sleep, **kwargs})

    monkeypatch.setattr(kreassign.actions.batched, "execute_batched", on_sim_time)

    def cli(port, *argv: str) -> tuple[int, str, str]:
        ports.append(port)
        out: list[str] = []
        err: list[str] = []
        code = cli_run(["--bootstrap-server", "127.0.0.1:9", *argv], out=out.append, err=err.append)
        return code, "".join(out), "".join(err)

    return cli, str(plan)


def plan_json(targets) -> str:
    partitions = [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r)} for tp, r in targets.items()]
    return json.dumps({"version": 1, "partitions": partitions})


class Kill(BaseException):
    pass


def batched(sim, polls_before_kill=None, **options):
    """A batched run of x.json with the default journal; killed like ``kill -9`` (no clean-up) after some polls."""
    request = ExecuteRequest(ReassignmentPlan(tuple(TARGETS.items())), limits=Limits(partitions=2), **options)
    if polls_before_kill is None:
        return execute_batched(sim, request, lambda _t: None, Recorder(), clock=sim.clock, sleep=sim.sleep)

    def kill(n):
        if n == polls_before_kill:
            raise Kill

    clean_up = executor_module.BatchedExecutor._clean_up
    executor_module.BatchedExecutor._clean_up = lambda self, status, message: []
    try:
        with pytest.raises(Kill):
            execute_batched(sim, request, lambda _t: None, Recorder(kill), clock=sim.clock, sleep=sim.sleep)
    finally:
        executor_module.BatchedExecutor._clean_up = clean_up
    return None


HOLDER = """
import json, os, sys, time
from kreassign.execution.journal import Journal, JournalState, RunStatus, plan_id
from kreassign.execution.registry import register
from kreassign.model import TopicPartition
cluster, path, plan_file, pairs = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
targets = {TopicPartition(t, p): tuple(r) for t, p, r in pairs}
journal = Journal(path)
journal.check_location()
assert journal.try_lock()
journal.save(JournalState(plan_id(targets), RunStatus.RUNNING, dict(targets), dict(targets), {}, pid=os.getpid(),
                          cluster_id=cluster or None))
if cluster:
    register(cluster, plan_id(targets), journal, plan_file)
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture
def live_run():
    """``start(cluster id, journal, plan file, targets)``: a process that runs a plan as a live batched run does
    (its journal running, its lock held, registered on its cluster; between two steps, nothing in Kafka)."""
    started: list[subprocess.Popen] = []

    def start(cluster_id: str, journal, plan_file: str, targets=TARGETS) -> subprocess.Popen:
        pairs = json.dumps([[tp.topic, tp.partition, list(r)] for tp, r in targets.items()])
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, cluster_id, str(journal), plan_file, pairs],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.getcwd()},
        )
        started.append(holder)
        assert holder.stdout.readline() == "ready\n"
        return holder

    yield start
    for holder in started:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------------------------------------- blockers 1 and 2
def test_an_apache_cancel_on_one_cluster_does_not_touch_a_dead_run_of_the_same_plan_on_another(host):
    cli, plan = host
    prod, staging = cluster(B), cluster(A, ((2, 1), (2, 3)))
    batched(prod, polls_before_kill=2, throttle=MB)
    prod_journal = Journal(cluster_journal_path(B, TARGETS))
    before = prod_journal.path.read_text()
    assert prod.list_reassignments()

    code, out, err = cli(staging, "--cancel", "--reassignment-json-file", plan)
    assert (code, err) == (0, "")
    assert out.startswith("None of the specified partition reassignments are active.\n"), out
    assert prod_journal.path.read_text() == before and prod.list_reassignments()  # prod's run untouched

    code, out, err = cli(prod, "--cancel", "--reassignment-json-file", plan)
    assert code == 0 and out.startswith("Successfully cancelled partition reassignment"), out
    assert "cleaned up after the batched run of this plan that died" in err
    assert prod_journal.load().status is RunStatus.CANCELLED


def test_a_plan_run_on_a_second_cluster_starts_its_own_lineage_and_original(host):
    cli, plan = host
    prod, staging = cluster(B), cluster(A, ((2, 1), (2, 3)))
    batched(prod, polls_before_kill=2, throttle=MB)  # prod: a run of x.json that can be resumed
    outcome = batched(staging)
    assert outcome.status is RunStatus.COMPLETED
    staging_journal = Journal(cluster_journal_path(A, TARGETS))
    assert staging_journal.load().cluster_id == A
    original = json.loads(staging_journal.original_path.read_text())
    assert [p["replicas"] for p in original["partitions"]] == [[2, 1], [2, 3]]
    prod_original = json.loads(Journal(cluster_journal_path(B, TARGETS)).original_path.read_text())
    assert [p["replicas"] for p in prod_original["partitions"]] == [[1, 2], [1, 2]]
    # and prod's own run still resumes from its own journal
    code, out, _err = cli(prod, "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "2")
    assert code == 0 and "Resuming the batched run of this plan that died" in out, out


# ---------------------------------------------------------------------------------------------- --journal-file
def test_a_journal_file_of_another_cluster_is_one_line_and_nothing_changes(host):
    cli, plan = host
    prod, staging = cluster(B), cluster(A)
    batched(prod, polls_before_kill=2, throttle=MB)
    journal = Journal(cluster_journal_path(B, TARGETS))
    before = journal.path.read_text()
    line = (
        f"Error: The journal {journal.path} belongs to cluster {B}, not to cluster {A} that this command is "
        "aimed at; nothing was changed\n"
    )
    for argv in (
        ("--execute", "--reassignment-json-file", plan, "--max-partition-movements", "1", "--journal-file"),
        ("--cancel", "--reassignment-json-file", plan, "--journal-file"),
        ("--progress", "--reassignment-json-file", plan, "--journal-file"),
    ):
        code, out, err = cli(staging, *argv, str(journal.path))
        assert (code, out, err) == (1, line, ""), argv
    assert journal.path.read_text() == before
    assert staging.list_reassignments() == {} and staging.partitions[T0].replicas == [1, 2]


V1_JOURNAL = Path(__file__).parent / "data" / "journal-v1-cancelled.json"
"""A journal as the version before issue 39 wrote it (version 1, no cluster id): x.json run on a simulated cluster
by that version's execute_batched and cancelled after its first polls."""


def write_v1_journal(path, original=((1, 2), (1, 2)), status=RunStatus.CANCELLED) -> None:
    """``V1_JOURNAL`` at ``path`` (its originals and status as given), and its original file beside it, as that
    version wrote them."""
    data = json.loads(V1_JOURNAL.read_text())
    assert (data["version"], data["plan_id"], "cluster_id" in data) == (1, plan_id(TARGETS), False)
    for entry in data["partitions"]:
        entry["original"] = list(original[entry["partition"]])
    data["status"] = status
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    originals = dict(zip((T0, T1), original, strict=True))
    Journal(path).original_path.write_text(format_reassignment_json(originals, {}) + "\n")


def test_a_version_1_journal_file_is_taken_as_the_named_clusters_and_stamped(host, tmp_path):
    cli, plan = host
    path = tmp_path / "old" / "j.json"
    write_v1_journal(path)
    code, out, err = cli(cluster(A), "--execute", "--reassignment-json-file", plan, "--max-partition-movements",
                         "2", "--journal-file", str(path))  # fmt: skip
    assert code == 0, out + err
    assert err.split("\n")[0] + "\n" == (
        f"kreassign: the journal {path} was written by an earlier version, which did not record its cluster: it is "
        f"taken as the journal of cluster {A}, that this command is aimed at.\n"
    )
    assert "Resuming the batched run of this plan that was cancelled" in out
    data = json.loads(path.read_text())
    assert (data["version"], data["cluster_id"], data["status"]) == (2, A, "completed")


def test_a_legacy_default_journal_is_set_aside_and_resumes_with_its_journal_file(host):
    cli, plan = host
    legacy = state_dir() / f"{plan_id(TARGETS)}.json"
    write_v1_journal(legacy, original=((2, 1), (2, 3)))  # it ran on prod, where orders-0 was on 2,1
    prod = cluster(B, ((2, 1), (2, 3)))
    staging = cluster(A)
    code, out, err = cli(staging, "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "2")
    assert code == 0, out + err
    aside = state_dir() / "unbound" / plan_id(TARGETS)
    assert err.split("\n")[0] + "\n" == (
        f"kreassign: the journal of this plan that an earlier version kept at {legacy} does not say which cluster it "
        f"was made on: set aside in {aside}; to resume or cancel it on the cluster it ran on, add --journal-file "
        f"{aside / legacy.name}\n"
    )
    assert "Resuming" not in out and not legacy.exists()  # staging starts its own lineage
    original = json.loads(Journal(cluster_journal_path(A, TARGETS)).original_path.read_text())
    assert [p["replicas"] for p in original["partitions"]] == [[1, 2], [1, 2]]
    assert sorted(p.name for p in aside.iterdir()) == [f"{plan_id(TARGETS)}-original.json", legacy.name]
    code, out, err = cli(prod, "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "2",
                         "--journal-file", str(aside / legacy.name))  # fmt: skip
    assert code == 0 and "Resuming the batched run of this plan that was cancelled" in out, out + err
    assert "taken as the journal of cluster prod-id" in err


def test_a_run_of_an_earlier_version_still_alive_is_left_alone(host, live_run):
    cli, plan = host
    legacy = state_dir() / f"{plan_id(TARGETS)}.json"
    holder = live_run("", legacy, plan)  # no cluster id: written as the earlier version wrote it
    record = legacy_registry_dir() / f"{plan_id(TARGETS)}-{holder.pid}.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"pid": holder.pid, "plan_id": plan_id(TARGETS), "journal": str(legacy)}))
    code, out, err = cli(cluster(A), "--cancel", "--reassignment-json-file", plan)
    assert code == 0 and out.startswith("None of the specified partition reassignments are active.\n")
    assert err == (
        f"kreassign: a batched run of this plan started by an earlier version is running (pid {holder.pid}, journal "
        f"{legacy}); it did not record its cluster, so this command leaves it alone: --journal-file {legacy} on the "
        "cluster it runs on reaches it\n"
    )
    assert legacy.exists() and Journal(legacy).read_control() == {}  # not asked to stop


# ---------------------------------------------------------------------------------------------- blocker 3
def test_an_apache_execute_between_two_steps_of_a_run_is_refused_and_names_the_throttle_command(host, live_run):
    cli, plan = host
    staging = cluster(A)
    holder = live_run(A, cluster_journal_path(A, TARGETS), plan)
    assert staging.list_reassignments() == {}  # the instant between two steps
    code, out, err = cli(staging, "--execute", "--reassignment-json-file", plan, "--throttle", "20000000")
    assert (code, out) == (1, "Cannot execute because there is an existing partition assignment.  Use --additional "
                              "to override this and create a new partition assignment in addition to the existing "
                              "one. The --additional flag can also be used to change the throttle by resubmitting "
                              "the current reassignment.\n")  # fmt: skip
    assert err == (
        f"kreassign: A batched run (pid {holder.pid}, journal {cluster_journal_path(A, TARGETS)}) is moving {plan} "
        f"on this cluster, a step at a time. To change its throttle: --execute --additional --reassignment-json-file "
        f"{plan} --throttle RATE (its partitions are not submitted again: the run takes the throttle); to stop it: "
        f"--cancel --reassignment-json-file {plan}.\n"
    )
    assert staging.list_reassignments() == {} and staging.configs == {}


def test_an_apache_execute_additional_hands_the_throttle_to_the_run_and_submits_only_the_rest(host, live_run, tmp_path):
    cli, plan = host
    staging = cluster(A)
    staging.add_topic("logs", [(1, 2)], size=MB)
    journal = Journal(cluster_journal_path(A, TARGETS))
    holder = live_run(A, journal.path, plan)
    wider = tmp_path / "wider.json"  # the run's plan, one partition with another target, and one more
    wider.write_text(plan_json({T0: (3, 2), T1: (2, 3), TopicPartition("logs", 0): (3, 2)}))
    code, out, err = cli(staging, "--execute", "--additional", "--reassignment-json-file", str(wider), "--throttle",
                         "20000000")  # fmt: skip
    assert code == 0, out + err
    assert out.split("\n")[4:] == [
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.",
        "The inter-broker throttle limit was set to 20000000 B/s",
        "Successfully started partition reassignments for logs-0,orders-0,orders-1",
        "",
    ]
    assert err == (
        f"kreassign: orders-0 stay in the steps of the batched run of {plan} on this cluster (pid {holder.pid}), "
        "which moves them to the same target: not submitted here; it takes the throttle 20000000 B/s from its next "
        "poll.\n"
    )
    assert set(staging.list_reassignments()) == {T1, TopicPartition("logs", 0)}  # not orders-0
    assert journal.read_control() == {"throttle": 20000000}


def test_an_apache_execute_additional_in_json_says_what_it_started_and_what_it_left_to_the_run(
    host, live_run, tmp_path
):
    """``started`` named orders-0 too, which the run keeps (it was not submitted)."""
    cli, plan = host
    staging = cluster(A)
    journal = Journal(cluster_journal_path(A, TARGETS))
    holder = live_run(A, journal.path, plan)
    wider = tmp_path / "wider.json"
    wider.write_text(plan_json({T0: (3, 2), T1: (2, 3)}))
    argv = ["--execute", "--additional", "--reassignment-json-file", str(wider), "--throttle", "20000000"]
    code, out, err = cli(staging, *argv, "--output", "json")
    assert code == 0, out + err
    document = json.loads(out)
    check_document(document)
    assert document["started"] == [{"topic": "orders", "partition": 1, "replicas": [2, 3]}]
    assert document["handed_to_runs"] == [
        {
            "pid": holder.pid,
            "journal": str(journal.path.resolve()),
            "plan_file": str(Path(plan).resolve()),
            "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 2]}],
            "changes": {"throttle": 20000000},
        }
    ]
    assert document["throttle"] == {"inter_broker": 20000000, "log_dir": None}
    assert set(staging.list_reassignments()) == {T1}
    # nothing handed over: the list is empty, and started is the whole file (the Apache tool's behaviour)
    code, out, _err = cli(cluster(B), "--execute", "--reassignment-json-file", str(wider), "--output", "json")
    assert code == 0 and json.loads(out)["handed_to_runs"] == [] and len(json.loads(out)["started"]) == 2


# ---------------------------------------------------------------------------------------------- --verify
def test_verify_fail_if_incomplete_says_in_progress_while_a_run_on_this_cluster_moves_the_plan(host, live_run):
    cli, plan = host
    staging, prod = cluster(A), cluster(B)
    live_run(A, cluster_journal_path(A, TARGETS), plan)
    code, out, _err = cli(staging, "--verify", "--reassignment-json-file", plan, "--fail-if-incomplete")
    assert code == 2, out
    assert out.startswith("Status of partition reassignment:\nThere is no active reassignment of partition orders-0")
    code, _out, _err = cli(prod, "--verify", "--reassignment-json-file", plan, "--fail-if-incomplete")
    assert code == 3  # on prod nothing moves the plan


def test_verify_asks_the_live_runs_of_its_cluster_to_keep_their_throttles_before_it_clears_them(host, live_run):
    """Between two steps nothing is reassigning: kreassign's --verify clears every throttle as the Apache tool does
    (stdout unchanged), having first asked the runs on its cluster, and on that cluster only, to put theirs back."""
    cli, plan = host
    staging, prod = cluster(A), cluster(B)
    journal = Journal(cluster_journal_path(A, TARGETS))
    holder = live_run(A, journal.path, plan)
    code, out, err = cli(staging, "--verify", "--reassignment-json-file", plan)
    assert code == 0 and out.endswith(
        "\nClearing broker-level throttles on brokers 1,2,3\nClearing topic-level throttles on topic orders\n"
    )
    assert err == ""  # asked, but its journal says it holds no throttle: nothing of it is cleared, nothing said
    assert journal.read_control() == {"keep_throttles": {"pid": os.getpid(), "by": "--verify"}}
    journal.clear_control()
    state = journal.load()
    state.throttles_written = {"broker": {"3": {FOLLOWER_RATE: "1000000"}}}
    journal.save(state)  # a run that throttles
    code, again, err = cli(staging, "--verify", "--reassignment-json-file", plan)
    assert code == 0 and again == out
    assert err == (
        f"kreassign: the batched run of {plan} on this cluster (pid {holder.pid}) puts back its own throttles, which "
        "this --verify clears as the Apache tool does, and goes on\n"
    )
    assert journal.read_control() == {"keep_throttles": {"pid": os.getpid(), "by": "--verify"}}
    code, _out, err = cli(prod, "--verify", "--reassignment-json-file", plan)
    assert code == 0 and err == ""  # another cluster's: not asked
    assert not Journal(cluster_journal_path(B, TARGETS)).control_path.exists()
    code, out, err = cli(cluster(A), "--verify", "--preserve-throttles", "--reassignment-json-file", plan)
    assert "Clearing" not in out and err == ""  # nothing cleared: nothing asked


# ---------------------------------------------------------------------------------------------- --progress, resume
def test_progress_after_an_interrupted_run_says_what_its_clean_up_did(host, monkeypatch):
    cli, plan = host
    prod = cluster(B)

    def interrupt(n):
        if n == 2:
            raise executor_module.Interrupted(2)

    request = ExecuteRequest(ReassignmentPlan(tuple(TARGETS.items())), limits=Limits(partitions=1), throttle=MB)
    outcome = execute_batched(prod, request, lambda _t: None, Recorder(interrupt), clock=prod.clock, sleep=prod.sleep)
    assert outcome.status is RunStatus.INTERRUPTED and outcome.reverted
    _code, _out, err = cli(prod, "--progress", "--reassignment-json-file", plan)
    journal = cluster_journal_path(B, TARGETS)
    assert err == (
        f"kreassign: The batched run of this plan was interrupted by SIGINT after 0 step(s) ({journal}): its steps in "
        "flight were put back and its throttles were restored; nothing of it is left on the cluster. Run the same "
        "--execute to resume the plan.\n"
    )


def test_a_resumed_run_prints_the_assignment_as_it_is_now(host):
    cli, plan = host
    prod = cluster(B)
    request = ExecuteRequest(ReassignmentPlan(tuple(TARGETS.items())), limits=Limits(partitions=1))

    def stop_after_first(n):
        if prod.partitions[T0].replicas == [3, 2]:
            Journal(cluster_journal_path(B, TARGETS)).request(cancel=True)

    execute_batched(prod, request, lambda _t: None, Recorder(stop_after_first), clock=prod.clock, sleep=prod.sleep)
    assert prod.partitions[T0].replicas == [3, 2]
    code, out, _err = cli(prod, "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "1")
    assert code == 0
    block = json.loads(out.split("\n")[2])
    assert [p["replicas"] for p in block["partitions"]] == [[3, 2], [1, 2]]  # now, not before the first run
    original = cluster_journal_path(B, TARGETS).with_name(f"{plan_id(TARGETS)}-original.json")
    assert f"the original assignment is the one from before its first run, in {original}.\n" in out


# ---------------------------------------------------------------------------------------------- sampling, auto
def test_a_run_handed_over_spends_no_sampling_window(host, live_run):
    _cli, plan = host
    prod = cluster(B)
    live_run(B, cluster_journal_path(B, TARGETS), plan)
    slept: list[float] = []
    request = ExecuteRequest(
        ReassignmentPlan(tuple(TARGETS.items())), limits=Limits(partitions=1), additional=True, throttle=MB,
        sample_window=10,
    )  # fmt: skip
    assert execute_batched(prod, request, lambda _t: None, Recorder(), clock=prod.clock, sleep=slept.append) is None
    assert slept == []
    assert Journal(cluster_journal_path(B, TARGETS)).read_control() == {"throttle": MB}


def test_auto_with_sample_rates_samples_once_and_yields_to_a_handed_throttle(host):
    _cli, _plan = host
    prod = cluster(B)
    prod.write(T0, MB // 2)
    windows: list[float] = []

    def sleep(seconds):
        if seconds >= 1:
            windows.append(seconds)
        prod.sleep(seconds)

    def hand_over(n):
        if n == 2:
            Journal(cluster_journal_path(B, TARGETS)).request(throttle=3 * MB)

    request = ExecuteRequest(
        ReassignmentPlan(tuple(TARGETS.items())), limits=Limits(partitions=1), sample_window=10,
        auto=AutoThrottleRequest(capacity=20 * MB), allow_slow_moves=True,
    )  # fmt: skip
    reporter = Recorder(hand_over)
    outcome = execute_batched(prod, request, lambda _t: None, reporter, clock=prod.clock, sleep=sleep)
    assert outcome.status is RunStatus.COMPLETED
    assert windows[:1] == [10] and all(w < 10 for w in windows[1:]), windows  # one window, not two
    said = [e for e in reporter.events if "auto" in e]
    assert said[-1] == "--throttle auto stops adjusting: the throttle of 3000000 B/s handed over holds from now on"


def test_a_throttle_handed_over_stays_through_the_re_measures_of_auto(host):
    prod = cluster(B)
    rates: list[str | None] = []

    def hand_over(n):
        if n == 2:
            Journal(cluster_journal_path(B, TARGETS)).request(throttle=MB)
        rates.append(prod.configs.get(ConfigResource(ResourceType.BROKER, "3"), {}).get(FOLLOWER_RATE))

    request = ExecuteRequest(
        ReassignmentPlan(tuple(TARGETS.items())),
        limits=Limits(partitions=1),
        auto=AutoThrottleRequest(capacity=20 * MB),
    )
    execute_batched(prod, request, lambda _t: None, Recorder(hand_over), clock=prod.clock, sleep=prod.sleep)
    assert len(rates) > 100 and set(rates[3:]) == {str(MB)}, rates[:5]  # runs for minutes at 1 MB/s: re-measured


# ---------------------------------------------------------------------------------------------- old state
def age(path, days: float) -> None:
    when = time.time() - days * 86400
    data = json.loads(path.read_text())
    data["updated"] = when
    path.write_text(json.dumps(data))
    os.utime(path, (when, when))


def test_old_state_is_pruned_by_the_documented_rule(host, monkeypatch):
    prod = cluster(B)
    assert batched(prod).status is RunStatus.COMPLETED
    journal = Journal(cluster_journal_path(B, TARGETS))
    journal.lock_path.write_text("")  # as a run leaves it
    other = Journal(journal.path.with_name("0123456789abcdef.json"))  # a cancelled run: resumable, kept
    journal_state = journal.load()
    journal_state.status = RunStatus.CANCELLED
    other.save(journal_state)
    other.lock_path.write_text("")
    other.control_path.write_text("{}")
    legacy = state_dir() / "fedcba9876543210.json"
    write_v1_journal(legacy, status=RunStatus.COMPLETED)
    age(legacy, 40)
    pruned = prune()
    # young: the completed run stays; the lock and control files of ended runs go
    assert journal.path.exists() and journal.original_path.exists() and other.path.exists()
    assert not journal.lock_path.exists() and not other.lock_path.exists() and not other.control_path.exists()
    assert pruned.runs == [legacy] and not legacy.exists() and not Journal(legacy).original_path.exists()
    age(journal.path, 31)
    age(other.path, 400)
    assert prune().runs == [journal.path]
    assert not journal.path.exists() and not journal.original_path.exists() and other.path.exists()
    monkeypatch.setenv(KEEP_DAYS_VARIABLE, "500")
    assert prune().runs == []
    other.path.unlink()
    other.original_path.unlink(missing_ok=True)
    prune()
    assert not (state_dir() / "clusters").exists()  # empty folders go


def test_a_bad_keep_days_is_one_warning_and_the_default(host, monkeypatch):
    monkeypatch.setenv(KEEP_DAYS_VARIABLE, "soon")
    said: list[str] = []
    prune(notes=said.append)
    assert said == [f"kreassign: warning: {KEEP_DAYS_VARIABLE}=soon is not a number of days; 30 are kept\n"]


def test_a_lock_file_removed_under_a_run_opening_it_is_taken_again_on_the_new_file(host, monkeypatch):
    """The pruner removes a lock file while holding its lock; a run that opened the old file meanwhile gets the
    lock of a file no longer at the path: it must take the lock of the file there now, or two runs would each
    think they hold the plan."""
    path = state_dir() / "j.json"
    pruner, starting, third = Journal(path), Journal(path), Journal(path)
    assert pruner.try_lock()
    real_open = os.open
    raced: list[int] = []

    def racing_open(name, flags, mode=0o777):
        fd = real_open(name, flags, mode)
        if str(name) == str(pruner.lock_path) and not raced:  # between the open and the flock of the run
            raced.append(fd)
            pruner.remove_lock_file()
            pruner.unlock()
        return fd

    monkeypatch.setattr(journal_module.os, "open", racing_open)
    assert starting.try_lock()
    monkeypatch.undo()
    assert raced and third.is_running_elsewhere()
    starting.unlock()
    assert not third.is_running_elsewhere()


def test_set_aside_without_legacy_state_does_nothing(host):
    assert set_aside_legacy(TARGETS) is None
    assert not (state_dir() / "unbound").exists()
    assert live_runs(A) == []


def test_the_batched_form_finds_the_run_of_its_plan_on_this_cluster_whatever_its_journal(host, live_run, tmp_path):
    """A run started with --journal-file, and a second shell's batched --additional without it: the throttle goes to
    that run; no second run of the plan starts beside it."""
    cli, plan = host
    elsewhere = Journal(tmp_path / "mine" / "j.json")
    holder = live_run(B, elsewhere.path, plan)
    code, out, _err = cli(cluster(B), "--execute", "--reassignment-json-file", plan, "--max-partition-movements", "1",
                          "--additional", "--throttle", "5000000")  # fmt: skip
    assert (code, out) == (0, f"The batched reassignment running as pid {holder.pid} will use the new throttle from "
                              "its next poll.\n")  # fmt: skip
    assert elsewhere.read_control() == {"throttle": 5000000}
    assert not cluster_journal_path(B, TARGETS).exists()
