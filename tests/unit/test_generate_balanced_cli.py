"""--generate with a cluster snapshot and --strategy balanced, through the command line (no cluster)."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys

import pytest

import kreassign.cli.app as app
from kreassign.cli.app import run
from kreassign.snapshot import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotLogDir,
    SnapshotPartition,
    SnapshotTopic,
    save_snapshot,
)


@pytest.fixture
def snapshot_file(tmp_path):
    """Brokers 1-4 on racks a/b (1, 3 on a); topic 'orders' on brokers 1-2 only; 'logs' without racks info."""
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 2 - p % 2), ("/d1", "/d2"), 1000 * (p + 1), 1 + p % 2) for p in range(6)
    )
    snapshot = ClusterSnapshot(
        (
            SnapshotBroker(1, "a", ("/d1", "/d2")),
            SnapshotBroker(2, "b", ("/d1", "/d2")),
            SnapshotBroker(3, "a", ("/d1",)),
            SnapshotBroker(4, "b", ("/d1",)),
        ),
        {"orders": SnapshotTopic("orders", partitions, 2)},
    )
    path = tmp_path / "cluster.jsonl"
    save_snapshot(snapshot, str(path))
    return path


@pytest.fixture
def topics_file(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text('{"version":1,"topics":[{"topic":"orders"}]}')
    return path


def cli(argv, monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(app, "_stderr", err.write)
    code = run([str(a) for a in argv], out=out.write, err=err.write)
    return code, out.getvalue(), err.getvalue()


def generate(snapshot_file, topics_file, *extra):
    return [
        "--generate",
        "--cluster-snapshot-file",
        snapshot_file,
        "--topics-to-move-json-file",
        topics_file,
        "--broker-list",
        "1,2,3,4",
        *extra,
    ]


def proposal_of(stdout: str) -> dict[int, list[int]]:
    lines = stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert lines[2] == "" and lines[3] == "Proposed partition reassignment configuration"
    return {p["partition"]: p["replicas"] for p in json.loads(lines[4])["partitions"]}


def test_balanced_plan_from_a_snapshot(snapshot_file, topics_file, monkeypatch):
    code, out, err = cli(generate(snapshot_file, topics_file, "--strategy", "balanced"), monkeypatch)
    assert code == 0, out
    current = json.loads(out.splitlines()[1])["partitions"][0]
    assert current == {"topic": "orders", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d1", "/d2"]}
    proposal = proposal_of(out)
    counts = {b: sum(b in r for r in proposal.values()) for b in (1, 2, 3, 4)}
    assert counts == {1: 3, 2: 3, 3: 3, 4: 3}
    assert sorted(r[0] for r in proposal.values()).count(1) <= 2
    racks = {1: "a", 2: "b", 3: "a", 4: "b"}
    assert all(len({racks[b] for b in r}) == 2 for r in proposal.values())
    assert err.startswith("Balanced plan (engine local): 6 replica(s) moved (minimum 6)")
    assert "replicas / broker" in err and "0..6 (std 3.0) -> 3..3 (std 0.0)" in err
    assert "\x1b[" not in err  # not a terminal: plain text
    assert [line for line in err.splitlines() if line != line.rstrip()] == []  # the header's ended in 15 spaces


def test_json_document_carries_the_plan_report(snapshot_file, topics_file, monkeypatch):
    from tests.schema_check import errors, load_schema

    code, out, err = cli(
        generate(snapshot_file, topics_file, "--strategy", "balanced", "--output", "json"), monkeypatch
    )
    assert code == 0, out
    document = json.loads(out)
    assert errors(document, load_schema()) == []
    report = document["report"]
    assert report["engine"] == "local" and report["replicas_moved"] == report["minimum_replicas_moved"] == 6
    replicas = next(d for d in report["dimensions"] if d["name"] == "replicas")
    assert (replicas["before"]["min"], replicas["before"]["max"], replicas["after"]["min"]) == (0, 6, 3)
    assert report["score"]["before"] < report["score"]["after"] <= 100
    assert [b["broker"] for b in report["brokers"]] == [1, 2, 3, 4]
    assert sum(b["bytes_after"] for b in report["brokers"]) == report["total_bytes"]
    assert err.startswith("Balanced plan")  # the report goes to stderr too


def test_report_on_a_terminal_has_bars():
    from kreassign.cli.render_plan_report import render_plan_report_rich
    from kreassign.planning.quality import measure_plan

    rows = [("t", p, (1, 2), 100 * (p + 1)) for p in range(4)]
    plan = {("t", 0): [1, 3], ("t", 1): [2, 3], ("t", 2): [1, 2], ("t", 3): [2, 1]}
    text = render_plan_report_rich(measure_plan(rows, plan, [1, 2, 3]), "local", width=100)
    assert "█" in text and "\x1b[" in text and "Balancedness score" in text


def test_same_snapshot_same_bytes(snapshot_file, topics_file, monkeypatch):
    first = cli(generate(snapshot_file, topics_file, "--strategy", "balanced"), monkeypatch)
    second = cli(generate(snapshot_file, topics_file, "--strategy=balanced", "--engine", "local"), monkeypatch)
    assert first == second


def test_removed_broker_and_replication_factor_change(snapshot_file, topics_file, monkeypatch):
    argv = generate(snapshot_file, topics_file, "--strategy", "balanced", "--replication-factor", "3")
    argv[argv.index("1,2,3,4")] = "1,3,4"
    code, out, _ = cli(argv, monkeypatch)
    assert code == 0, out
    proposal = proposal_of(out)
    assert all(sorted(r) == [1, 3, 4] for r in proposal.values())  # RF 3 on 3 brokers: all of them
    assert sorted(r[0] for r in proposal.values()) == [1, 1, 3, 3, 4, 4]


def test_default_strategy_is_the_apache_placement_on_a_snapshot(snapshot_file, topics_file, monkeypatch):
    code, out, err = cli(generate(snapshot_file, topics_file, "--seed", "7"), monkeypatch)
    assert code == 0 and err == ""
    assert len(proposal_of(out)) == 6


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strategy", "best"], "Invalid value 'best' for --strategy: expected one of apache, balanced, leaders\n"),
        (["--strategy", "balanced", "--engine", "gpu"], "Invalid value 'gpu' for --engine"),
        (["--engine", "spark"], "--engine spark needs --strategy balanced"),
        (["--replication-factor", "2"], "--replication-factor needs --strategy balanced\n"),
        (["--strategy", "balanced", "--replication-factor", "5"], "Error: The target replication factor of 5"),
        (
            ["--strategy", "balanced", "--replication-factor", "x"],
            "--replication-factor takes a whole number, not 'x'\n",
        ),
        (["--strategy", "balanced", "--spark-conf", "novalue"], "Invalid --spark-conf 'novalue'"),
    ],
    ids=["strategy", "engine", "spark-apache", "rf-apache", "rf-too-big", "rf-not-number", "spark-conf"],
)
def test_option_errors_are_one_line(snapshot_file, topics_file, monkeypatch, extra, message):
    """Apache's errors: one `Error:` line on stdout. A bad value of kreassign's own options: a usage error on
    stderr (its message, then where the list of options is), nothing on stdout, like `--output yaml`."""
    code, out, err = cli(generate(snapshot_file, topics_file, *extra), monkeypatch)
    assert code == 1
    if message.startswith("Error: "):
        assert out.startswith(message) and out.count("\n") == 1
    else:
        assert out == "" and err.startswith(message)
        assert err.endswith("\nRun with --help for the list of options.\n") and err.count("\n") == 2


def test_mixed_racks_need_disable_rack_aware_like_apache(tmp_path, topics_file, monkeypatch):
    snapshot = ClusterSnapshot(
        (SnapshotBroker(1, "a"), SnapshotBroker(2, None)),
        {"orders": SnapshotTopic("orders", (SnapshotPartition(0, (1,)),))},
    )
    path = tmp_path / "mixed.jsonl"
    save_snapshot(snapshot, str(path))
    argv = generate(path, topics_file, "--strategy", "balanced")
    argv[argv.index("1,2,3,4")] = "1,2"
    code, out, _ = cli(argv, monkeypatch)
    assert (code, out) == (1, "Error: Not all brokers have rack information. Add --disable-rack-aware in command "
                           "line to make replica assignment without rack information.\n")  # fmt: skip
    code, out, _ = cli([*argv, "--disable-rack-aware"], monkeypatch)
    assert code == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--generate", "--cluster-snapshot-file", "s", "--bootstrap-server", "h:1"], "Please don't specify both"),
        (["--list", "--cluster-snapshot-file", "s"], 'Option "[cluster-snapshot-file]" can\'t be used with action'),
        (["--write-cluster-snapshot", "f"], "--write-cluster-snapshot needs --bootstrap-server"),
        (["--write-cluster-snapshot", "f", "--bootstrap-server", "h:1", "--broker-list", "1"], "[broker-list]"),
        (["--generate", "--write-cluster-snapshot", "f", "--bootstrap-server", "h:1"], "Missing required argument"),
    ],
    ids=["snapshot-and-bootstrap", "snapshot-list", "write-needs-bootstrap", "write-extra-option", "write-with-action"],
)
def test_usage_errors(argv, message, monkeypatch):
    code, out, err = cli(argv, monkeypatch)
    assert (code, out) == (1, "")
    assert message in err


def test_missing_snapshot_file_is_one_line(topics_file, monkeypatch, tmp_path):
    code, out, _ = cli(generate(tmp_path / "nope.jsonl", topics_file), monkeypatch)
    assert code == 1 and out == f"Error: Unable to read cluster snapshot {tmp_path / 'nope.jsonl'}\n"


def test_without_pyspark_the_spark_engine_says_how_to_install(snapshot_file, topics_file):
    code = (
        "import sys; sys.modules['pyspark'] = None\n"
        "from kreassign.cli.entry import main\n"
        f"sys.exit(main({[str(a) for a in generate(snapshot_file, topics_file, '--strategy', 'balanced', '--engine', 'spark')]!r}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout == (
        "Error: --engine spark needs pyspark, pandas and pyarrow: pip install 'kreassign[spark]' (pyspark is missing)\n"
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("engine", "partitions", "master", "expected"),
    [
        ("local", 10**7, "spark://h:7077", "local"),
        ("spark", 1, None, "spark"),
        ("auto", 10**7, None, "local"),
        ("auto", 10**7, "local[*]", "local"),
        ("auto", 999_999, "spark://h:7077", "local"),
        ("auto", 1_000_000, "spark://h:7077", "spark"),
    ],
)
def test_auto_engine(engine, partitions, master, expected):
    from kreassign.actions.balanced import choose_engine

    assert choose_engine(engine, partitions, master) == expected


def _disk_snapshot(tmp_path, small: int):
    """Brokers 1 and 2 hold 6 partitions (1,000 .. 6,000 bytes, RF 2, racks a and b) on 100,000-byte disks;
    brokers 3 (rack a) and 4 (rack b), just added, have ``small``-byte disks."""
    partitions = tuple(SnapshotPartition(p, (1 + p % 2, 2 - p % 2), (None, None), 1000 * (p + 1)) for p in range(6))
    brokers = (
        SnapshotBroker(1, "a", ("/d",), 100_000),
        SnapshotBroker(2, "b", ("/d",), 100_000),
        SnapshotBroker(3, "a", ("/d",), small),
        SnapshotBroker(4, "b", ("/d",), small),
    )
    path = tmp_path / "cluster.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path))
    return path


def test_max_disk_usage_routes_replicas_around_a_broker_that_would_fill(tmp_path, topics_file, monkeypatch):
    """Balanced by count, brokers 3 and 4 (10,000-byte disks) would take 3 partitions each, 9,000 bytes or more:
    the plan gives them only what fits under 80 % and keeps the rest where it is, racks respected."""
    path = _disk_snapshot(tmp_path, 10_000)
    sizes = {p: 1000 * (p + 1) for p in range(6)}
    for option, limit in (((), 0.8), (("--max-disk-usage", "0.5"), 0.5)):
        code, out, err = cli(generate(path, topics_file, "--strategy", "balanced", *option), monkeypatch)
        assert code == 0 and out.startswith("Current partition replica assignment"), out
        proposed = proposal_of(out)
        for broker in (3, 4):
            held = sum(sizes[p] for p, replicas in proposed.items() if broker in replicas)
            assert 0 < held <= limit * 10_000, (broker, held, proposed)
        racks = {1: "a", 2: "b", 3: "a", 4: "b"}
        assert all(len({racks[b] for b in replicas}) == 2 for replicas in proposed.values())
        assert "disk use %" in err
    code, out, _ = cli(generate(path, topics_file, "--strategy", "balanced", "--max-disk-usage", "1"), monkeypatch)
    assert code == 0  # a whole disk allowed: the plan balanced by count fits
    code, out, _ = cli(generate(path, topics_file, "--strategy", "balanced", "--max-disk-usage", "80"), monkeypatch)
    assert code == 1 and "Invalid --max-disk-usage '80'" in out + _


def test_max_disk_usage_refuses_a_plan_that_cannot_fit(tmp_path, topics_file, monkeypatch):
    """Broker 1 leaves (not in --broker-list): rack a has only broker 3 left, whose 1,000-byte disk cannot
    take a replica of every partition. No plan is printed."""
    path = _disk_snapshot(tmp_path, 1_000)
    argv = generate(path, topics_file, "--strategy", "balanced")
    argv[argv.index("1,2,3,4")] = "2,3,4"
    code, out, err = cli(argv, monkeypatch)
    assert code == 1 and out.startswith("Error: The balanced plan would fill broker 3 to"), out
    assert "(--max-disk-usage 0.8)" in out and "Current partition" not in out and err == ""


def test_current_log_dirs_only_for_brokers_in_the_snapshot(tmp_path, topics_file, monkeypatch):
    """A replica on a broker the snapshot does not list prints "any", like a replica on a broker that is
    down; an unknown log dir too. The collector is paused for the run and back on after it."""
    snapshot = ClusterSnapshot(
        (SnapshotBroker(1, None, ("/d1",)), SnapshotBroker(2, None, ("/d1",))),
        {
            "orders": SnapshotTopic(
                "orders", (SnapshotPartition(0, (1, 9), ("/d1", "/d9")), SnapshotPartition(1, (2, 1), ("/d1", None)))
            )
        },
    )
    path = tmp_path / "gone.jsonl"
    save_snapshot(snapshot, str(path))
    argv = generate(path, topics_file, "--strategy", "balanced", "--disable-rack-aware")
    argv[argv.index("1,2,3,4")] = "1,2"
    assert gc.isenabled()
    code, out, _ = cli(argv, monkeypatch)
    assert code == 0, out
    assert out.splitlines()[1] == (
        '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,9],"log_dirs":["/d1","any"]},'
        '{"topic":"orders","partition":1,"replicas":[2,1],"log_dirs":["/d1","any"]}]}'
    )
    assert gc.isenabled()


def _cordon_snapshot(tmp_path, cordons: dict[int, tuple[bool, ...]], volumes: dict[int, int] | None = None):
    """Brokers 1-4 of ``snapshot_file`` (racks a, b, a, b), each with log dirs /d1 and /d2 on one volume
    (``volumes`` bytes per broker, unknown when not given), with the cordons given; 'orders' on brokers 1, 2."""
    partitions = tuple(
        SnapshotPartition(p, (1 + p % 2, 2 - p % 2), ("/d1", "/d2"), 1000 * (p + 1), 1 + p % 2) for p in range(6)
    )
    brokers = tuple(
        SnapshotBroker(
            b,
            "ab"[(b - 1) % 2],
            ("/d1", "/d2"),
            (volumes or {}).get(b),
            tuple(
                SnapshotLogDir(d, "/d1", (volumes or {}).get(b), None, 0, c)
                for d, c in zip(("/d1", "/d2"), cordons.get(b, (False, False)), strict=True)
            ),
        )
        for b in range(1, 5)
    )
    path = tmp_path / "cordoned.jsonl"
    save_snapshot(ClusterSnapshot(brokers, {"orders": SnapshotTopic("orders", partitions, 2)}), str(path))
    return path


@pytest.mark.parametrize("engine", ["local", "auto"])
def test_a_broker_with_every_log_dir_cordoned_is_drained(tmp_path, topics_file, monkeypatch, engine):
    """Broker 3's dirs are all cordoned (KIP-1066): the plan places nothing on it, as if it were left out of
    --broker-list; broker 4, one dir of two cordoned, still takes replicas (in its other dir)."""
    path = _cordon_snapshot(tmp_path, {3: (True, True), 4: (True, False)})
    code, out, _ = cli(generate(path, topics_file, "--strategy", "balanced", "--engine", engine), monkeypatch)
    assert code == 0, out
    proposed = proposal_of(out)
    assert not any(3 in replicas for replicas in proposed.values()), proposed
    assert any(4 in replicas for replicas in proposed.values()), proposed
    racks = {1: "a", 2: "b", 4: "b"}
    assert all(len({racks[b] for b in replicas}) == 2 for replicas in proposed.values())
    argv = generate(path, topics_file, "--strategy", "balanced")
    argv[argv.index("1,2,3,4")] = "1,2,4"
    assert cli(argv, monkeypatch)[1] == out  # the same plan as without broker 3 in the list


def test_a_plan_where_every_broker_is_cordoned_is_refused(tmp_path, topics_file, monkeypatch):
    path = _cordon_snapshot(tmp_path, {b: (True, True) for b in range(1, 5)})
    code, out, err = cli(generate(path, topics_file, "--strategy", "balanced"), monkeypatch)
    assert code == 1 and err == ""
    assert out == (
        "Error: Every broker of the plan has all its log directories cordoned (cordoned.log.dirs); "
        "no plan was written.\n"
    )


def test_two_log_dirs_on_one_volume_give_the_bound_of_one_volume(tmp_path, topics_file, monkeypatch):
    """Brokers 3 and 4 (just added) have /d1 and /d2 on one 10,000-byte volume: balanced by count they would
    take 9,000 bytes or more, which fits 80 % of 20,000 (the volume counted per dir) but not of 10,000: the
    plan gives them only what fits under 8,000 bytes."""
    path = _cordon_snapshot(tmp_path, {}, {1: 100_000, 2: 100_000, 3: 10_000, 4: 10_000})
    code, out, err = cli(generate(path, topics_file, "--strategy", "balanced"), monkeypatch)
    assert code == 0, out
    sizes = {p: 1000 * (p + 1) for p in range(6)}
    proposed = proposal_of(out)
    held = {b: sum(sizes[p] for p, replicas in proposed.items() if b in replicas) for b in (3, 4)}
    assert all(0 < h <= 8_000 for h in held.values()), held
    assert "disk use %" in err
