"""Network-aware balanced plans at scale: the traffic goals against the bytes-only plan, in the same run.

    .venv/bin/python bench/bench_traffic.py [--partitions 100000] [--zipf 0.5] [--runs 3]

A synthetic snapshot (bench/synthetic.py: RF 3, 1,000 brokers over 30 racks, 50 just added, 100 partitions per
topic, log-normal sizes) is written twice: without rates, and with write rates drawn from a Zipf law over the
topics (``--zipf``, the exponent; 1 GB/s in all) and reads on the 3 hottest topics (one group: their write
rate). The placement and sizes are the same in both files. ``kreassign --generate --strategy balanced`` plans
each (one process per run, ``--runs`` times each, alternating); reported: the per-broker bytes in and out
spread (the largest distance from the mean, over the mean) of the cluster now, of the bytes-only plan and of
the traffic plan; whether the traffic plan is within 10 % of the mean; bytes copied and wall time of the
traffic plan over the bytes-only plan's (targets 1.1 and 1.2); each plan's md5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from synthetic import write_synthetic  # noqa: E402

KREASSIGN = str(Path(sys.executable).with_name("kreassign"))


def snapshot_rates(path: Path) -> dict[tuple[str, int], tuple[float, float]]:
    rates = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["type"] == "partition":
                rates[(record["topic"], record["partition"])] = (
                    record["write_bytes_per_s"],
                    record["read_bytes_per_s"],
                )
    return rates


def spreads(placements, rates, brokers) -> tuple[float, float]:
    """Largest distance of a broker's bytes in (out) from the mean, over the mean."""
    from kreassign.planning.netbalance import TrafficBalance, broker_traffic

    into, out = broker_traffic(placements, rates)
    measure = TrafficBalance(0.1, tuple(brokers), {}, into, {}, out)
    return measure.spread("in"), measure.spread("out")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str]) -> tuple[float, float, dict]:
    """Wall seconds, CPU seconds of the process (on a shared machine the steadier of the two), its document."""
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, children_cpu() - cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--zipf", type=float, default=0.5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default="/tmp/kreassign-bench-traffic")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    n = args.partitions
    plain, rated = work / f"plain-{n}.jsonl", work / f"rated-{n}-zipf{args.zipf:g}.jsonl"
    if not plain.exists():
        write_synthetic(str(plain), n)
    if not rated.exists():
        write_synthetic(str(rated), n, zipf=args.zipf)
    topics = work / f"topics-{n}.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": f"topic-{t:05d}"} for t in range(-(-n // 100))]}))
    brokers = list(range(1, 1001))
    common = [KREASSIGN, "--generate", "--topics-to-move-json-file", str(topics), "--broker-list"]
    common += [",".join(map(str, brokers)), "--strategy", "balanced", "--engine", "local", "--output", "json"]
    times: dict[str, list[float]] = {"bytes only": [], "traffic": []}
    cpus: dict[str, list[float]] = {"bytes only": [], "traffic": []}
    documents = {}
    for _ in range(args.runs):
        for name, snapshot in (("bytes only", plain), ("traffic", rated)):
            wall, cpu, document = run([*common, "--cluster-snapshot-file", str(snapshot)])
            times[name].append(wall)
            cpus[name].append(cpu)
            documents[name] = document
    rates = snapshot_rates(rated)
    current = [((p["topic"], p["partition"]), p["replicas"]) for p in documents["traffic"]["current"]["partitions"]]
    rows = [("cluster now", spreads(current, rates, brokers), None, None, None, "")]
    for name, document in documents.items():
        proposed = [((p["topic"], p["partition"]), p["replicas"]) for p in document["proposed"]["partitions"]]
        digest = hashlib.md5(json.dumps(document["proposed"], sort_keys=True).encode()).hexdigest()
        wall, cpu = statistics.median(times[name]), statistics.median(cpus[name])
        rows.append((name, spreads(proposed, rates, brokers), document["report"], wall, cpu, digest))
    base, traffic = rows[1][2], rows[2][2]
    print(f"{n:,} partitions, 1,000 brokers, Zipf exponent {args.zipf:g}, median of {args.runs} run(s) each")
    print("| plan | bytes in spread | bytes out spread | bytes copied | wall (s) | CPU (s) | plan md5 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, (spread_in, spread_out), report, wall, cpu, digest in rows:
        copied = f"{report['bytes_moved'] / 2**40:.2f} TiB" if report else "-"
        shown = f"{wall:.2f} | {cpu:.2f}" if wall is not None else "- | -"
        print(f"| {name} | {100 * spread_in:.1f} % | {100 * spread_out:.1f} % | {copied} | {shown} | {digest} |")
    within = max(rows[2][1]) <= 0.1 + 1e-9
    print(
        f"\nbytes copied traffic / bytes only: {traffic['bytes_moved'] / base['bytes_moved']:.3f} (target <= 1.1); "
        f"wall: {rows[2][3] / rows[1][3]:.2f}, CPU: {rows[2][4] / rows[1][4]:.2f} (target <= 1.2); within 10 % of the mean: {'yes' if within else 'no'}; "
        f"traffic stage: {traffic['traffic']['leaders_changed']} leadership(s), "
        f"{traffic['traffic']['replicas_moved']} replica(s) moved"
    )


if __name__ == "__main__":
    main()
