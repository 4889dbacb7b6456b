"""Ctrl-C at a real terminal while ``--generate --engine spark`` is inside Spark (issue 26 item 8): one line,
``Interrupted.``, exit 130; no py4j traceback ("ERROR:root:KeyboardInterrupt while sending command."), no
Spark WARN line; nothing left behind (temp files, the driver JVM). A pseudo-terminal (pexpect), 140 columns."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pexpect
import pyspark  # noqa: F401  (./scripts/test installs the spark extra: never skipped)
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synthetic import write_synthetic

pytestmark = pytest.mark.spark

BROKERS = 46


@pytest.fixture(scope="module")
def large_inputs(tmp_path_factory) -> tuple[Path, Path]:
    """Large enough that the Spark job still runs seconds after the session started (about 30 s here)."""
    folder = tmp_path_factory.mktemp("large")
    snapshot = folder / "snapshot.jsonl"
    write_synthetic(str(snapshot), 200_000, brokers=40, racks=4, new=6, per_topic=50)
    topics = folder / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": f"topic-{t:05d}"} for t in range(4000)]}))
    return snapshot, topics


def _jvms_naming(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_ctrl_c_inside_spark_is_one_line_and_exit_130(large_inputs, tmp_path):
    snapshot, topics = large_inputs
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out.txt"
    brokers = ",".join(str(b) for b in range(1, BROKERS + 1))
    command = (
        f"exec {sys.executable} -m kreassign --generate --cluster-snapshot-file {snapshot} "
        f"--topics-to-move-json-file {topics} --broker-list {brokers} --strategy balanced --engine spark "
        f"--spark-master 'local[2]' > {out}"
    )
    env = {**os.environ, "TMPDIR": str(tmp)}
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, dimensions=(40, 140), encoding="utf-8", timeout=300)
    try:
        # inside Spark: the session made its folder (spark.local.dir) and its JVM runs the job
        deadline = time.monotonic() + 240
        while not any(p.name.startswith("spark-") for d in tmp.glob("kreassign-spark-*") for p in d.iterdir()):
            assert child.isalive(), child.read_nonblocking(100000, timeout=1)
            assert time.monotonic() < deadline, "Spark did not start"
            time.sleep(0.2)
        time.sleep(5)
        assert child.isalive(), "the plan finished before Ctrl-C: make the input larger"
        child.sendcontrol("c")  # the terminal's interrupt: SIGINT to the foreground process group
        child.expect(pexpect.EOF, timeout=120)
    finally:
        child.close(force=True)
    screen = child.before.replace("\r\n", "\n")
    assert child.exitstatus == 130, screen
    lines = [line.removeprefix("^C") for line in screen.splitlines() if line.strip() not in ("", "^C")]
    # the JVM's own notice about its incubator module (--add-modules of Spark's launcher) is all that may precede
    assert [x for x in lines if not x.startswith("WARNING: Using incubator modules")] == ["Interrupted."], screen
    for noise in ("Traceback", "ERROR:root", "py4j", " WARN ", "log level"):
        assert noise not in screen, screen
    assert out.read_text() == ""
    deadline = time.monotonic() + 30
    while _jvms_naming(str(tmp)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _jvms_naming(str(tmp)) == [], "the driver JVM outlived the interrupted run"
    assert sorted(os.listdir(tmp)) == []


def test_the_jvm_start_up_warning_never_reaches_the_terminal(tmp_path):
    """Issue 33: `--engine spark` leaked the JVM's `WARNING: Using incubator modules: jdk.incubator.vector`. At a
    real terminal (stderr) with stdout to a file: the plan report only, the plan in the file."""
    folder = tmp_path / "small"
    folder.mkdir()
    snapshot = folder / "snapshot.jsonl"
    write_synthetic(str(snapshot), 200, brokers=7, racks=3, new=1, per_topic=20)
    topics = folder / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": f"topic-{t:05d}"} for t in range(10)]}))
    out = tmp_path / "out.txt"
    command = (
        f"exec {sys.executable} -m kreassign --generate --cluster-snapshot-file {snapshot} "
        f"--topics-to-move-json-file {topics} --broker-list 1,2,3,4,5,6,7 --strategy balanced --engine spark "
        f"--spark-master 'local[1]' > {out}"
    )
    child = pexpect.spawn("/bin/sh", ["-c", command], dimensions=(40, 80), encoding="utf-8", timeout=300)
    child.expect(pexpect.EOF)
    child.close()
    shown = child.before
    assert child.exitstatus == 0, shown
    assert shown.startswith("Balanced plan (engine spark): "), shown
    assert "WARNING" not in shown and "incubator" not in shown, shown
    assert out.read_text().startswith("Current partition replica assignment\n")
