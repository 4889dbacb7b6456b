"""Throttled moves against the physical floor: the batched executor and the Apache tool, same data.

    .venv/bin/python bench/bench_batched.py [--partitions 8] [--mb-per-partition 2] [--throttle 1000000]

A 3-broker cluster; a topic whose partitions live on brokers 1 and 2 moves its follower to broker 3, so
every byte crosses one throttled link (broker 3 fetching at --throttle B/s). The floor is
bytes / throttle. Each tool moves the same data (the topic is created afresh for each run):

* Apache: ``--execute --throttle`` then ``--verify`` every second until it reports completion (and removes
  the throttles);
* kreassign: ``--execute --throttle --max-partition-movements P --max-replica-movements 1``, attached until
  done (throttles removed by itself).

Prints wall time, ratio to the floor, and the peak number of extra replicas (replicas being added at the
same moment, sampled every 100 ms), which is what a reassignment costs the cluster in disk and network.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kreassign.cluster.kafka import KafkaCluster  # noqa: E402
from kreassign.devcluster.cluster import LocalKafkaCluster  # noqa: E402
from kreassign.devcluster.jars import apache_tool_command  # noqa: E402
from kreassign.devcluster.topics import create_topic  # noqa: E402


def peak_adding(port: KafkaCluster, topic: str, stop: threading.Event, peaks: list[int]) -> None:
    while not stop.is_set():
        moving = port.list_reassignments()
        peaks.append(sum(len(r.adding) for tp, r in moving.items() if tp.topic == topic))
        time.sleep(0.1)


def run_case(name, bootstrap, port, args, partitions, size, tmp: Path, command) -> tuple[float, int]:
    topic = f"bench-{name}-{int(time.time())}"
    create_topic(bootstrap, topic, [[1, 2]] * partitions, messages=partitions * size // 1000, size=1000)
    plan = tmp / f"{topic}.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [{"topic": topic, "partition": p, "replicas": [1, 3]} for p in range(partitions)],
            }
        )
    )
    stop, peaks = threading.Event(), [0]
    sampler = threading.Thread(target=peak_adding, args=(port, topic, stop, peaks), daemon=True)
    sampler.start()
    start = time.perf_counter()
    command(bootstrap, str(plan), tmp / f"{topic}.journal.json")
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    return wall, max(peaks)


def apache(bootstrap: str, plan: str, _journal: Path, throttle: int) -> None:
    tool = apache_tool_command()
    common = ["--bootstrap-server", bootstrap, "--reassignment-json-file", plan]
    subprocess.run([*tool, *common, "--execute", "--throttle", str(throttle)], check=True, capture_output=True)
    while True:
        out = subprocess.run([*tool, *common, "--verify"], check=True, capture_output=True, text=True).stdout
        if "is still in progress" not in out:
            return
        time.sleep(1)


def ours(bootstrap: str, plan: str, journal: Path, throttle: int, max_partitions: int) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kreassign",
            "--bootstrap-server",
            bootstrap,
            "--reassignment-json-file",
            plan,
            "--execute",
            "--throttle",
            str(throttle),
            "--max-partition-movements",
            str(max_partitions),
            "--max-replica-movements",
            "1",
            "--journal-file",
            str(journal),
            "--poll-interval-ms",
            "250",
        ],
        check=True,
        capture_output=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--mb-per-partition", type=float, default=2.0)
    parser.add_argument("--throttle", type=int, default=1_000_000, help="bytes/s")
    parser.add_argument("--max-partition-movements", type=int, default=2)
    args = parser.parse_args()
    size = int(args.mb_per_partition * 1_000_000)
    floor = args.partitions * size / args.throttle
    with tempfile.TemporaryDirectory() as tmpdir, LocalKafkaCluster(Path(tmpdir) / "cluster", brokers=3) as cluster:
        tmp = Path(tmpdir)
        bootstrap = cluster.bootstrap_servers
        port = KafkaCluster(bootstrap_servers=bootstrap)
        try:
            results = {
                "apache": run_case(
                    "apache",
                    bootstrap,
                    port,
                    args,
                    args.partitions,
                    size,
                    tmp,
                    lambda b, p, j: apache(b, p, j, args.throttle),
                ),
                "kreassign": run_case(
                    "kreassign",
                    bootstrap,
                    port,
                    args,
                    args.partitions,
                    size,
                    tmp,
                    lambda b, p, j: ours(b, p, j, args.throttle, args.max_partition_movements),
                ),
            }
        finally:
            port.close()
    print(
        f"{args.partitions} partitions x {args.mb_per_partition} MB to one broker at {args.throttle} B/s: "
        f"floor {floor:.1f} s"
    )
    print(f"{'tool':<12}{'wall s':>10}{'wall/floor':>12}{'peak extra replicas':>22}")
    for tool, (wall, peak) in results.items():
        print(f"{tool:<12}{wall:>10.1f}{wall / floor:>12.2f}{peak:>22}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
