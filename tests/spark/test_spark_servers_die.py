"""A killed test run leaves no Spark server behind (issue 26 item 17, the Spark side).

The standalone and Spark Connect fixtures start their JVMs in sessions of their own (so that a stop can
signal the whole group); without a parent-death signal a SIGTERM to pytest left a Spark Connect server
running for good. Here a Python process starts a Spark master through the fixtures' own ``start`` (the
``spark-class`` script, which execs the JVM), is killed, and within 30 s no JVM naming its folder is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_harness_cleanup import _jvms_of, assert_no_jvm_left, kill_left_over
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.spark

_STARTER = """
import sys, time
from pathlib import Path
from tests.spark.conftest import free_port, spark_env, spark_home, start

folder = Path(sys.argv[1])
env = spark_env(folder)
env["SPARK_DAEMON_JAVA_OPTS"] = f"-Dkreassign.test.folder={folder}"  # names the folder on the JVM's command line
start(
    [str(spark_home() / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
     "--port", str(free_port()), "--webui-port", str(free_port())],
    env,
    folder / "master.log",
)
(folder / "STARTED").write_text("started")
time.sleep(600)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_killed_test_process_leaves_no_spark_server(tmp_path: Path, signum: signal.Signals) -> None:
    folder = tmp_path / "spark-master"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(folder)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # the JVM's command line names the folder; spark-class execs it in the process the fixture started
        wait_until(lambda: ((folder / "STARTED").exists() and _jvms_of(folder)) or proc.poll() is not None, timeout=120)
        assert proc.poll() is None, "the starter ended before its Spark master was up"
        assert _jvms_of(folder), "no Spark JVM found"
        proc.send_signal(signum)
        proc.wait(timeout=60)
        assert_no_jvm_left(folder)
    finally:
        kill_left_over(proc, folder)
