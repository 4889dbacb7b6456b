"""--output json: every kind of document the code emits is valid against docs/schemas/output-v1.schema.json,
stdout holds exactly one JSON document, and without --output json nothing changes (simulated cluster)."""

from __future__ import annotations

import json

import pytest

from kreassign.actions.batched_cancel import cancel_batched
from kreassign.cli import app
from kreassign.documents import batched_cancel_document
from kreassign.planning.steps import Limits
from tests.schema_check import check_document, errors, load_schema
from tests.unit.test_executor import cluster, killed_after_polls, plan, run, tp

MB = 1_000_000


def write(path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def reassignment(layout: dict[int, list[int]], topic="t") -> dict:
    return {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in layout.items()]}


def run_cli(argv, sim, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(app, "open_cluster", lambda args: sim)
    monkeypatch.setattr(sim, "close", lambda: None, raising=False)
    out, err = [], []
    code = app.run(argv, out.append, err.append)
    return code, "".join(out), "".join(err)


def single_document(stdout: str) -> dict:
    document = json.loads(stdout)  # the whole of stdout is one document
    check_document(document)
    return document


BOOT = ["--bootstrap-server", "127.0.0.1:9"]


@pytest.fixture
def sim():
    s = cluster(n=4)
    s.add_topic("t", [(0, 1), (1, 2)], size=MB)
    return s


def test_generate(sim, tmp_path, monkeypatch):
    topics = write(tmp_path / "topics.json", {"version": 1, "topics": [{"topic": "t"}]})
    argv = [*BOOT, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3", "--seed", "1"]
    code, text, _ = run_cli(argv, sim, monkeypatch)
    assert code == 0 and text.startswith("Current partition replica assignment\n")
    code, stdout, _ = run_cli([*argv, "--output", "json"], sim, monkeypatch)
    document = single_document(stdout)
    assert code == 0 and document["kind"] == "generate"
    assert json.dumps(document["proposed"], separators=(",", ":")) in text, "the same proposal as the text"
    assert {p["partition"] for p in document["current"]["partitions"]} == {0, 1}


def test_execute_list_and_cancel(sim, tmp_path, monkeypatch):
    target = write(tmp_path / "plan.json", reassignment({0: [2, 3], 1: [3, 0]}))
    argv = [*BOOT, "--execute", "--reassignment-json-file", target, "--throttle", "1000000", "--output", "json"]
    code, stdout, _ = run_cli(argv, sim, monkeypatch)
    document = single_document(stdout)
    assert code == 0 and document["kind"] == "execute"
    assert document["throttle"] == {"inter_broker": 1000000, "log_dir": None}
    assert document["started"] == [
        {"topic": "t", "partition": 0, "replicas": [2, 3]},
        {"topic": "t", "partition": 1, "replicas": [3, 0]},
    ]
    assert document["rollback"]["partitions"][0]["replicas"] == [0, 1]

    code, stdout, _ = run_cli([*BOOT, "--list", "--output", "json"], sim, monkeypatch)
    listed = single_document(stdout)
    assert code == 0 and [(r["partition"], r["adding"]) for r in listed["reassignments"]] == [(0, [2, 3]), (1, [3, 0])]

    journal = str(tmp_path / "none.json")  # no batched journal: the Apache cancel
    argv = [*BOOT, "--cancel", "--reassignment-json-file", target, "--journal-file", journal, "--output", "json"]
    code, stdout, _ = run_cli(argv, sim, monkeypatch)
    cancelled = single_document(stdout)
    assert code == 0 and cancelled["kind"] == "cancel" and cancelled["throttles_cleared"] is True
    assert cancelled["cancelled"] == [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    code, stdout, _ = run_cli([*BOOT, "--list", "--output", "json"], sim, monkeypatch)
    assert single_document(stdout)["reassignments"] == []


def test_errors_are_an_error_document_with_hints(sim, tmp_path, monkeypatch):
    missing = str(tmp_path / "missing.json")
    argv = [*BOOT, "--execute", "--reassignment-json-file", missing]
    code, stdout, stderr = run_cli(argv, sim, monkeypatch)
    assert (code, stdout) == (1, f"Error: Unable to read file {missing}\n"), "the Apache line stays"
    assert stderr.startswith(f"kreassign: {missing}: No such file or directory.")
    code, stdout, stderr = run_cli([*argv, "--output", "json"], sim, monkeypatch)
    document = single_document(stdout)
    assert (code, stderr) == (1, "")
    assert document["kind"] == "error" and document["message"] == f"Unable to read file {missing}"
    assert "No such file or directory" in document["hints"][0]

    unknown = write(tmp_path / "plan.json", reassignment({0: [2, 9]}))
    code, stdout, stderr = run_cli([*BOOT, "--execute", "--reassignment-json-file", unknown], sim, monkeypatch)
    assert (code, stdout) == (1, "Error: Unknown broker id 9\n")
    assert "live: 0,1,2,3" in stderr and "Fix the replicas" in stderr


def test_existing_reassignment_names_what_runs_and_the_flag(sim, tmp_path, monkeypatch):
    sim.alter_reassignments({tp(1): (1, 3)})
    target = write(tmp_path / "plan.json", reassignment({0: [2, 3]}))
    code, stdout, stderr = run_cli([*BOOT, "--execute", "--reassignment-json-file", target], sim, monkeypatch)
    assert code == 1 and stdout.startswith("Cannot execute because there is an existing partition assignment.")
    assert "Reassignments running now: t-1 (see --list)" in stderr and "--additional" in stderr


def test_batched_documents(sim, tmp_path):
    targets = {tp(0): (2, 3), tp(1): (3, 0)}
    _, stdout = run(sim, targets, tmp_path, Limits(replicas=1), dry_run=True, output="json")
    dry = single_document(stdout)
    assert dry["kind"] == "batched-plan" and dry["rollback"]["partitions"][0]["replicas"] == [0, 1]

    outcome, stdout = run(sim, targets, tmp_path, Limits(partitions=1), throttle=MB, output="json")
    document = single_document(stdout)
    assert outcome.status == "completed"
    assert document["kind"] == "batched-outcome" and document["status"] == "completed"
    assert document["partitions_done"] == 2 and document["throttles_restored"] is True


def test_batched_cancel_document(tmp_path):
    limits = Limits(partitions=1)
    sim = cluster(limits=limits)
    sim.add_topic("t", [(0, 1)] * 2, size=100 * MB)
    killed_after_polls(2, sim, {tp(0): (2, 3), tp(1): (2, 3)}, tmp_path, limits, throttle=MB)
    result = cancel_batched(sim, plan({tp(0): (2, 3), tp(1): (2, 3)}), str(tmp_path / "j.json"), lambda _: None)
    document = batched_cancel_document(result)
    check_document(document)
    assert document["reverted"] == [{"topic": "t", "partition": 0}] and document["stopped_pid"] is None


def test_every_kind_in_the_schema_is_documented_and_the_checker_catches_mistakes():
    schema = load_schema()
    kinds = {name.removeprefix("kind-") for name in schema["$defs"] if name.startswith("kind-")}
    doc = (load_schema.__globals__["SCHEMA_PATH"].parents[1] / "json-output.md").read_text(encoding="utf-8")
    for kind in kinds:
        assert f"`{kind}`" in doc, kind
    bad = {"version": 1, "kind": "list", "reassignments": [{"topic": "t", "partition": -1}], "extra": True}
    problems = errors(bad, schema["$defs"]["kind-list"], schema)
    assert any("unexpected 'extra'" in p for p in problems)
    assert any("missing 'replicas'" in p for p in problems)
    assert any("below 0" in p for p in problems)
