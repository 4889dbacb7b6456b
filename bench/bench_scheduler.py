"""The batched executor as a scheduler, against the physical floor, on the simulated cluster (ratios).

    .venv/bin/python bench/bench_scheduler.py [--partitions 2000] [--rate-mb 100] [--seed 7] [--order plan]

The simulated cluster gives each broker one link in and one link out, each carrying at most the throttle
rate, shared max-min fairly by the copies crossing it; a copy flows from the partition's leader to the new
replica. Plans shaped like real operations, partitions of log-normal sizes (median 50 MB):

* ``add-3``: 3 brokers added to 12: each partition (RF 3 on the 12) gives one replica to a new broker;
* ``drain-1``: 1 of 12 drained: each partition with a replica on broker 11 moves it to another broker;
* ``rack-swap``: 12 brokers in 3 racks, racks 0 and 1 swap their data: every replica on rack 0 goes to
  the matching broker of rack 1 and the other way round.

The floor of a plan is the largest, over brokers, of its bytes in or bytes out divided by the rate, a copy
counted out of the leader the partition has at the time of its step (kreassign elects a new leader before
the partition's other steps, Apache at the end; in these plans both floors are the same). For
each plan and way of running it: wall (simulated seconds) / floor, the peak number of steps one broker is
part of at once (new replicas it receives plus partitions it leads while they copy), and the peak number
of extra replicas (replicas being added at once), sampled every 0.25 s:

* Apache all-at-once: every partition submitted at once (``--execute --throttle``), ``--verify`` every 1 s;
* kreassign with P only (``--max-partition-movements``);
* kreassign with ``--max-broker-movements N`` (and P large enough not to matter);
* kreassign with ``--max-broker-movements N --adaptive``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.port import ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.model import Broker, ReassignmentPlan, TopicPartition
from kreassign.planning.steps import Limits, Step, plan_partition
from kreassign.planning.throttles import FOLLOWER_THROTTLED_RATE, LEADER_THROTTLED_RATE

TICK = 0.25  # seconds the simulated cluster moves at once


def build_plan(kind: str, partitions: int, seed: int):
    """(brokers, layout per partition, sizes, targets)."""
    rnd = random.Random(seed)
    sizes = [int(rnd.lognormvariate(17.7, 1.0)) for _ in range(partitions)]  # median e^17.7 B ~ 49 MB
    racks = {b: b % 3 for b in range(15)}
    layout, targets = [], []
    for p in range(partitions):
        if kind == "drain-1":
            replicas = [11, *rnd.sample([b for b in range(11)], 2)]
            rnd.shuffle(replicas)
        else:
            replicas = rnd.sample(range(12), 3)
        layout.append(tuple(replicas))
        if kind == "add-3":
            new = 12 + p % 3
            drop = replicas[1 + p % 2]  # a follower: the leader stays
            targets.append(tuple(new if b == drop else b for b in replicas))
        elif kind == "drain-1":
            spare = [b for b in range(11) if b not in replicas]
            replacement = spare[p % len(spare)]
            targets.append(tuple(replacement if b == 11 else b for b in replicas))
        else:  # rack-swap: rack 0 <-> rack 1 (broker b <-> b + 1 for b in rack 0)
            mate = {b: b + 1 if racks[b] == 0 else b - 1 if racks[b] == 1 else b for b in range(12)}
            targets.append(tuple(mate[b] for b in replicas))
    brokers = 15 if kind == "add-3" else 12
    return brokers, layout, sizes, targets


def floor_seconds(layout, sizes, targets, rate: float, stepwise: bool) -> float:
    """The busiest broker's bytes in or out over the rate. A copy flows from the partition's leader at the
    time of its step: all at once, the leader the partition has (the new one is elected at the end);
    ``stepwise`` (kreassign), the leader of each step (a leader movement elects its new leader first, and
    that one serves the later steps)."""
    bytes_in: Counter[int] = Counter()
    bytes_out: Counter[int] = Counter()
    for p, (current, final, size) in enumerate(zip(layout, targets, sizes, strict=True)):
        steps = plan_partition(TopicPartition(f"t{p:05d}", 0), current, final, None) if stepwise else []
        for step in steps or [Step(TopicPartition(f"t{p:05d}", 0), current, final)]:
            for b in step.adding:
                bytes_in[b] += size
                bytes_out[step.source[0]] += size
    return max([*bytes_in.values(), *bytes_out.values()]) / rate


class Measured(SimulatedCluster):
    """Moves time in ticks and samples the steps in flight after each one."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, shared_links=True, **kwargs)
        self.peak_broker = 0
        self.peak_extra = 0
        self.leader_at_start: dict[TopicPartition, int | None] = {}

    def alter_reassignments(self, targets, allow_replication_factor_change=True):
        for tp, target in targets.items():
            if target is not None:  # each step is served by the leader the partition has when it starts
                self.leader_at_start[tp] = self.partitions[tp].leader
        return super().alter_reassignments(targets, allow_replication_factor_change)

    def sleep(self, seconds: float) -> None:
        steps = max(1, round(seconds / TICK))
        for _ in range(steps):
            self.sample()
            self.advance(seconds / steps)

    def sample(self) -> None:
        moving = self.list_reassignments()
        load: Counter[int] = Counter()
        for tp, r in moving.items():
            if r.adding:
                load.update({*r.adding, self.leader_at_start.get(tp)})
        self.peak_broker = max(self.peak_broker, max(load.values(), default=0))
        self.peak_extra = max(self.peak_extra, sum(len(r.adding) for r in moving.values()))


