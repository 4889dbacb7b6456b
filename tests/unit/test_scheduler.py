"""The batched executor as a scheduler: per-broker limits, load-aware order, health waits, --adaptive.
Against the simulated cluster with its fake clock; every sample is taken after each poll and each submit."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreassign.actions.batched import execute_batched
from kreassign.actions.execute_request import ExecuteRequest
from kreassign.cluster.port import ConfigResource, ResourceType
from kreassign.cluster.simulated import SimulatedCluster
from kreassign.execution.journal import Journal
from kreassign.model import Broker, ReassignmentPlan, TopicPartition
from kreassign.planning.adaptive import Aimd, Signals
from kreassign.planning.steps import Limits, crowd, priority, select_steps, step_brokers, tier

MB = 1_000_000


class Sampled(SimulatedCluster):
    """Samples the steps in flight (per broker: new replicas and the current leader) at every change."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.peak_per_broker: Counter[int] = Counter()
        self.peak_partitions = 0
        self.peak_leaders = 0
        self.leader_at_start: dict[TopicPartition, int | None] = {}
        self.started: list[TopicPartition] = []

    def alter_reassignments(self, targets, allow_replication_factor_change=True):
        for tp, target in targets.items():
            if target is not None:
                self.leader_at_start[tp] = self.partitions[tp].leader
                self.started.append(tp)
                added = [b for b in target if b not in self.partitions[tp].replicas]
                if self.limits.replicas is not None:
                    assert len(added) <= self.limits.replicas
        errors = super().alter_reassignments(targets, allow_replication_factor_change)
        self.sample()
        return errors

    def sample(self):
        moving = self.list_reassignments()
        load: Counter[int] = Counter()
        leaders = 0
        for tp, r in moving.items():
            load.update({*r.adding, self.leader_at_start[tp]})
            part = self.partitions[tp]
            leaders += part.target[0] != part.original[0]
        for b, n in load.items():
            self.peak_per_broker[b] = max(self.peak_per_broker[b], n)
            if self.limits.brokers is not None:
                assert n <= self.limits.brokers, (b, n)
        self.peak_partitions = max(self.peak_partitions, len(moving))
        self.peak_leaders = max(self.peak_leaders, leaders)
        if self.limits.partitions is not None:
            assert len(moving) <= self.limits.partitions
        if self.limits.leaders is not None:
            assert leaders <= self.limits.leaders


class Recorder:
    def __init__(self, sim=None, on_progress=None):
        self.events: list[str] = []
        self.notes: list[str] = []
        self.polls = 0
        self.sim = sim
        self.on_progress = on_progress

    def event(self, message):
        self.events.append(message)

    def progress(self, progress):
        self.polls += 1
        self.notes.extend(progress.notes)
        if self.sim is not None:
            self.sim.sample()
        if self.on_progress:
            self.on_progress(self.polls)


def sampled(brokers=12, limits=None, bandwidth=10 * MB) -> Sampled:
    sim = Sampled([Broker(i, f"rack-{i % 3}") for i in range(brokers)], bandwidth=bandwidth)
    sim.limits = limits or Limits()
    return sim


def run(sim, targets, tmp_path, limits, reporter=None, **options):
    out: list[str] = []
    outcome = execute_batched(
        sim,
        ExecuteRequest(
            ReassignmentPlan(tuple(targets.items())), limits=limits, journal_path=str(tmp_path / "j.json"), **options
        ),
        out.append,
        reporter or Recorder(sim),
        clock=sim.clock,
        sleep=sim.sleep,
    )
    return outcome, "".join(out)


def tp(p, topic="t"):
    return TopicPartition(topic, p)


