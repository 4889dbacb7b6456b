"""Synthetic cluster snapshots for the --generate benchmark and the engine tests.

    .venv/bin/python bench/synthetic.py OUT.jsonl --partitions 100000 [--brokers 1000 --racks 30 --new 50]

Brokers 1..N with racks ``rack-00``.. (round robin); topics of ``--partitions-per-topic`` partitions,
RF 3, each partition on distinct racks of the *old* brokers (the last ``--new`` brokers hold nothing yet,
like brokers just added), sizes drawn from a log-normal law (``--sigma``, 1.5 by default). Same arguments, same file.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def synthetic_records(
    partitions: int,
    brokers: int = 1000,
    racks: int = 30,
    new: int = 50,
    rf: int = 3,
    per_topic: int = 100,
    seed: int = 7,
    sigma: float = 1.5,
    zipf: float | None = None,
    hot: int = 3,
    total_write: float = 1e9,
):
    """``zipf``: each partition also gets ``write_bytes_per_s`` (its topic's share of ``total_write`` by a Zipf
    law of that exponent over the topics, ranked in a random order; each partition of a topic a log-normal share
    of it) and ``read_bytes_per_s`` (one group reads the ``hot`` topics of the highest rank: their write rate;
    0 elsewhere). Without it, the file is what it was (the rates come from a generator of their own)."""
    rnd = random.Random(seed)
    yield {"type": "snapshot", "version": 1}
    rack_of = {b: f"rack-{(b - 1) % racks:02d}" for b in range(1, brokers + 1)}
    for b in range(1, brokers + 1):
        yield {"type": "broker", "id": b, "rack": rack_of[b], "log_dirs": ["/data"], "capacity_bytes": None}
    old = list(range(1, brokers - new + 1))
    by_rack: dict[str, list[int]] = {}
    for b in old:
        by_rack.setdefault(rack_of[b], []).append(b)
    rack_names = sorted(by_rack)
    topic_count = -(-partitions // per_topic)
    topic_rate: list[float] = []
    if zipf is not None:
        traffic = random.Random(seed + 1)
        ranks = list(range(1, topic_count + 1))
        traffic.shuffle(ranks)
        weights = [rank**-zipf for rank in ranks]
        topic_rate = [total_write * w / sum(weights) for w in weights]
    for t in range(topic_count):
        name = f"topic-{t:05d}"
        yield {"type": "topic", "topic": name, "min_insync_replicas": 2}
        for p in range(min(per_topic, partitions - t * per_topic)):
            chosen_racks = rnd.sample(rack_names, rf) if len(rack_names) >= rf else [rnd.choice(rack_names)] * rf
            replicas: list[int] = []
            for r in chosen_racks:
                choices = [b for b in by_rack[r] if b not in replicas]
                replicas.append(rnd.choice(choices))
            size = int(rnd.lognormvariate(20, sigma))
            record = {
                "type": "partition",
                "topic": name,
                "partition": p,
                "replicas": replicas,
                "log_dirs": ["/data"] * rf,
                "size_bytes": size,
                "leader": replicas[0],
                "isr": replicas,
            }
            if zipf is not None:
                count = min(per_topic, partitions - t * per_topic)
                write = round(topic_rate[t] / count * traffic.lognormvariate(0, 0.3), 1)
                record["write_bytes_per_s"] = write
                record["read_bytes_per_s"] = write if ranks[t] <= hot else 0.0
            yield record


def write_synthetic(path: str, partitions: int, **kwargs) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for record in synthetic_records(partitions, **kwargs):
            out.write(json.dumps(record, separators=(",", ":")))
            out.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--racks", type=int, default=30)
    parser.add_argument("--new", type=int, default=50, help="brokers added: they hold no replica yet")
    parser.add_argument("--partitions-per-topic", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sigma", type=float, default=1.5, help="of the log-normal law of partition sizes")
    parser.add_argument("--zipf", type=float, default=None, help="write rates by a Zipf law of this exponent")
    args = parser.parse_args()
    write_synthetic(
        args.out,
        args.partitions,
        brokers=args.brokers,
        racks=args.racks,
        new=args.new,
        per_topic=args.partitions_per_topic,
        seed=args.seed,
        sigma=args.sigma,
        zipf=args.zipf,
    )


if __name__ == "__main__":
    main()
