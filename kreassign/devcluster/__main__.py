"""``python -m kreassign.devcluster``: a local Apache Kafka for humans, demos and CI.

start   start a KRaft cluster in the background (prints its bootstrap address); with --zookeeper, a
        ZooKeeper-mode Kafka 3.9.x cluster instead (also prints its ZooKeeper connection string)
stop    stop the cluster started by ``start``
status  print the cluster's state file
apache  run Apache's kafka-reassign-partitions from the pinned jars (arguments passed through)
apache-2.8  run Kafka 2.8.2's kafka-reassign-partitions, the last one with --zookeeper
demo    start a cluster, create a topic with data, then generate, execute and verify a plan with
        kreassign, showing every command and its output; stops the cluster at the end
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kreassign.devcluster.cluster import LocalKafkaCluster, ZooKeeperKafkaCluster, stop_from_state
from kreassign.devcluster.jars import apache_tool_command, cache_root, legacy_tool_command, pinned_kafka_version
from kreassign.errors import KreassignError


def _default_dir() -> Path:
    return cache_root() / "devcluster"


def cmd_start(args: argparse.Namespace) -> int:
    base = Path(args.dir)
    if (base / "cluster.json").exists():
        stop_from_state(base)
    # every start is a fresh cluster: data of a stopped one would carry another cluster id
    shutil.rmtree(base / "run", ignore_errors=True)
    if args.zookeeper:
        cluster: LocalKafkaCluster = ZooKeeperKafkaCluster(
            base / "run", brokers=args.brokers, chroot="/kafka", die_with_parent=False
        )
    else:
        cluster = LocalKafkaCluster(
            base / "run",
            brokers=args.brokers,
            controllers=args.controllers,
            combined=args.combined,
            die_with_parent=False,
        )
    started = time.monotonic()
    cluster.start()
    state = json.loads((cluster.base_dir / "cluster.json").read_text())
    (base / "cluster.json").write_text(json.dumps(state, indent=2) + "\n")
    # The children must outlive this process: forget them without stopping them.
    for node in cluster.nodes:
        node.process = None
    print(f"Apache Kafka {cluster.kafka_version}: {args.brokers} brokers up in {time.monotonic() - started:.1f}s")
    print(f"bootstrap servers: {cluster.bootstrap_servers}")
    if isinstance(cluster, ZooKeeperKafkaCluster):
        print(f"zookeeper: {cluster.zookeeper_connect}")
    print(f"racks: {cluster.broker_racks}")
    print(f"logs: {cluster.base_dir}/node-*/server.log")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    base = Path(args.dir)
    stopped = stop_from_state(base / "run") + stop_from_state(base)
    print(f"stopped nodes {sorted(set(stopped))}" if stopped else "no cluster running")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state = Path(args.dir) / "cluster.json"
    if not state.exists():
        print("no cluster running")
        return 1
    print(state.read_text(), end="")
    return 0


def cmd_apache(args: argparse.Namespace) -> int:
    return subprocess.call([*apache_tool_command(), *args.rest])


def cmd_apache_legacy(args: argparse.Namespace) -> int:
    return subprocess.call([*legacy_tool_command(), *args.rest])


def _show(argv: list[str]) -> subprocess.CompletedProcess:
    print(f"\n$ {' '.join(shlex.quote(a) for a in argv)}", flush=True)
    proc = subprocess.run(argv, capture_output=True, text=True)
    print(proc.stdout, end="", flush=True)
    if proc.stderr:
        print(proc.stderr, end="", file=sys.stderr, flush=True)
    if proc.returncode != 0:
        raise KreassignError(f"command failed with exit code {proc.returncode}")
    return proc


def cmd_demo(args: argparse.Namespace) -> int:
    from kreassign.devcluster.topics import create_topic

    work = Path(args.dir) / "demo"
    work.mkdir(parents=True, exist_ok=True)
    kreassign = [sys.executable, "-m", "kreassign"]
    print(
        f"Starting a local 3-broker Apache Kafka {pinned_kafka_version()} (KRaft) on 127.0.0.1 ...",
        flush=True,
    )
    shutil.rmtree(work / "cluster", ignore_errors=True)  # a fresh cluster each time (a new cluster id)
    with LocalKafkaCluster(work / "cluster", brokers=3) as cluster:
        bootstrap = cluster.bootstrap_servers
        print(f"brokers {cluster.broker_racks} at {bootstrap}")
        # Every replica on brokers 1 and 2: the plan will spread them over 1, 2 and 3.
        layout = [[1, 2], [2, 1]] * 3
        create_topic(bootstrap, "demo", layout, messages=args.messages, size=1000)
        print(f"created topic 'demo' (6 partitions, RF 2, on brokers 1 and 2) with {args.messages} messages of 1 KB")

        topics = work / "topics.json"
        topics.write_text('{"topics": [{"topic": "demo"}], "version": 1}\n')
        generated = _show(
            [
                *kreassign,
                "--bootstrap-server",
                bootstrap,
                "--generate",
                "--topics-to-move-json-file",
                str(topics),
                "--broker-list",
                "1,2,3",
                "--seed",
                "42",
            ]
        )
        plan = work / "plan.json"
        plan.write_text(generated.stdout.split("Proposed partition reassignment configuration\n", 1)[1])
        _show(
            [
                *kreassign,
                "--bootstrap-server",
                bootstrap,
                "--execute",
                "--reassignment-json-file",
                str(plan),
                "--throttle",
                "50000000",
            ]
        )
        deadline = time.monotonic() + 120
        while True:
            verified = _show(
                [
                    *kreassign,
                    "--bootstrap-server",
                    bootstrap,
                    "--verify",
                    "--reassignment-json-file",
                    str(plan),
                ]
            )
            if "is still in progress" not in verified.stdout or time.monotonic() > deadline:
                break
            time.sleep(2)
        _show([*kreassign, "--bootstrap-server", bootstrap, "--list"])

        # Back to the original layout, batched (KIP-435): one replica per step, two partitions at a time,
        # throttled; kreassign stays attached, elects new leaders and removes its throttles at the end.
        back = work / "back.json"
        back.write_text(
            json.dumps(
                {
                    "version": 1,
                    "partitions": [{"topic": "demo", "partition": p, "replicas": r} for p, r in enumerate(layout)],
                }
            )
        )
        common = [*kreassign, "--bootstrap-server", bootstrap, "--reassignment-json-file", str(back)]
        _show([*common, "--execute", "--max-replica-movements", "1", "--dry-run"])
        _show(
            [
                *common,
                "--execute",
                "--max-partition-movements",
                "2",
                "--max-replica-movements",
                "1",
                "--throttle",
                "5000000",
                "--journal-file",
                str(work / "journal.json"),
            ]
        )
        _show([*common, "--progress", "--fail-if-incomplete"])
        print("\nDemo finished; stopping the cluster.")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kreassign.devcluster",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dir", default=str(_default_dir()), help="where cluster data and logs live")
    # --dir is also taken after the subcommand (`start --brokers 4 --dir X`); given there, it wins
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--dir", default=argparse.SUPPRESS, help="where cluster data and logs live")
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", parents=[where])
    start.add_argument("--brokers", type=int, default=3)
    start.add_argument("--controllers", type=int, default=1)
    start.add_argument("--combined", action="store_true", help="brokers double as controllers")
    start.add_argument("--zookeeper", action="store_true", help="a ZooKeeper-mode Kafka 3.9.x cluster instead")
    sub.add_parser("stop", parents=[where])
    sub.add_parser("status", parents=[where])
    apache = sub.add_parser("apache")
    apache.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the Apache tool")
    legacy = sub.add_parser("apache-2.8")
    legacy.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for Kafka 2.8.2's tool")
    demo = sub.add_parser("demo", parents=[where])
    demo.add_argument("--messages", type=int, default=20000)
    raw = list(sys.argv[1:] if argv is None else argv)
    # Everything after "apache"/"apache-2.8" goes to the tool verbatim (argparse's REMAINDER would take
    # a leading "--version" or "--list" for an option of this program).
    tool = next((i for i, token in enumerate(raw) if token in ("apache", "apache-2.8")), None)
    if tool is None:
        args = parser.parse_args(raw)
    else:
        args = parser.parse_args(raw[: tool + 1])
        args.rest = raw[tool + 1 :]
    handler = {
        "start": cmd_start,
        "stop": cmd_stop,
        "status": cmd_status,
        "apache": cmd_apache,
        "apache-2.8": cmd_apache_legacy,
        "demo": cmd_demo,
    }
    try:
        return handler[args.command](args)
    except KreassignError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
