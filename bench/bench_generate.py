"""Balanced --generate at scale: the local and Spark engines against the Apache-compatible placement.

    .venv/bin/python bench/bench_generate.py [--sizes 10000,100000,1000000] [--engines local,spark,apache]
    .venv/bin/python bench/bench_generate.py --sizes 1000000 --engines local,spark@local[1],spark@local[2]
    .venv/bin/python bench/bench_generate.py --sizes 10000000 --engines spark@local[2]  # the 10M row
    .venv/bin/python bench/bench_generate.py --engines local,spark@spark://127.0.0.1:7077  # a standalone cluster

For each size, a synthetic snapshot (bench/synthetic.py: RF 3, 1,000 brokers over 30 racks, 50 of them just
added and empty, 100 partitions per topic) is planned from the snapshot file by the real command line
(``kreassign --generate --cluster-snapshot-file ...``), one process per run. Reported per engine: wall
time, peak memory (resident set of the whole process tree: Python, and Spark's JVM and Python workers), the
driver's peak (the kreassign process alone, the Python that holds what Spark collects), replicas moved
(read back from the printed Current / Proposed JSON), and the ratio to the replicas the Apache-compatible
placement (``--strategy apache --seed 1``) moves on the same input. It also checks that the Spark plan is
byte-identical to the local one. The quality columns are the plan report's
(``kreassign.planning.quality``), measured by the benchmark on each printed plan, Apache's included: the
worst topic's replica and leader spread (max - min over the brokers), the bytes of the least and most
loaded broker over the mean, the balancedness score before -> after, and the replicas moved over the lower
bound of any balanced plan. Above ``--quality-up-to`` partitions (1,000,000) they are left out: the measure
holds every partition of the plan in the benchmark's own process.

The "stdlib floor" row is what the standard library alone needs for the same input and output: read the
snapshot lines with ``json.loads`` and write both documents (current and proposed, same partitions and
replicas) with ``json.dumps``, in one process. Each engine's wall time is also given as a ratio to it, and
the CPU time (user + system, of the process tree) beside the wall time, which on a shared machine says
more than the wall time.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from synthetic import write_synthetic  # noqa: E402

KREASSIGN = str(Path(sys.executable).with_name("kreassign"))


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc (also used by ``thread_cpu.py``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    tree, stack = [], [root]
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children.get(pid, ()))
    return tree


def tree_rss_kb(root: int) -> tuple[int, int]:
    """Resident memory of ``root`` alone, and of ``root`` with all its descendants, from /proc."""
    rss: dict[int, int] = {}
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/status") as handle:
                status = handle.read()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss[pid] = int(line.split()[1])
    return rss.get(root, 0), sum(rss.values())


def stdlib_floor(snapshot: str) -> None:
    """Read the snapshot with json.loads, write the two documents with json.dumps (to stdout)."""
    current, proposed = [], []
    with open(snapshot, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["type"] == "partition":
                topic, partition, replicas = record["topic"], record["partition"], record["replicas"]
                current.append(
                    {"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": record["log_dirs"]}
                )
                proposed.append(
                    {"topic": topic, "partition": partition, "replicas": replicas, "log_dirs": ["any"] * len(replicas)}
                )
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    sys.stdout.write("Current partition replica assignment\n" + dumps({"version": 1, "partitions": current}))
    sys.stdout.write(
        "\n\nProposed partition reassignment configuration\n" + dumps({"version": 1, "partitions": proposed})
    )
    sys.stdout.write("\n")


def tail(path: Path, size: int = 300) -> str:
    """The last ``size`` bytes of a file (a failed run's plan file may be large)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        return handle.read().decode("utf-8", "replace")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(argv: list[str], stdout_path: Path) -> tuple[float, int, int, int, str]:
    """Wall seconds, peak tree RSS in MB, peak RSS of the process itself (the driver) in MB, exit code,
    stderr."""
    peak = driver = 0
    with open(stdout_path, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, text=True)
        err_chunks: list[str] = []
        reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()))  # type: ignore[union-attr]
        reader.start()
        while proc.poll() is None:
            own, tree = tree_rss_kb(proc.pid)
            peak, driver = max(peak, tree), max(driver, own)
            time.sleep(0.2)
        wall = time.perf_counter() - start
        reader.join()
    return wall, peak // 1024, driver // 1024, proc.returncode, "".join(err_chunks)


def snapshot_sizes(snapshot: Path) -> dict[tuple[str, int], int]:
    sizes = {}
    with open(snapshot, encoding="utf-8") as handle:
        for line in handle:
            if '"partition"' in line:
                record = json.loads(line)
                if record.get("type") == "partition":
                    sizes[(record["topic"], record["partition"])] = record.get("size_bytes") or 0
    return sizes


