"""--progress rendering: the tabulate table for pipes, rich for terminals, and the JSON documents."""

from __future__ import annotations

import json

import pytest

from kreassign.actions.verify import VerifyResult
from kreassign.cli.render_progress import render_progress_json, render_progress_rich, render_progress_table
from kreassign.documents import progress_document, verify_document
from kreassign.humanize import format_bytes, format_eta
from kreassign.model import PartitionInfo, PartitionReassignment, TopicPartition, TopicPartitionReplica
from kreassign.planning.progress import ReplicaSample, compute_progress
from kreassign.planning.states import LogDirMoveState, PartitionState
from tests.schema_check import check_document

T = TopicPartition


def R(partition: int, broker: int) -> TopicPartitionReplica:
    return TopicPartitionReplica("orders", partition, broker)


@pytest.fixture(scope="module")
def report():
    """orders-0 moves 1 -> 3 (3 behind, copying), orders-1 has broker 3 out of ISR (stalled),
    orders-7 does not exist, topic gone does not exist and broker 42 neither."""
    meta = {
        "orders": [PartitionInfo(0, (3, 2, 1), (1, 2), 1), PartitionInfo(1, (2, 3), (2,), 2)],
        "gone": None,
    }
    moving = {T("orders", 0): PartitionReassignment((3, 2, 1), adding=(3,), removing=(1,))}
    leo = {R(0, 1): 4000, R(0, 2): 4000, R(0, 3): 1000, R(1, 2): 500, R(1, 3): 400}
    size = {R(0, 1): 4_000_000, R(0, 2): 4_000_000, R(0, 3): 1_000_000, R(1, 2): 500_000, R(1, 3): 400_000}
    first = ReplicaSample(100.0, leo, size)
    last = ReplicaSample(101.0, {**leo, R(0, 3): 1250}, {**size, R(0, 3): 1_250_000})
    targets = [(T("orders", 0), (3, 2)), (T("orders", 1), (2, 3)), (T("orders", 7), (1,)), (T("gone", 0), (1, 42))]
    return compute_progress(targets, meta, moving, (1, 2, 3), last, first)


TABLE = """\
Topic    Partition    Broker    Status                        Bytes behind    Rate (B/s)    ETA
-------  -----------  --------  ----------------------------  --------------  ------------  -------
gone     0            1         Unknown topic                 -               -             -
gone     0            42        Unknown broker                -               -             -
orders   0            3         Behind: 2750 messages behind  2750000         250000        11s
orders   0            2         In sync                       -               -             -
orders   1            2         In sync                       -               -             -
orders   1            3         Behind: 100 messages behind   100000          0             unknown
orders   7            1         Unknown partition             -               -             -
Under-replicated only because of the reassignment: orders-0 (adding 3)
Under-replicated: orders-1 (out of ISR: 3)
"""

RICH = """\
Reassignment progress
Partition  Broker  State             Behind          Rate        ETA
gone-0          1  no topic               -             -          -
gone-0         42  no broker              -             -          -
orders-0        3  copying          2.6 MiB   244.1 KiB/s        11s
orders-0        2  in sync                -             -          -
orders-1        2  in sync                -             -          -
orders-1        3  behind          97.7 KiB         0 B/s    unknown
orders-7        1  no partition           -             -          -
1 of 4 partitions done, 1 moving, 2 unknown; 2.7 MiB to copy, ETA 11s
Under-replicated only because of the reassignment: orders-0 (adding 3)
Under-replicated: orders-1 (out of ISR: 3)
"""


def test_table_for_pipes(report):
    assert render_progress_table(report) == TABLE


def test_rich_table_for_terminals(report):
    plain = render_progress_rich(report, width=80, color=False)
    assert [line.rstrip() for line in plain.splitlines()] == RICH.splitlines()


def test_rich_colours_statuses_on_a_terminal(report):
    coloured = render_progress_rich(report, width=80, color=True)
    assert "\x1b[" in coloured and "in sync" in coloured


