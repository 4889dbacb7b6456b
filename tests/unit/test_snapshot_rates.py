"""Rates in cluster snapshots (``--write-cluster-snapshot --sample-rates``): the two optional partition fields,
what each reader makes of them, their errors, and ``recorded_rates`` on every port."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

import kreassign.snapshot as snapshot_module
from kreassign.actions.traffic import snapshot_rates
from kreassign.cluster.kafka import KafkaCluster
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.model import Broker, TopicPartition
from kreassign.snapshot import (
    SnapshotCluster,
    SnapshotFormatError,
    read_snapshot_columns,
    read_snapshot_lines,
    snapshot_from_cluster,
    with_rates,
)
from tests.unit.test_snapshot import HEADER, SNAPSHOT, TOPIC_T, partition_line, text_of

RATES = {TopicPartition("orders", 0): (2048000.5, 1024000.0), TopicPartition("événements", 0): (20.0, 0.0)}


def rows_only(monkeypatch) -> None:
    """Every partition line through the row reader's exact checks (the column-wise path refuses them all)."""
    monkeypatch.setattr(snapshot_module, "_read_partitions_fast", lambda *args: False)


def test_without_rates_a_snapshot_is_written_as_before():
    text = text_of(SNAPSHOT)
    assert "bytes_per_s" not in text
    assert text_of(with_rates(SNAPSHOT, {})) == text
    assert SnapshotCluster(read_snapshot_columns(io.StringIO(text))).recorded_rates() == {}


def test_the_rates_follow_size_bytes_and_are_rounded():
    text = text_of(with_rates(SNAPSHOT, {TopicPartition("orders", 0): (1234.5678, 0.04)}))
    line = next(line for line in text.splitlines() if '"orders","partition":0' in line)
    assert '"size_bytes":500,"write_bytes_per_s":1234.6,"read_bytes_per_s":0.0,"leader":1' in line
    assert '"orders","partition":1' in text and text.count("bytes_per_s") == 2  # partition 1 has none


@pytest.mark.parametrize("reader", ["columns", "rows"])
@pytest.mark.parametrize("chunk", [1, 2, 8192])
def test_each_reader_gives_back_the_rates_written(monkeypatch, reader, chunk):
    monkeypatch.setattr(snapshot_module, "_CHUNK_LINES", chunk)
    if reader == "rows":
        rows_only(monkeypatch)
    sampled = with_rates(SNAPSHOT, RATES)
    text = text_of(sampled)
    port = SnapshotCluster(read_snapshot_columns(io.StringIO(text)))
    assert port.recorded_rates() == RATES
    again = read_snapshot_lines(io.StringIO(text))
    assert again == sampled
    assert text_of(again) == text
    partition = again.topics["orders"].partitions[0]
    assert (partition.write_bytes_per_s, partition.read_bytes_per_s) == RATES[TopicPartition("orders", 0)]
    assert again.topics["orders"].partitions[1].rates is None


@pytest.mark.parametrize("reader", ["columns", "rows"])
def test_the_file_and_the_open_port_agree(tmp_path, monkeypatch, reader):
    if reader == "rows":
        rows_only(monkeypatch)
    path = tmp_path / "cluster.jsonl"
    path.write_text(text_of(with_rates(SNAPSHOT, RATES)), encoding="utf-8")
    assert SnapshotCluster.open(str(path)).recorded_rates() == RATES
    old = tmp_path / "old.jsonl"
    old.write_text(text_of(SNAPSHOT), encoding="utf-8")
    assert SnapshotCluster.open(str(old)).recorded_rates() == {}


@pytest.mark.parametrize("reader", ["columns", "rows"])
def test_rates_on_some_partitions_only_integers_nulls_and_one_field_alone(monkeypatch, reader):
    """Partitions without rates among sampled ones, in any order: each keeps its own; an integer is a rate, a
    null is none, and one of the two alone makes the other 0."""
    if reader == "rows":
        rows_only(monkeypatch)
    text = (
        HEADER
        + TOPIC_T
        + partition_line(3, write_bytes_per_s=7, read_bytes_per_s=2.5)
        + partition_line(0)
        + partition_line(2, write_bytes_per_s=None, read_bytes_per_s=None)
        + partition_line(1, write_bytes_per_s=100.0)
        + partition_line(4, read_bytes_per_s=9)
    )
    port = SnapshotCluster(read_snapshot_columns(io.StringIO(text)))
    assert port.recorded_rates() == {
        TopicPartition("t", 1): (100.0, 0.0),
        TopicPartition("t", 3): (7.0, 2.5),
        TopicPartition("t", 4): (0.0, 9.0),
    }
    assert all(type(v) is float for pair in port.recorded_rates().values() for v in pair)
    assert [p.partition for p in port.snapshot.topics["t"].partitions] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "value",
    [-1, -0.5, "12", True, [1.0], {"bytes": 1}, float("nan"), float("inf")],
    ids=["negative", "negative-float", "string", "bool", "list", "object", "NaN", "Infinity"],
)
@pytest.mark.parametrize("field", ["write_bytes_per_s", "read_bytes_per_s"])
@pytest.mark.parametrize("chunk", [2, 8192])
def test_a_bad_rate_is_one_line_naming_the_file_and_line(monkeypatch, chunk, field, value):
    monkeypatch.setattr(snapshot_module, "_CHUNK_LINES", chunk)
    bad = json.dumps({**json.loads(partition_line(2)), field: value}) + "\n"  # NaN, Infinity: as Python writes them
    text = HEADER + TOPIC_T + partition_line(0) + partition_line(1, write_bytes_per_s=5.0) + bad + partition_line(3)
    with pytest.raises(SnapshotFormatError) as caught:
        read_snapshot_lines(io.StringIO(text), "snap.jsonl")
    assert caught.value.message == (
        f"Invalid cluster snapshot snap.jsonl line 5: {field} must be a number of bytes per second, 0 or more"
    )


