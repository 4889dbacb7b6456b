"""--generate --strategy balanced --sample-rates on a real cluster: producers write three topics led by broker 1 at
about 500 KB/s each (the session cluster: 3 brokers); the balanced plan samples the rates over the window, shows bytes in and out per broker
before and after (stderr, and the JSON report), takes bytes out off broker 1, and keeps the Apache layout of
stdout."""

from __future__ import annotations

import json
import threading

import pytest

from tests.integration.differential import run_ours
from tests.integration.test_traffic_live import PacedProducer, json_file

pytestmark = pytest.mark.integration

RATE = 500_000


def test_balanced_plan_samples_the_rates_and_evens_out_bytes_out(kafka_cluster, topics, tmp_path):
    bootstrap = kafka_cluster.bootstrap_servers
    hot = [topics([[1, b]]) for b in (2, 3, 2)]  # broker 1 leads every written partition
    cold = topics([[2, 3], [3, 2], [2, 3]])
    names = [*hot, cold]
    wanted = json_file(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": n} for n in names]})
    stop = threading.Event()
    producers = [PacedProducer(bootstrap, name, RATE, stop) for name in hot]
    argv = ["--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file", wanted]
    argv += ["--broker-list", "1,2,3", "--strategy", "balanced", "--disable-rack-aware"]
    try:
        for producer in producers:
            producer.start()
        plain = run_ours(argv)
        sampled = run_ours([*argv, "--sample-rates", "3", "--output", "json"])
        text = run_ours([*argv, "--sample-rates", "2"])
    finally:
        stop.set()
        for producer in producers:
            producer.join(30)
    assert plain.code == sampled.code == text.code == 0, (plain, sampled, text)
    assert "Bytes in per broker" not in plain.stderr
    # the text form: the Apache layout on stdout, the traffic on stderr
    assert text.stdout.splitlines()[0] == "Current partition replica assignment"
    assert text.stdout.splitlines()[3] == "Proposed partition reassignment configuration"
    assert "Bytes in per broker: " in text.stderr and "Bytes out per broker: " in text.stderr, text.stderr
    report = json.loads(sampled.stdout)["report"]
    brokers = {b["broker"]: b for b in report["brokers"]}
    # broker 1 leads the written partitions now: their writes come in, one follower's copy each goes out
    assert brokers[1]["bytes_in_per_s_before"] == pytest.approx(3 * RATE, rel=0.3)
    assert brokers[1]["bytes_out_per_s_before"] == pytest.approx(3 * RATE, rel=0.3)
    traffic = report["traffic"]
    assert traffic["out_spread_after"] < traffic["out_spread_before"]
    assert brokers[1]["bytes_out_per_s_after"] < brokers[1]["bytes_out_per_s_before"] / 2
    proposed = json.loads(sampled.stdout)["proposed"]["partitions"]
    assert sum(p["replicas"][0] == 1 for p in proposed if p["topic"] in hot) == 1  # one hot leadership each
