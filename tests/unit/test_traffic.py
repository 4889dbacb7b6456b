"""Traffic rates from Admin samples (kreassign.planning.traffic) and the slow moves they name
(kreassign.execution.sampling and kreassign.actions.traffic, on the simulated cluster)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreassign.actions.traffic import find_slow_moves, slow_move_line
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution.sampling import sample_rates
from kreassign.model import Broker, TopicPartition
from kreassign.planning.traffic import (
    LogSample,
    bytes_per_message,
    estimate_rates,
    read_rate,
    slow_moves,
    write_rate,
)


def test_bytes_per_message_is_the_size_over_the_offset_span():
    assert bytes_per_message(LogSample(100, 1100, 50_000)) == 50.0
    assert bytes_per_message(LogSample(5, 5, 0)) is None  # empty log
    assert bytes_per_message(LogSample(0, 10, None)) is None
    assert bytes_per_message(LogSample(0, 10, -1)) is None  # unknown size


def test_the_write_rate_is_the_size_growth_when_no_segment_was_deleted():
    rate, per_message, notes = write_rate(LogSample(0, 1000, 100_000), LogSample(0, 1500, 160_000), 10)
    assert rate == 6000.0  # 60 000 bytes in 10 s, although 500 messages x 100 bytes would say 5000
    assert per_message == pytest.approx(160_000 / 1500)
    assert notes == ()


def test_a_retention_delete_is_detected_and_the_offsets_are_used():
    before = LogSample(0, 1000, 100_000)
    after = LogSample(400, 1500, 110_000)  # a segment of 400 messages went; the size shrank by its bytes
    rate, per_message, notes = write_rate(before, after, 5)
    assert per_message == 100.0
    assert rate == 500 * 100 / 5
    assert "retention deleted 400 messages" in notes[0]


def test_no_growth_empty_logs_and_offsets_reset():
    assert write_rate(LogSample(0, 0, 0), LogSample(0, 0, 0), 3)[0] == 0.0
    assert write_rate(LogSample(0, 10, 100), LogSample(0, 10, 100), 3) == (0.0, 10.0, ())
    rate, _, notes = write_rate(LogSample(0, 1000, 5000), LogSample(0, 10, 50), 3)
    assert rate == 0.0 and "offsets reset" in notes[0]
    rate, _, notes = write_rate(LogSample(0, 0, None), LogSample(0, 10, None), 3)
    assert rate == 0.0 and "size is unknown" in notes[0]


def test_a_window_of_zero_is_refused():
    with pytest.raises(ValueError, match="longer than 0"):
        write_rate(LogSample(0, 0, 0), LogSample(0, 0, 0), 0)
    with pytest.raises(ValueError, match="longer than 0"):
        read_rate({}, {}, 1.0, 0)


def test_the_read_rate_sums_the_groups_that_committed_at_both_ends():
    rate, notes = read_rate({"a": 100, "b": 0, "gone": 7}, {"a": 300, "b": 100, "new": 5000}, 10.0, 2)
    assert rate == (200 + 100) * 10.0 / 2
    assert notes == ()
    rate, notes = read_rate({"a": 500}, {"a": 100}, 10.0, 2)
    assert rate == 0.0 and "moved its offset back" in notes[0]


def test_estimate_rates_pairs_the_samples_of_each_partition():
    tp, other = TopicPartition("t", 0), TopicPartition("t", 1)
    rates = estimate_rates(
        {tp: LogSample(0, 100, 1000), other: LogSample(0, 0, 0)},
        {tp: LogSample(0, 300, 3000)},
        {tp: {"g": 100}},
        {tp: {"g": 200}},
        10,
    )
    assert set(rates) == {tp}
    assert rates[tp].write_bytes_per_s == 200.0
    assert rates[tp].read_bytes_per_s == 100.0


@given(
    start=st.integers(0, 10**6),
    span=st.integers(1, 10**6),
    per_message=st.integers(1, 10_000),
    appended=st.integers(0, 10**6),
    window=st.floats(0.5, 600),
)
def test_steady_writes_give_their_rate_back(start, span, per_message, appended, window):
    before = LogSample(start, start + span, span * per_message)
    after = LogSample(start, start + span + appended, (span + appended) * per_message)
    rate, _, notes = write_rate(before, after, window)
    assert rate == pytest.approx(appended * per_message / window)
    assert notes == ()


def test_a_broker_receiving_k_copies_gives_each_a_kth_of_the_throttle():
    a, b, c = (TopicPartition("t", p) for p in range(3))
    adding = {a: [4], b: [4], c: [5]}
    writes = {a: 400.0, b: 10.0, c: 900.0}
    slow = slow_moves(adding, writes, 1000)  # broker 4: 2 copies, 500 each; broker 5: 1000
    assert slow == []
    slow = slow_moves(adding, {**writes, a: 500.0}, 1000)
    assert [(m.partition, m.share_bytes_per_s, m.broker) for m in slow] == [(a, 500.0, 4)]
    # a batched run moving one partition at a time per broker: the full throttle each
    assert slow_moves(adding, {**writes, a: 500.0}, 1000, {4: 1, 5: 1}) == []


def _writing(sim: SimulatedCluster, rates: dict[TopicPartition, int], per_message: int = 100):
    """A sleep of the simulated cluster during which these partitions take writes at these bytes/s."""

    def sleep(seconds: float) -> None:
        for tp, rate in rates.items():
            part = sim.partitions[tp]
            part.size += int(rate * seconds)
            part.end_offset += int(rate * seconds) // per_message
            for group in part.committed:
                part.committed[group] += int(rate * seconds) // per_message // 2  # reads half
        sim.advance(seconds)

    return sleep


def test_the_sampler_reads_the_port_and_names_the_slow_move():
    sim = SimulatedCluster([Broker(1), Broker(2), Broker(3)])
    sim.add_topic("hot", [(1, 2)], size=100_000, messages=1000)
    sim.add_topic("cold", [(1, 2)], size=100_000, messages=1000)
    hot, cold = TopicPartition("hot", 0), TopicPartition("cold", 0)
    sim.partitions[hot].committed["g"] = 900
    sleep = _writing(sim, {hot: 2_000_000, cold: 20_000})
    rates = sample_rates(sim, [hot, cold], 2, sleep=sleep, clock=sim.clock)
    assert rates[hot].write_bytes_per_s == pytest.approx(2_000_000)
    assert rates[hot].read_bytes_per_s == pytest.approx(1_000_000)
    assert rates[cold].write_bytes_per_s == pytest.approx(20_000)
    assert rates[cold].read_bytes_per_s == 0.0

    slow = find_slow_moves(
        sim, {hot: [3, 2], cold: [3, 2]}, 3_000_000, 2, sleep=_writing(sim, {hot: 2_000_000}), clock=sim.clock
    )
    # leader 1 serves both copies, and its throttle also carries hot's writes to its in-sync follower 2: 3 MB/s less
    # 2 MB/s, shared by two copies, is the share that binds (broker 3 would give each 1.5 MB/s)
    assert [(m.partition, m.broker, m.leader, m.share_bytes_per_s) for m in slow] == [(hot, 1, True, 500_000)]
    assert slow_move_line(slow[0]).startswith("hot-0 is written at ")
    assert slow_move_line(slow[0]).endswith("share of the throttle on broker 1, its leader")


def test_slow_admin_calls_do_not_shorten_or_lengthen_the_window():
    """Each round of Admin calls takes 1 s (the groups' offsets answer late) while 2 MB/s are written and half
    of it read: the values of the two rounds are 2 s apart, as asked, and the rates are the traffic's (the
    window measured to the end of the second round, 3 s, gave two thirds of them)."""
    sim = SimulatedCluster([Broker(1), Broker(2)])
    sim.add_topic("hot", [(1, 2)], size=100_000, messages=1000)
    hot = TopicPartition("hot", 0)
    sim.partitions[hot].committed["g"] = 900
    writing = _writing(sim, {hot: 2_000_000})
    committed = sim.committed_offsets

    def late(partitions):
        writing(1.0)
        return committed(partitions)

    sim.committed_offsets = late
    rates = sample_rates(sim, [hot], 2, sleep=writing, clock=sim.clock)
    assert rates[hot].write_bytes_per_s == pytest.approx(2_000_000)
    assert rates[hot].read_bytes_per_s == pytest.approx(1_000_000)