def plan_quality(stdout_path: Path, sizes: dict[tuple[str, int], int], brokers: list[int]):
    """The plan report's numbers (kreassign.planning.quality) for the plan a run printed: the same measure
    for every engine, Apache's included."""
    from kreassign.planning.quality import measure_plan

    with open(stdout_path) as handle:
        lines = handle.read().splitlines()
    rows = [
        (p["topic"], p["partition"], tuple(p["replicas"]), sizes.get((p["topic"], p["partition"]), 0))
        for p in json.loads(lines[1])["partitions"]
    ]
    plan = {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(lines[4])["partitions"]}
    return measure_plan(rows, plan, brokers)


TOLERANCE = 0.05
"""The band the byte columns check: 0.95..1.05 of the mean bytes per broker (``--bytes-tolerance``'s default)."""


def quality_columns(quality, largest: dict[int, int]) -> tuple[str, ...]:
    """Worst topic's replica and leader spread, bytes min / max over the mean, score, moves / minimum, replicas
    and leaders per broker (min..max), the brokers outside the band (those holding no replica larger than 5 % of
    the mean first: the others may not fit; ``largest``: each broker's largest replica after the plan), and the
    bytes copied against the lower bound (:func:`kreassign.planning.bounds.band_lower_bound` at the default
    tolerance, or the count bound when larger)."""
    from kreassign.humanize import format_bytes
    from kreassign.planning.bounds import band_lower_bound

    topic_replicas = quality.dimension("topic_replica_spread").after
    topic_leaders = quality.dimension("topic_leader_spread").after
    data = quality.dimension("bytes").after
    replicas = quality.dimension("replicas").after
    leaders = quality.dimension("leaders").after
    mean = data.mean or 1
    minimum = quality.minimum_moves
    before, after = quality.per_broker["bytes"]
    outside = [b for b in quality.brokers if abs(after.get(b, 0) / mean - 1) > TOLERANCE]
    free = [b for b in outside if largest.get(b, 0) <= TOLERANCE * mean]
    bound = max(
        quality.minimum_bytes,
        band_lower_bound(before, sum(after.get(b, 0) for b in quality.brokers), quality.brokers, TOLERANCE, False),
    )
    return (
        f"{topic_replicas.max:g}",
        f"{topic_leaders.max:g}",
        f"{data.min / mean:.3f} / {data.max / mean:.3f}",
        f"{quality.score_before:.1f} -> {quality.score_after:.1f}",
        f"{quality.replicas_moved:,} / {minimum:,}" + (f" ({quality.replicas_moved / minimum:.2f})" if minimum else ""),
        f"{replicas.min:g}..{replicas.max:g} / {leaders.min:g}..{leaders.max:g}",
        f"{len(free)} + {len(outside) - len(free)}",
        f"{format_bytes(quality.bytes_moved)} / {format_bytes(bound)} ({quality.bytes_moved / bound:.3f})"
        if bound
        else "-",
    )


