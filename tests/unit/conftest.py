"""Fixtures the unit tests share."""

from __future__ import annotations

import pytest

from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot


@pytest.fixture(autouse=True)
def own_state_folder(tmp_path_factory, monkeypatch):
    """Every unit test keeps what kreassign remembers (journals, the registry of live runs) in a folder of its own,
    never in the user's ``~/.local/state`` (simulated clusters share one cluster id: a run's throttle claims are
    not another test's); a test may point XDG_STATE_HOME elsewhere itself."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def two_topics(tmp_path):
    """Brokers 1-4 on racks a/b (1, 3 on a); 'orders' on brokers 1-2 only, 'logs' on 3-4 only: replicas and
    leaders per broker already even, so the plan without a budget moves nothing."""

    def partitions(first, second, size):
        return tuple(
            SnapshotPartition(p, ((first, second)[p % 2], (second, first)[p % 2]), ("/d", "/d"), size * (p + 1))
            for p in range(8)
        )

    snapshot = ClusterSnapshot(
        tuple(SnapshotBroker(b, "ab"[(b - 1) % 2], ("/d",)) for b in (1, 2, 3, 4)),
        {
            "orders": SnapshotTopic("orders", partitions(1, 2, 1000)),
            "logs": SnapshotTopic("logs", partitions(3, 4, 1500)),
        },
    )
    path = tmp_path / "two-topics.jsonl"
    save_snapshot(snapshot, str(path))
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"orders"},{"topic":"logs"}]}')
    return path, topics
