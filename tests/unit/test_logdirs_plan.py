"""The balanced plan names a log dir for each replica it adds to a broker with several volumes (JBOD):
the volume that ends least full, within --max-disk-usage; "any" everywhere else (planning/logdirs.py)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kreassign.cli.app as app
from kreassign.cluster.port import LogDirUsage
from kreassign.model import TopicPartition
from kreassign.planning.logdirs import choose_log_dirs, volume_overflows
from kreassign.snapshot import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotLogDir,
    SnapshotPartition,
    SnapshotTopic,
    save_snapshot,
)

GB = 1 << 30


def usage(path: str, total: int, used: int, replicas=None, volume=None, cordoned=False) -> LogDirUsage:
    return LogDirUsage(path, replicas or {}, total, total - used, volume, cordoned)


def test_new_replicas_go_to_the_volume_that_ends_least_full():
    rows = [("t", p, (1,), size) for p, size in enumerate([5 * GB, 4 * GB, 3 * GB, 2 * GB])]
    plan = {("t", p): [1, 2] for p in range(4)}
    dirs = {2: [usage("/a", 100 * GB, 50 * GB, volume="/a"), usage("/b", 100 * GB, 40 * GB, volume="/b")]}
    choice = choose_log_dirs(rows, plan, dirs, [1, 2], 0.8)
    # largest first, each to the volume that ends least full: 5 GB /b (45 % against 55 %), 4 GB /b (49 %),
    # 3 GB /b (52 % against 53 %), 2 GB /a (52 % against 54 %)
    named = {p: choice.dirs[("t", p)] for p in range(4)}
    assert all(d[0] is None for d in named.values())  # broker 1 keeps its replicas: "any"
    assert [named[p][1] for p in range(4)] == ["/b", "/b", "/b", "/a"]
    after = {v.label: v.after for v in choice.volumes}
    assert after == {"/a": 52 * GB, "/b": 52 * GB}
    assert choice.replicas == 4 and choice.brokers == 1 and volume_overflows(choice) == []


def test_one_volume_or_cordons_leave_any():
    rows = [("t", 0, (1,), GB)]
    plan = {("t", 0): [1, 2]}
    shared = {2: [usage("/a", 100 * GB, 10 * GB, volume="/a"), usage("/a2", 100 * GB, 10 * GB, volume="/a")]}
    assert choose_log_dirs(rows, plan, shared, [1, 2], 0.8).dirs == {}
    cordoned = {2: [usage("/a", 100 * GB, 10 * GB, volume="/a"), usage("/b", 100 * GB, 0, volume="/b", cordoned=True)]}
    assert choose_log_dirs(rows, plan, cordoned, [1, 2], 0.8).dirs == {}
    # three dirs on two volumes, the emptier volume's only dir cordoned: nothing to choose either
    both = {2: [*shared[2], usage("/b", 200 * GB, 0, volume="/b", cordoned=True)]}
    assert choose_log_dirs(rows, plan, both, [1, 2], 0.8).dirs == {}


def test_a_cordoned_dir_is_never_chosen_and_the_emptier_dir_of_a_volume_is():
    rows = [("t", p, (1,), GB) for p in range(3)]
    plan = {("t", p): [1, 2] for p in range(3)}
    dirs = {
        2: [
            usage("/a", 100 * GB, 90 * GB, volume="/a"),
            usage("/b1", 100 * GB, 10 * GB, volume="/b", cordoned=True),
            usage("/b2", 100 * GB, 10 * GB, volume="/b"),
            usage("/b3", 100 * GB, 10 * GB, volume="/b"),
        ]
    }
    choice = choose_log_dirs(rows, plan, dirs, [1, 2], 0.8)
    assert [choice.dirs[("t", p)][1] for p in range(3)] == ["/b2", "/b3", "/b2"]


def test_replicas_leaving_free_their_own_volume():
    a_held = {TopicPartition("t", 0): 30 * GB}
    rows = [("t", 0, (2,), 30 * GB), ("t", 1, (1,), 10 * GB)]
    plan = {("t", 0): [1], ("t", 1): [2]}
    dirs = {2: [usage("/a", 100 * GB, 60 * GB, a_held, volume="/a"), usage("/b", 100 * GB, 40 * GB, volume="/b")]}
    choice = choose_log_dirs(rows, plan, dirs, [1, 2], 0.8)
    assert choice.dirs == {("t", 1): ("/a",)}  # /a at 30 GB once t-0 leaves: 40 % against /b's 50 %


def test_a_volume_above_its_limit_gives_kept_replicas_to_the_broker_s_other_volume():
    sizes = [2 * GB, 5 * GB, 12 * GB, 20 * GB]
    held = {TopicPartition("t", p): size for p, size in enumerate(sizes)}
    rows = [("t", p, (2,), size) for p, size in enumerate(sizes)]
    plan = {("t", p): [2] for p in range(4)}  # the plan keeps every replica on broker 2

    def dirs(b_used: int):
        return {2: [usage("/a", 100 * GB, 90 * GB, held, volume="/a"), usage("/b", 100 * GB, b_used, volume="/b")]}

    # /a is 10 GB above its 80 GB limit: the smallest replica that brings it down (12 GB) goes to /b
    choice = choose_log_dirs(rows, plan, dirs(30 * GB), [2], 0.8)
    assert choice.dirs == {("t", 2): ("/b",)}
    assert (choice.moved_within, choice.bytes_moved_within, choice.brokers) == (1, 12 * GB, 0)
    assert {v.label: v.after for v in choice.volumes} == {"/a": 78 * GB, "/b": 42 * GB}
    assert choice.above_limit() == [] and volume_overflows(choice) == []
    # /b has 6 GB of room: the largest replica that fits goes (5 GB), then none fits; /a is reported
    choice = choose_log_dirs(rows, plan, dirs(74 * GB), [2], 0.8)
    assert choice.dirs == {("t", 1): ("/b",)}
    assert [(v.label, v.after) for v in choice.above_limit()] == [("/a", 85 * GB)]
    # --replace-broker moves nothing else: no relief
    assert choose_log_dirs(rows, plan, dirs(30 * GB), [2], 0.8, relieve=False).dirs == {}
    # a replica the plan takes off the broker frees its volume first: nothing left to relieve
    plan[("t", 3)] = [1]
    assert choose_log_dirs(rows, plan, dirs(30 * GB), [1, 2], 0.8).dirs == {}


def test_the_cli_plan_relieves_a_full_volume_and_reports_it(tmp_path, monkeypatch):
    sizes = [2 * GB, 5 * GB, 12 * GB, 20 * GB]
    dirs = (SnapshotLogDir("/a", "/a", 100 * GB, 10 * GB, 0), SnapshotLogDir("/b", "/b", 100 * GB, 70 * GB, 0))
    brokers = (SnapshotBroker(2, None, ("/a", "/b"), 200 * GB, dirs),)
    rows = tuple(SnapshotPartition(p, (2,), ("/a",), size, 2) for p, size in enumerate(sizes))
    snapshot = tmp_path / "full.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"t": SnapshotTopic("t", rows)}), str(snapshot))
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"t"}]}')
    balanced = ("--strategy", "balanced", "--broker-list", "2")
    code, out, err = generate(str(snapshot), str(topics), monkeypatch, *balanced)
    assert code == 0, out + err
    proposal = json.loads(out.splitlines()[4])["partitions"]
    assert [(p["replicas"], p["log_dirs"]) for p in proposal] == [([2], ["any"])] * 2 + [([2], ["/b"]), ([2], ["any"])]
    assert "Log dirs: 1 replica(s) (12.0 GiB) moved to another volume of their broker; fullest volume after: " in err
    assert "/a of broker 2, 78.0%." in err and "above --max-disk-usage" not in err
    code, out, err = generate(str(snapshot), str(topics), monkeypatch, *balanced, "--output", "json")
    assert code == 0, out + err
    document = json.loads(out)
    from tests.schema_check import errors, load_schema

    assert errors(document, load_schema()) == []
    report = document["report"]["log_dirs"]
    assert (report["replicas"], report["replicas_moved_within"], report["bytes_moved_within"]) == (1, 1, 12 * GB)
    assert [(v["volume"], v["bytes_moved_out"], v["limit_bytes"]) for v in report["volumes"]] == [
        ("/a", 12 * GB, 80 * GB),
        ("/b", 0, 80 * GB),
    ]
    # --max-disk-usage 0.5: /b can take 20 GB, /a must lose 40: it stays above, and the report says so
    code, out, err = generate(str(snapshot), str(topics), monkeypatch, *balanced, "--max-disk-usage", "0.5")
    assert code == 0, out + err
    assert "Log dirs above --max-disk-usage after the plan: /a of broker 2, 70.0%" in err


def jbod_snapshot(tmp_path, volumes: list[tuple], sizes: list[int], new: int = 2) -> tuple[str, str]:
    """Broker 1: one 400 GB volume holding a partition of each size of topic t; broker ``new``: a 100 GB
    volume per (path, free bytes[, cordoned]) of ``volumes``."""
    snapshot = tmp_path / "jbod.jsonl"
    dirs = tuple(SnapshotLogDir(v[0], v[0], 100 * GB, v[1], 0, *v[2:]) for v in volumes)
    brokers = (
        SnapshotBroker(1, None, ("/d",), 400 * GB, (SnapshotLogDir("/d", "/d", 400 * GB, 200 * GB, 0),)),
        SnapshotBroker(new, None, tuple(d.path for d in dirs), 100 * GB * len(dirs), dirs),
    )
    rows = tuple(SnapshotPartition(p, (1,), ("/d",), size, 1) for p, size in enumerate(sizes))
    save_snapshot(ClusterSnapshot(brokers, {"t": SnapshotTopic("t", rows)}), str(snapshot))
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"t"}]}')
    return str(snapshot), str(topics)


def generate(snapshot: str, topics: str, monkeypatch, *options: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    argv = ["--cluster-snapshot-file", snapshot, "--generate", "--topics-to-move-json-file", topics, *options]
    code = app.run(argv, out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


def test_a_broker_whose_volumes_cannot_take_a_replica_does_not_get_it_or_the_plan_is_refused(tmp_path, monkeypatch):
    rows = [("t", 0, (1,), 30 * GB)]
    plan = {("t", 0): [2]}
    dirs = {2: [usage("/a", 100 * GB, 70 * GB, volume="/a"), usage("/b", 100 * GB, 75 * GB, volume="/b")]}
    choice = choose_log_dirs(rows, plan, dirs, [1, 2], 0.8)
    assert choice.dirs == {("t", 0): ("/a",)}
    assert [v.label for v in volume_overflows(choice)] == ["/a"]

    # broker 2 has 15 GB of room on the two volumes together (its disk: 145 of 200 GB used): the plan keeps
    # both 30 GB partitions on broker 1 rather than fill a volume
    balanced = ("--strategy", "balanced", "--broker-list")
    snapshot = jbod_snapshot(tmp_path, [("/a", 30 * GB), ("/b", 25 * GB)], [30 * GB] * 2)
    code, out, err = generate(*snapshot, monkeypatch, *balanced, "1,2")
    assert code == 0, out + err
    assert all(p["replicas"] == [1] for p in json.loads(out.splitlines()[4])["partitions"])
    # broker 2 alone: 20 GB of room on each volume, 40 GB in all, and one 30 GB partition: it fits the
    # broker but neither volume, so no plan
    snapshot = jbod_snapshot(tmp_path, [("/a", 40 * GB), ("/b", 40 * GB)], [30 * GB])
    code, out, err = generate(*snapshot, monkeypatch, *balanced, "2")
    text = out + err
    assert code == 1 and "Current partition replica assignment" not in text
    assert text.startswith("Error: The balanced plan would fill volume /a of broker 2 to 90.0%"), text
    assert text.count("\n") == 1


def test_the_cli_plan_names_dirs_and_reports_them(tmp_path, monkeypatch):
    snapshot = jbod_snapshot(tmp_path, [("/a", 90 * GB), ("/b", 60 * GB)], [GB * (p + 1) for p in range(4)])
    code, out, err = generate(
        *snapshot, monkeypatch, "--strategy", "balanced", "--broker-list", "1,2", "--output", "json"
    )
    assert code == 0, out + err
    document = json.loads(out)
    from tests.schema_check import errors, load_schema

    assert errors(document, load_schema()) == []
    moved = {p["partition"]: p for p in document["proposed"]["partitions"] if 2 in p["replicas"]}
    assert moved and all(p["log_dirs"] == ["/a"] for p in moved.values())  # /a: 10 % used against /b's 40 %
    report = document["report"]["log_dirs"]
    assert report["replicas"] == len(moved)
    assert [(v["volume"], v["bytes_before"]) for v in report["volumes"]] == [("/a", 10 * GB), ("/b", 40 * GB)]


volumes_st = st.lists(
    st.tuples(st.integers(1, 4), st.integers(0, 100), st.booleans()), min_size=1, max_size=4
)  # (dirs on it, percent used, the first dir cordoned)


@settings(max_examples=150, deadline=None)
@given(
    volumes=volumes_st,
    sizes=st.lists(st.integers(0, 20), min_size=1, max_size=12),
    limit=st.sampled_from([0.5, 0.8, 1.0]),
)
def test_choices_are_dirs_of_the_broker_not_cordoned_and_the_fullest_is_no_fuller_than_needed(volumes, sizes, limit):
    dirs = []
    for v, (count, used, cordoned) in enumerate(volumes):
        for d in range(count):
            dirs.append(usage(f"/v{v}d{d}", 100 * GB, used * GB, volume=f"/v{v}", cordoned=cordoned and d == 0))
    rows = [("t", p, (1,), size * GB) for p, size in enumerate(sizes)]
    plan = {("t", p): [2] for p in range(len(sizes))}
    choice = choose_log_dirs(rows, plan, {2: dirs}, [1, 2], limit)
    open_dirs = {d.path for d in dirs if not d.cordoned}
    open_volumes = {d.volume for d in dirs if not d.cordoned}
    if len(open_volumes) < 2:
        assert choice.dirs == {}
        return
    assert set(choice.dirs) == {("t", p) for p in range(len(sizes))}
    assert all(d[0] in open_dirs for d in choice.dirs.values())
    placed = sum(sum(v.placed.values()) for v in choice.volumes)
    assert placed == sum(sizes) * GB
    assert sum(v.after - v.before for v in choice.volumes) == placed and choice.moved_within == 0
    # greedy largest-first onto the least full: no volume ends more than the largest replica above the
    # emptiest one it could have gone to
    shares = [v.after / v.total for v in choice.volumes if v.dirs]
    assert (
        max(shares) - min(shares)
        <= max(max(sizes) * GB / (100 * GB), max(v.before / v.total for v in choice.volumes)) + 1e-9
    )
    # the same input in another order gives the same choice
    again = choose_log_dirs(list(reversed(rows)), plan, {2: dirs}, [2, 1], limit)
    assert again.dirs == choice.dirs


@pytest.mark.parametrize("cordoned", [False, True])
def test_replace_broker_names_dirs_on_the_new_broker(tmp_path, monkeypatch, cordoned):
    snapshot = jbod_snapshot(tmp_path, [("/a", 50 * GB), ("/b", 90 * GB, cordoned)], [GB] * 3, new=3)
    code, out, err = generate(*snapshot, monkeypatch, "--replace-broker", "1=3")
    assert code == 0, out + err
    proposal = json.loads(out.splitlines()[4])["partitions"]
    expected = ["any"] if cordoned else ["/b"]  # /b: 10 % used; cordoned, broker 3 has one volume left
    assert [p["log_dirs"] for p in proposal] == [expected] * 3