@st.composite
def plans(draw):
    brokers = draw(st.integers(min_value=3, max_value=8))
    n = draw(st.integers(min_value=1, max_value=14))
    layout, targets = [], {}
    for p in range(n):
        current = draw(st.lists(st.integers(0, brokers - 1), min_size=1, max_size=3, unique=True))
        final = draw(st.lists(st.integers(0, brokers - 1), min_size=1, max_size=3, unique=True))
        layout.append(tuple(current))
        targets[tp(p)] = tuple(final)
    sizes = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    limits = Limits(
        partitions=draw(st.none() | st.integers(1, 6)),
        replicas=draw(st.none() | st.integers(1, 2)),
        leaders=draw(st.none() | st.integers(1, 3)),
        brokers=draw(st.none() | st.integers(1, 3)),
    )
    order = draw(st.sampled_from(["plan", "small-first", "large-first"]))
    return brokers, layout, sizes, targets, limits, order


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans())
def test_no_sample_ever_exceeds_a_per_broker_p_r_or_l_limit_and_every_plan_completes(tmp_path_factory, case):
    brokers, layout, sizes, targets, limits, order = case
    tmp_path = tmp_path_factory.mktemp("run")
    sim = sampled(brokers, limits)
    for p, (replicas, size) in enumerate(zip(layout, sizes, strict=True)):
        sim.add_topic("t" if p == 0 else f"t{p}", [replicas], size=size * MB)
    renamed = {(tp(0) if p == 0 else tp(0, f"t{p}")): target for p, (_, target) in enumerate(targets.items())}
    outcome, _ = run(sim, renamed, tmp_path, limits, order=order)
    assert outcome.status == "completed"
    for partition, target in renamed.items():
        assert tuple(sim.partitions[partition].replicas) == target


def test_per_broker_limit_spreads_the_moves_of_an_added_broker_and_fills_free_slots(tmp_path):
    """Brokers 9-11 are new; every step lands on one of them, and is served by leaders 0-8."""
    limits = Limits(partitions=100, brokers=2)
    sim = sampled(12, limits)
    sim.add_topic("t", [(p % 9, (p + 1) % 9) for p in range(60)], size=20 * MB)
    targets = {tp(p): (p % 9, 9 + p % 3) for p in range(60)}
    recorder = Recorder(sim)
    outcome, _ = run(sim, targets, tmp_path, limits, reporter=recorder)
    assert outcome.status == "completed"
    assert max(sim.peak_per_broker.values()) == 2  # reached, never exceeded
    assert all(sim.peak_per_broker[b] == 2 for b in (9, 10, 11))  # every new broker kept busy


@pytest.mark.parametrize(
    ("target", "steps"),
    [
        # [0, 1] -> [2, 1]: a leader movement adding broker 2 (three replicas for a while; the old leader 0
        # stays until 2 is elected), its election, then a step that drops broker 0. The drop copies nothing
        # and goes before the other partitions' leader movements, so at most P partitions hold an extra
        # replica at a time; taken after every leader movement, all 30 did.
        pytest.param((2, 1), 60, id="old-leader-dropped-after-the-election"),
        # [0, 1] -> [2, 0]: one step adds broker 2 and drops broker 1 (the leader 0 stays), then 2 is elected:
        # one submission per partition, and the extra replica lives only while it is copied.
        pytest.param((2, 0), 30, id="follower-dropped-with-the-new-leader"),
    ],
)
def test_at_most_p_partitions_hold_an_extra_replica_when_every_leader_moves(tmp_path, target, steps):
    limits = Limits(partitions=5)
    sim = sampled(3, limits)
    sim.add_topic("t", [(0, 1)] * 30, size=20 * MB)
    targets = dict.fromkeys((tp(p) for p in range(30)), target)
    extra = extra_replicas(sim, targets)
    outcome, _ = run(sim, targets, tmp_path, limits)
    assert outcome.status == "completed" and outcome.steps_done == steps
    assert all(sim.partitions[t].replicas == list(target) and sim.partitions[t].leader == 2 for t in targets)
    assert 0 < max(extra) <= limits.partitions