def cluster(brokers: int, layout, sizes, rate: float) -> Measured:
    sim = Measured([Broker(b, f"rack-{b % 3}") for b in range(brokers)], bandwidth=rate)
    for p, (replicas, size) in enumerate(zip(layout, sizes, strict=True)):
        sim.add_topic(f"t{p:05d}", [replicas], size=size)
    return sim


class Quiet:
    def event(self, _message: str) -> None:
        pass

    def progress(self, _progress) -> None:
        pass


def run_apache(brokers, layout, sizes, targets, rate) -> tuple[float, int, int]:
    sim = cluster(brokers, layout, sizes, rate)
    ops = [
        ConfigOp(LEADER_THROTTLED_RATE, OpType.SET, str(int(rate))),
        ConfigOp(FOLLOWER_THROTTLED_RATE, OpType.SET, str(int(rate))),
    ]
    sim.incremental_alter_configs({ConfigResource(ResourceType.BROKER, str(b)): ops for b in range(brokers)})
    sim.alter_reassignments({TopicPartition(f"t{p:05d}", 0): t for p, t in enumerate(targets)})
    while sim.list_reassignments():
        sim.sleep(1.0)  # --verify every second
    return sim.now, sim.peak_broker, sim.peak_extra


def run_ours(
    brokers, layout, sizes, targets, rate, limits: Limits, adaptive: bool = False, order: str = "plan"
) -> tuple[float, int, int]:
    sim = cluster(brokers, layout, sizes, rate)
    plan = ReassignmentPlan(tuple((TopicPartition(f"t{p:05d}", 0), t) for p, t in enumerate(targets)))
    with tempfile.TemporaryDirectory() as tmp:
        options = ExecuteRequest(
            plan,
            limits=limits,
            throttle=int(rate),
            journal_path=str(Path(tmp) / "j.json"),
            adaptive=adaptive,
            order=order,
        )
        outcome = execute_batched(sim, options, lambda _t: None, Quiet(), clock=sim.clock, sleep=sim.sleep)
    assert outcome is not None and outcome.status == "completed", outcome
    return sim.now, sim.peak_broker, sim.peak_extra


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--rate-mb", type=float, default=100.0, help="throttle rate per broker, MB/s")
    parser.add_argument("--max-partition-movements", type=int, default=50)
    parser.add_argument("--max-broker-movements", type=int, default=5)
    parser.add_argument("--plans", default="add-3,drain-1,rack-swap")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--order", default="plan", choices=["plan", "small-first", "large-first"])
    args = parser.parse_args()
    rate = args.rate_mb * 1_000_000
    n = args.max_broker_movements
    ways = [
        ("apache all-at-once", None),
        (f"P={args.max_partition_movements}", (Limits(partitions=args.max_partition_movements), False)),
        (f"N={n}", (Limits(partitions=10_000, brokers=n), False)),
        (f"N={n} --adaptive", (Limits(partitions=10_000, brokers=n), True)),
    ]
    print(f"{'plan':<10}{'way':<22}{'floor s':>9}{'wall s':>9}{'wall/floor':>12}{'peak/broker':>13}{'peak extra':>12}")
    for kind in args.plans.split(","):
        brokers, layout, sizes, targets = build_plan(kind, args.partitions, args.seed)
        for name, way in ways:
            floor = floor_seconds(layout, sizes, targets, rate, stepwise=way is not None)
            if way is None:
                wall, peak_broker, peak_extra = run_apache(brokers, layout, sizes, targets, rate)
            else:
                wall, peak_broker, peak_extra = run_ours(brokers, layout, sizes, targets, rate, *way, args.order)
            print(
                f"{kind:<10}{name:<22}{floor:>9.0f}{wall:>9.0f}{wall / floor:>12.2f}{peak_broker:>13}{peak_extra:>12}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
