"""A runbook's ``--verify`` beside kreassign's batched run of the same plan, on the real cluster, real processes.

Apache runbooks call ``--verify --reassignment-json-file plan.json`` periodically until the plan completes. Between
two steps of a batched run nothing is reassigning, so the Apache --verify prints ``There is no active reassignment of
partition X, but replica set is A rather than B.`` and clears every throttle; the run then found its protection
removed by someone else and stopped (exit 4). kreassign's --verify prints the same, byte for byte, clears the same, but
first asks the run to put back its own throttles: the run does (one stderr line naming the --verify's pid) and
completes.

The --verify lands between two steps by the state, not by time: the run's process is stopped (SIGSTOP) at an instant
when the cluster lists no reassignment, after a step has completed, and continued once the --verify has run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.devcluster.topics import create_topic
from kreassign.execution.journal import Journal
from kreassign.model import TopicPartition
from tests.integration.differential import run_apache, wait_until
from tests.integration.test_throttle_ownership_live import (
    FOLLOWER_RATE,
    clear,
    finish,
    plan_file,
    settled,
    start,
    throttles,
)

pytestmark = pytest.mark.integration

RATE = "500000"


def journal_of(logs) -> Journal | None:
    """The run's journal, named on its stdout once it has started."""
    for line in (logs / "run.out").read_text().splitlines():
        if line.startswith("Journal: "):
            return Journal(line.split(": ", 1)[1])
    return None


def stopped_between_steps(proc: subprocess.Popen, port: KafkaCluster, journal: Journal, partitions: list) -> bool:
    """Stops the run's process; keeps it stopped (True) when it is between two of its steps: a step completed, none
    on the cluster (the controller has ended one the run has not yet seen end, or the run has recorded its next step
    and not yet submitted it), the plan not done. Else lets it go on (False)."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        state = journal.load()
        between = (
            sum(state.steps_done.values()) >= 1
            and not port.list_reassignments()
            and any(
                tuple(p.replicas) != (3, 2) for p in port.describe_topics([partitions[0].topic])[partitions[0].topic]
            )
        )
    except Exception:
        between = False
    if not between:
        os.kill(proc.pid, signal.SIGCONT)
    return between


def test_a_runbooks_verify_between_two_steps_leaves_the_batched_run_going(kafka_cluster, adapter, tmp_path):
    bootstrap, port = kafka_cluster.bootstrap_servers, adapter
    topic = "verify-beside"
    create_topic(bootstrap, topic, [[1, 2]] * 3, messages=6000, size=1000)  # 2 MB a partition
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    plan = plan_file(tmp_path, topic, 3, [3, 2])
    partitions = [TopicPartition(topic, p) for p in range(3)]
    proc = start(bootstrap, plan, env, "--max-partition-movements", "1", "--throttle", RATE, logs=tmp_path)
    try:
        assert wait_until(lambda: journal_of(tmp_path), timeout=60, interval=0.2)
        journal = journal_of(tmp_path)
        assert wait_until(lambda: stopped_between_steps(proc, port, journal, partitions), timeout=120, interval=0.05)
        # the run is stopped between two steps: the runbook's --verify, the Apache tool's for the reference first
        verify = ["--bootstrap-server", bootstrap, "--verify", "--reassignment-json-file", plan]
        apache = run_apache(verify)
        ours = subprocess.Popen(
            [sys.executable, "-m", "kreassign", *verify],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        stdout, stderr = ours.communicate(timeout=120)
        os.kill(proc.pid, signal.SIGCONT)
        assert ours.returncode == apache.code == 0, stdout + stderr
        assert stdout == apache.stdout  # Apache's lines, byte for byte: "no active reassignment", "Clearing ..."
        assert "There is no active reassignment of partition" in stdout and "Clearing broker-level throttles" in stdout
        # the run puts its rates back before its next step (it stopped: exit 4), and goes on to the end
        back = []

        def put_back_or_ended() -> bool:
            if throttles(port, topic).get("broker:3", {}).get(FOLLOWER_RATE) == RATE:
                back.append(True)
            return bool(back) or proc.poll() is not None

        assert wait_until(put_back_or_ended, timeout=60)
        out, err = finish(proc, tmp_path)
        assert proc.returncode == 0, out + err
        assert back
        assert f"batched run of {plan} on this cluster (pid {proc.pid}) puts back its own throttles" in stderr
        assert "Batched reassignment complete: 3 partition(s) at their target" in out
        put_back = [line for line in err.splitlines() if "Put back " in line]
        assert len(put_back) == 1 and f"--verify (pid {ours.pid}) cleared them" in put_back[0], err
        assert "removed by another client" not in err
        assert settled(port, topic, {}) == {}  # its end restored them as ever
        assert all(p.replicas == (3, 2) for p in port.describe_topics([topic])[topic])
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        clear(port, topic)