def extra_replicas(sim, targets) -> list[int]:
    """Samples, at each of the simulated cluster's samples, of the replicas the partitions hold beyond two."""
    extra: list[int] = []
    sample = sim.sample

    def sample_extra():
        sample()
        extra.append(sum(len(sim.partitions[t].replicas) - 2 for t in targets))

    sim.sample = sample_extra
    return extra


def test_a_step_whose_leader_moved_after_it_was_chosen_waits_rather_than_overload_the_new_leader(tmp_path):
    """Both steps fit N=1 when chosen (leaders 0 and 1); then the leader of the second moves to broker 0,
    outside the plan, before it is submitted: it would load broker 0 twice, so it waits for the first."""
    limits = Limits(partitions=10, brokers=1)
    sim = sampled(6, limits)
    sim.add_topic("a", [(0, 1)], size=10 * MB)
    sim.add_topic("b", [(1, 0)], size=10 * MB)
    original = sim.list_reassignments

    def list_reassignments(partitions=None):
        if partitions is not None and tp(0, "b") in set(partitions) and not sim.started:
            sim.partitions[tp(0, "b")].leader = 0  # an election nobody here asked for
        return original(partitions)

    sim.list_reassignments = list_reassignments
    outcome, _ = run(sim, {tp(0, "a"): (0, 2), tp(0, "b"): (1, 3)}, tmp_path, limits)
    assert outcome.status == "completed"
    assert sim.started == [tp(0, "a"), tp(0, "b")]
    assert sim.leader_at_start[tp(0, "b")] == 0 and sim.peak_per_broker[0] == 1


def test_a_broker_with_a_free_slot_never_waits_behind_steps_of_busy_brokers():
    """Plan order puts 10 steps to broker 5 first; the step to broker 6 starts in the same batch."""
    steps = [next_to(p, (0, 1), (0, 5)) if p < 10 else next_to(p, (2, 3), (2, 6)) for p in range(11)]
    candidates = sorted(steps, key=lambda s: priority(s, s.partition.partition))
    chosen = select_steps(candidates, 0, 0, Limits(partitions=10, brokers=2))
    assert [s.partition.partition for s in chosen] == [0, 1, 10]


def test_a_free_slot_goes_to_the_least_crowded_step_then_to_the_order():
    """Leader 0 already serves 3 copies: a step it would serve puts a 4th copy on its outgoing link, while
    leader 1's link is idle. N=5 leaves room for both; with one free slot (P) the idle link gets it, though
    its step comes later in the order; among equally crowded steps the order decides."""
    crowded, idle, also_idle = next_to(0, (0, 1), (0, 4)), next_to(1, (1, 2), (1, 5)), next_to(2, (2, 3), (2, 4))
    out = {0: 3}
    chosen = select_steps([crowded, idle, also_idle], 0, 0, Limits(partitions=1, brokers=5), copies_out=out)
    assert chosen == [idle]
    chosen = select_steps([crowded, also_idle, idle], 0, 0, Limits(partitions=1, brokers=5), copies_out=out)
    assert chosen == [also_idle]
    assert crowd(crowded, None, {}, out) == 4 and crowd(idle, None, {}, out) == 1
    # both idle ones start before the crowded one; all three fit: returned in candidate order
    assert select_steps([crowded, idle, also_idle], 0, 0, Limits(brokers=5), copies_out=out) == [
        crowded,
        idle,
        also_idle,
    ]
    # a step that copies nothing has no crowd; without a per-broker limit the order alone decides
    assert crowd(next_to(3, (0, 1), (1, 0)), 0, {}, out) == 0
    assert select_steps([crowded, idle], 0, 0, Limits(partitions=1), copies_out=out) == [crowded]


