"""Time kreassign and Apache's kafka-reassign-partitions on the same local cluster, same inputs.

    .venv/bin/python bench/bench_apache_commands.py [--partitions 1000] [--repeat 5]

Reports the median wall time of each command for both tools and the ratio ours / Apache
(below 1 means kreassign is faster). Commands: --version, --list, and --verify of a plan covering
--partitions partitions (all completed, so --verify also clears throttles, as operators run it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kreassign.devcluster.cluster import LocalKafkaCluster  # noqa: E402
from kreassign.devcluster.jars import apache_tool_command  # noqa: E402
from kreassign.devcluster.topics import create_topic  # noqa: E402


def timed(argv: list[str], repeat: int) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{argv[:3]}... failed: {proc.stdout[-500:]}{proc.stderr[-500:]}")
        out = proc.stdout
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ours = [sys.executable, "-m", "kreassign"]
    apache = apache_tool_command()
    with tempfile.TemporaryDirectory() as tmp, LocalKafkaCluster(Path(tmp) / "cluster", brokers=3) as cluster:
        bootstrap = cluster.bootstrap_servers
        per_topic = 100
        topics = [f"bench-{i}" for i in range(max(1, args.partitions // per_topic))]
        layout_of = {}
        for topic in topics:
            layout = [[1 + (p % 3), 1 + ((p + 1) % 3)] for p in range(per_topic)]
            create_topic(bootstrap, topic, layout)
            layout_of[topic] = layout
        plan = Path(tmp) / "plan.json"
        plan.write_text(
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": t, "partition": p, "replicas": r} for t in topics for p, r in enumerate(layout_of[t])
                    ],
                }
            )
        )
        cases = {
            "--version": ["--version"],
            "--list": ["--bootstrap-server", bootstrap, "--list"],
            f"--verify ({len(topics) * per_topic} partitions)": [
                "--bootstrap-server",
                bootstrap,
                "--verify",
                "--reassignment-json-file",
                str(plan),
            ],
        }
        rows = []
        for name, argv in cases.items():
            t_ours, out_ours = timed([*ours, *argv], args.repeat)
            t_apache, out_apache = timed([*apache, *argv], args.repeat)
            same = "same stdout" if out_ours == out_apache or name == "--version" else "STDOUT DIFFERS"
            rows.append((name, t_ours, t_apache, t_ours / t_apache, same))
    print(f"{'command':34} {'kreassign s':>12} {'apache s':>10} {'ours/apache':>12}")
    for name, t_ours, t_apache, ratio, same in rows:
        print(f"{name:34} {t_ours:12.3f} {t_apache:10.3f} {ratio:12.2f}  {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
