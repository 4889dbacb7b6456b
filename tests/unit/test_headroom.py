"""--throttle auto (issue 35): each broker's throttle is F x its capacity less the traffic it serves in its busier
direction, never below the floor (pure)."""

from __future__ import annotations

import pytest

from kreassign.execution.auto_throttle import headroom_line
from kreassign.planning.headroom import (
    FLOOR_SHARE,
    BrokerTraffic,
    Headroom,
    auto_throttles,
    broker_traffic,
    parse_capacities,
)

MB = 1_000_000


def test_a_brokers_traffic_is_the_writes_it_takes_in_and_the_reads_and_replication_it_serves_out():
    partitions = {
        "hot-0": (1, (1, 2, 3)),  # led by 1, followed by 2 and 3
        "warm-0": (2, (2, 1)),
        "cold-0": (3, (3, 2)),
    }
    writes = {"hot-0": 2 * MB, "warm-0": 200_000, "cold-0": 20_000}
    reads = {"hot-0": 2 * MB}  # one group reads the hot partition
    traffic = broker_traffic(partitions, writes, reads)
    assert traffic == {
        1: BrokerTraffic(bytes_in=2_200_000, bytes_out=2 * MB + 2 * 2 * MB),  # reads + replication to 2 followers
        2: BrokerTraffic(bytes_in=2_220_000, bytes_out=200_000),
        3: BrokerTraffic(bytes_in=2_020_000, bytes_out=20_000),
    }


def test_the_throttle_is_the_headroom_of_the_busier_direction_and_the_floor_is_said():
    traffic = {1: BrokerTraffic(2_200_000, 6 * MB), 2: BrokerTraffic(2_220_000, 200_000)}
    rooms = auto_throttles({1: 10 * MB, 2: 10 * MB, 3: 10 * MB}, traffic, 0.8)
    assert rooms[1] == Headroom(1, 2 * MB, 10 * MB, traffic[1], floored=False)  # 8 MB - 6 MB out
    assert rooms[2].rate == 8 * MB - 2_220_000 and not rooms[2].floored  # in is the busier way
    assert rooms[3].rate == 8 * MB and rooms[3].traffic == BrokerTraffic()  # no traffic measured
    floored = auto_throttles({1: 10 * MB}, traffic, 0.6)[1]  # 6 MB - 6 MB leaves nothing: the floor
    assert (floored.rate, floored.floored) == (int(FLOOR_SHARE * 10 * MB), True)
    line = headroom_line({1: floored, 3: rooms[3]})
    assert line.startswith("Throttle per broker (--throttle auto): 1: 488.3 KiB/s, 3: 7.6 MiB/s; broker 1 serves")
    assert "which leaves less than the floor: its throttle is the floor (488.3 KiB/s, 5 % of its capacity)" in line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", 'expected an object of broker ids and bytes/s, like {"1": 125000000}'),
        ("{}", "expected an object"),
        ('{"one": 1000}', "'one' is not a broker id"),
        ('{"1": 0}', "the capacity of broker 1 must be bytes/s above 0, not 0"),
        ('{"1": "fast"}', 'the capacity of broker 1 must be bytes/s above 0, not "fast"'),
        ("{1: 2", "not JSON"),
        ('{"1": Infinity}', "the capacity of broker 1 must be bytes/s above 0, not Infinity"),  # issue 39
        ('{"1": 1e999}', "the capacity of broker 1 must be bytes/s above 0, not Infinity"),
    ],
)
def test_a_bad_capacity_file_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("{", r"\{")):
        parse_capacities(text)
    assert parse_capacities('{"1": 125000000, "2": 1.25e8}') == {1: 125_000_000.0, 2: 125_000_000.0}


