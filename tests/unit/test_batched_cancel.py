"""The Apache-form --cancel of a plan whose batched run used the default journal and died (kill -9), through
the command line against the simulated cluster: Apache's text on stdout, kreassign's account on stderr and in
``--output json``; the journal kept for a resume, the original file untouched (issue 33)."""

from __future__ import annotations

import json

import pytest

import kreassign.cli.app
from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cli.app import run as cli_run
from kreassign.execution import executor as executor_module
from kreassign.execution.journal import Journal, cluster_journal_path
from kreassign.planning.steps import Limits
from tests.schema_check import check_document
from tests.unit.test_executor import MB, Kill, Recorder, cluster, plan, tp

TARGETS = {tp(0): (2, 3), tp(1): (2, 3)}


@pytest.fixture
def dead_run(tmp_path, monkeypatch):
    """A batched run with the default journal killed (no clean-up) while its first step copies."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    limits = Limits(partitions=1)
    sim = cluster(limits=limits)
    sim.add_topic("t", [(0, 1)] * 2, size=100 * MB)

    def kill(n):
        if n == 2:
            raise Kill

    monkeypatch.setattr(executor_module.BatchedExecutor, "_clean_up", lambda self, status, message: [])
    with pytest.raises(Kill):
        execute_batched(
            sim, ExecuteRequest(plan(TARGETS), limits=limits, throttle=MB), lambda _: None, Recorder(kill),
            clock=sim.clock, sleep=sim.sleep,
        )  # fmt: skip
    monkeypatch.undo()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(kreassign.cli.app, "open_cluster", lambda args: sim)
    assert sim.list_reassignments() and sim.configs
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": p.partition, "replicas": list(r)}
                                                 for p, r in TARGETS.items()]})
    )  # fmt: skip
    return sim, str(path)


def invoke(*argv: str) -> tuple[int, str, str]:
    out: list[str] = []
    err: list[str] = []
    code = cli_run(["--bootstrap-server", "127.0.0.1:9", *argv], out=out.append, err=err.append)
    return code, "".join(out), "".join(err)


def test_apache_form_cancel_of_a_dead_default_journal_run_prints_apache_text(dead_run):
    sim, plan_path = dead_run
    journal = Journal(cluster_journal_path("simulated-cluster", TARGETS))
    original = journal.original_path.read_text()
    code, out, err = invoke("--cancel", "--reassignment-json-file", plan_path)
    assert code == 0
    assert out == (
        "Successfully cancelled partition reassignment for: t-0\n"
        "None of the specified partition moves are active."
        "Clearing broker-level throttles on brokers 0,1,2,3,4,5,6,7,8,9\n"
        "Clearing topic-level throttles on topic t\n"
    ), err
    assert "kreassign: cleaned up after the batched run of this plan that died (pid " in err
    assert f"the assignment from before the plan's first run is in {journal.original_path}" in err
    assert sim.list_reassignments() == {} and sim.partitions[tp(0)].replicas == [0, 1]
    state = journal.load()
    assert state.status == "cancelled" and state.in_flight == {} and state.status.resumable
    assert journal.original_path.read_text() == original


def test_apache_form_cancel_json_names_the_batched_run(dead_run):
    _sim, plan_path = dead_run
    code, out, err = invoke("--cancel", "--reassignment-json-file", plan_path, "--output", "json")
    assert code == 0, err
    document = json.loads(out)
    check_document(document)
    assert document["kind"] == "cancel" and document["cancelled"] == [{"topic": "t", "partition": 0}]
    [run] = document["batched_runs"]
    assert run["stopped_pid"] is None and run["reverted"] == [{"topic": "t", "partition": 0}]
    assert run["rollback_file"] == str(Journal(cluster_journal_path("simulated-cluster", TARGETS)).original_path)


def test_kreassign_form_cancel_keeps_kreassign_text(dead_run, tmp_path):
    _sim, plan_path = dead_run
    journal = cluster_journal_path("simulated-cluster", TARGETS)
    code, out, _err = invoke("--cancel", "--reassignment-json-file", plan_path, "--journal-file", str(journal))
    assert code == 0
    assert out.startswith("Cancelled the batched reassignment of pid "), out
    assert "Run the same --execute again to resume the plan.\n" in out
    assert out.endswith(f"--execute --reassignment-json-file {Journal(journal).original_path}\n")


def test_apache_form_cancel_with_an_unreadable_default_journal_still_prints_apache_text(dead_run):
    sim, plan_path = dead_run
    journal = Journal(cluster_journal_path("simulated-cluster", TARGETS))
    journal.path.write_text("{ torn")
    code, out, err = invoke("--cancel", "--reassignment-json-file", plan_path)
    assert code == 0
    assert out.startswith("Successfully cancelled partition reassignment for: t-0\n"), out
    assert f"kreassign: warning: The journal {journal.path} cannot be read" in err
    assert sim.list_reassignments() == {}