def test_progress_json_document(report):
    document = json.loads(render_progress_json(report))
    assert document == progress_document(report)
    check_document(document)
    assert document["version"] == 1 and document["kind"] == "progress"
    assert document["outcome"] == "not_at_target"
    assert document["interval_s"] == 1.0
    assert document["summary"] == {
        "partitions": 4,
        "complete": 1,
        "moving": 1,
        "not_at_target": 2,
        "replicas_in_sync": 2,
        "replicas_behind": 2,
        "under_replicated_by_reassignment": 1,
        "under_replicated": 1,
        # 2,750,000 into broker 3 of orders-0, 100,000 into broker 3 of orders-1, shrinking at 250,000 B/s
        "bytes_to_copy": 2_850_000,
        "eta_s": 11.4,
        "eta_bound_by_throttle": False,
        "write_bytes_per_s": None,
        "copy_slower_than_writes": False,
    }
    moving = document["partitions"][1]
    assert moving == {
        "topic": "orders",
        "partition": 0,
        "state": "moving",
        "target_replicas": [3, 2],
        "current_replicas": [3, 2, 1],
        "isr": [1, 2],
        "leader": 1,
        "adding_replicas": [3],
        "removing_replicas": [1],
        "urp": "reassigning",
        "order_only": False,
        "replicas": [
            {
                "broker": 3,
                "status": "behind",
                "status_text": "Behind: 2750 messages behind",
                "log_end_offset": 1250,
                "messages_behind": 2750,
                "bytes_behind": 2750000,
                "rate_bytes_per_s": 250000.0,
                "eta_s": 11.0,
                "write_bytes_per_s": None,
                "throttle_bytes_per_s": None,
                "eta_bound_by_throttle": False,
                "copy_slower_than_writes": False,
            },
            {
                "broker": 2,
                "status": "in_sync",
                "status_text": "In sync",
                "log_end_offset": 4000,
                "messages_behind": 0,
                "bytes_behind": 0,
                "rate_bytes_per_s": None,
                "eta_s": None,
                "write_bytes_per_s": None,
                "throttle_bytes_per_s": None,
                "eta_bound_by_throttle": False,
                "copy_slower_than_writes": False,
            },
        ],
    }
    assert [p["state"] for p in document["partitions"]] == ["unknown_topic", "moving", "complete", "unknown_partition"]
    assert document["partitions"][0]["replicas"][1]["status"] == "unknown_broker"


def test_verify_json_document():
    result = VerifyResult(
        partitions={
            T("t", 1): PartitionState((1, 2, 3), (3, 2), False),
            T("t", 0): PartitionState((1, 2), (1, 2), True),
            T("t", 2): PartitionState((1,), (2,), True),
        },
        partitions_ongoing=True,
        moves={TopicPartitionReplica("t", 0, 1): LogDirMoveState("active", "/d1", current="/d0", future="/d1")},
        moves_ongoing=True,
    )
    document = verify_document(result, "not_at_target", preserve_throttles=False)
    check_document(document)
    assert document == {
        "version": 1,
        "kind": "verify",
        "outcome": "not_at_target",
        "partitions": [
            {"topic": "t", "partition": 0, "state": "completed", "current_replicas": [1, 2], "target_replicas": [1, 2]},
            {
                "topic": "t",
                "partition": 1,
                "state": "in_progress",
                "current_replicas": [1, 2, 3],
                "target_replicas": [3, 2],
            },
            {"topic": "t", "partition": 2, "state": "not_at_target", "current_replicas": [1], "target_replicas": [2]},
        ],
        "log_dirs": [
            {
                "topic": "t",
                "partition": 0,
                "broker": 1,
                "state": "active",
                "target_log_dir": "/d1",
                "current_log_dir": "/d0",
                "future_log_dir": "/d1",
            }
        ],
        "throttles": {"cleared": False, "preserved": False, "reassignments_running_in_cluster": True},
    }


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "unknown"), (0.0, "0s"), (44.6, "45s"), (185, "3m05s"), (7207, "2h00m07s")],
    ids=["none", "zero", "seconds", "minutes", "hours"],
)
def test_format_eta(seconds, text):
    assert format_eta(seconds) == text


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (3 * 1024**2, "3.0 MiB"), (5 * 1024**5, "5120.0 TiB")],
    ids=["zero", "bytes", "kib", "mib", "tib-caps"],
)
def test_format_bytes(count, text):
    assert format_bytes(count) == text


def test_the_docs_show_the_real_table_and_exit_codes():
    from pathlib import Path

    from kreassign.cli.commands import OUTCOME_EXIT_CODES

    readme = Path(__file__).resolve().parents[2].joinpath("docs", "batched-runs.md").read_text()
    assert f"```\n{TABLE}```\n" in readme
    assert OUTCOME_EXIT_CODES == {"complete": 0, "in_progress": 2, "not_at_target": 3}
    for code in (0, 1, 2, 3):
        assert f"\n| {code} | " in readme
