"""Differential test: our placement and our Java hash map / hash set model against the real Kafka and JDK
classes, run by tests/oracle/PlacementOracle.java.

All cases go to one JVM (Java 17+ single-file source launch). The classpath comes from
``KREASSIGN_KAFKA_CLASSPATH`` (the jars of the pinned Kafka release, e.g. ``/opt/kafka/libs/*``). Without
it the test is skipped locally and fails in CI (``CI`` set): we never skip silently in CI.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote_plus

import pytest

from kreassign.errors import CommandError
from kreassign.javacompat.hashes import (
    java_int_compare,
    java_int_hash,
    java_replica_hash,
    java_string_compare,
    java_string_hash,
    java_topic_partition_hash,
)
from kreassign.javacompat.hashmap import JavaHashMap, copy_capacity, hash_set_capacity
from kreassign.javacompat.random import JavaRandom
from kreassign.model import Broker, TopicPartition, TopicPartitionReplica
from kreassign.planning.placement import calculate_assignment, get_broker_metadata, place_topic
from kreassign.planning.placement_model import UsableBroker

ORACLE = Path(__file__).resolve().parents[1] / "oracle" / "PlacementOracle.java"
CLASSPATH_VARIABLE = "KREASSIGN_KAFKA_CLASSPATH"


# ------------------------------------------------------------------------------------------------
# Cases


@dataclass
class GenerateCase:
    name: str
    seed: int
    rack_aware: bool
    nodes: list[Broker]  # DescribeCluster response order
    broker_list: list[int]
    topics: list[tuple[str, list[tuple[int, list[int]]]]]  # JSON order; partitions as listed by the broker

    def oracle_input(self) -> str:
        lines = [f"GENERATE {self.name}", f"SEED {self.seed}", f"RACKAWARE {str(self.rack_aware).lower()}"]
        lines += [f"NODE {node.id} {_rack_text(node.rack)}" for node in self.nodes]
        lines.append("BROKERS " + ",".join(map(str, self.broker_list)))
        for topic, partitions in self.topics:
            parts = " ".join(f"{p}:{','.join(map(str, replicas))}" for p, replicas in partitions)
            lines.append(f"TOPIC {quote(topic)} {parts}")
        return "\n".join([*lines, "END"])

    def ours(self, java_version: int) -> list[str]:
        current = {TopicPartition(t, p): replicas for t, partitions in self.topics for p, replicas in partitions}
        try:
            brokers = get_broker_metadata(self.nodes, self.broker_list, self.rack_aware)
            proposal = calculate_assignment(
                current,
                brokers,
                JavaRandom(self.seed),
                topic_order=[t for t, _ in self.topics],
                java_version=java_version,
            )
        except CommandError as exc:
            return [f"ERROR {exc.message}"]
        return [f"P {tp.topic} {tp.partition} {','.join(map(str, r))}" for tp, r in proposal.items()]


@dataclass
class PlaceCase:
    name: str
    seed: int
    brokers: list[UsableBroker]
    specs: list[tuple[int, int]]

    def oracle_input(self) -> str:
        lines = [f"PLACE {self.name}", f"SEED {self.seed}"]
        lines += [f"BROKER {b.id} {_rack_text(b.rack)} {int(b.fenced)}" for b in self.brokers]
        lines += [f"SPEC {count} {rf}" for count, rf in self.specs]
        return "\n".join([*lines, "END"])

    def ours(self, java_version: int) -> list[str]:
        rng = JavaRandom(self.seed)
        out: list[str] = []
        for count, rf in self.specs:
            out.append("S")
            try:
                out += ["R " + ",".join(map(str, r)) for r in place_topic(count, rf, self.brokers, rng)]
            except CommandError as exc:
                out.append(f"ERROR {exc.message}")
        return out


@dataclass
class HashMapCase:
    name: str
    kind: str  # "string", "int", "tp" (topic:partition) or "tpr" (topic:partition:broker)
    constructor: str  # "default", "cap N", "copy", "hashset" (new HashSet<>(hashset_keys))
    operations: list[tuple[str, str]] = field(default_factory=list)  # PUT | CIA | REMOVE | REMOVEALL, key(s)
    hashset_keys: list[str] = field(default_factory=list)

    def oracle_input(self) -> str:
        lines = [f"HMAP {self.name}", f"KIND {self.kind}"]
        if self.constructor == "hashset":
            lines.append("CTOR hashset " + ",".join(quote(k, safe=":") for k in self.hashset_keys))
        else:
            lines.append(f"CTOR {self.constructor}")
        for op, keys in self.operations:
            if op == "REMOVEALL":
                lines.append(f"{op} " + ",".join(quote(k, safe=":") for k in keys.split(",") if k))
            else:
                lines.append(f"{op} {quote(keys, safe=':')}")
        return "\n".join([*lines, "END"])

    def ours(self, java_version: int) -> list[str]:
        parse, hash_code, compare = KEY_KINDS[self.kind]
        capacity = None
        if self.constructor == "hashset":
            capacity = hash_set_capacity(len(self.hashset_keys), java_version)
        elif self.constructor.startswith("cap "):
            capacity = int(self.constructor.split()[1])
        layout: JavaHashMap = JavaHashMap(hash_code, compare, capacity)
        for key in self.hashset_keys:
            layout.put(parse(key))
        for op, keys in self.operations:
            if op == "CIA":
                layout.compute_if_absent(parse(keys))
            elif op == "PUT":
                layout.put(parse(keys))
            elif op == "REMOVE":
                layout.remove(parse(keys))
            else:
                layout.remove_all([parse(k) for k in keys.split(",") if k])
        if self.constructor == "copy" and len(layout):
            copy: JavaHashMap = JavaHashMap(hash_code, compare, copy_capacity(len(layout), java_version))
            for key in layout:
                copy.put(key)
            layout = copy
        return [f"K {_show(key)}" for key in layout]


def _rack_text(rack: str | None) -> str:
    return "-" if rack is None else quote(rack)


def _tp(text: str) -> TopicPartition:
    topic, _, partition = text.rpartition(":")
    return TopicPartition(topic, int(partition))


def _tpr(text: str) -> TopicPartitionReplica:
    topic, partition, broker = text.split(":")
    return TopicPartitionReplica(topic, int(partition), int(broker))


KEY_KINDS = {
    "string": (str, java_string_hash, java_string_compare),
    "int": (int, java_int_hash, java_int_compare),
    "tp": (_tp, java_topic_partition_hash, None),
    "tpr": (_tpr, java_replica_hash, None),
}


def _show(key: object) -> str:
    if isinstance(key, TopicPartition):
        return f"{key.topic}:{key.partition}"
    if isinstance(key, TopicPartitionReplica):
        return f"{key.topic}:{key.partition}:{key.broker_id}"
    return str(key)


TOPIC_NAME_STYLES = ("plain", "numbered", "decades", "random")


def _topic_names(rnd: random.Random, count: int) -> list[str]:
    style = rnd.choice(TOPIC_NAME_STYLES)
    if style == "plain":
        names = [f"topic{i}" for i in range(count)]
    elif style == "numbered":
        names = [f"orders-{i:04d}" for i in range(count)]
    elif style == "decades":  # hash codes 31 apart: TopicPartition hash codes collide across topics
        names = [f"t-{i}" for i in range(10, 10 + count)]
    else:
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
        names = sorted({"".join(rnd.choices(alphabet, k=rnd.randint(1, 8))) for _ in range(count)})
    rnd.shuffle(names)
    return names


def _generate_cases(rnd: random.Random, count: int) -> list[GenerateCase]:
    cases = []
    for n in range(count):
        broker_count = rnd.randint(1, 14)
        ids = sorted(rnd.sample(range(0, rnd.choice([20, 40, 200, 5000])), broker_count))
        rack_style = rnd.choice(["even", "even", "uneven", "none", "single", "collide", "collide", "mixed"])
        racks = {
            "even": lambda i: f"rack-{i % 3}",
            "uneven": lambda i: rnd.choice(["a", "a", "a", "b", "c"]),
            "none": lambda i: None,
            "single": lambda i: "only",
            "mixed": lambda i: None if rnd.random() < 0.3 else "r1",
            "collide": lambda i: rnd.choice(["r1", "rA", "rQ", "Aa", "BB"]),  # same HashMap buckets
        }[rack_style]
        nodes = [Broker(broker_id, racks(i)) for i, broker_id in enumerate(ids)]
        rnd.shuffle(nodes)
        chosen = rnd.sample(ids, rnd.randint(1, broker_count))
        if rnd.random() < 0.1:
            chosen.append(max(ids) + 7)  # unknown broker: silently left out
        rnd.shuffle(chosen)
        # 12, 24, 48, 96 topics: the sizes where Java 17 and 19+ pre-size HashSet/HashMap copies differently
        topic_count = rnd.choice([1, 1, 2, 3, 5, 12, 24, 30, 48, 60, 96])
        max_rf = min(5, len(set(chosen) & set(ids))) if rnd.random() < 0.9 else 6  # 10%: maybe impossible
        topics = []
        for topic in _topic_names(rnd, topic_count):
            partition_count = rnd.choice([1, 2, 3, 10, 24, 50, 200]) if topic_count < 12 else rnd.randint(1, 8)
            rf = rnd.randint(1, max_rf)
            partitions = []
            for p in range(partition_count):
                size = rf if rnd.random() > 0.03 else rnd.randint(1, max_rf)  # odd replica counts, sometimes
                partitions.append((p, rnd.sample(range(100), size)))
            topics.append((topic, partitions))
        seed = rnd.choice([rnd.randint(-(2**63), 2**63 - 1), rnd.randint(0, 1000)])
        cases.append(GenerateCase(f"g{n}", seed, rnd.random() < 0.8, nodes, chosen, topics))
    return cases


def _place_cases(rnd: random.Random, count: int) -> list[PlaceCase]:
    cases = []
    for n in range(count):
        ids = rnd.sample(range(0, 60), rnd.randint(0, 10))
        rack_names = rnd.choice([[None], ["x", "y"], ["a", "b", "c", "d"], ["r1", "rA", "Aa", "BB", None]])
        brokers = [UsableBroker(i, rnd.choice(rack_names), rnd.random() < 0.25) for i in ids]
        specs = [
            (rnd.randint(0, 40), rnd.randint(1, max(1, len(ids))) if rnd.random() < 0.8 else rnd.randint(-1, 6))
            for _ in range(rnd.randint(1, 4))
        ]
        cases.append(PlaceCase(f"p{n}", rnd.randint(-(2**63), 2**63 - 1), brokers, specs))
    return cases


def _colliding_strings(rnd: random.Random, count: int, mask: int) -> list[str]:
    """Strings whose spread hash code falls in bucket 0 of a table of ``mask + 1`` slots."""
    found: list[str] = []
    while len(found) < count:
        candidate = "k" + "".join(rnd.choices("abcdefghij0123456789", k=6))
        h = java_string_hash(candidate)
        if (h ^ ((h & 0xFFFFFFFF) >> 16)) & mask == 0 and candidate not in found:
            found.append(candidate)
    return found


def _hash_map_cases(rnd: random.Random) -> list[HashMapCase]:
    cases: list[HashMapCase] = []
    equal_hash = ["".join(bits) for bits in itertools.product(["Aa", "BB"], repeat=5)]  # one hash code
    for n in range(40):
        kind = n % 4
        if kind == 0:  # one hash code: resize while small, then a tree of Comparable keys
            keys = rnd.sample(equal_hash, rnd.randint(5, 32))
            keys += [f"x{i}" for i in range(rnd.randint(0, 300))]
        elif kind == 1:  # one bucket, many hash codes; then growth splits and untreeifies the tree
            keys = _colliding_strings(rnd, rnd.randint(6, 20), 63) + [f"y{i}" for i in range(rnd.randint(0, 400))]
        elif kind == 2:  # TopicPartition keys with distinct hash codes in one bucket
            keys = [f"t:{64 * i}" for i in range(rnd.randint(6, 25))]
            keys += [f"u{i}:{p}" for i in range(rnd.randint(0, 30)) for p in range(rnd.randint(1, 5))]
        else:
            keys = [f"topic{i}" for i in range(rnd.randint(0, 200))]
        rnd.shuffle(keys)
        tp_keys = kind == 2
        constructor = rnd.choice(
            ["default", f"cap {rnd.randint(0, 100)}", "copy", "hashset" if not tp_keys else "copy"]
        )
        key_kind = "tp" if tp_keys else "string"
        operation = rnd.choice(["PUT", "CIA", "mixed"])
        ops = [(operation if operation != "mixed" else rnd.choice(["PUT", "CIA"]), k) for k in keys]
        if constructor == "hashset":  # HashSet(collection) only puts
            cases.append(HashMapCase(f"h{n}", key_kind, constructor, hashset_keys=keys))
        else:
            cases.append(HashMapCase(f"h{n}", key_kind, constructor, ops))
    # Exact sizes around the pre-sizing boundaries that differ between Java 17 and 19+.
    for size in (11, 12, 13, 24, 48, 96, 192, 384):
        keys = [f"topic-{i}" for i in range(size)]
        rnd.shuffle(keys)
        cases.append(HashMapCase(f"hs{size}", "string", "hashset", hashset_keys=keys))
        cases.append(HashMapCase(f"hc{size}", "string", "copy", [("PUT", k) for k in keys]))
    return cases + _colliding_key_cases(rnd)


EQUAL_HASH_TOPICS = ["".join(parts) for parts in itertools.product(["Aa", "BB"], repeat=4)]  # 16, one hash code


def _colliding_keys(rnd: random.Random, kind: str) -> list[str]:
    """Keys of ``kind`` that crowd buckets until they become trees, among ordinary keys.

    Keys of a class that is not ``Comparable`` (TopicPartition, TopicPartitionReplica) never share a hash
    code here: Java orders those by identity hash code, which no one can reproduce."""
    if kind == "string":
        colliding = rnd.sample(EQUAL_HASH_TOPICS, rnd.randint(9, 16))
        others = [f"topic-{i}" for i in range(rnd.choice([0, 5, 40, 40, 120]))]
    elif kind == "int":
        step = rnd.choice([64, 128, 1024, 1 << 16])
        colliding = [str(step * i) for i in rnd.sample(range(40), rnd.randint(9, 30))]
        others = [str(rnd.randint(-(2**31), 2**31 - 1)) for _ in range(rnd.choice([0, 10, 60, 200]))]
    elif kind == "tp":  # distinct hash codes in one bucket: partitions 64 apart, topics of one hash code
        topics = rnd.sample(EQUAL_HASH_TOPICS, 16)
        colliding = [f"{topic}:{64 * i}" for i, topic in enumerate(topics[: rnd.randint(9, 16)])]
        others = [f"o{i}:{p}" for i in range(rnd.choice([0, 8, 30])) for p in range(rnd.randint(1, 4))]
    else:
        topic = rnd.choice(EQUAL_HASH_TOPICS)
        colliding = [f"{topic}:0:{64 * i}" for i in range(rnd.randint(9, 20))]
        colliding += [f"{topic}:{64 * i}:1" for i in range(1, rnd.randint(2, 12))]
        others = [f"o{i}:{p}:{b}" for i in range(rnd.choice([0, 6, 20])) for p in range(2) for b in range(3)]
    keys = colliding + others
    rnd.shuffle(keys)
    return keys


def _colliding_key_cases(rnd: random.Random) -> list[HashMapCase]:
    """HashSet / HashMap of String, Integer, TopicPartition and TopicPartitionReplica keys that collide,
    default and pre-sized, with tree bins built, split, untreeified and removed from."""
    cases: list[HashMapCase] = []
    for n in range(120):
        kind = ("string", "int", "tp", "tpr")[n % 4]
        keys = _colliding_keys(rnd, kind)
        shape = n // 4 % 5
        name = f"c{n}-{kind}"
        if shape == 0:  # Collectors.toSet(): a default HashSet, add in order
            cases.append(HashMapCase(name, kind, "default", [("PUT", k) for k in keys]))
        elif shape == 1:  # new HashSet<>(collection): pre-sized
            cases.append(HashMapCase(name, kind, "hashset", hashset_keys=keys))
        elif shape == 2:  # new HashMap<>(n), then a copy of it
            cases.append(HashMapCase(name, kind, rnd.choice([f"cap {len(keys)}", "copy"]), [("PUT", k) for k in keys]))
        elif shape == 3:  # single removals, up to untreeifying a bin
            ops = [("PUT", k) for k in keys]
            ops += [("REMOVE", k) for k in rnd.sample(keys, rnd.randint(1, len(keys)))]
            cases.append(HashMapCase(name, kind, rnd.choice(["default", "cap 64"]), ops))
        else:  # getReplicaAssignmentForPartitions: new HashSet<>(all), removeAll(found), either branch
            found = rnd.sample(keys, rnd.randint(0, len(keys)))
            if rnd.random() < 0.3:
                found.append(keys[0])  # removeAll counts a repeated key twice
            rnd.shuffle(found)
            cases.append(HashMapCase(name, kind, "hashset", [("REMOVEALL", ",".join(found))], hashset_keys=keys))
    return cases


def _all_cases() -> list[GenerateCase | PlaceCase | HashMapCase]:
    rnd = random.Random(20240431)
    return [*_generate_cases(rnd, 300), *_place_cases(rnd, 150), *_hash_map_cases(rnd)]


# ------------------------------------------------------------------------------------------------
# Running the oracle


def _classpath() -> str:
    classpath = os.environ.get(CLASSPATH_VARIABLE)
    if classpath:
        return classpath
    if os.environ.get("CI"):
        pytest.fail(f"{CLASSPATH_VARIABLE} is not set: the placement oracle cannot run (required in CI)")
    pytest.skip(f"{CLASSPATH_VARIABLE} is not set (Kafka jars, e.g. '/tmp/kjars/*'): placement oracle not run")


def _run_oracle(classpath: str, text: str) -> tuple[int, dict[str, list[str]]]:
    java = shutil.which("java")
    if java is None:
        if os.environ.get("CI"):
            pytest.fail("no java on PATH: the placement oracle cannot run (required in CI)")
        pytest.skip("no java on PATH")
    completed = subprocess.run(
        [java, "-cp", classpath, str(ORACLE)],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0].startswith("JAVA "), completed.stdout[:500] + completed.stderr
    java_version = int(lines[0].split()[1])
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[1:]:
        if line == "END":
            current = None
        elif current is None:
            current = blocks.setdefault(line.split(" ", 1)[1], [])
        else:
            current.append(line)
    return java_version, blocks


def _normalise(line: str) -> str:
    if line.startswith("ERROR "):  # "ERROR <JavaClass> <message>" -> "ERROR <message>"
        return "ERROR " + line.split(" ", 2)[2]
    if line.startswith("K "):
        return "K " + unquote_plus(line[2:])
    return line


def test_placement_matches_the_kafka_classes() -> None:
    classpath = _classpath()
    cases = _all_cases()
    java_version, blocks = _run_oracle(classpath, "\n".join(case.oracle_input() for case in cases) + "\n")
    mismatches = []
    for case in cases:
        expected = [_normalise(line) for line in blocks[case.name]]
        actual = case.ours(java_version)
        if expected != actual:
            pairs = enumerate(zip(expected, actual, strict=False))
            at = next((i for i, (e, a) in pairs if e != a), min(len(expected), len(actual)))
            mismatches.append(
                f"{case.name} (first difference at line {at}):\n"
                f"  java: {expected[max(0, at - 2) : at + 8]}\n  ours: {actual[max(0, at - 2) : at + 8]}"
            )
    assert not mismatches, f"{len(mismatches)} of {len(cases)} cases differ:\n" + "\n".join(mismatches[:5])
