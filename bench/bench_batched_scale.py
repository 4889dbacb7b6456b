"""Many small steps on a real 3-broker cluster: the batched executor against Apache's execute + verify loop.

    .venv/bin/python bench/bench_batched_scale.py [--partitions 2000] [--max-partition-movements 200]

Topics of empty partitions, RF 2 on brokers 1 and 2, each plan on a fresh topic whose logs the brokers have
all created (DescribeLogDirs). Two plans:

* ``follower``: every partition moves its follower to broker 3 (one step each);
* ``leader``: every partition goes to [3, 1] (broker 3 added as the new leader and broker 2 dropped: one
  step and one preferred-leader election each; Apache elects nothing, broker 1 stays the leader).

Apache: ``--execute`` then ``--verify`` every second until nothing is in progress. kreassign:
``--execute --max-partition-movements P --poll-interval-ms 1000`` in this process, through a port that counts
and times the executor's requests, so that the requests and the wall time of a poll are measured too, and
where the time between two submissions goes (with Kafka, finished steps not yet seen, the submitting poll).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kreassign.actions.batched import execute_batched  # noqa: E402
from kreassign.actions.execute_request import ExecuteRequest  # noqa: E402
from kreassign.cluster.kafka import KafkaCluster  # noqa: E402
from kreassign.cluster.port import ConfigResource, ResourceType  # noqa: E402
from kreassign.devcluster.cluster import LocalKafkaCluster  # noqa: E402
from kreassign.devcluster.jars import apache_tool_command  # noqa: E402
from kreassign.devcluster.topics import create_topic  # noqa: E402
from kreassign.errors import KreassignError  # noqa: E402
from kreassign.formats import parse_reassignment_json  # noqa: E402
from kreassign.planning.steps import Limits  # noqa: E402

TARGETS = {"follower": [1, 3], "leader": [3, 1]}


class Counting:
    """Forwards to the Kafka adapter, counting and timing each call."""

    def __init__(self, port: KafkaCluster) -> None:
        self._port = port
        self.calls: Counter[str] = Counter()
        self.call_seconds: Counter[str] = Counter()
        self.seconds = 0.0

    def __getattr__(self, name):
        target = getattr(self._port, name)
        if not callable(target):
            return target

        def call(*args, **kwargs):
            self.calls[name] += 1
            start = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                took = time.perf_counter() - start
                self.seconds += took
                self.call_seconds[name] += took

        return call


class PollTimes:
    def __init__(self, port: Counting) -> None:
        self.port = port
        self.polls: list[tuple[float, Counter[str]]] = []  # (seconds, requests) of each poll
        self.started: list[float] = []  # when each poll started
        self._mark = (time.perf_counter(), Counter(), Counter())
        self.verbose = bool(os.environ.get("KREASSIGN_BENCH_EVENTS"))
        self._start = time.perf_counter()

    def event(self, message: str) -> None:
        if self.verbose:
            print(f"  {time.perf_counter() - self._start:7.2f} event: {message}", file=sys.stderr, flush=True)

    def progress(self, progress) -> None:
        if self.verbose and progress.notes:
            print(f"  notes: {progress.notes[:3]}", file=sys.stderr, flush=True)

    def sleep(self, seconds: float) -> None:
        now = time.perf_counter()
        self.polls.append((now - self._mark[0], self.port.calls - self._mark[1]))
        self.started.append(self._mark[0])
        if self.verbose:
            calls = self.port.calls - self._mark[1]
            took = self.port.call_seconds - self._mark[2]
            each = ", ".join(f"{name} {calls[name]}x {1000 * took[name]:.0f} ms" for name in calls)
            print(
                f"  {now - self._start:7.2f} poll took {now - self._mark[0]:.3f} s ({each}); sleep {seconds:.2f} s",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(seconds)
        self._mark = (time.perf_counter(), Counter(self.port.calls), Counter(self.port.call_seconds))

    def windows(self) -> str:
        """Between two polls that submit steps: the time with Kafka (from the end of the submitting poll to the
        start of the last poll that still saw steps running, a lower bound) and the time the finished steps
        waited to be seen (from that poll's start to the start of the poll that saw them done, an upper bound)."""
        submits = [i for i, (_, calls) in enumerate(self.polls) if calls["alter_reassignments"]]
        with_kafka, seen_late = [], []
        for a, b in itertools.pairwise(submits):
            with_kafka.append(self.started[b - 1] - (self.started[a] + self.polls[a][0]))
            seen_late.append(self.started[b] - self.started[b - 1])
        if not seen_late:
            return ""
        submitting = sum(self.polls[i][0] for i in submits)
        return (
            f"    {len(submits)} submissions: with Kafka >= {sum(with_kafka):.1f} s, finished steps seen late"
            f" <= {sum(seen_late):.1f} s (median {statistics.median(seen_late):.2f}), submitting {submitting:.1f} s"
        )


def wait_for_configs(port: KafkaCluster, topic: str, timeout: float = 60.0) -> None:
    """A loaded broker may not know a topic just created yet: wait until its configs can be read."""
    resource = ConfigResource(ResourceType.TOPIC, topic)
    deadline = time.monotonic() + timeout
    while True:
        try:
            port.describe_configs([resource])
            return
        except KreassignError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def wait_until_settled(
    port: KafkaCluster, topic: str, brokers: list[int], partitions: int, timeout: float = 300.0
) -> float:
    """Seconds until every broker of the topic just created has created its logs (DescribeLogDirs lists
    them). The controller puts every replica in the ISR at creation, but the brokers create thousands of
    logs after, and a reassignment submitted meanwhile waits for them (measured: the first window of 200
    steps took 14 to 28 s, the next ones 1.5 to 3 s). Both tools start on a settled topic, so the
    benchmark times the reassignment, not the topic's creation."""
    start = time.monotonic()
    wanted = len(brokers) * partitions
    while True:
        try:
            if sum(r.topic == topic for r in port.replica_sizes(brokers)) >= wanted:
                return time.monotonic() - start
        except KreassignError:
            pass
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{topic} did not settle in {timeout:.0f} s")
        time.sleep(0.5)


def write_plan(path: Path, topic: str, partitions: int, target: list[int]) -> str:
    plan = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": p, "replicas": target} for p in range(partitions)],
    }
    path.write_text(json.dumps(plan))
    return str(path)