def test_a_bad_rate_on_the_command_line_is_one_line_and_exit_1(tmp_path):
    path = tmp_path / "cluster.jsonl"
    text = text_of(with_rates(SNAPSHOT, RATES)).replace('"write_bytes_per_s":20.0', '"write_bytes_per_s":-20.0')
    path.write_text(text, encoding="utf-8")
    topics = tmp_path / "topics.json"
    topics.write_text('{"version":1,"topics":[{"topic":"orders"}]}', encoding="utf-8")
    argv = ["--generate", "--cluster-snapshot-file", str(path), "--topics-to-move-json-file", str(topics)]
    done = subprocess.run(
        [sys.executable, "-m", "kreassign", *argv, "--broker-list", "1,2,3"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stderr == ""
    assert done.stdout.splitlines() == [  # as every snapshot error: the Apache tool's "Error:" line on stdout
        f"Error: Invalid cluster snapshot {path} line 9: write_bytes_per_s must be a number of bytes per second, "
        "0 or more"
    ]


def test_live_and_simulated_ports_record_no_rates():
    assert SimulatedCluster([Broker(1)]).recorded_rates() == {}
    port = KafkaCluster("127.0.0.1:1")
    try:
        assert port.recorded_rates() == {}  # no connection needed
    finally:
        port.close()


def test_a_sampled_snapshot_of_a_cluster_records_what_the_window_saw():
    """``--write-cluster-snapshot --sample-rates 2`` on the simulated cluster: the hot partition written at
    2 MB/s and read at 1 MB/s by a group, the cold one at 20 kB/s and not read."""
    sim = SimulatedCluster([Broker(1), Broker(2)])
    sim.add_topic("hot", [(1, 2)], size=100_000, messages=1000)
    sim.add_topic("cold", [(2, 1)], size=100_000, messages=1000)
    hot, cold = TopicPartition("hot", 0), TopicPartition("cold", 0)
    sim.partitions[hot].committed["g"] = 900

    def sleep(seconds: float) -> None:
        for tp, rate in ((hot, 2_000_000), (cold, 20_000)):
            part = sim.partitions[tp]
            part.size += int(rate * seconds)
            part.end_offset += int(rate * seconds) // 100
            for group in part.committed:
                part.committed[group] += int(rate * seconds) // 200
        sim.advance(seconds)

    lines: list[str] = []
    snapshot, words = snapshot_rates(sim, snapshot_from_cluster(sim), 2, lines.append, sleep=sleep, clock=sim.clock)
    assert lines == ["Sampling the write and read rates of 2 partition(s) over 2 s.\n"]
    assert words == ", rates of 2 sampled over 2 s"
    port = SnapshotCluster(read_snapshot_columns(io.StringIO(text_of(snapshot))))
    assert port.recorded_rates() == {hot: (2_000_000.0, 1_000_000.0), cold: (20_000.0, 0.0)}


def test_the_snapshot_action_takes_sample_rates_and_checks_it_before_connecting():
    from kreassign.cli.argv import validate
    from kreassign.errors import UsageError

    argv = ["--bootstrap-server", "127.0.0.1:1", "--write-cluster-snapshot", "f.jsonl"]
    request = validate([*argv, "--sample-rates", "10"])
    assert request.kind == "write-cluster-snapshot"
    assert request.args.long_value("sample-rates") == 10
    with pytest.raises(UsageError, match="--sample-rates must be at least 1, not 0"):
        validate([*argv, "--sample-rates", "0"])
    done = subprocess.run(  # a real process: one line, exit 1, nothing written, no cluster asked
        [sys.executable, "-m", "kreassign", *argv, "--sample-rates", "x"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == "--sample-rates takes a whole number, not 'x'"