def test_the_run_gives_a_free_slot_to_a_step_on_idle_links_before_one_behind_busy_links(tmp_path):
    """P=3, N=3 (leader 0 could serve all of a, b and c). In plan order a, b and c are served by leader 0, d
    by leader 4, whose links are idle. The three slots go to a, then d (idle links), then b (a second copy
    on 0's outgoing link); c, before d in the plan, would be a third copy there and waits for a slot."""
    limits = Limits(partitions=3, brokers=3)
    sim = sampled(8, limits)
    for name, replicas in (("a", (0, 6)), ("b", (0, 6)), ("c", (0, 7)), ("d", (4, 7))):
        sim.add_topic(name, [replicas], size=50 * MB)
    targets = {tp(0, "a"): (0, 1), tp(0, "b"): (0, 2), tp(0, "c"): (0, 3), tp(0, "d"): (4, 5)}
    outcome, _ = run(sim, targets, tmp_path, limits)
    assert outcome.status == "completed"
    assert sim.calls[0] == "alter_reassignments [('a-0', (0, 1)), ('b-0', (0, 2)), ('d-0', (4, 5))]"
    assert sim.started == [tp(0, "a"), tp(0, "b"), tp(0, "d"), tp(0, "c")]


def test_with_p_the_limit_only_a_few_steps_per_free_slot_are_read():
    from kreassign.planning.steps import LOOKAHEAD

    read = []

    def candidates():
        for p in range(1000):
            read.append(p)
            yield next_to(p, (p % 6, 6 + p % 3), (p % 6, 9 + p % 3))

    chosen = select_steps(candidates(), 0, 0, Limits(partitions=2, brokers=1000))
    assert len(chosen) == 2 and len(read) == 2 * LOOKAHEAD


def reference_select(candidates, moving_partitions, moving_leaders, limits, load, leaders, copies_in, copies_out):
    """The rule, step by step: among the steps that may start, the lowest tier (copies nothing, leader movement,
    the others), then the fewest copies on the busiest link the step would use, then the candidate order."""
    free = None if limits.partitions is None else max(0, limits.partitions - moving_partitions)
    leader_free = None if limits.leaders is None else max(0, limits.leaders - moving_leaders)
    load, into, out = Counter(load), Counter(copies_in), Counter(copies_out)
    left, chosen = list(enumerate(candidates)), []

    def source(step):
        leader = leaders.get(step.partition)
        return leader if leader is not None else step.source[0] if step.source else None

    def links(step):
        if not step.adding:
            return 0
        return max([out[source(step)] + len(step.adding)] + [into[b] + 1 for b in step.adding])

    while left and (free is None or len(chosen) < free):
        startable = [
            (place, step)
            for place, step in left
            if not (step.moves_leader and leader_free is not None and leader_free <= 0)
            and all(load[b] < limits.brokers for b in step_brokers(step, leaders.get(step.partition)))
        ]
        if not startable:
            break
        place, step = min(startable, key=lambda e: (tier(e[1]), links(e[1]), e[0]))
        left.remove((place, step))
        chosen.append((place, step))
        load.update(step_brokers(step, leaders.get(step.partition)))
        if step.adding:
            into.update(step.adding)
            out[source(step)] += len(step.adding)
        if leader_free is not None:
            leader_free -= step.moves_leader
    return [step for _, step in sorted(chosen)]


@st.composite
def selections(draw):
    from kreassign.planning.steps import next_step

    brokers = draw(st.integers(3, 6))
    replicas = st.lists(st.integers(0, brokers - 1), min_size=1, max_size=3, unique=True)
    steps, leaders = [], {}
    for p in range(draw(st.integers(0, 25))):
        step = next_step(tp(p), draw(replicas), draw(replicas), draw(st.none() | st.integers(1, 2)))
        if step is not None:
            steps.append(step)
            leaders[step.partition] = draw(st.none() | st.sampled_from(step.source))
    candidates = sorted(steps, key=lambda s: priority(s, s.partition.partition))
    counts = st.dictionaries(st.integers(0, brokers - 1), st.integers(0, 3))
    limits = Limits(
        partitions=draw(st.none() | st.integers(1, 8)),
        leaders=draw(st.none() | st.integers(0, 3)),
        brokers=draw(st.integers(1, 3)),
    )
    moving = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    return candidates, moving, limits, leaders, draw(counts), draw(counts), draw(counts)