def largest_replicas(stdout_path: Path, sizes: dict[tuple[str, int], int]) -> dict[int, int]:
    """Each broker's largest replica in the plan a run printed."""
    with open(stdout_path) as handle:
        lines = handle.read().splitlines()
    largest: dict[int, int] = {}
    for p in json.loads(lines[4])["partitions"]:
        size = sizes.get((p["topic"], p["partition"]), 0)
        for b in p["replicas"]:
            if size > largest.get(b, 0):
                largest[b] = size
    return largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="partition counts, comma-separated")
    parser.add_argument("--engines", default="apache,local,spark", help="among apache, local, spark, spark@MASTER-URL")
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--racks", type=int, default=30)
    parser.add_argument("--new", type=int, default=50, help="brokers just added (empty)")
    parser.add_argument("--sigma", type=float, default=1.5, help="of the log-normal law of partition sizes")
    parser.add_argument("--work", default=str(ROOT / ".cache" / "bench"), help="where snapshots and plans go")
    parser.add_argument("--spark-master", default=None)
    parser.add_argument("--spark-conf", action="append", default=[], help="KEY=VALUE, passed to --engine spark")
    parser.add_argument(
        "--quality-up-to",
        type=int,
        default=1_000_000,
        help="measure the plans' quality up to this size (the measure holds every partition in this process)",
    )
    parser.add_argument("--stdlib-floor", metavar="SNAPSHOT", help=argparse.SUPPRESS)  # the floor's own process
    args = parser.parse_args()
    if args.stdlib_floor:
        stdlib_floor(args.stdlib_floor)
        return
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        sigma = "" if args.sigma == 1.5 else f"-sigma{args.sigma:g}"
        snapshot = work / f"synthetic-{size}-{args.brokers}-{args.racks}-{args.new}{sigma}.jsonl"
        if not snapshot.exists():
            write_synthetic(str(snapshot), size, brokers=args.brokers, racks=args.racks, new=args.new, sigma=args.sigma)
        topics = work / f"topics-{size}.json"
        count = -(-size // 100)
        topics.write_text(json.dumps({"version": 1, "topics": [{"topic": f"topic-{t:05d}"} for t in range(count)]}))
        common = [
            KREASSIGN,
            "--generate",
            "--cluster-snapshot-file",
            str(snapshot),
            "--topics-to-move-json-file",
            str(topics),
            "--broker-list",
            ",".join(str(b) for b in range(1, args.brokers + 1)),
        ]
        results = {}
        floor_out = work / f"plan-floor-{size}.txt"
        cpu = children_cpu()
        floor = timed_run([sys.executable, __file__, "--stdlib-floor", str(snapshot)], floor_out)
        floor_cpu = children_cpu() - cpu
        print(f"{size:>9}  floor: {floor[0]:8.1f} s {floor[1]:7d} MB (cpu {floor_cpu:.1f} s)", file=sys.stderr)
        rows.append((size, "stdlib floor", floor[0], floor[1], floor[2], "-", "-", "", "1.00", floor_cpu, ("",) * 8))
        sizes = snapshot_sizes(snapshot) if size <= args.quality_up_to else None
        brokers = list(range(1, args.brokers + 1))
        floor_out.unlink()
        for engine in engines:
            if engine == "apache":
                argv = [*common, "--seed", "1"]
            else:
                # spark@URL: --engine spark --spark-master URL (spark@local[1], spark@local[2], spark@spark://...);
                # a suffix /none: --bytes-tolerance none (the plan without the bytes stage: local/none)
                spec, _, tolerance = engine.partition("/")
                kind, _, master = spec.partition("@")
                argv = [*common, "--strategy", "balanced", "--engine", kind]
                argv += ["--bytes-tolerance", tolerance] if tolerance else []
                if kind == "spark":
                    master = master or args.spark_master
                    argv += ["--spark-master", master] if master else []
                    argv += [f"--spark-conf={conf}" for conf in args.spark_conf]
            name = re.sub(r"[^A-Za-z0-9@.\[\]-]+", "_", engine)  # spark@spark://HOST:PORT names no file
            out = Path(tempfile.mkstemp(prefix=f"plan-{name}-{size}-", suffix=".txt", dir=work)[1])
            cpu = children_cpu()
            wall, peak, driver, code, err = timed_run(argv, out)
            cpu = children_cpu() - cpu
            if code != 0:
                print(f"{engine} at {size} failed ({code}): {tail(out)} {err[-500:]}", file=sys.stderr)
                out.unlink()
                continue
            for line in err.splitlines():  # KREASSIGN_SPARK_TIMINGS=1: the wall time of each Spark stage
                if line.startswith("spark stage "):
                    print(f"{size:>9} {engine}: {line}", file=sys.stderr)
            if sizes is not None:
                quality = plan_quality(out, sizes, brokers)
                moved, columns = quality.replicas_moved, quality_columns(quality, largest_replicas(out, sizes))
            else:
                moved, columns = None, ("-",) * 8
            results[engine] = (wall, peak, driver, moved, out, cpu, columns)
            digest = hashlib.md5(out.read_bytes()).hexdigest()  # the same plan before and after a refactoring
            print(
                f"{size:>9} {engine:>6}: {wall:8.1f} s {peak:7d} MB (driver {driver} MB) moved {moved} md5 {digest}",
                file=sys.stderr,
            )
        for engine, (wall, peak, driver, moved, out, cpu, columns) in results.items():
            apache = results["apache"][3] if "apache" in results else None
            ratio = f"{moved / apache:.3f}" if moved is not None and apache else "-"
            same = ""
            twin = "local" + engine.partition("/")[1] + engine.partition("/")[2]  # local, or local/none for spark/none
            if engine.startswith("spark") and twin in results:
                same = "yes" if filecmp.cmp(results[twin][4], out, shallow=False) else "NO"
            to_floor = f"{wall / floor[0]:.2f}"
            shown = f"{moved:,}" if moved is not None else "-"
            rows.append((size, engine, wall, peak, driver, shown, ratio, same, to_floor, cpu, columns))
        for result in results.values():  # a plan at 10,000,000 partitions is gigabytes
            result[4].unlink()
    print(
        "| partitions | engine | wall time (s) | peak memory (MB) | driver peak (MB) | replicas moved | ratio to apache"
        " | same plan as local"
        " | wall / stdlib floor | CPU time (s) | worst topic replica spread | worst topic leader spread"
        " | bytes min / max over mean | score before -> after | moves / minimum | replicas / leaders per broker"
        " | brokers outside 0.95-1.05 (without + with a replica over 5 % of the mean)"
        " | bytes copied / lower bound |"
    )
    print(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- "
        "| --- |"
    )
    for size, engine, wall, peak, driver, moved, ratio, same, to_floor, cpu, columns in rows:
        print(
            f"| {size:,} | {engine} | {wall:.1f} | {peak:,} | {driver:,} | {moved} | {ratio} | {same} | {to_floor} | "
            f"{cpu:.1f} | " + " | ".join(columns) + " |"
        )


if __name__ == "__main__":
    main()
