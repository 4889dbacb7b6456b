"""Cluster shapes several tests plan on (from bench/synthetic.py, so the tests and the benchmarks agree)."""

from __future__ import annotations

import sys
from pathlib import Path


def reference_cluster(partitions: int = 2000, brokers: int = 12, racks: int = 3, new: int = 3):
    """The issue's reference shape (12 brokers on 3 racks, 3 just added, topics of 100 partitions, RF 3):
    ``(brokers as (id, rack) pairs, rows as (topic, partition, replicas, size))``."""
    bench = str(Path(__file__).resolve().parents[1] / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from synthetic import synthetic_records

    records = list(synthetic_records(partitions, brokers=brokers, racks=racks, new=new))
    pairs = [(r["id"], r["rack"]) for r in records if r["type"] == "broker"]
    rows = [
        (r["topic"], r["partition"], tuple(r["replicas"]), r["size_bytes"]) for r in records if r["type"] == "partition"
    ]
    return pairs, rows
