"""The Spark engine gives the very plan of the local engine, on snapshots of several shapes.

Needs the ``spark`` extra (pyspark, pandas, pyarrow) and Java; one local Spark session serves the module.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections import Counter
from pathlib import Path

# ./scripts/test installs the spark extra; without it these tests fail (they are never skipped)
import pyspark  # noqa: F401
import pytest

from kreassign.cli.app import run
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.context import make_context
from kreassign.snapshot import ClusterSnapshot, SnapshotBroker, SnapshotPartition, SnapshotTopic, save_snapshot
from kreassign.spark import plan_balanced_spark
from tests.unit.test_balance import baseline_shape, build, cluster
from tests.unit.test_generate_balanced_cli import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synthetic import write_synthetic

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark_sessions():
    """The module's Spark session, made again when a command line run in this process stopped it (every run
    of the command line stops its session at the end, and the session is process-wide)."""
    from kreassign.spark.session import spark_session

    with contextlib.ExitStack() as stack:
        made = []

        def live():
            if not made or made[-1].sparkContext._jsc is None:
                made.append(stack.enter_context(spark_session("local[2]", {})))
            return made[-1]

        yield live


@pytest.fixture
def spark(spark_sessions):
    return spark_sessions()


def write(path: Path, rack_of: dict[int, str | None], rows) -> str:
    topics: dict[str, list[SnapshotPartition]] = {}
    for topic, partition, replicas, size in rows:
        topics.setdefault(topic, []).append(SnapshotPartition(partition, replicas, (None,) * len(replicas), size))
    snapshot = ClusterSnapshot(
        tuple(SnapshotBroker(b, r) for b, r in rack_of.items()),
        {t: SnapshotTopic(t, tuple(parts)) for t, parts in topics.items()},
    )
    save_snapshot(snapshot, str(path))
    return str(path)


SHAPES = {
    # name: (seed, racks, per_rack, old brokers, partitions, rf, chosen brokers (None: all), new rf)
    "no-racks-brokers-added": (1, 0, 8, 5, 60, 3, None, None),
    "racks-brokers-added": (2, 3, 3, 6, 90, 3, None, None),
    "racks-brokers-removed": (3, 3, 3, 9, 90, 3, [1, 2, 3, 4, 5, 6], None),
    "rf-up": (4, 4, 2, 8, 50, 2, None, 3),
    "rf-down": (5, 3, 2, 6, 50, 3, None, 1),
}


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
def test_spark_and_local_engines_give_the_same_plan(spark, tmp_path, shape):
    seed, racks, per_rack, old, partitions, rf, chosen, new_rf = shape
    rack_of, rows = cluster(seed, racks, per_rack, old, partitions, rf, topics=4)
    chosen = chosen or list(rack_of)
    path = write(tmp_path / "snap.jsonl", rack_of, rows)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    topics = sorted({t for t, _, _, _ in rows})
    assert plan_balanced_spark(path, topics, ctx, session=spark) == plan_balanced(rows, ctx)


def test_hypothesis_shape_with_leftovers(spark, tmp_path):
    shape = {"seed": 2215, "racks": 3, "per_rack": 3, "extra_old": -2, "partitions": 33, "rf": 2, "remove": 1}
    rack_of, rows, chosen, new_rf = build({**shape, "new_rf": None})
    path = write(tmp_path / "snap.jsonl", rack_of, rows)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    topics = sorted({t for t, _, _, _ in rows})
    assert plan_balanced_spark(path, topics, ctx, session=spark) == plan_balanced(rows, ctx)


@pytest.mark.parametrize("index", [135, 178])
def test_shapes_where_the_bytes_only_placement_moves_fewer(spark, tmp_path, index):
    """Racks nearly full: the topic-aware run repairs left-overs, and both engines then pick the
    placement by bytes alone the same way."""
    rack_of, rows, chosen, new_rf = build(baseline_shape(index))
    path = write(tmp_path / "snap.jsonl", rack_of, rows)
    ctx = make_context([(b, rack_of[b]) for b in chosen], new_rf, rows)
    topics = sorted({t for t, _, _, _ in rows})
    assert plan_balanced_spark(path, topics, ctx, session=spark) == plan_balanced(rows, ctx)


@pytest.mark.parametrize("rf", [2, 3])
def test_uneven_racks_give_the_local_plan(spark, tmp_path, rf):
    """Racks of uneven size after a decommission (rack r0 keeps one broker of three): the rack-feasible targets
    (kreassign.planning.racklimits) are the same in both engines, and so is the plan."""
    rack_of, rows = cluster(7, 3, 3, 9, 120, rf, topics=4)
    chosen = [b for b in rack_of if b not in (4, 7)]  # brokers 4 and 7 are on r0, with 1
    path = write(tmp_path / "snap.jsonl", rack_of, rows)
    ctx = make_context([(b, rack_of[b]) for b in chosen], None, rows)
    topics = sorted({t for t, _, _, _ in rows})
    local = plan_balanced(rows, ctx)
    assert plan_balanced_spark(path, topics, ctx, session=spark) == local
    counts = Counter(b for replicas in local.values() for b in replicas)
    if rf == 3:  # one replica of each partition on r0, all on broker 1; the six others share the rest
        assert counts[1] == 120 and {counts[b] for b in chosen if b != 1} == {40}


def run_balanced(snapshot: Path, topics: Path, engine: str, brokers: int, *extra: str) -> tuple[str, str]:
    """``--generate --strategy balanced`` over brokers 1..``brokers`` in this process: stdout and stderr."""
    argv = generate(snapshot, topics, "--strategy", "balanced", "--engine", engine, *extra)
    argv[argv.index("1,2,3,4")] = ",".join(str(b) for b in range(1, brokers + 1))
    return run_argv(argv)


def both_engines(tmp_path: Path, *extra: str, zipf: float | None = None):
    """The synthetic 2,000 partitions on 90 brokers (40 topics) planned by each engine: the snapshot, the
    topics file, stdout and stderr (``engine`` named without which) per engine; ``zipf``: with write and read
    rates (bench/synthetic.py)."""
    snapshot = tmp_path / "synthetic.jsonl"
    write_synthetic(str(snapshot), 2000, brokers=90, racks=30, new=6, per_topic=50, zipf=zipf)
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[' + ",".join(f'{{"topic":"topic-{t:05d}"}}' for t in range(40)) + "]}")
    outputs, reports = {}, {}
    for engine in ("local", "spark"):
        outputs[engine], report = run_balanced(snapshot, topics, engine, 90, *extra)
        assert f"engine {engine}" in report
        reports[engine] = report.replace(f"engine {engine}", "engine")
    return snapshot, topics, outputs, reports


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--move-budget", "300"),
        ("--bytes-tolerance", "none"),
        ("--bytes-tolerance", "1"),
        ("--bytes-tolerance", "100"),
    ],
    ids=["default", "move-budget", "no-bytes-stage", "bytes-1pct", "bytes-100pct"],
)
def test_cli_output_is_byte_identical_for_both_engines(spark, tmp_path, extra):
    """The stages after the engine (disk capacity, the bytes band, the move budget) run on the driver: same
    plan and the same report's figures either way (the Spark engine collects the plan when a broker ends
    outside the band or a topic's replicas or leaders 2 or more apart, which the stage's topic pass would
    even out, and streams it, from the aggregates, when neither or the stage is off; at 100 % every broker is
    inside the band and only the topic pass can change the plan)."""
    _, _, outputs, reports = both_engines(tmp_path, *extra)
    assert outputs["spark"] == outputs["local"]
    assert reports["spark"] == reports["local"]
    assert ("Bytes per broker: within" in reports["local"]) == ("none" not in extra)
    assert outputs["local"].startswith("Current partition replica assignment\n")


@pytest.mark.parametrize("extra", [(), ("--traffic-tolerance", "5", "--move-budget", "100")], ids=["default", "5pct"])
def test_traffic_goals_give_the_same_plan_and_report_for_both_engines(spark, tmp_path, extra):
    """With rates in the snapshot the traffic stage runs on the driver for both engines (the Spark engine
    collects the plan for it): same plan, same report, the traffic lines in it; and the plan is not the one
    without rates."""
    _, topics, outputs, reports = both_engines(tmp_path, *extra, zipf=0.6)
    assert outputs["spark"] == outputs["local"]
    assert reports["spark"] == reports["local"]
    assert "Bytes out per broker: " in reports["local"] and "Traffic: " in reports["local"]
    plain = tmp_path / "plain.jsonl"
    write_synthetic(str(plain), 2000, brokers=90, racks=30, new=6, per_topic=50)
    without, report = run_balanced(plain, topics, "local", 90, *extra)
    assert without != outputs["local"] and "Traffic: " not in report


@pytest.mark.parametrize(
    "extra",
    [(), ("--bytes-tolerance", "1"), ("--move-budget", "300"), ("--bytes-tolerance", "none", "--move-budget", "40")],
    ids=["default", "bytes-1pct", "move-budget", "move-budget-alone"],
)
def test_the_bytes_stage_of_a_large_cluster_collects_only_its_scope(spark, tmp_path, monkeypatch, extra):
    """Beyond REPLICAS_PER_BROKER replicas per broker the bytes stage and --move-budget look at a share of the
    topics (planning/scope.py): the Spark engine collects their partitions and the others' totals per broker,
    never the whole plan, and both engines still give the same plan and report."""
    from kreassign.planning import scope
    from kreassign.spark.planner import SnapshotPlanner

    monkeypatch.setattr(scope, "REPLICAS_PER_BROKER", 20)
    monkeypatch.setattr(SnapshotPlanner, "collect", lambda self: pytest.fail("the whole plan was collected"))
    from kreassign.snapshot import SnapshotCluster

    recorded = SnapshotCluster.recorded_rates

    def rates_of_a_loaded_file(self):  # the streamed path never loads the partitions to look for rates
        assert self.loaded, "the partitions were loaded in Python to read rates the file does not have"
        return recorded(self)

    monkeypatch.setattr(SnapshotCluster, "recorded_rates", rates_of_a_loaded_file)
    collected: list[int] = []
    scoped = SnapshotPlanner.scoped

    def spy(self, topics):
        rows, plan = scoped(self, topics)
        collected.append(len(rows))
        return rows, plan

    monkeypatch.setattr(SnapshotPlanner, "scoped", spy)
    snapshot, topics, outputs, reports = both_engines(tmp_path, *extra)
    assert outputs["spark"] == outputs["local"]
    assert reports["spark"] == reports["local"]
    stages = extra[:2] != ("--bytes-tolerance", "none"), "--move-budget" in extra
    assert len(collected) == sum(stages) and all(0 < n < 1000 for n in collected)  # a share of 2,000 partitions
    unscoped, _ = run_balanced(snapshot, topics, "local", 90, "--bytes-tolerance", "none")
    assert unscoped != outputs["local"]  # the stages changed the plan
    if "--move-budget" in extra:
        assert "Move budget: " in reports["local"]


@pytest.mark.parametrize("batch", [3, 10_000])
def test_grouped_gives_each_group_whole_to_one_call(batch):
    """``_grouped`` (applyInPandas without a Python call per Arrow batch): a group that spans the Arrow
    batches a worker streams (3 rows each here) still reaches one call, whole, as plain lists, and every
    group once. A session of its own (the CLI tests above stop the module's)."""
    from kreassign.spark.frames import _grouped
    from kreassign.spark.session import spark_session

    sizes = {f"t{g:02d}": size for g, size in enumerate([1, 2, 7, 50, 3, 1, 12, 4])}
    rows = [(topic, n) for topic, size in sizes.items() for n in range(size)]

    def summary(group: dict[str, list]) -> dict[str, list]:
        assert len(set(group["topic"])) == 1 and all(type(n) is int for n in group["n"])
        return {"topic": group["topic"][:1], "calls": [1], "values": [sorted(group["n"])]}

    with spark_session("local[2]", {"spark.sql.execution.arrow.maxRecordsPerBatch": str(batch)}) as session:
        frame = session.createDataFrame(rows, "topic string, n long").repartition(3)
        got = _grouped(frame, "topic", summary, "topic string, calls long, values array<long>").collect()
    assert sorted((r.topic, r.calls, list(r.values)) for r in got) == [
        (topic, 1, list(range(size))) for topic, size in sorted(sizes.items())
    ]


@pytest.mark.parametrize("dense", [True, False], ids=["array", "map"])
def test_broker_lookups_give_groups_and_members(monkeypatch, dense):
    """The broker lookups of the pipeline's columns: an array indexed by id, or a map when the ids span
    more than DENSE_BROKER_RANGE; a broker not chosen (or null) has no group and is no member."""
    from pyspark.sql import functions as F

    from kreassign.spark import lookups
    from kreassign.spark.session import spark_session

    if not dense:
        monkeypatch.setattr(lookups, "DENSE_BROKER_RANGE", 2)
    ctx = make_context([(3, "b"), (5, "a"), (7, "b"), (9, None)], None)
    codes = lookups._group_codes(ctx)
    probes = [1, 3, 4, 5, 7, 9, 10, None]
    with spark_session("local[1]", {}) as session:
        frame = session.createDataFrame([(b,) for b in probes], "b long")
        b = F.col("b")
        rows = frame.select("b", lookups._group_of(ctx, b).alias("g"), lookups._member([3, 9], b).alias("m")).collect()
    got = {r.b: (r.g, r.m) for r in rows}
    assert got == {
        b: (codes[ctx.group(b)] if ctx.chosen(b) else None, b in (3, 9)) if b is not None else (None, False)
        for b in probes
    }
    assert codes[ctx.group(3)] == codes[ctx.group(7)] != codes[ctx.group(5)]


def test_an_embedded_session_gets_a_quarter_of_the_memory_and_conf_overrides_it(monkeypatch):
    from kreassign.spark import session

    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": (24 << 30) // 4096}
    monkeypatch.setattr(session.os, "sysconf", pages.__getitem__)
    assert session._settings("local[2]", {})["spark.driver.memory"] == "6144m"
    assert session._settings("local[2]", {"spark.driver.memory": "3g"})["spark.driver.memory"] == "3g"
    assert "spark.driver.memory" not in session._settings("spark://127.0.0.1:7077", {})  # the cluster's own
    pages["SC_PHYS_PAGES"] = (4 << 30) // 4096  # a small machine: 2 GiB at least
    assert session._settings("local[*]", {})["spark.driver.memory"] == "2048m"


def test_an_embedded_session_runs_the_parallel_collector_unless_conf_says_otherwise():
    from kreassign.spark import session

    assert session._settings("local[2]", {})["spark.driver.extraJavaOptions"] == "-XX:+UseParallelGC"
    own = {"spark.driver.extraJavaOptions": "-XX:+UseG1GC"}
    assert session._settings("local[1]", own)["spark.driver.extraJavaOptions"] == "-XX:+UseG1GC"
    assert "spark.driver.extraJavaOptions" not in session._settings("spark://127.0.0.1:7077", {})


@pytest.mark.parametrize(
    ("new_capacity", "scope"),
    [(10 << 40, None), (60 << 30, None), (10 << 40, 20)],
    ids=["room-everywhere", "new-brokers-small", "room-everywhere-scoped"],
)
def test_disk_capacities_give_the_local_plan_and_report(spark, tmp_path, monkeypatch, new_capacity, scope):
    """Known capacities and topics left out of the plan: the Spark engine sums the other topics' bytes per
    broker from the file and checks the disk bounds from its aggregates (room everywhere: the plan streams);
    new brokers too small for their share make it collect the plan and relieve them on the driver. Either
    way stdout, and the plan report but for the engine's name, are the local engine's; so they are when the
    bytes stage looks at a scope of topics (``scope`` replicas per broker), its disk bounds from the totals."""
    import json

    if scope is not None:
        from kreassign.planning import scope as scopes

        monkeypatch.setattr(scopes, "REPLICAS_PER_BROKER", scope)

    snapshot = tmp_path / "synthetic.jsonl"
    write_synthetic(str(snapshot), 2000, brokers=90, racks=30, new=6, per_topic=50)
    lines = []
    for line in snapshot.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "broker":
            record["capacity_bytes"] = new_capacity if record["id"] > 84 else 10 << 40
        lines.append(json.dumps(record))
    snapshot.write_text("\n".join(lines) + "\n")
    topics = tmp_path / "topics.json"  # 30 of the 40 topics: the other 10 hold bytes on the disks too
    topics.write_text('{"version":1,"topics":[' + ",".join(f'{{"topic":"topic-{t:05d}"}}' for t in range(30)) + "]}")
    outputs, reports = {}, {}
    for engine in ("local", "spark"):
        outputs[engine], report = run_balanced(snapshot, topics, engine, 90)
        reports[engine] = report.replace(f"engine {engine}", "engine")
    assert outputs["spark"] == outputs["local"]
    assert reports["spark"] == reports["local"]
    assert "disk use" in reports["local"]


def test_shared_volumes_and_cordons_give_the_local_plan(spark, tmp_path):
    """Each broker's two log dirs on one volume (the snapshot's ``dirs``): the capacity is the volume's, once,
    so the plan is the one of a single dir of that size (new brokers too small: the driver relieves them);
    broker 1 with every dir cordoned is drained and broker 2's cordoned dir changes nothing. Each dir on a
    volume of its own: the plan names a dir for every replica it adds (the Spark engine collects the plan for
    it). Both engines."""
    import json

    small = 60 << 30
    snapshot = tmp_path / "synthetic.jsonl"
    write_synthetic(str(snapshot), 2000, brokers=90, racks=30, new=6, per_topic=50)
    records = [json.loads(line) for line in snapshot.read_text().splitlines()]

    def variant(name: str, shared: bool, cordoned: dict[int, tuple[bool, bool]], split: bool = False) -> Path:
        lines = []
        for record in records:
            record = dict(record)
            if record["type"] == "broker":
                capacity = small if record["id"] > 84 else 10 << 40
                record["capacity_bytes"] = capacity
                if shared:
                    record["log_dirs"] = ["/data", "/data2"]
                    record["dirs"] = [
                        {"path": d, "volume": "/data", "total_bytes": capacity, "usable_bytes": capacity // 2,
                         "used_bytes": 0, "cordoned": c}
                        for d, c in zip(("/data", "/data2"), cordoned.get(record["id"], (False, False)), strict=True)
                    ]  # fmt: skip
                if split:  # two volumes of half the capacity, the second the emptier
                    record["log_dirs"] = ["/data", "/data2"]
                    record["dirs"] = [
                        {"path": d, "volume": d, "total_bytes": capacity // 2, "usable_bytes": capacity // 2 * f // 10,
                         "used_bytes": 0, "cordoned": False}
                        for d, f in (("/data", 6), ("/data2", 9))
                    ]  # fmt: skip
            lines.append(json.dumps(record))
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path

    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[' + ",".join(f'{{"topic":"topic-{t:05d}"}}' for t in range(30)) + "]}")
    one_dir = variant("one-dir", False, {})
    shared = variant("shared", True, {})
    cordoned = variant("cordoned", True, {1: (True, True), 2: (False, True)})
    split = variant("two-volumes", False, {}, split=True)
    outputs = {}
    for name, path in (("one-dir", one_dir), ("shared", shared), ("cordoned", cordoned), ("two-volumes", split)):
        for engine in ("local", "spark"):
            outputs[name, engine], _ = run_balanced(path, topics, engine, 90)
        assert outputs[name, "spark"] == outputs[name, "local"], name
    assert outputs["shared", "local"] == outputs["one-dir", "local"]
    proposal = json.loads(outputs["cordoned", "local"].splitlines()[4])["partitions"]
    assert not any(1 in p["replicas"] for p in proposal)
    assert any(2 in p["replicas"] for p in proposal)
    named = [
        (b, d)
        for p in json.loads(outputs["two-volumes", "local"].splitlines()[4])["partitions"]
        for b, d in zip(p["replicas"], p["log_dirs"], strict=True)
        if d != "any"
    ]
    assert named and {d for _, d in named} == {"/data", "/data2"}


@pytest.mark.parametrize("extra", [(), ("--bytes-tolerance", "none")], ids=["collected", "streamed"])
def test_replicas_on_brokers_gone_give_the_local_plan(spark, tmp_path, extra):
    """Brokers 83 and 84 gone from the snapshot (their replicas stay, with their log dirs; --broker-list still
    names them) and every seventh partition without log dirs: the current document names no dir for those
    replicas ("any"), from the plan the Spark engine collects for the bytes stage as from the one it streams.
    Both engines."""
    import json

    snapshot = tmp_path / "synthetic.jsonl"
    write_synthetic(str(snapshot), 2000, brokers=90, racks=30, new=6, per_topic=50)
    lines = []
    for line in snapshot.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "broker" and record["id"] in (83, 84):
            continue
        if record["type"] == "partition" and record["partition"] % 7 == 0:
            record["log_dirs"] = None
        lines.append(json.dumps(record))
    snapshot.write_text("\n".join(lines) + "\n")
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[' + ",".join(f'{{"topic":"topic-{t:05d}"}}' for t in range(40)) + "]}")
    outputs = {engine: run_balanced(snapshot, topics, engine, 90, *extra)[0] for engine in ("local", "spark")}
    assert outputs["spark"] == outputs["local"]
    current = json.loads(outputs["local"].splitlines()[1])["partitions"]
    gone = [p for p in current if {83, 84} & set(p["replicas"]) and p["partition"] % 7]
    assert gone and all(
        d == ("any" if b in (83, 84) else "/data")
        for p in gone
        for b, d in zip(p["replicas"], p["log_dirs"], strict=True)
    )


def test_uneven_racks_give_the_local_plan_and_report_through_the_command_line(spark, tmp_path):
    """The issue's decommission (12/6/6) from a snapshot: the same stdout and report from both engines."""
    from tests.unit.test_rack_limits import uneven_racks_snapshot

    argv = uneven_racks_snapshot(tmp_path)
    outputs = {engine: run_argv([*argv, "--engine", engine]) for engine in ("local", "spark")}
    assert outputs["spark"][0] == outputs["local"][0]
    assert outputs["spark"][1].replace("engine spark", "engine") == outputs["local"][1].replace(
        "engine local", "engine"
    )
    assert "Racks: broker 1 holds 12 replicas" in outputs["local"][1]
    # issue 39: the minimum the racks allow, and the drained broker's __consumer_offsets (Spark's own count)
    assert "8 replica(s) moved (minimum 8)" in outputs["local"][1]
    assert "Warning: broker 3 keeps 3 replica(s) of topics this plan does not move" in outputs["local"][1]


def run_argv(argv) -> tuple[str, str]:
    """A command line run in this process: stdout and stderr (it must succeed)."""
    import kreassign.cli.app as app

    out, err = io.StringIO(), io.StringIO()
    saved = app._stderr
    app._stderr = err.write
    try:
        assert run([str(a) for a in argv], out=out.write, err=err.write) == 0, out.getvalue()
    finally:
        app._stderr = saved
    return out.getvalue(), err.getvalue()


def test_the_spark_reader_gives_the_rates_of_the_row_reader(spark, tmp_path):
    """A snapshot taken with --sample-rates: the Spark reader of the file (SnapshotPlanner) gives the very
    rates of the row reader (SnapshotCluster), partitions without rates left out, integers as floats and one
    field alone as the other 0; its survey is that of the file without rates; a negative rate is one line."""
    import json
    import random
    import re

    from kreassign.snapshot import SnapshotCluster, SnapshotFormatError
    from kreassign.spark.planner import SnapshotPlanner

    plain = tmp_path / "synthetic.jsonl"
    write_synthetic(str(plain), 2000, brokers=90, racks=30, new=6, per_topic=50)
    rnd = random.Random(5)
    lines = []
    for line in plain.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "partition" and rnd.random() < 0.7:
            fields = rnd.choice(
                [("write_bytes_per_s", "read_bytes_per_s"), ("write_bytes_per_s",), ("read_bytes_per_s",)]
            )
            for name in fields:
                record[name] = rnd.choice([round(rnd.lognormvariate(10, 2), 1), rnd.randrange(5000), 0])
        lines.append(json.dumps(record, separators=(",", ":")))
    sampled = tmp_path / "sampled.jsonl"
    sampled.write_text("\n".join(lines) + "\n")
    topics = sorted({json.loads(line)["topic"] for line in lines if '"type":"topic"' in line})

    expected = SnapshotCluster.open(str(sampled)).recorded_rates()
    assert 1200 < len(expected) < 1600
    planner, without = SnapshotPlanner(spark, str(sampled), topics), SnapshotPlanner(spark, str(plain), topics)
    try:
        rates = planner.recorded_rates()
        assert rates == expected
        assert all(type(v) is float for pair in rates.values() for v in pair)
        assert without.recorded_rates() == {} == SnapshotCluster.open(str(plain)).recorded_rates()
        assert planner.survey() == without.survey()
    finally:
        planner.close()
        without.close()

    bad = tmp_path / "bad.jsonl"
    text, replaced = re.subn(r'"read_bytes_per_s":[0-9.]+', '"read_bytes_per_s":-3', sampled.read_text(), count=1)
    assert replaced == 1
    bad.write_text(text)
    planner = SnapshotPlanner(spark, str(bad), topics)
    try:
        with pytest.raises(SnapshotFormatError, match="read_bytes_per_s must be a number of bytes per second"):
            planner.recorded_rates()
    finally:
        planner.close()