@settings(max_examples=200, deadline=None)
@given(selections())
def test_select_steps_keeps_every_limit_and_takes_the_least_crowded_first(case):
    from kreassign.planning.steps import LOOKAHEAD

    candidates, (moving_p, moving_l), limits, leaders, load, copies_in, copies_out = case
    reported: list[tuple] = []
    chosen = select_steps(
        iter(candidates),
        moving_p,
        moving_l,
        limits,
        load,
        leader_of=lambda step: leaders.get(step.partition),
        blocked=lambda step, broker: reported.append((step, broker)),
        copies_in=copies_in,
        copies_out=copies_out,
    )
    free = None if limits.partitions is None else max(0, limits.partitions - moving_p)
    # chosen in candidate order, within P and L, and no broker over N
    assert chosen == [s for s in candidates if s in chosen]
    assert free is None or len(chosen) <= free
    leaders_free = None if limits.leaders is None else max(0, limits.leaders - moving_l)
    assert leaders_free is None or sum(s.moves_leader for s in chosen) <= leaders_free
    after = Counter(load)
    for step in chosen:
        after.update(step_brokers(step, leaders.get(step.partition)))
    for step in chosen:
        assert all(after[b] <= limits.brokers for b in step_brokers(step, leaders.get(step.partition)))
    # a step left out was told why (a broker full by the end, or L), unless P ran out
    why = dict(reported)
    assert not set(why) & set(chosen)
    for step, broker in reported:
        if broker is None:
            assert step.moves_leader and leaders_free is not None
            assert sum(s.moves_leader for s in chosen) >= leaders_free
        else:
            assert broker in step_brokers(step, leaders.get(step.partition)) and after[broker] >= limits.brokers
    if free is None or len(chosen) < free:
        assert {*chosen, *why} == set(candidates)
    # tier by tier: a step starts only when every step of a lower tier started or could not
    for step in chosen:
        assert all(s in chosen or s in why for s in candidates if tier(s) < tier(step))
    # the same steps as the rule applied one step at a time, when the whole list was read
    if free is None or len(candidates) <= LOOKAHEAD * free:
        expected = reference_select(candidates, moving_p, moving_l, limits, load, leaders, copies_in, copies_out)
        assert chosen == expected


def next_to(p, source, target):
    from kreassign.planning.steps import next_step

    return next_step(tp(p), source, target, None)


def test_step_brokers_are_the_new_replicas_and_the_current_leader():
    step = next_to(0, (1, 2, 3), (1, 4, 5))
    assert step_brokers(step) == {1, 4, 5}
    assert step_brokers(step, leader=2) == {2, 4, 5}
    # a step that adds no replica copies nothing: a reorder for the new leader, or a step that only drops
    assert step_brokers(next_to(0, (1, 2, 3), (2, 1, 3)), leader=1) == frozenset()
    assert step_brokers(next_to(0, (1, 2, 3), (1, 2)), leader=1) == frozenset()


def test_a_step_that_copies_nothing_takes_no_broker_slot(tmp_path):
    """N=1: t-0 copies from leader 0 to 2; t-1 only makes 1 its leader (a reorder): both start at once."""
    limits = Limits(partitions=10, brokers=1)
    sim = sampled(6, limits)
    sim.add_topic("t", [(0, 1), (0, 1)], size=50 * MB)
    outcome, _ = run(sim, {tp(0): (0, 2), tp(1): (1, 0)}, tmp_path, limits)
    assert outcome.status == "completed"
    assert sim.calls[0] == "alter_reassignments [('t-0', (0, 2)), ('t-1', (1, 0))]"


