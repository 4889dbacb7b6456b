"""--output json on the real cluster: the documents of generate, execute, list, cancel, a batched dry run and
an error are valid against docs/schemas/output-v1.schema.json and agree with the Apache text of the same run."""

from __future__ import annotations

import json

import pytest

from kreassign.devcluster.topics import create_topic
from tests.integration.differential import run_ours
from tests.schema_check import check_document

pytestmark = pytest.mark.integration


def document(args: list[str]) -> dict:
    result = run_ours([*args, "--output", "json"])
    parsed = json.loads(result.stdout)
    check_document(parsed)
    assert result.code == (1 if parsed["kind"] == "error" else 0), result
    return parsed


def test_json_documents_on_the_real_cluster(bootstrap, tmp_path):
    topic = "json-output"
    create_topic(bootstrap, topic, [[1, 2], [2, 3]], messages=200)
    boot = ["--bootstrap-server", bootstrap]
    (tmp_path / "topics.json").write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    generate = [*boot, "--generate", "--topics-to-move-json-file", str(tmp_path / "topics.json")]
    generated = document([*generate, "--broker-list", "1,2,3", "--seed", "3"])
    text = run_ours([*generate, "--broker-list", "1,2,3", "--seed", "3"]).stdout
    assert json.dumps(generated["proposed"], separators=(",", ":")) in text
    assert all(len(p["log_dirs"]) == 2 for p in generated["current"]["partitions"])

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [3, 1]}]}))
    dry = document(
        [*boot, "--execute", "--reassignment-json-file", str(plan), "--max-replica-movements", "1", "--dry-run"]
    )
    assert dry["kind"] == "batched-plan" and dry["rollback"]["partitions"][0]["replicas"] == [1, 2]

    executed = document([*boot, "--execute", "--reassignment-json-file", str(plan), "--throttle", "1000"])
    assert executed["started"] == [{"topic": topic, "partition": 0, "replicas": [3, 1]}]
    listed = document([*boot, "--list"])
    assert listed["kind"] == "list"
    cancelled = document(
        [*boot, "--cancel", "--reassignment-json-file", str(plan), "--journal-file", str(tmp_path / "j")]
    )
    assert cancelled["kind"] == "cancel" and cancelled["throttles_cleared"] is True
    assert document([*boot, "--list"])["reassignments"] == []

    error = document([*boot, "--execute", "--reassignment-json-file", str(tmp_path / "missing.json")])
    assert error["kind"] == "error" and error["message"].startswith("Unable to read file ")
