"""A killed test run leaves no broker behind (issue 26 item 17).

A pytest in a subprocess starts a small KRaft cluster the way the session fixtures do, then is killed the
way a CI time-out (SIGTERM), a kill -9 (SIGKILL) or a Ctrl-C (SIGINT) kills it. Within 30 s no JVM whose
command line names that run's data directory may be left. Only JVMs of this test's own directory are
counted: other runs on the machine have brokers of their own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

_INNER_TEST = """
import time
from pathlib import Path

from kreassign.devcluster.cluster import LocalKafkaCluster
from kreassign.devcluster.topics import create_topic


def test_holds_a_cluster():
    base = Path({base!r})
    cluster = LocalKafkaCluster(base, brokers=2, log_dirs_per_broker=1)
    try:
        cluster.start()
        # partitions led on both brokers: a broker's controlled shutdown has leaders to move
        create_topic(cluster.bootstrap_servers, "held", [[1, 2], [2, 1]] * 4, messages=100)
        (base / "READY").write_text("ready")
        time.sleep(600)
    finally:
        cluster.stop()
"""


def _jvms_of(base: Path) -> list[int]:
    """The pids of Java processes whose command line names ``base``."""
    needle = str(base).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
        if state != "Z" and needle in cmdline and b"java" in cmdline.split(b"\0")[0]:
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=lambda s: s.name)
def test_killed_pytest_leaves_no_broker(tmp_path: Path, signum: signal.Signals) -> None:
    base = tmp_path / "cluster"
    base.mkdir()
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(_INNER_TEST.format(base=str(base)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(test_file)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # Ctrl-C as at a terminal: a run started in the background of a shell without job control inherits
        # SIGINT ignored, and the inner pytest would never see it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_until(lambda: (base / "READY").exists() or proc.poll() is not None, timeout=150)
        assert proc.poll() is None, "the inner pytest ended before its cluster was ready"
        jvms = _jvms_of(base)
        assert len(jvms) == 3, f"expected 2 brokers and a controller, found {jvms}"
        proc.send_signal(signum)
        proc.wait(timeout=60)
        assert_no_jvm_left(base)
    finally:
        kill_left_over(proc, base)


def assert_no_jvm_left(base: Path, within: float = 30.0) -> None:
    """No JVM naming ``base`` is left ``within`` seconds (the process that started them was just killed)."""
    deadline = time.monotonic() + within
    while _jvms_of(base) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = _jvms_of(base)
    assert left == [], f"{len(left)} JVM(s) of the killed process still running after {within:.0f} s: {left}"


def kill_left_over(proc: subprocess.Popen, base: Path) -> None:
    """Whatever a failed test left: the starting process and the JVMs naming ``base``."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pid in _jvms_of(base):
        os.kill(pid, signal.SIGKILL)