@pytest.mark.parametrize("limits", [Limits(partitions=1), Limits(partitions=1, brokers=2)], ids=["P", "P and N"])
def test_orders_small_first_and_large_first_and_leader_moves_first(tmp_path, limits):
    """Every step here loads the same brokers and links: equally crowded, so --order decides, with N too."""
    for order, expected in (("plan", [1, 0, 2, 3]), ("small-first", [1, 3, 2, 0]), ("large-first", [1, 0, 2, 3])):
        sim = sampled(6, limits)
        for p, size in enumerate([50, 40, 20, 1]):
            sim.add_topic(f"t{p}", [(0, 1)], size=size * MB)
        targets = {tp(0, f"t{p}"): ((0, 2) if p != 1 else (2, 1)) for p in range(4)}
        outcome, _ = run(sim, targets, tmp_path / order, limits, order=order)
        assert outcome.status == "completed"
        started = list(dict.fromkeys(int(t.topic[1:]) for t in sim.started))
        assert started == expected, order  # t1 moves its leader: first in any order


def test_an_under_replicated_partition_waits_and_the_display_says_why(tmp_path):
    limits = Limits(partitions=2)
    sim = sampled(6, limits)
    sim.add_topic("t", [(0, 1, 2)] * 2, size=5 * MB)
    sim.configs[ConfigResource(ResourceType.TOPIC, "t")] = {"min.insync.replicas": "2"}
    sim.partitions[tp(0)].isr = [0, 1]  # replica 2 fell out of the ISR, not because of this plan

    def heal(n):
        if n == 25:
            sim.partitions[tp(0)].isr = [0, 1, 2]

    def fake_catch_up(seconds):  # the simulated cluster would let a live follower catch up at once
        isr = list(sim.partitions[tp(0)].isr)
        SimulatedCluster.advance(sim, seconds)
        if recorder.polls < 25:
            sim.partitions[tp(0)].isr = isr

    sim.advance = fake_catch_up
    recorder = Recorder(sim, heal)
    outcome, _ = run(sim, {tp(0): (0, 1, 3), tp(1): (0, 1, 3)}, tmp_path, limits, reporter=recorder)
    assert outcome.status == "completed"
    assert "t-0 waits: at or under min.insync.replicas (ISR 2 of 3, min 2)" in recorder.notes
    assert sim.started.index(tp(1)) < sim.started.index(tp(0))
    assert sim.partitions[tp(0)].replicas == [0, 1, 3]


# ---- --adaptive


def healthy(rate, saturated=True, **changes):
    values = {"at_min_isr": 0, "under_replicated": 0, "offline_brokers": 0, "stalled_copies": 0}
    return Signals(**{**values, **changes}, rate=rate, saturated=saturated)


def test_aimd_on_a_scripted_sequence_of_signals():
    aimd = Aimd(8, hold=1)
    assert aimd.limit == 4
    script = [
        (healthy(100.0), 5, "the cluster is healthy"),
        (healthy(150.0), 6, "the cluster is healthy"),  # the rate rose with the limit: go on
        (healthy(150.0), 5, "the copy rate did not rise"),  # it did not: back one, hold
        (healthy(150.0), 5, None),  # holding
        (healthy(150.0, saturated=False), 5, None),  # nobody uses the slots: no reason to raise
        (healthy(150.0, under_replicated=2), 2, "under-replicated partitions appeared"),  # halve
        (healthy(150.0, under_replicated=2), 2, None),  # the same URPs again: holding
        (healthy(150.0, under_replicated=2), 3, "the cluster is healthy"),
        (healthy(200.0, offline_brokers=1), 1, "1 broker(s) offline"),
        (healthy(200.0, offline_brokers=1, stalled_copies=3), 1, None),  # at 1 already: no change
        (healthy(200.0, offline_brokers=1), 1, None),  # holding
        (healthy(200.0, offline_brokers=1), 2, "the cluster is healthy"),
        (healthy(260.0, offline_brokers=1, at_min_isr=1), 1, "at or under min.insync.replicas"),
    ]
    for i, (signals, limit, reason) in enumerate(script):
        change = aimd.observe(signals)
        assert aimd.limit == limit, (i, aimd.limit)
        if reason is None:
            assert change is None, (i, change)
        else:
            assert change is not None and reason in change.reason and change.after == limit, (i, change)


