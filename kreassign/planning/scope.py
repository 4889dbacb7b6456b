"""The topics the bytes stage looks at on a large cluster, and what the others add up to. Standard library only.

The bytes stage (:mod:`kreassign.planning.bytebalance`) and its topic pass move replicas of partitions whose
topics they know whole: a move must keep each topic's replicas and leaders on the two brokers no further apart,
so the stage needs the topic's counts on every broker. On a large cluster it does not need every topic: a
share of them gives every broker replicas of all sizes to move. So it looks at the topics the plan leaves
least even first (replica spread over the chosen brokers, then leader spread, then name), until they hold
:data:`REPLICAS_PER_BROKER` replicas per chosen broker; the other topics stay as the plan has them and count
through their totals per broker (:class:`kreassign.planning.planstate.Rest`: replicas, leaders and bytes for
the rules, the bytes held before for the disk bound). When every topic fits, the stage sees them all.

Both engines call these functions with the same numbers (the Spark engine computes the per-topic figures and
the totals in the JVM and collects only the partitions of the topics in scope), so their plans stay
byte-identical, and the Spark driver holds what is bounded by brokers and topics, not by partitions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import itemgetter

from kreassign.planning.context import Row
from kreassign.planning.planstate import Rest, count_spread

REPLICAS_PER_BROKER = 600
"""Replicas per chosen broker the topics in the stage's scope hold, at least (the last topic taken may pass
it). The 100,000-partition benchmark holds 300 per broker: every topic is in scope there."""


def narrow(
    rows: Sequence[Row], plan: Mapping[tuple[str, int], Sequence[int]], brokers: Sequence[int]
) -> tuple[list[Row], Rest] | None:
    """The rows of the topics in scope and what the others add up to; None when every topic is in scope."""
    if sum(map(len, plan.values())) <= REPLICAS_PER_BROKER * len(brokers):
        return None  # (without counting per topic)
    scope = scope_topics(topic_stats(rows, plan, brokers), len(brokers))
    return None if scope is None else split_scope(rows, plan, scope)


def scope_topics(stats: Mapping[str, tuple[int, int, int]], brokers: int) -> frozenset[str] | None:
    """The topics in scope, from ``stats`` (per topic: its replicas, replica spread and leader spread after the
    plan, over the ``brokers`` chosen); None when every topic is (they hold no more than the budget)."""
    budget = REPLICAS_PER_BROKER * brokers
    if sum(map(itemgetter(0), stats.values())) <= budget:
        return None
    chosen: list[str] = []
    held = 0
    for name in sorted(stats, key=lambda t: (-stats[t][1], -stats[t][2], t)):
        if held >= budget:
            break
        chosen.append(name)
        held += stats[name][0]
    return frozenset(chosen)


def topic_stats(
    rows: Sequence[Row], plan: Mapping[tuple[str, int], Sequence[int]], brokers: Sequence[int]
) -> dict[str, tuple[int, int, int]]:
    """Per topic of ``rows``: its replicas, replica spread and leader spread after ``plan`` over ``brokers``
    (:func:`kreassign.planning.planstate.count_spread`)."""
    replicas: dict[str, list[Sequence[int]]] = {}
    for topic, partition, _, _ in rows:
        replicas.setdefault(topic, []).append(plan[(topic, partition)])
    count = len(brokers)
    stats = {}
    for topic, lists in replicas.items():
        on = Counter(chain.from_iterable(lists))
        led = Counter(r[0] for r in lists if r)
        stats[topic] = (sum(on.values()), count_spread(on, count), count_spread(led, count))
    return stats


def split_scope(
    rows: Sequence[Row], plan: Mapping[tuple[str, int], Sequence[int]], scope: frozenset[str]
) -> tuple[list[Row], Rest]:
    """The rows of the topics in ``scope``, and what the others add up to (:class:`Rest`)."""
    inside: list[Row] = []
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    bytes_: Counter[int] = Counter()
    held: Counter[int] = Counter()
    largest: dict[int, int] = {}
    partitions = 0
    for row in rows:
        topic, partition, current, size = row
        if topic in scope:
            inside.append(row)
            continue
        partitions += 1
        after = plan[(topic, partition)]
        size = size or 0
        replicas.update(after)
        if after:
            leaders[after[0]] += 1
        for b in after:
            bytes_[b] += size
            if size > largest.get(b, 0):
                largest[b] = size
        for b in set(current):
            held[b] += size
    return inside, Rest(partitions, dict(replicas), dict(leaders), dict(bytes_), largest, dict(held))
