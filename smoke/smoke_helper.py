"""Helper of smoke.sh: the few things kreassign does not do itself (create topics with data, describe
replicas and throttle configs) and reading fields of kreassign's JSON output without jq.

Run it with the Python that has kreassign installed (it uses kreassign's throttle names and confluent-kafka).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kreassign.planning.throttles import BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES

THROTTLE_KEYS = BROKER_LEVEL_THROTTLES + TOPIC_LEVEL_THROTTLES


def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})


def create_topic(args: argparse.Namespace) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import NewTopic

    replicas = [int(b) for b in args.replicas.split(",")]
    # rotate the replica list over the partitions so that every listed broker leads some
    assignment = [replicas[p % len(replicas) :] + replicas[: p % len(replicas)] for p in range(args.partitions)]
    client = admin(args.bootstrap_server)  # keep it alive until the result is in
    futures = client.create_topics([NewTopic(args.name, len(assignment), replica_assignment=assignment)])
    futures[args.name].result(timeout=60)
    for _ in range(100):  # until every broker's metadata has the topic
        if len(client.list_topics(args.name, timeout=30).topics[args.name].partitions) == len(assignment):
            break
        time.sleep(0.1)
    producer = Producer({"bootstrap.servers": args.bootstrap_server, "linger.ms": 20, "acks": "all", "log_level": 3})
    payload = b"x" * args.size
    for i in range(args.messages):
        while True:
            try:
                producer.produce(args.name, payload, partition=i % args.partitions)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(120) != 0:
        sys.exit(f"smoke_helper: could not write every message to {args.name}")


def replicas(args: argparse.Namespace) -> None:
    """The replicas of every partition of the topic; with --expect, exit 1 unless they are the ones of
    that topic in the reassignment JSON file."""
    metadata = admin(args.bootstrap_server).list_topics(args.name, timeout=30)
    actual = {p: list(info.replicas) for p, info in metadata.topics[args.name].partitions.items()}
    print(json.dumps({str(p): actual[p] for p in sorted(actual)}))
    if args.expect:
        with open(args.expect, encoding="utf-8") as handle:
            plan = json.load(handle)
        wanted = {e["partition"]: e["replicas"] for e in plan["partitions"] if e["topic"] == args.name}
        if any(actual.get(p) != r for p, r in wanted.items()):
            sys.exit(f"smoke_helper: {args.name} has replicas {actual}, the plan wants {wanted}")


def throttles(args: argparse.Namespace) -> None:
    """Print every throttle config set on any broker or on the given topics; exit 1 if there is one."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    client = admin(args.bootstrap_server)
    brokers = client.list_topics(timeout=30).brokers
    resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in sorted(brokers)]
    resources += [ConfigResource(ResourceType.TOPIC, t) for t in args.topics]
    found = []
    for resource in resources:  # librdkafka takes one broker resource per call
        for name, entry in client.describe_configs([resource])[resource].result(timeout=30).items():
            if name in THROTTLE_KEYS and not entry.is_default and entry.value not in (None, ""):
                found.append(f"{resource.restype_name.lower()} {resource.name}: {name}={entry.value}")
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


def field(args: argparse.Namespace) -> None:
    """The value at a dotted path of a JSON file (list indexes are numbers), as compact JSON."""
    with open(args.file, encoding="utf-8") as handle:
        value = json.load(handle)
    for part in args.path.split(".") if args.path else ():
        value = value[int(part)] if isinstance(value, list) else value[part]
    print(json.dumps(value, separators=(",", ":"), sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap-server", default="")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("create-topic")
    p.add_argument("name")
    p.add_argument("--partitions", type=int, required=True)
    p.add_argument("--replicas", required=True, help="broker ids, e.g. 1,2")
    p.add_argument("--messages", type=int, default=0)
    p.add_argument("--size", type=int, default=100, help="bytes per message")
    p.set_defaults(run=create_topic)
    p = sub.add_parser("replicas")
    p.add_argument("name")
    p.add_argument("--expect", help="a reassignment JSON file")
    p.set_defaults(run=replicas)
    p = sub.add_parser("throttles")
    p.add_argument("topics", nargs="*")
    p.set_defaults(run=throttles)
    p = sub.add_parser("field")
    p.add_argument("file")
    p.add_argument("path", nargs="?", default="")
    p.set_defaults(run=field)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