def test_aimd_stays_within_one_and_n():
    aimd = Aimd(3, current=10)
    assert aimd.limit == 3
    for rate in range(1, 50):
        aimd.observe(healthy(float(rate * 1000)))
        assert 1 <= aimd.limit <= 3
    with pytest.raises(ValueError):
        Aimd(0)


def test_adaptive_run_halves_on_an_outage_logs_the_change_and_a_resume_keeps_the_limit(tmp_path):
    limits = Limits(partitions=50, brokers=4)
    sim = sampled(8, limits, bandwidth=2 * MB)
    sim.add_topic("t", [(p % 4, (p + 1) % 4) for p in range(40)], size=40 * MB)
    sim.add_topic("other", [(5, 6)], size=MB)
    targets = {tp(p): (p % 4, 4 + p % 2) for p in range(40)}

    def outage(n):
        if sim.clock() >= 30 and 7 not in sim.offline:
            sim.stop_broker(7)  # not needed by the plan, but a broker going offline
        if sim.clock() >= 45:
            raise KeyboardInterrupt

    recorder = Recorder(sim, outage)
    with pytest.raises(KeyboardInterrupt):
        run(sim, targets, tmp_path, limits, reporter=recorder, adaptive=True)
    changes = [e for e in recorder.events if e.startswith("Per-broker limit ")]
    assert "Per-broker limit starts at 2 (--adaptive, at most 4)" in recorder.events
    assert any(e.endswith("1 broker(s) offline") for e in changes), changes
    state = Journal(tmp_path / "j.json").load()
    assert state.limit_changes and state.broker_limit == state.limit_changes[-1]["to"]
    kept = state.broker_limit
    sim.start_broker(7)
    recorder = Recorder(sim)
    outcome, _ = run(sim, targets, tmp_path, limits, reporter=recorder, adaptive=True)
    assert outcome.status == "completed"
    assert f"Per-broker limit starts at {kept} (--adaptive, at most 4)" in recorder.events
    assert max(sim.peak_per_broker.values()) <= 4


def test_dry_run_shows_the_rounds_under_the_per_broker_limit_and_the_busiest_broker(tmp_path):
    import json

    sim = sampled(6)
    sim.add_topic("t", [(0, 1)] * 4, size=MB)
    targets = {tp(p): (0, 2 + p % 2) for p in range(4)}
    _, out = run(sim, targets, tmp_path, Limits(partitions=4, brokers=2), dry_run=True)
    # leader 0 serves every copy: at most 2 steps at once
    assert "3 step(s)" not in out and "4 step(s) in 2 round(s)" in out
    assert "Round 1 (busiest broker 0: 2 of 2 steps):\n  t-0: [0,1] -> [0,2] (+2, -1)\n  t-1:" in out
    _, out = run(sim, targets, tmp_path, Limits(partitions=4, brokers=2), dry_run=True, output="json")
    document = json.loads(out[out.index("{\n") :])
    assert document["limits"] == {"partitions": 4, "replicas": None, "leaders": None, "brokers": 2}
    assert [r["busiest_broker"] for r in document["rounds"]] == [{"broker": 0, "steps": 2}] * 2
    assert sim.list_reassignments() == {}


def test_shared_links_split_a_brokers_rate_between_the_copies_crossing_it():
    sim = SimulatedCluster([Broker(i, None) for i in range(4)], bandwidth=10 * MB, shared_links=True)
    sim.add_topic("t", [(0,), (1,)], size=10 * MB)
    sim.alter_reassignments({tp(0): (0, 3), tp(1): (1, 3)})  # two copies into broker 3: 5 MB/s each
    sim.advance(1.0)
    assert sim.partitions[tp(0)].copied[3] == sim.partitions[tp(1)].copied[3] == 5 * MB
    sim.advance(1.0)
    assert sim.list_reassignments() == {}
    sim.alter_reassignments({tp(0): (0, 3, 1)})  # one copy, served by leader 0 into broker 1: the whole rate
    sim.advance(0.5)
    assert sim.partitions[tp(0)].copied[1] == 5 * MB


