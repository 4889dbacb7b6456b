"""Differential: topic names that share one Java hash code, where Apache's texts follow Java's tree bins.

16 topics named from {Aa, BB}^4 (one ``String.hashCode``) among 40 others: their bucket of a Java
``HashSet`` holds more than 8 keys and becomes a red-black tree ordered by ``compareTo``, so the topic list
of ``--verify``'s "Clearing topic-level throttles" line is not in insertion order; and in
``Unable to find partition: ...`` the missing partitions of those topics (distinct hash codes, one bucket)
follow the tree of ``new HashSet<>(partitions)`` after ``removeAll``. kreassign's stdout must equal the
Apache tool's, byte for byte.
"""

from __future__ import annotations

import itertools
import json
import random
import uuid

import pytest

from kreassign.javacompat.hashes import java_string_hash, java_topic_partition_hash
from kreassign.javacompat.hashmap import DEFAULT_JAVA_VERSION, hash_set_capacity, table_size_for
from kreassign.model import TopicPartition
from tests.integration.differential import run_apache, run_ours, strip_java_stack_trace
from tests.integration.test_differential_actions import TOOLS, Cluster

pytestmark = [pytest.mark.integration, pytest.mark.differential]

COMBOS = ["".join(parts) for parts in itertools.product(["Aa", "BB"], repeat=4)]  # 16 strings, one hash code


def _bucket(hash_code: int, capacity: int) -> int:
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def _tree_less_order(keys: list, hash_code, capacity: int) -> list:
    """The order a model without tree bins gave: by bucket, then insertion order."""
    index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    return sorted(index, key=lambda key: (_bucket(hash_code(key), capacity), index[key]))


@pytest.fixture(scope="module")
def cluster(kafka_cluster) -> Cluster:
    return Cluster(kafka_cluster.bootstrap_servers)


def _names(prefix: str) -> tuple[list[str], list[str]]:
    colliding = [prefix + combo for combo in COMBOS]  # same prefix, same length: still one hash code
    assert len({java_string_hash(name) for name in colliding}) == 1
    return colliding, [f"{prefix}other-{i}" for i in range(40)]


def _plan(partitions: list[tuple[str, int]], replicas: list[int]) -> str:
    return json.dumps(
        {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": replicas} for t, p in partitions]}
    )


def test_execute_and_verify_with_equal_hash_topic_names(cluster, tmp_path):
    colliding, others = _names(f"jh{uuid.uuid4().hex[:6]}-")
    names = colliding + others
    random.Random(7).shuffle(names)
    for name in names:
        cluster.create(name, [[1]])
    plan, back = tmp_path / "plan.json", tmp_path / "back.json"
    plan.write_text(_plan([(name, 0) for name in names], [2]))
    back.write_text(_plan([(name, 0) for name in names], [1]))
    # The case is one where a model without tree bins prints another order (Collectors.toSet(): 56 -> 128).
    tree_less = _tree_less_order(names, java_string_hash, 128)
    outputs = {}
    for tool, run in TOOLS.items():
        execute = ["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(plan)]
        executed = run([*execute, "--throttle", "10000000"])
        assert executed.code == 0, executed
        cluster.wait_idle()
        verified = run(["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", str(plan)])
        assert verified.code == 0, verified
        # The rollback JSON names the log dir each replica is in now, which the previous revert chose.
        lines = executed.stdout.split("\n")
        outputs[tool] = (lines[:2] + lines[3:], verified.stdout)
        assert cluster.throttles(names) == {
            **{f"4:{b}": {} for b in (1, 2, 3)},
            **{f"2:{name}": {} for name in names},
        }
        reverted = run_ours(
            ["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(back)]
        )
        assert reverted.code == 0, reverted
        cluster.wait_idle()
        run_ours(["--bootstrap-server", cluster.bootstrap, "--verify", "--reassignment-json-file", str(back)])
    assert outputs["kreassign"] == outputs["apache"]
    line = next(x for x in outputs["apache"][1].splitlines() if x.startswith("Clearing topic-level throttles"))
    assert line.removeprefix("Clearing topic-level throttles on topics ").split(",") != tree_less


def _missing_partitions_case() -> tuple[list[str], list[str], list[tuple[str, int]]]:
    """Names and a plan whose missing partitions crowd one bucket of ``new HashSet<>(partitions)`` with
    distinct hash codes (equal ones would be ordered by identity hash codes in Java: not reproducible)."""
    capacity = table_size_for(hash_set_capacity(56, DEFAULT_JAVA_VERSION))
    while True:
        colliding, others = _names(f"jm{uuid.uuid4().hex[:6]}-")
        # colliding[i] has one partition (0); the plan names partition 128 * i: all but the first are missing
        plan = [(name, 128 * i) for i, name in enumerate(colliding)] + [(name, 0) for name in others]
        hashes = [java_topic_partition_hash(TopicPartition(t, p)) for t, p in plan]
        buckets = [_bucket(h, capacity) for h in hashes[:16]]
        if len(set(hashes)) == len(hashes) and max(buckets.count(b) for b in buckets) >= 12:
            random.Random(11).shuffle(plan)
            return colliding, others, plan


def test_unable_to_find_partition_with_equal_hash_topic_names(cluster, tmp_path):
    colliding, others, partitions = _missing_partitions_case()
    for name in colliding + others:
        cluster.create(name, [[1]])
    plan = tmp_path / "plan.json"
    plan.write_text(_plan(partitions, [2]))
    args = ["--bootstrap-server", cluster.bootstrap, "--execute", "--reassignment-json-file", str(plan)]
    apache, ours = run_apache(args), run_ours(args)
    assert (ours.code, ours.stdout) == (apache.code, strip_java_stack_trace(apache.stdout))
    assert "Unable to find partition: " in ours.stdout, ours
    listed = ours.stdout.split("Unable to find partition: ", 1)[1].splitlines()[0].split(", ")
    assert len(listed) == 15
    missing = [TopicPartition(t, p) for t, p in partitions if p]
    tree_less = [str(tp) for tp in _tree_less_order(missing, java_topic_partition_hash, 128)]
    assert listed != tree_less  # a model without tree bins printed another order
    assert not cluster.reassigning()
