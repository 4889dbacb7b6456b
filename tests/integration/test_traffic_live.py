"""--sample-rates on a real cluster, as an operator runs it: producers at known rates (about 20, 200 and 2,000 KB/s)
on three topics and a consumer group reading the hot one; the rates ``--write-cluster-snapshot --sample-rates``
records in the file, against what the producers and the consumer did; and an Apache-form ``--execute
--throttle`` below the hot partition's write rate, which names the hot move on stderr before it starts while its
stdout stays that of the run without ``--sample-rates``."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid

import pytest

from kreassign.model import TopicPartition
from tests.integration.differential import run_ours
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration

MESSAGE = 1000  # bytes per record value
TICK_S = 0.02
RATES = {"cold": 20_000, "warm": 200_000, "hot": 2_000_000}  # bytes/s each producer writes
THROTTLE = 1_000_000  # two copies onto broker 2: 500 kB/s each, below hot's 2 MB/s, above warm's 200 kB/s
WINDOW_S = 5


class PacedProducer(threading.Thread):
    """Writes ``rate`` bytes/s of incompressible records to partition 0 of ``topic``, counting the bytes sent."""

    def __init__(self, bootstrap: str, topic: str, rate: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 10, "acks": 1})
        self.topic, self.rate, self.stop = topic, rate, stop
        self.count = 0  # value bytes handed to the producer
        self.payload = os.urandom(MESSAGE)

    def run(self) -> None:
        started = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - started) * self.rate)
            while self.count + MESSAGE <= due:
                self.producer.produce(self.topic, value=self.payload, partition=0)
                self.count += MESSAGE
            self.producer.poll(0)
            time.sleep(TICK_S)
        self.producer.flush(10)


class CommittingConsumer(threading.Thread):
    """Reads ``topic`` in ``group``, committing every 100 ms, counting the value bytes read."""

    def __init__(self, bootstrap: str, topic: str, group: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": True,
                "auto.commit.interval.ms": 100,
            }
        )
        self.consumer.subscribe([topic])
        self.count = 0
        self.assigned = threading.Event()
        self.stop = stop

    def run(self) -> None:
        while not self.stop.is_set():
            for message in self.consumer.consume(500, timeout=0.1):
                if not message.error():
                    self.count += len(message.value())
            if self.consumer.assignment():
                self.assigned.set()
        self.consumer.close()


def json_file(tmp_path, name: str, document: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def test_sampled_rates_match_the_traffic_and_the_hot_move_is_named_before_it_starts(
    kafka_cluster, adapter, topics, tmp_path
):
    bootstrap = kafka_cluster.bootstrap_servers
    names = {kind: topics([[1]]) for kind in RATES}  # one partition each, on broker 1
    hot = TopicPartition(names["hot"], 0)
    stop = threading.Event()
    group = f"traffic-readers-{uuid.uuid4().hex[:8]}"
    consumer = CommittingConsumer(bootstrap, names["hot"], group, stop)
    producers = {kind: PacedProducer(bootstrap, names[kind], rate, stop) for kind, rate in RATES.items()}
    plan = json_file(
        tmp_path,
        "plan.json",
        {"version": 1, "partitions": [{"topic": names[k], "partition": 0, "replicas": [2]} for k in ("hot", "warm")]},
    )
    execute = [
        "--bootstrap-server",
        bootstrap,
        "--execute",
        "--reassignment-json-file",
        plan,
        "--throttle",
        str(THROTTLE),
    ]
    cancel = ["--bootstrap-server", bootstrap, "--cancel", "--reassignment-json-file", plan]

    def cancelled() -> None:
        outcome = run_ours(cancel)
        assert outcome.code == 0, outcome
        wait_until(lambda: not adapter.list_reassignments(), timeout=60)

    try:
        consumer.start()
        for producer in producers.values():
            producer.start()
        assert consumer.assigned.wait(60), "the consumer group got no assignment"
        wait_until(lambda: group in adapter.committed_offsets([hot]).get(hot, {}), timeout=60)
        time.sleep(1)  # the consumer caught up with what was written before it joined

        # the snapshot, as an operator takes it; the actual rates: what the threads counted meanwhile
        snapshot = tmp_path / "cluster.jsonl"
        wanted = json_file(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": n} for n in names.values()]})
        threads = [*producers.values(), consumer]
        counts, began = [t.count for t in threads], time.monotonic()
        wrote = run_ours(
            [
                "--bootstrap-server",
                bootstrap,
                "--write-cluster-snapshot",
                str(snapshot),
                "--topics-to-move-json-file",
                wanted,
                "--sample-rates",
                str(WINDOW_S),
            ]
        )
        elapsed = time.monotonic() - began
        actual = [(t.count - c) / elapsed for t, c in zip(threads, counts, strict=True)]
        assert wrote.code == 0, wrote
        assert wrote.stdout == ""
        assert f"rates of 3 sampled over {WINDOW_S} s" in wrote.stderr, wrote.stderr
        records = {
            r["topic"]: r for r in map(json.loads, snapshot.read_text().splitlines()) if r["type"] == "partition"
        }
        sampled = {kind: records[names[kind]]["write_bytes_per_s"] for kind in RATES}
        sampled["hot read"] = records[names["hot"]]["read_bytes_per_s"]
        done = dict(zip([*RATES, "hot read"], actual, strict=True))
        print("sampled vs actual bytes/s:", {k: (round(sampled[k]), round(done[k])) for k in done})
        for kind in done:
            assert sampled[kind] == pytest.approx(done[kind], rel=0.2), (kind, sampled, done)
        assert records[names["cold"]]["read_bytes_per_s"] == records[names["warm"]]["read_bytes_per_s"] == 0.0

        # the Apache form: both copies go to broker 2 at once (THROTTLE / 2 each); hot is named, warm is not
        named = run_ours([*execute, "--sample-rates", "2"])
        assert named.code == 0, named
        cancelled()
        plain = run_ours(execute)
        assert plain.code == 0, plain
        cancelled()
        assert named.stdout == plain.stdout
        assert "Successfully started partition reassignment" in plain.stdout
        warnings = [line for line in named.stderr.splitlines() if "may never catch up" in line]
        assert len(warnings) == 1, named.stderr
        assert warnings[0].startswith(f"kreassign: warning: {names['hot']}-0 is written at "), warnings
        assert "share of the throttle on broker 2" in warnings[0]
        assert "may never catch up" not in plain.stderr
    finally:
        stop.set()
        for thread in [*producers.values(), consumer]:
            if thread.is_alive():
                thread.join(30)
        if adapter.list_reassignments():  # never leave a throttled copy running for the next tests
            run_ours(cancel)