def test_adaptive_health_reads_a_slice_of_the_cluster_per_sample_and_sees_all_of_it(tmp_path, monkeypatch):
    """--adaptive samples the cluster's health a slice at a time (the topics in flight every time): a sample
    reads about HEALTH_SLICE_PARTITIONS partitions whatever the cluster's size, and an under-replicated
    partition of a topic outside the plan is still seen within a few samples."""
    from kreassign.execution import health

    monkeypatch.setattr(health, "HEALTH_SLICE_PARTITIONS", 50)
    limits = Limits(partitions=4, brokers=2)
    others = [f"o{i:02d}" for i in range(30)]

    class Watching(Sampled):
        reads: ClassVar[list[list[str]]] = []
        shrunk = False

        def describe_topics(self, topics):
            topics = list(topics)
            self.reads.append(topics)
            described = super().describe_topics(topics)
            if self.shrunk and "o29" in described:
                first = described["o29"][0]
                described["o29"][0] = type(first)(first.partition, first.replicas, first.isr[:1], first.leader)
            return described

    sim = sampled(8, limits, bandwidth=MB)
    sim.__class__ = Watching
    sim.add_topic("t", [(0, 1)] * 8, size=100 * MB)
    for name in others:
        sim.add_topic(name, [(2 + i % 6, 2 + (i + 1) % 6) for i in range(10)])
    targets = {tp(p): (0, 2 + p % 6) for p in range(8)}

    def shrink(n):
        if n == 20:
            sim.shrunk = True

    recorder = Recorder(sim, shrink)
    outcome, _ = run(sim, targets, tmp_path, limits, reporter=recorder, adaptive=True)
    assert outcome.status == "completed"
    samples = [r for r in Watching.reads if any(t in others for t in r)]
    # about 50 partitions: as many topics of 10 as the slice holds, the last one may cross it
    assert samples and all(sum(t in others for t in r) <= 6 for r in samples)
    assert {t for r in samples for t in r} >= set(others)  # every topic was read in turn
    changes = [e for e in recorder.events if e.startswith("Per-broker limit 2 -> 1")]
    assert any("at or under min.insync.replicas" in e or "under-replicated" in e for e in changes), recorder.events
    assert Watching.reads.index(next(r for r in Watching.reads if "o29" in r)) > 0  # o29 came later, in turn


def test_a_freed_slot_looks_again_at_a_few_parked_steps_not_at_all_of_them(tmp_path, monkeypatch):
    """600 partitions all gain a replica on broker 9 (N=1): nearly every step waits, parked on broker 9. Each
    time its slot frees, only RELEASE_PER_SLOT of them are looked at again (best first), so a poll costs what it
    may start, not what waits; and the plan still completes in order."""
    from kreassign.execution import executor as module

    limits = Limits(brokers=1)
    sim = sampled(12, limits, bandwidth=100 * MB)
    sim.add_topic("t", [(p % 9, (p + 1) % 9) for p in range(600)], size=1 * MB)
    targets = {tp(p): (p % 9, 9) for p in range(600)}
    enqueued: list[int] = [0]
    per_poll: list[int] = []
    original = module.BatchedExecutor._enqueue

    def counting(self, partition):
        enqueued[0] += 1
        original(self, partition)

    monkeypatch.setattr(module.BatchedExecutor, "_enqueue", counting)

    def polled(_polls):
        per_poll.append(enqueued[0])
        enqueued[0] = 0

    outcome, _ = run(sim, targets, tmp_path, limits, reporter=Recorder(sim, on_progress=polled))
    assert outcome.status == "completed"
    assert max(sim.peak_per_broker.values()) == 1
    assert max(per_poll[1:]) <= 12 * module.RELEASE_PER_SLOT  # per free slot; was every parked step (hundreds)
    assert sim.started == sorted(sim.started, key=lambda partition: partition.partition)  # plan order kept
