"""Python CPU and cluster requests per poll of the batched executor, on the simulated cluster.

    .venv/bin/python bench/bench_poll_cost.py [--partitions 2000,20000,100000] [--polls 30] [--profile]
        [--max-broker-movements N]

A plan of N partitions (topics of 100 partitions, RF 2 on 12 brokers, each partition moves one replica,
3 MB each at a 1 MB/s throttle, so that steps finish and start on most polls) runs with
--max-partition-movements 200 (and ``--max-broker-movements N`` when given) for some polls, then stops. A poll's CPU is the process CPU time between two sleeps of the executor, minus nothing else:
the simulated cluster's own time step (``advance``, run inside ``sleep``) is left out, its answers to the
executor's calls are counted in. Prints the median and the largest poll, and the most requests of each
kind one poll made.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution.signals import Interrupted
from kreassign.model import Broker, ReassignmentPlan, TopicPartition
from kreassign.planning.steps import Limits

PORT_CALLS = (
    "describe_brokers",
    "describe_topics",
    "list_reassignments",
    "alter_reassignments",
    "describe_configs",
    "incremental_alter_configs",
    "elect_preferred_leaders",
    "replica_sizes",
)


class Counted(SimulatedCluster):
    """Counts the executor's requests."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests: Counter[str] = Counter()


for _name in PORT_CALLS:

    def _counted(self, *args, _name=_name, **kwargs):
        self.requests[_name] += 1
        return getattr(SimulatedCluster, _name)(self, *args, **kwargs)

    setattr(Counted, _name, _counted)


class Quiet:
    def __init__(self, stop_after: int):
        self.polls = 0
        self.stop_after = stop_after

    def event(self, _message: str) -> None:
        pass

    def progress(self, _progress) -> None:
        self.polls += 1
        if self.polls >= self.stop_after:
            raise Interrupted(2)


def build(partitions: int, brokers: int = 12, per_topic: int = 100):
    sim = Counted([Broker(b, f"rack-{b % 3}") for b in range(brokers)], bandwidth=50_000_000)
    targets = {}
    for t in range(-(-partitions // per_topic)):
        count = min(per_topic, partitions - t * per_topic)
        layout = [((p + t) % brokers, (p + t + 1) % brokers) for p in range(count)]
        sim.add_topic(f"topic-{t:05d}", layout, size=3_000_000)
        for p, (leader, follower) in enumerate(layout):
            targets[TopicPartition(f"topic-{t:05d}", p)] = (leader, (follower + 1 + p % 3) % brokers or 1)
    for tp, (a, b) in list(targets.items()):
        if a == b:
            targets[tp] = (a, (b + 1) % brokers)
    return sim, targets


def measure(partitions: int, polls: int, profile: bool, broker_limit: int | None = None) -> dict:
    sim, targets = build(partitions)
    cpu_marks: list[float] = []
    requests: list[Counter] = []

    def sleep(seconds: float) -> None:
        cpu_marks.append(time.process_time())
        requests.append(Counter(sim.requests))
        sim.advance(seconds)
        cpu_marks.append(time.process_time())

    profiler = cProfile.Profile() if profile else None
    with tempfile.TemporaryDirectory() as tmp:
        options = ExecuteRequest(
            ReassignmentPlan(tuple(targets.items())),
            limits=Limits(partitions=200, brokers=broker_limit),
            throttle=1_000_000,
            journal_path=str(Path(tmp) / "j.json"),
        )
        if profiler:
            profiler.enable()
        execute_batched(
            sim,
            options,
            lambda _text: None,
            Quiet(polls),
            clock=sim.clock,
            sleep=sleep,
        )
        if profiler:
            profiler.disable()
    # poll i runs from the end of sleep i-1 to the start of sleep i; the first poll also starts steps
    per_poll = [cpu_marks[i + 1] - cpu_marks[i] for i in range(1, len(cpu_marks) - 1, 2)]
    steady = per_poll[1:] or per_poll
    polls = [requests[i] - requests[i - 1] for i in range(2, len(requests))]  # after the first poll
    busiest = Counter()
    for counts in polls:
        busiest |= counts
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return {
        "partitions": partitions,
        "median_ms": 1000 * statistics.median(steady),
        "max_ms": 1000 * max(steady),
        "requests": dict(sorted(busiest.items())),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", default="2000,20000,100000")
    parser.add_argument("--polls", type=int, default=30)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--max-broker-movements", type=int, default=None)
    args = parser.parse_args()
    print(f"{'partitions':>10}{'median ms':>12}{'max ms':>10}  most requests of each kind in one poll")
    for n in (int(x) for x in args.partitions.split(",")):
        result = measure(n, args.polls, args.profile, args.max_broker_movements)
        print(f"{n:>10}{result['median_ms']:>12.1f}{result['max_ms']:>10.1f}  {result['requests']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