def test_a_batched_run_sets_each_brokers_headroom_and_moves_it_when_the_traffic_changes(tmp_path):
    """The simulated cluster, its fake clock: t-0 (led by 1, followed by 2) takes 2 MB/s of writes. With 10 MB/s
    brokers and F = 0.8, brokers 1 and 2 get 6 MB/s, broker 3 (nothing) 8 MB/s. The writes double once the run
    has started: at the next re-measure brokers 1 and 2 go to 4 MB/s."""
    from kreassign.actions.batched import execute_batched
    from kreassign.actions.execute_request import AutoThrottleRequest, ExecuteRequest
    from kreassign.cluster.port import ConfigResource, ResourceType
    from kreassign.cluster.simulated import SimulatedCluster
    from kreassign.execution.auto_throttle import REMEASURE_S, TrafficSnapshots
    from kreassign.model import Broker, ReassignmentPlan, TopicPartition
    from kreassign.planning.steps import Limits

    sim = SimulatedCluster([Broker(i) for i in range(1, 4)], bandwidth=50 * MB)
    sim.add_topic("t", [[1, 2], [2, 1]], size=600 * MB, messages=600_000)
    hot = TopicPartition("t", 0)
    sim.write(hot, 2 * MB)
    capacities = {1: 10 * MB, 2: 10 * MB, 3: 10 * MB}
    snapshots = TrafficSnapshots(sim, {1, 2, 3})
    snapshots.take(sim.now)
    sim.advance(10)
    rooms = auto_throttles(capacities, snapshots.take(sim.now), 0.8)
    assert {b: room.rate for b, room in rooms.items()} == {1: 6 * MB, 2: 6 * MB, 3: 8 * MB}

    def rate(broker):
        return sim.configs.get(ConfigResource(ResourceType.BROKER, str(broker)), {}).get(
            "follower.replication.throttled.rate"
        )

    seen = []

    class Reporter:
        def __init__(self):
            self.events: list[str] = []

        def event(self, message):
            self.events.append(message)

        def progress(self, progress):
            seen.append((progress.elapsed, rate(1), rate(2), rate(3)))
            sim.write(hot, 4 * MB)  # from the run's first poll on

    reporter = Reporter()
    outcome = execute_batched(
        sim,
        ExecuteRequest(  # the run measures the traffic itself, over the same 10 s, after taking its journal's lock
            ReassignmentPlan(((TopicPartition("t", 1), (3, 1)),), {}),
            limits=Limits(partitions=1),
            journal_path=str(tmp_path / "j.json"),
            auto=AutoThrottleRequest(capacities=capacities, max_utilisation=0.8),
            sample_window=10,
        ),
        lambda text: None,
        reporter,
        clock=sim.clock,
        sleep=sim.sleep,
    )
    assert outcome.status == "completed", outcome
    assert seen[0][1:] == (str(6 * MB), str(6 * MB), str(8 * MB)), seen[:3]
    later = [s for s in seen if s[0] > REMEASURE_S + 1]
    assert later and later[0][1:] == (str(4 * MB), str(4 * MB), str(8 * MB)), later[:3]
    lines = [e for e in reporter.events if e.startswith("Throttle per broker")]
    assert lines == [
        "Throttle per broker (--throttle auto): 1: 5.7 MiB/s, 2: 5.7 MiB/s, 3: 7.6 MiB/s",
        "Throttle per broker (--throttle auto): 1: 3.8 MiB/s, 2: 3.8 MiB/s",
    ], reporter.events
    assert rate(1) is None  # restored at the end


def test_the_start_line_of_throttle_auto_fits_80_columns():
    """Was `kreassign: --throttle auto: measuring the traffic of broker(s) 1,2,3,4 over 10 s ...` (84)."""
    from kreassign.actions.execute_request import measuring_line

    assert (
        measuring_line({1, 2, 3, 4}, 10) == "kreassign: --throttle auto: measuring traffic on brokers 1-4 for 10 s ..."
    )
    assert measuring_line({3}, 5).endswith("on broker 3 for 5 s ...")
    assert measuring_line({1, 2, 5, 7, 8}, 10).endswith("on brokers 1,2,5,7,8 for 10 s ...")
    many = measuring_line(set(range(1, 400, 3)), 300)
    assert many == "kreassign: --throttle auto: measuring traffic on 133 brokers for 300 s ..."
    assert all(len(measuring_line(set(range(1, n, 2)), 300)) <= 80 for n in range(2, 2000, 37))
