"""Disk capacity as a hard rule of the balanced plan (kreassign.planning.capacity): after the stage, no broker
of known capacity is past its bound unless nothing could be moved for it, the rack rule and the replication
factor hold, and replicas go back to where they are now before anywhere else."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kreassign.cluster.port import VOLUME_SLACK_BYTES, LogDirUsage, all_cordoned, volume_capacity, volume_labels
from kreassign.planning.balanced.engine import plan_balanced
from kreassign.planning.capacity import disk_bounds, fit_disk_capacity
from kreassign.planning.context import make_context


def _used(rows, plan, other):
    used = Counter(other)
    for topic, partition, _, size in rows:
        used.update(dict.fromkeys(plan[(topic, partition)], size))
    return used


def test_replicas_the_plan_placed_go_back_first_and_the_bound_is_met():
    # 6 brokers, racks a/b/c; 12 partitions on brokers 0..2; brokers 3..5 just added with small disks
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}
    rows = [("t", p, (p % 3, (p + 1) % 3), 100 * (p + 1)) for p in range(12)]
    ctx = make_context(racks.items(), None, rows)
    plan = plan_balanced(rows, ctx)
    capacities = {0: 10_000, 1: 10_000, 2: 10_000, 3: 1_000, 4: 1_000, 5: 1_000}
    used_before = _used(rows, {(t, p): r for t, p, r, _ in rows}, {})
    assert any(_used(rows, plan, {})[b] > 800 for b in (3, 4, 5))  # balanced by count, it overfills them
    fit = fit_disk_capacity(rows, plan, ctx, capacities, {}, 0.8)
    assert fit.replicas > 0
    used = _used(rows, plan, {})
    bounds = disk_bounds(used_before, capacities, ctx.brokers, 0.8)
    assert all(used[b] <= bounds[b] for b in bounds)
    for t, p, current, _ in rows:
        replicas = plan[(t, p)]
        assert len(replicas) == 2 and len({racks[b] for b in replicas}) == 2
        # what left brokers 3..5 went back to a broker the partition is on now
        assert all(b in current or b in (3, 4, 5) for b in replicas)


def test_nothing_changes_without_known_capacities_or_when_everything_fits():
    racks = {0: "a", 1: "b", 2: "a", 3: "b"}
    rows = [("t", p, (p % 2, 1 - p % 2), 10) for p in range(8)]
    ctx = make_context(racks.items(), None, rows)
    plan = plan_balanced(rows, ctx)
    before = {k: list(v) for k, v in plan.items()}
    assert fit_disk_capacity(rows, plan, ctx, {}, {}, 0.8).replicas == 0
    assert fit_disk_capacity(rows, plan, ctx, dict.fromkeys(racks, 10**9), {}, 0.8).replicas == 0
    assert plan == before


def test_a_disk_already_past_the_limit_may_stay_but_not_grow():
    racks = {0: "a", 1: "b", 2: "a", 3: "b"}
    rows = [("t", p, (p % 2, 1 - p % 2), 100) for p in range(8)]
    ctx = make_context(racks.items(), None, rows)
    plan = plan_balanced(rows, ctx)
    # broker 0 holds 800 of 900 (89 %) before: its bound is 800, not 720
    fit_disk_capacity(rows, plan, ctx, {0: 900}, {}, 0.8)
    assert _used(rows, plan, {})[0] <= 800


@settings(max_examples=200, deadline=None)
@given(
    st.integers(4, 9),
    st.lists(st.integers(1, 5_000), min_size=1, max_size=30),
    st.lists(st.integers(0, 40_000), min_size=9, max_size=9),
    st.floats(0.3, 1.0),
    st.integers(0, 2**16),
)
def test_invariants_on_random_clusters(brokers, sizes, disks, limit, seed):
    import random

    rnd = random.Random(seed)
    racks = {b: "abc"[b % 3] for b in range(brokers)}
    old = list(range(max(3, brokers - 2)))  # the last brokers are new
    rows = []
    for p, size in enumerate(sizes):
        first = rnd.choice(old)
        second = rnd.choice([b for b in old if racks[b] != racks[first]])
        rows.append(("t", p, (first, second), size))
    ctx = make_context(racks.items(), None, rows)
    plan = plan_balanced(rows, ctx)
    capacities = {b: disks[b] or None for b in range(brokers)}
    other = {b: rnd.randint(0, 2_000) for b in range(brokers)}
    used_before = _used(rows, {(t, p): r for t, p, r, _ in rows}, other)
    planned = _used(rows, plan, other)
    before_fit = {key: list(replicas) for key, replicas in plan.items()}
    fit = fit_disk_capacity(rows, plan, ctx, capacities, other, limit)
    used = _used(rows, plan, other)
    bounds = disk_bounds(used_before, capacities, ctx.brokers, limit)
    for t, p, _, _ in rows:
        replicas = plan[(t, p)]
        assert len(replicas) == 2 and len(set(replicas)) == 2 and len({racks[b] for b in replicas}) == 2
    for b, bound in bounds.items():
        if planned[b] <= bound:  # the stage fills a broker only up to its bound
            assert used[b] <= bound, (b, used[b], bound)
        if used[b] > bound:  # still past it: none of its replicas had anywhere to go
            for t, p, _, size in rows:
                replicas = plan[(t, p)]
                if b not in replicas:
                    continue
                others = [x for x in replicas if x != b]
                for d in ctx.brokers:
                    room = used[d] + size <= bounds.get(d, float("inf"))
                    assert not (d != b and ctx.fits(d, others, ctx.rack_cap(2)) and room), (b, d, t, p)
    assert fit.replicas == sum(len(set(plan[k]) - set(before_fit[k])) for k in plan)


# ------------------------------------------------------------------------------------------ volumes of log dirs
GIB = 1024**3


def _dir(path, total, usable, volume=None, cordoned=False):
    return LogDirUsage(path, {}, total, usable, volume, cordoned)


def test_log_dirs_on_one_volume_count_it_once():
    """Same total and usable bytes within the slack (read a moment apart): one volume, counted once."""
    dirs = [_dir("/a", 252 * GIB, 78 * GIB), _dir("/b", 252 * GIB, 78 * GIB - 4096), _dir("/c", 100 * GIB, 50 * GIB)]
    assert volume_labels(dirs) == ["/a", "/a", "/c"]
    assert volume_capacity(dirs) == 352 * GIB


def test_equal_disks_differently_full_are_two_volumes():
    dirs = [_dir("/a", 252 * GIB, 78 * GIB), _dir("/b", 252 * GIB, 78 * GIB - VOLUME_SLACK_BYTES - 1)]
    assert volume_labels(dirs) == ["/a", "/b"]
    assert volume_capacity(dirs) == 504 * GIB


def test_without_usable_bytes_each_dir_is_its_own_volume_and_unknown_totals_give_no_capacity():
    assert volume_labels([_dir("/a", 10, None), _dir("/b", 10, None)]) == ["/a", "/b"]
    assert volume_capacity([_dir("/a", 10, 5), _dir("/b", None, None)]) is None
    assert volume_capacity([]) is None


def test_recorded_volumes_are_used_as_they_are():
    """A snapshot's volumes win over the figures (an operator may correct them by hand)."""
    dirs = [_dir("/a", 10, 5, "/a"), _dir("/b", 10, 5, "/b"), _dir("/c", 10, 5, "/a")]
    assert volume_labels(dirs) == ["/a", "/b", "/a"]
    assert volume_capacity(dirs) == 20


def test_a_broker_takes_no_replica_only_when_every_dir_is_cordoned():
    assert all_cordoned([_dir("/a", 1, 1, cordoned=True), _dir("/b", 1, 1, cordoned=True)])
    assert not all_cordoned([_dir("/a", 1, 1, cordoned=True), _dir("/b", 1, 1)])
    assert not all_cordoned([])