def apache(bootstrap: str, plan: str) -> float:
    tool = apache_tool_command()
    common = ["--bootstrap-server", bootstrap, "--reassignment-json-file", plan]
    start = time.perf_counter()
    subprocess.run([*tool, *common, "--execute"], check=True, capture_output=True)
    while True:
        out = subprocess.run([*tool, *common, "--verify"], check=True, capture_output=True, text=True).stdout
        if "is still in progress" not in out:
            return time.perf_counter() - start
        time.sleep(1)


def ours(port: KafkaCluster, plan: str, journal: Path, max_partitions: int) -> tuple[float, PollTimes]:
    counting = Counting(port)
    polls = PollTimes(counting)
    options = ExecuteRequest(
        parse_reassignment_json(Path(plan).read_text()),
        limits=Limits(partitions=max_partitions),
        journal_path=str(journal),
        poll_interval=1.0,
    )
    start = time.perf_counter()
    outcome = execute_batched(counting, options, lambda _t: None, polls, sleep=polls.sleep)
    wall = time.perf_counter() - start
    assert outcome is not None and outcome.status == "completed", outcome
    return wall, polls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--max-partition-movements", type=int, default=200)
    parser.add_argument("--plans", default="follower,leader")
    parser.add_argument(
        "--broker-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker setting of the cluster (repeatable), e.g. replica.fetch.wait.max.ms=100",
    )
    args = parser.parse_args()
    if any("=" not in setting for setting in args.broker_config):
        parser.error("--broker-config takes KEY=VALUE")
    broker_config = dict(setting.split("=", 1) for setting in args.broker_config)
    rows = []
    with (
        tempfile.TemporaryDirectory() as tmpdir,
        LocalKafkaCluster(Path(tmpdir) / "cluster", brokers=3, heap="1g", broker_config=broker_config) as cluster,
    ):
        tmp = Path(tmpdir)
        bootstrap = cluster.bootstrap_servers
        port = KafkaCluster(bootstrap_servers=bootstrap)
        try:
            for kind in args.plans.split(","):
                for tool in ("apache", "kreassign"):
                    topic = f"scale-{kind}-{tool}"
                    create_topic(bootstrap, topic, [[1, 2]] * args.partitions)
                    wait_for_configs(port, topic)
                    settled = wait_until_settled(port, topic, [1, 2], args.partitions)
                    print(f"{topic}: settled after {settled:.1f} s", file=sys.stderr, flush=True)
                    plan = write_plan(tmp / f"{topic}.json", topic, args.partitions, TARGETS[kind])
                    if tool == "apache":
                        rows.append((kind, tool, apache(bootstrap, plan), None))
                    else:
                        wall, polls = ours(port, plan, tmp / f"{topic}.journal.json", args.max_partition_movements)
                        rows.append((kind, tool, wall, polls))
                    print(f"{kind} {tool} {rows[-1][2]:.1f} s", file=sys.stderr, flush=True)
        finally:
            port.close()
    print(f"{args.partitions} empty partitions, RF 2, P={args.max_partition_movements}, poll 1 s")
    print(f"{'plan':<10}{'tool':<11}{'wall s':>8}{'ratio':>7}  per poll: median s, max s, requests (median, max)")
    apache_wall = {}
    for kind, tool, wall, polls in rows:
        if tool == "apache":
            apache_wall[kind] = wall
        ratio = wall / apache_wall[kind] if kind in apache_wall else float("nan")
        extra = ""
        if polls is not None and polls.polls:
            times = [t for t, _ in polls.polls]
            counts = [sum(c.values()) for _, c in polls.polls]
            extra = (
                f"  {statistics.median(times):.3f}, {max(times):.3f}, "
                f"{statistics.median(counts):.0f}, {max(counts)} ({len(times)} polls)"
            )
        print(f"{kind:<10}{tool:<11}{wall:>8.1f}{ratio:>7.2f}{extra}")
        between_submissions = polls.windows() if polls is not None else ""
        if between_submissions:
            print(between_submissions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
