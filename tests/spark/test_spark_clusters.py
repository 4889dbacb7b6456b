"""The real command line on real Spark: a standalone cluster (master + worker, ``spark://``) and a Spark
Connect server (``sc://``), both started from the pyspark package on 127.0.0.1 (tests/spark/conftest.py).
The plan printed is byte-identical to the local engine's, and a run leaves nothing in the temp dir.
A Spark failure is one ``Error:`` line on stdout, exit 1, no Java or Python trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark  # noqa: F401  (./scripts/test installs the spark extra: never skipped)
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synthetic import write_synthetic

from tests.unit.test_generate_balanced_cli import generate

pytestmark = pytest.mark.spark

BROKERS = 90


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("snapshot")
    snapshot = folder / "synthetic.jsonl"
    write_synthetic(str(snapshot), 2000, brokers=BROKERS, racks=30, new=6, per_topic=50)
    topics = folder / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": f"topic-{t:05d}"} for t in range(40)]}))
    return snapshot, topics


def kreassign(inputs: tuple[Path, Path], tmp: Path, *extra: str, env: dict[str, str] | None = None):
    """The command line in its own process, with its own empty temp dir."""
    snapshot, topics = inputs
    tmp.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "kreassign", *generate(str(snapshot), str(topics), "--strategy", "balanced", *extra)]
    argv[argv.index("1,2,3,4")] = ",".join(str(b) for b in range(1, BROKERS + 1))
    environment = {**os.environ, **(env or {}), "TMPDIR": str(tmp)}
    return subprocess.run(argv, capture_output=True, text=True, env=environment, timeout=1800)


@pytest.fixture(scope="module")
def local_plan(inputs, tmp_path_factory) -> str:
    done = kreassign(inputs, tmp_path_factory.mktemp("local-tmp"), "--engine", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def assert_same_plan_and_clean(done, local_plan: str, tmp: Path) -> None:
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout == local_plan
    assert "Balanced plan (engine spark)" in done.stderr
    assert sorted(os.listdir(tmp)) == []  # the kreassign zip, Spark's local dir: all removed


def test_standalone_cluster_gives_the_local_plan(standalone_master, inputs, local_plan, tmp_path):
    tmp = tmp_path / "tmp"
    done = kreassign(inputs, tmp, "--engine", "spark", "--spark-master", standalone_master)
    assert_same_plan_and_clean(done, local_plan, tmp)


def test_spark_connect_gives_the_local_plan(connect_server, inputs, local_plan, tmp_path):
    tmp = tmp_path / "tmp"
    done = kreassign(inputs, tmp, "--engine", "spark", "--spark-master", connect_server)
    assert_same_plan_and_clean(done, local_plan, tmp)


def assert_one_error_line(done, starts: str = "Error: ") -> str:
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    assert lines[0].startswith(starts), lines[0]
    for trace in ("Traceback", "\tat ", "py4j", "Exception in thread"):
        assert trace not in done.stdout
    return lines[0]


def test_bad_master_url_is_one_error_line(inputs, tmp_path):
    tmp = tmp_path / "tmp"
    done = kreassign(inputs, tmp, "--engine", "spark", "--spark-master", "nonsense://nowhere")
    # a bad value of a kreassign option: a usage error on stderr, like --output yaml
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("Invalid --spark-master 'nonsense://nowhere'")
    assert done.stderr.endswith("\nRun with --help for the list of options.\n") and "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp)) == []


def test_java_missing_is_one_error_line(inputs, tmp_path):
    tmp = tmp_path / "tmp"
    no_java = tmp_path / "no-java"
    no_java.mkdir()
    done = kreassign(
        inputs,
        tmp,
        "--engine",
        "spark",
        env={"JAVA_HOME": str(no_java)},  # spark-class runs $JAVA_HOME/bin/java: not there
    )
    line = assert_one_error_line(done)
    assert "Java" in line
    assert sorted(os.listdir(tmp)) == []


def test_unreachable_connect_server_is_one_error_line(inputs, tmp_path):
    from tests.spark.conftest import free_port

    tmp = tmp_path / "tmp"
    done = kreassign(inputs, tmp, "--engine", "spark", "--spark-master", f"sc://127.0.0.1:{free_port()}")
    line = assert_one_error_line(done)
    assert "Spark failed" in line
    assert sorted(os.listdir(tmp)) == []


def test_a_worker_error_is_the_local_engines_error(standalone_master, inputs, tmp_path):
    """An impossible replication factor is raised by a stage running in a Spark worker: the driver prints
    the same one line as the local engine."""
    local = kreassign(inputs, tmp_path / "local", "--engine", "local", "--replication-factor", str(BROKERS + 1))
    spark = kreassign(
        inputs,
        tmp_path / "tmp",
        "--engine",
        "spark",
        "--spark-master",
        standalone_master,
        "--replication-factor",
        str(BROKERS + 1),
    )
    assert_one_error_line(local)
    assert spark.stdout == local.stdout
    assert spark.returncode == local.returncode == 1
    assert sorted(os.listdir(tmp_path / "tmp")) == []
