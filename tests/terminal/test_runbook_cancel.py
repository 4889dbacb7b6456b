"""A batched run at a real terminal, stopped by what others do from a second shell (issue 26, items 2 and 15).

The run is a real process under a pseudo-terminal (pexpect, 80 columns: its live panel on stderr), its stdout
redirected to a file as a runbook does; the other actor is a second real process: the Apache-form ``--cancel``
without ``--journal-file``, or Apache's own ``kafka-configs`` (org.apache.kafka.tools.ConfigCommand from the Kafka 4.4.0 jars; kafka.admin.ConfigCommand before 4.4)
removing a throttle. Either way the run stops as its own --cancel stops it: exit 4, its step in flight
reverted to the source's exact replica order (Kafka's revert alone keeps the step's order), no step submitted
again, no throttle left, and the journal says who or what stopped it.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time

import pexpect
import pytest

from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.devcluster.topics import create_topic
from kreassign.execution.journal import RunStatus, how_it_ended
from kreassign.model import TopicPartition
from tests.integration.differential import keep_archive, tool_command, wait_until

pytestmark = pytest.mark.integration

THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)
SOURCE = [1, 2]
TARGET = [3, 2]  # a leader step [1,2] -> [3,2,1]: Kafka's revert alone leaves [2,1], led by 2 then preferred


@pytest.fixture(scope="module")
def cluster(kafka_cluster):
    port = KafkaCluster(bootstrap_servers=kafka_cluster.bootstrap_servers)
    yield kafka_cluster.bootstrap_servers, port
    port.close()


class TerminalRun:
    """``kreassign --execute ... > out.txt`` under a pseudo-terminal of 80 columns; the terminal's output is
    read all along (a terminal nobody reads blocks its writer)."""

    def __init__(self, args: list[str], stdout_file, env: dict[str, str]) -> None:
        command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "kreassign", *args])
        self.child = pexpect.spawn(
            "/bin/sh",
            ["-c", f"exec {command} > {shlex.quote(str(stdout_file))}"],
            env=env,
            dimensions=(40, 80),
            encoding="utf-8",
            codec_errors="replace",
            timeout=None,
        )
        self.screen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                self.screen.append(self.child.read_nonblocking(4096, timeout=0.5))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return

    def wait(self, timeout: float) -> int | None:
        """The exit status, or None if it did not exit in time (then it is killed)."""
        self._reader.join(timeout)
        if self._reader.is_alive():
            self.child.kill(9)
            self._reader.join(10)
            return None
        self.child.close()
        return self.child.exitstatus


def throttles(port: KafkaCluster, topic: str) -> dict:
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in (1, 2, 3)]
    resources.append(ConfigResource(ResourceType.TOPIC, topic))
    described = port.describe_configs(resources)
    return {
        f"{r.type.value}:{r.name}": v
        for r, values in described.items()
        if (v := {k: values[k] for k in THROTTLE_KEYS if k in values})
    }


def settled_throttles(port: KafkaCluster, topic: str) -> dict:
    """Throttles once the brokers have applied the last change the controller accepted (up to 15 s)."""
    last = throttles(port, topic)
    deadline = time.monotonic() + 15
    while last and time.monotonic() < deadline:
        time.sleep(0.5)
        last = throttles(port, topic)
    return last


def layout(port: KafkaCluster, topic: str) -> dict[int, tuple[list[int], int | None]]:
    return {p.partition: (list(p.replicas), p.leader) for p in port.describe_topics([topic])[topic]}


def start_run(tmp_path, bootstrap: str, topic: str, env: dict[str, str]) -> TerminalRun:
    create_topic(bootstrap, topic, [SOURCE] * 2, messages=4000, size=1000)  # 2 MB per partition
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": TARGET} for p in (0, 1)]})
    )
    args = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", str(plan)]
    args += ["--journal-file", str(tmp_path / "elsewhere" / "j1.json"), "--max-partition-movements", "1"]
    args += ["--throttle", "50000", "--poll-interval-ms", "200"]  # 2 MB at 50 KB/s: about 40 s a step
    return TerminalRun(args, tmp_path / "out.txt", env)


def mid_step(port: KafkaCluster, topic: str) -> bool:
    """The run's first step copies (its reassignment runs) under the run's throttle."""
    moving = port.list_reassignments([TopicPartition(topic, 0), TopicPartition(topic, 1)])
    return bool(moving) and "follower.replication.throttled.rate" in throttles(port, topic).get("broker:3", {})


def check_stopped_cleanly(port, topic, run, code, tmp_path, started, reason: str) -> dict:
    out = (tmp_path / "out.txt").read_text()
    assert code == 4, out + "".join(run.screen)
    assert f"Batched reassignment {how_it_ended(RunStatus.CANCELLED, reason)}: 0 of 2 partition(s)" in out
    assert "Reverted the steps in flight of " in out
    assert port.list_reassignments() == {}
    assert settled_throttles(port, topic) == {}
    # the cancelled step's partition is back at its source in its exact order (Kafka alone: [2,1]), led by its
    # preferred leader; the other partition never moved
    assert layout(port, topic) == {0: (SOURCE, 1), 1: (SOURCE, 1)}, out + "".join(run.screen)
    journal = json.loads((tmp_path / "elsewhere" / "j1.json").read_text())
    assert journal["status"] == "cancelled" and journal["message"] == reason
    assert [p["in_flight"] for p in journal["partitions"]] == [None, None]
    assert sum(p["steps_done"] for p in journal["partitions"]) == 0
    # no step is submitted again: nothing runs, nothing moves, a few seconds after the run has gone
    time.sleep(3)
    assert port.list_reassignments() == {} and layout(port, topic) == {0: (SOURCE, 1), 1: (SOURCE, 1)}
    print(f"{topic}: stopped {time.monotonic() - started:.1f} s after the run started")
    return journal


def test_apache_form_cancel_from_a_second_shell_stops_the_run_at_a_terminal(cluster, tmp_path):
    bootstrap, port = cluster
    topic = "runbook-cancel"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm", "COLUMNS": "80"}
    started = time.monotonic()
    run = start_run(tmp_path, bootstrap, topic, env)
    try:
        assert wait_until(lambda: mid_step(port, topic), timeout=60, interval=0.2), "".join(run.screen)
        time.sleep(1.0)
        # the runbook's second shell: the Apache form, no --journal-file (the run's journal is elsewhere)
        cancel = [sys.executable, "-m", "kreassign", "--bootstrap-server", bootstrap, "--cancel"]
        cancel += ["--reassignment-json-file", str(tmp_path / "plan.json")]
        second = pexpect.spawn(cancel[0], cancel[1:], env=env, encoding="utf-8", dimensions=(40, 80), timeout=150)
        second.expect(pexpect.EOF)
        second.close()
        code = run.wait(timeout=60)
    finally:
        if run.child.isalive():
            run.child.kill(9)
    cancel_output, cancel_code = second.before, second.exitstatus
    pid = run.child.pid
    out = (tmp_path / "out.txt").read_text()
    assert code == 4, f"run exit {code}\n{out}\n--- the cancel ---\n{cancel_output}"
    assert cancel_code == 0, cancel_output
    # Apache's stdout, byte for byte (here merged with stderr's one kreassign line, on the second pty)
    apache = (
        f"Successfully cancelled partition reassignment for: {topic}-0\r\n"
        "None of the specified partition moves are active."
        "Clearing broker-level throttles on brokers 1,2,3\r\n"
        f"Clearing topic-level throttles on topic {topic}\r\n"
    )
    assert cancel_output.endswith(apache), cancel_output
    # kreassign's account on stderr, wrapped at the terminal's 80 columns
    assert (
        f"kreassign: stopped the batched run of this plan (pid {pid}, journal " in " ".join(cancel_output.split()) + " "
    )
    check_stopped_cleanly(port, topic, run, code, tmp_path, started, f"cancelled by --cancel (pid {second.pid})")


def test_a_throttle_removed_by_kafka_configs_stops_the_run_at_a_terminal(cluster, tmp_path):
    bootstrap, port = cluster
    topic = "runbook-unthrottled"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm", "COLUMNS": "80"}
    started = time.monotonic()
    run = start_run(tmp_path, bootstrap, topic, env)
    try:
        assert wait_until(lambda: mid_step(port, topic), timeout=60, interval=0.2), "".join(run.screen)
        # a colleague's kafka-configs (Apache's ConfigCommand, from the Kafka jars) removes the rate of the broker
        # that serves the copy (the follower rate of broker 3 still holds it back, so the step is still in flight
        # when the run sees the removal: a copy without any throttle would end in a fraction of a second)
        kafka_configs = [
            *tool_command(main_class="org.apache.kafka.tools.ConfigCommand", archive=False)[0],
            "--bootstrap-server", bootstrap, "--entity-type", "brokers", "--entity-name", "1", "--alter",
            "--delete-config", "leader.replication.throttled.rate",
        ]  # fmt: skip
        removed, removed_code = pexpect.run(
            " ".join(shlex.quote(a) for a in kafka_configs), withexitstatus=True, encoding="utf-8", timeout=120
        )
        assert removed_code == 0, removed
        code = run.wait(timeout=60)
    finally:
        if run.child.isalive():
            run.child.kill(9)
    reason = "throttle config leader.replication.throttled.rate of broker 1 removed by another client"
    check_stopped_cleanly(port, topic, run, code, tmp_path, started, reason)


def test_apache_tools_own_cancel_stops_the_run_at_a_terminal(cluster, tmp_path):
    """Apache's kafka-reassign-partitions --cancel cancels the step and clears the throttles: the run sees the
    one or the other first, and stops as its own --cancel stops it."""
    bootstrap, port = cluster
    topic = "runbook-apache-cancel"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm", "COLUMNS": "80"}
    started = time.monotonic()
    run = start_run(tmp_path, bootstrap, topic, env)
    try:
        assert wait_until(lambda: mid_step(port, topic), timeout=60, interval=0.2), "".join(run.screen)
        tool, archive = tool_command()
        apache = [*tool, "--bootstrap-server", bootstrap, "--cancel"]
        apache += ["--reassignment-json-file", str(tmp_path / "plan.json")]
        output, apache_code = pexpect.run(
            " ".join(shlex.quote(a) for a in apache), withexitstatus=True, encoding="utf-8", timeout=120
        )
        keep_archive(archive, apache_code is not None)
        assert apache_code == 0, output
        assert f"Successfully cancelled partition reassignment for: {topic}-0" in output
        code = run.wait(timeout=60)
    finally:
        if run.child.isalive():
            run.child.kill(9)
    out = (tmp_path / "out.txt").read_text()
    assert code == 4, f"run exit {code}\n{out}"
    reason = json.loads((tmp_path / "elsewhere" / "j1.json").read_text())["message"]
    assert reason == f"step of {topic}-0 cancelled by another client" or (
        reason.startswith("throttle config ") and reason.endswith(" removed by another client")
    ), reason
    check_stopped_cleanly(port, topic, run, code, tmp_path, started, reason)
