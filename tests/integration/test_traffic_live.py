"""--sample-rates on a real cluster: producers and a consumer group at known rates, the rates kreassign samples
from the Admin API alone, and the move it names before an --execute starts."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid

import pytest

from kreassign.actions.traffic import sample_rates
from kreassign.devcluster.topics import create_topic
from kreassign.model import TopicPartition
from tests.integration.differential import run_ours
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

MESSAGE = 1000  # bytes per record value
TICK_S = 0.05
RATES = {"cold": 20_000, "warm": 200_000, "hot": 2_000_000}  # bytes/s each producer writes
THROTTLE = 1_000_000  # below the hot partition's write rate, far above the warm one's


class PacedProducer(threading.Thread):
    """Writes ``rate`` bytes/s of random records to partition 0 of ``topic``, counting what it sent."""

    def __init__(self, bootstrap: str, topic: str, rate: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": 1})
        self.topic, self.rate, self.stop = topic, rate, stop
        self.sent = 0  # bytes handed to the producer
        self.payload = os.urandom(MESSAGE)

    def run(self) -> None:
        started = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - started) * self.rate)
            while self.sent + MESSAGE <= due:
                self.producer.produce(self.topic, value=self.payload, partition=0)
                self.sent += MESSAGE
            self.producer.poll(0)
            time.sleep(TICK_S)
        self.producer.flush(10)


class CommittingConsumer(threading.Thread):
    """Reads ``topic`` in group ``group`` and commits every 100 ms, counting the value bytes it read."""

    def __init__(self, bootstrap: str, topic: str, group: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "latest",
                "enable.auto.commit": True,
                "auto.commit.interval.ms": 100,
            }
        )
        self.consumer.subscribe([topic])
        self.read = 0
        self.stop = stop

    def run(self) -> None:
        while not self.stop.is_set():
            for message in self.consumer.consume(500, timeout=0.1):
                if not message.error():
                    self.read += len(message.value())
        self.consumer.close()


def counted(threads, measure):
    """``measure()``'s result, and the bytes/s each thread's counter moved by while it ran."""
    before, began = [t.sent if hasattr(t, "sent") else t.read for t in threads], time.monotonic()
    result = measure()
    after, ended = [t.sent if hasattr(t, "sent") else t.read for t in threads], time.monotonic()
    return result, [(a - b) / (ended - began) for a, b in zip(after, before, strict=True)]


def plan_file(tmp_path, name: str, moves: dict[str, list[int]]) -> str:
    path = tmp_path / f"{name}.json"
    partitions = [{"topic": t, "partition": 0, "replicas": r} for t, r in moves.items()]
    path.write_text(json.dumps({"version": 1, "partitions": partitions}))
    return str(path)


def test_sampled_rates_match_the_traffic_and_a_slow_move_is_named_before_it_starts(kafka_cluster, adapter, tmp_path):
    began = time.monotonic()
    bootstrap = kafka_cluster.bootstrap_servers
    run = uuid.uuid4().hex[:8]
    names = {kind: f"traffic-{kind}-{run}" for kind in RATES}
    for name in names.values():
        create_topic(bootstrap, name, [[1]])
    stop = threading.Event()
    group = f"readers-{run}"
    consumer = CommittingConsumer(bootstrap, names["hot"], group, stop)
    consumer.start()
    hot = TopicPartition(names["hot"], 0)
    producers = [PacedProducer(bootstrap, names[kind], rate, stop) for kind, rate in RATES.items()]
    try:
        wait_until(lambda: consumer.consumer.assignment(), timeout=60)
        for producer in producers:
            producer.start()
        wait_until(lambda: group in adapter.committed_offsets([hot]).get(hot, {}), timeout=60)
        time.sleep(1)
        print(f"traffic flowing after {time.monotonic() - began:.1f} s")

        partitions = [TopicPartition(n, 0) for n in names.values()]
        rates, actual = counted([*producers, consumer], lambda: sample_rates(adapter, partitions, 5))
        report = {
            kind: (rates[TopicPartition(names[kind], 0)].write_bytes_per_s, actual[i]) for i, kind in enumerate(RATES)
        }
        report["hot read"] = (rates[hot].read_bytes_per_s, actual[-1])
        print("sampled vs actual bytes/s:", {k: (round(s), round(a)) for k, (s, a) in report.items()})
        for kind, (sampled, done) in report.items():
            assert sampled == pytest.approx(done, rel=0.2), kind
        assert rates[TopicPartition(names["cold"], 0)].read_bytes_per_s == 0.0

        # the Apache form: both moves start at once onto broker 2 (a share of THROTTLE / 2 each); hot is named
        plan = plan_file(tmp_path, "plan", {names["hot"]: [2], names["warm"]: [2]})
        execute = ["--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file", plan]
        cancel = ["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", plan]
        sampled = run_ours([*execute, "--throttle", str(THROTTLE), "--sample-rates", "2"])
        assert sampled.code == 0, sampled
        assert run_ours(cancel).code == 0
        plain = run_ours([*execute, "--throttle", str(THROTTLE)])
        assert run_ours(cancel).code == 0
        assert plain.code == 0, plain
        assert sampled.stdout == plain.stdout
        warnings = [line for line in sampled.stderr.splitlines() if "may never catch up" in line]
        assert len(warnings) == 1 and f"{names['hot']}-0 is written at " in warnings[0], sampled.stderr
        assert "share of the throttle on broker 2" in warnings[0]
        assert "may never catch up" not in plain.stderr

        print(f"Apache runs done after {time.monotonic() - began:.1f} s")
        # a batched run refuses, in one line, unless told otherwise
        batched = [*execute, "--throttle", str(THROTTLE), "--max-partition-movements", "2", "--sample-rates", "2"]
        refused = run_ours(batched)
        assert refused.code == 1, refused
        lines = (refused.stdout + refused.stderr).strip().splitlines()
        assert len(lines) == 1 and f"{names['hot']}-0 is written at " in lines[0], lines
        assert "--allow-slow-moves" in lines[0]
        allowed = run_ours([*batched, "--dry-run", "--allow-slow-moves"])
        assert allowed.code == 0, allowed
        assert f"{names['hot']}-0 is written at " in allowed.stderr
    finally:
        stop.set()
        for thread in [*producers, consumer]:
            if thread.is_alive():
                thread.join(15)
