"""Real Spark processes started from the pyspark package, on 127.0.0.1 only: a standalone master with one
worker (``spark://``), and a Spark Connect server (``sc://``). Each binds free ports, uses little memory,
keeps its logs and work files under the test's temp dir, and is stopped at the end of the module."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kreassign.devcluster.cluster import die_with_parent

START_TIMEOUT = 300  # seconds; the shared 2-core machine can be slow to start a JVM


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spark_env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(folder / "logs"),
        SPARK_WORKER_DIR=str(folder / "work"),
        PYSPARK_PYTHON=sys.executable,
        SPARK_DAEMON_MEMORY="512m",
    )
    return env


def wait_until(check, what: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(1)
    raise RuntimeError(f"{what} did not start in {START_TIMEOUT} s: {log.read_text()[-2000:]}")


def listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as handle:
        # SIGKILL when the test process dies, however it ends (spark-class execs the JVM: same process)
        return subprocess.Popen(
            argv,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # the process group this fixture started (start_new_session)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT``: a master and one worker (2 cores, 1 GiB) from the pyspark package."""
    folder = tmp_path_factory.mktemp("spark-standalone")
    env = spark_env(folder)
    port, ui = free_port(), free_port()
    spark_class = str(spark_home() / "bin" / "spark-class")
    master_log, worker_log = folder / "master.log", folder / "worker.log"
    master = start(
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        env,
        master_log,
    )
    worker = None
    try:
        wait_until(lambda: listening(port), "Spark master", master, master_log)
        url = f"spark://127.0.0.1:{port}"
        worker = start(
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--cores",
                "2",
                "--memory",
                "1g",
                "--work-dir",
                str(folder / "work"),
            ],
            env,
            worker_log,
        )

        def worker_alive() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as response:
                return json.load(response).get("aliveworkers", 0) >= 1

        wait_until(worker_alive, "Spark worker", worker, worker_log)
        yield url
    finally:
        if worker is not None:
            stop(worker)
        stop(master)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory) -> Iterator[str]:
    """``sc://127.0.0.1:PORT``: a Spark Connect server (``local[2]``) from the pyspark package."""
    folder = tmp_path_factory.mktemp("spark-connect")
    env = spark_env(folder)
    port = free_port()
    log = folder / "connect.log"
    server = start(
        [
            str(spark_home() / "bin" / "spark-submit"),
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--master",
            "local[2]",
            "--driver-memory",
            "1g",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            f"spark.local.dir={folder / 'local'}",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "spark-internal",
        ],
        env,
        log,
    )
    try:
        wait_until(lambda: listening(port), "Spark Connect server", server, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop(server)
