"""``--generate --strategy leaders``: leadership only (pure, standard library only).

Each partition keeps its replica set; only the order changes, so that its preferred leader (the first
replica) is the broker chosen here and nothing is copied. Choosing a leader per partition among its
replicas is a *semi-matching* (partitions to brokers, each partition to one of its replicas); one that
minimises the spread of leaders per broker exists where no *cost-reducing path* is left: a chain of
partitions whose leadership passes from a broker with L leaders, one broker to the next, to a broker with at
most L - 2 (Harvey, Ladner, Lovász, Tamir, "Semi-matchings for bipartite graphs and load balancing").
Shifting leadership along such a path brings its ends one closer and changes nothing else. Without such
paths the most leaders on a broker is the least any choice reaches and the fewest the most any reaches, so
the counts are within one of the mean whenever the replica sets allow it.

Two passes, both deterministic (brokers and partitions in sorted order, ties to the lowest id):

1. per topic, from the current preferred leaders: the topic's leaders as even as its replica sets allow
   over the brokers that hold its replicas (paths of that topic's partitions only; of the nearest ends of
   a path, the broker with the fewest leaders of all topics);
2. over all listed topics: the leaders per broker, first with paths whose every hand-over goes to a broker
   holding fewer of the topic's leaders than the giver (so no topic's spread grows; a path that hands two of
   one topic over and widens it is undone), then, for what is left, with any path: the brokers come first.

Paths are shortest first (breadth-first), so few leaders change; a last sweep gives each changed partition
back to its current leader where that swaps two equal counts (globally and within the topic)."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain

Row = tuple[str, int, tuple[int, ...], int]
Key = tuple[str, int]


def _key(row: Row) -> Key:
    return row[0], row[1]


def reorder(replicas: Sequence[int], leader: int) -> list[int]:
    """``replicas`` with ``leader`` first, the others in their order."""
    return [leader, *(r for r in replicas if r != leader)]


class _Leadership:
    def __init__(self, rows: Sequence[Row]) -> None:
        self.replicas: dict[Key, tuple[int, ...]] = {}
        self.leader: dict[Key, int] = {}
        # partitions each broker leads, in a deterministic order (dicts keep insertion order; no sorting)
        self.led: dict[int, dict[Key, None]] = {}
        self.led_moved: dict[int, dict[Key, None]] = {}  # of those, the ones not led by their first replica
        self.topic_led: dict[str, dict[int, dict[Key, None]]] = {}
        self.load: Counter[int] = Counter()
        self.topic_load: dict[str, Counter[int]] = {}
        for topic, partition, replicas, _size in sorted(rows, key=_key):  # the same plan in any row order
            key = (topic, partition)
            distinct = tuple(dict.fromkeys(replicas))
            if not distinct:
                continue
            self.replicas[key] = distinct
            self.leader[key] = distinct[0]
            counts = self.topic_load.setdefault(topic, Counter())
            led = self.topic_led.setdefault(topic, {})
            for b in distinct:
                self.led.setdefault(b, {})
                self.led_moved.setdefault(b, {})
                led.setdefault(b, {})
                self.load.setdefault(b, 0)
                counts.setdefault(b, 0)
            self.led[distinct[0]][key] = None
            led[distinct[0]][key] = None
            self.load[distinct[0]] += 1
            counts[distinct[0]] += 1

    def move(self, key: Key, to: int) -> None:
        was = self.leader[key]
        del self.led[was][key]
        self.led[to][key] = None
        self.led_moved[was].pop(key, None)
        if self.replicas[key][0] != to:
            self.led_moved[to][key] = None
        del self.topic_led[key[0]][was][key]
        self.topic_led[key[0]][to][key] = None
        self.load[was] -= 1
        self.load[to] += 1
        counts = self.topic_load[key[0]]
        counts[was] -= 1
        counts[to] += 1
        self.leader[key] = to

    def spread(self, topic: str) -> int:
        counts = self.topic_load[topic].values()
        return max(counts) - min(counts)

    def path(self, start: int, loads: Mapping[int, int], topic: str | None, guard: bool = True):
        """A shortest cost-reducing path from ``start`` (a list of (partition, new leader)), or None.
        ``loads`` the counts that must come closer; ``topic`` the one topic whose partitions may change
        leader (None: all, each hand-over keeping its topic's count lower on the receiving broker)."""
        led = self.led if topic is None else self.topic_led[topic]
        topic_guard = topic is None and guard
        goal = loads[start] - 2
        parent: dict[int, tuple[int, Key] | None] = {start: None}
        first = self.replicas  # partitions led elsewhere than their first replica go first: no new change

        def trace(v: int) -> list[tuple[Key, int]]:
            steps = []
            while (link := parent[v]) is not None:
                steps.append((link[1], v))
                v = link[0]
            return steps[::-1]

        frontier = [start]
        while frontier:  # level by level
            following: list[int] = []
            found: list[int] = []
            for u in frontier:
                held = led[u]
                if topic is None:  # the moved ones, then the others (those at home once more: no matter)
                    keys = chain(self.led_moved[u], held)
                else:
                    keys = chain((k for k in held if first[k][0] != u), (k for k in held if first[k][0] == u))
                for key in keys:
                    counts = self.topic_load[key[0]]
                    for v in first[key]:
                        if v in parent or (topic_guard and counts[v] >= counts[u]):
                            continue
                        parent[v] = (u, key)
                        if loads[v] > goal:
                            following.append(v)
                        elif topic is None:
                            return trace(v)
                        else:
                            found.append(v)
            if found:  # one topic's path: of the nearest ends, the broker with the fewest leaders in all
                return trace(min(found, key=lambda v: (self.load[v], v)))
            frontier = following
        return None

    def balance(self, loads: Mapping[int, int], topic: str | None, brokers: Sequence[int], guard: bool = True) -> None:
        """Shift leadership along cost-reducing paths, from the most loaded broker with one, until a round in
        which every broker was searched once finds none (each shift lowers the sum of the squared ``loads``, so
        this ends; the last round changed nothing, so no path is left). A broker without a path is searched
        again only in the next round, not after every shift (a search can cover every partition)."""
        topic_guard = topic is None and guard
        blocked: set[int] = set()  # no path from these since the last clear: not searched again until then
        progress = False
        # heaps of (-load, broker) and (load, broker), entries left stale when a load changes (a shift changes
        # only its two ends, pushed again): the most loaded broker not blocked, and the least load, in log time
        top = [(-loads[b], b) for b in brokers]
        bottom = [(loads[b], b) for b in brokers]
        heapq.heapify(top)
        heapq.heapify(bottom)
        while True:
            while bottom[0][0] != loads[bottom[0][1]]:
                heapq.heappop(bottom)
            while top and (-top[0][0] != loads[top[0][1]] or top[0][1] in blocked):
                heapq.heappop(top)
            if not top or -top[0][0] < bottom[0][0] + 2:
                if not progress:
                    return
                blocked.clear()  # paths changed the cluster since these were searched: search them again
                progress = False
                top = [(-loads[b], b) for b in brokers]
                heapq.heapify(top)
                continue
            b = top[0][1]
            steps = self.path(b, loads, topic, guard)
            if steps is None:
                blocked.add(b)
                continue
            undo = [(key, self.leader[key]) for key, _to in steps]
            topics = {key[0] for key, _to in steps}
            spreads = {t: self.spread(t) for t in topics} if topic_guard else {}
            for key, to in steps:
                self.move(key, to)
            if any(self.spread(t) > spread for t, spread in spreads.items()):
                for key, was in reversed(undo):  # two hand-overs of one topic widened it: not this path
                    self.move(key, was)
                blocked.add(b)
                continue
            progress = True
            for changed in (b, steps[-1][1]):
                heapq.heappush(top, (-loads[changed], changed))
                heapq.heappush(bottom, (loads[changed], changed))


def plan_leaders(rows: Sequence[Row]) -> dict[Key, list[int]]:
    """Every row's replicas, reordered so that preferred leaders are balanced per topic and per broker (see
    the module). The replica set of each partition never changes; a partition without replicas keeps its
    (empty) list."""
    state = _Leadership(rows)
    for topic in sorted(state.topic_load):
        counts = state.topic_load[topic]
        state.balance(counts, topic, sorted(counts))
    if state.load:
        state.balance(state.load, None, sorted(state.load))
        state.balance(state.load, None, sorted(state.load), guard=False)  # the brokers first, then the topics
    for key in sorted(state.replicas):  # give back what can go back without changing any count
        first = state.replicas[key][0]
        now = state.leader[key]
        if now != first:
            counts = state.topic_load[key[0]]
            if state.load[first] == state.load[now] - 1 and counts[first] == counts[now] - 1:
                state.move(key, first)
    plan: dict[Key, list[int]] = {}
    for topic, partition, replicas, _size in rows:
        key = (topic, partition)
        plan[key] = reorder(replicas, state.leader[key]) if key in state.leader else list(replicas)
    return plan
