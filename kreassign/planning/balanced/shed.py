"""Stage 3 of the balanced pipeline (per broker): which replicas (stage 6: which leaderships) an over-target
broker gives up (:func:`shed_from_broker`, :func:`shed_ranked`), the bytes each should have
(:func:`shed_aim`), and the rank that sheds first what a needy rack can take (:func:`needy_groups`,
:func:`shed_rank`). Standard library only.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter

from kreassign.planning.context import BalanceContext


def shed_from_broker(
    count: int,
    aim: int | None,
    held: Iterable[tuple[str, int, int, int]],
    topic_totals: Mapping[str, int] | None = None,
    brokers: int = 1,
) -> list[tuple[str, int]]:
    """The ``count`` replicas a broker gives up among ``held`` (topic, partition, size, rank), one at a time:
    lowest rank first (see :func:`shed_rank`); within a rank, with ``topic_totals`` (replicas per topic
    over ``brokers`` chosen brokers), first the topics this broker holds more than the ceil of their even
    share of, then those it holds more than the floor of (each such replica leaving evens its topic out by
    one); among those, the replica whose size is closest to what is left of the broker's excess bytes per
    replica still to shed (``aim`` is the first such size, see :func:`shed_aim`), or without ``aim`` the
    smallest one (fewest bytes moved); then by topic and partition."""
    if count <= 0:
        return []
    held = held if isinstance(held, list) else list(held)
    ranks: dict[int, list[tuple[int, str, int]]] = {}
    if len(set(map(itemgetter(3), held))) <= 1:  # the usual case: one rank
        if held:
            ranks[held[0][3]] = [(size, topic, partition) for topic, partition, size, _ in held]
    else:
        for topic, partition, size, rank in held:
            items = ranks.get(rank)
            if items is None:
                items = ranks[rank] = []
            items.append((size, topic, partition))
    return shed_ranked(count, aim, ranks, Counter(map(itemgetter(0), held)), topic_totals, brokers)


def shed_ranked(
    count: int,
    aim: int | None,
    ranks: Mapping[int, list[tuple[int, str, int]]],
    held_per_topic: Counter[str],
    topic_totals: Mapping[str, int] | None = None,
    brokers: int = 1,
) -> list[tuple[str, int]]:
    """:func:`shed_from_broker` from the broker's held replicas grouped by rank, each (size, topic, partition),
    and how many replicas of each topic it holds over all ranks (both are used up). A caller may leave out
    the ranks above the lowest ones that hold ``count`` replicas between them: picking never reaches
    those."""
    if count <= 0:
        return []
    excess = aim * count if aim is not None else 0
    totals = topic_totals or {}

    def level(topic: str) -> int:
        """0: held above the ceil of the topic's even share, 1: above its floor, 2: otherwise. (With T
        replicas over B brokers, n > floor(T/B) is n*B > T, and n > ceil(T/B) is (n-1)*B >= T.)"""
        if topic_totals is None:
            return 0
        n, total = held_per_topic[topic], totals.get(topic, 0)
        return 0 if (n - 1) * brokers >= total else 1 if n * brokers > total else 2

    chosen: list[tuple[str, int]] = []
    for rank in sorted(ranks):
        if len(chosen) == count:  # the lower ranks gave enough
            break
        items = ranks[rank]
        # The items of each topic held more than once (only those move between buckets) go to the bucket of
        # their topic's level now; those of the topics held once (most of them) only when picking gets past
        # bucket 0, unless one is at level 0 (held once, that is a topic total of 0 or less).
        several = {t for t, n in held_per_topic.items() if n > 1}
        by_topic: dict[str, list[tuple[int, str, int]]] = {t: [] for t in several}
        once: list[tuple[int, str, int]] = []
        for item in items:
            rest = by_topic.get(item[1])
            if rest is None:
                once.append(item)
            else:
                rest.append(item)
        where = {t: level(t) for t, rest in by_topic.items() if rest}
        buckets: list[list[tuple[int, str, int]]] = [[], [], []]
        for t, rest in by_topic.items():
            if rest:
                buckets[where[t]] += rest
        if once and (topic_totals is None or min(map(totals.get, map(itemgetter(1), once), repeat(0))) <= 0):
            _bucket_once(once, buckets, level)
            once = []
        # Picks come from the lowest bucket not empty, and items only move up (a topic's level rises as the
        # broker holds less of it), so a bucket is sorted when picking reaches it and takes the items that
        # move up unsorted until then (the lowest one often gives all the picks).
        current = 0
        buckets[current].sort()
        while len(chosen) < count:
            while not buckets[current] and current < 2:
                current += 1
                if once:
                    _bucket_once(once, buckets, level)
                    once = []
                buckets[current].sort()
            bucket = buckets[current]
            if not bucket:
                break
            want = max(0, excess) / (count - len(chosen)) if aim is not None else 0
            i = bisect.bisect_left(bucket, (want,))
            if i == len(bucket) or (i > 0 and abs(bucket[i - 1][0] - want) <= abs(bucket[i][0] - want)):
                i -= 1
            item = bucket.pop(i)
            size, topic, partition = item
            rest = by_topic.get(topic, ())
            if rest:
                rest.remove(item)  # type: ignore[attr-defined]
            chosen.append((topic, partition))
            excess -= size
            held_per_topic[topic] -= 1
            if rest and (moved_to := level(topic)) != where[topic]:  # from the current bucket to one above it
                for other in rest:
                    del bucket[bisect.bisect_left(bucket, other)]
                buckets[moved_to] += rest
                where[topic] = moved_to
    return chosen


def _bucket_once(
    items: Iterable[tuple[int, str, int]], buckets: list[list[tuple[int, str, int]]], level: Callable[[str], int]
) -> None:
    """Add the items of topics held once (size, topic, partition) to the bucket of their topic's level."""
    for item in items:
        buckets[level(item[1])].append(item)


def shed_aim(count: int, held_bytes: int, total_bytes: int, brokers: int) -> int | None:
    """Size each replica a broker sheds should have so that, shedding ``count``, it ends at the mean bytes:
    its excess over the mean divided by ``count``. None when it is not above the mean (then the smallest
    replicas go: fewest bytes copied)."""
    excess = held_bytes - total_bytes // brokers
    if count <= 0 or excess <= 0:
        return None
    return excess // count


def needy_groups(ctx: BalanceContext, deficits: Mapping[int, int]) -> tuple[tuple[str, int], ...]:
    """How many brokers below target each rack holds (what :func:`shed_rank` needs; small)."""
    return tuple(sorted(Counter(ctx.group(b) for b, d in deficits.items() if d > 0).items()))


def shed_rank(ctx: BalanceContext, broker: int, kept: Sequence[int], needy: tuple[tuple[str, int], ...]) -> int:
    """0 when some rack holding a broker below target could take this replica, else 1: shedding such
    replicas first lets the slots of the brokers below target fill them."""
    if len(needy) >= len(kept):  # more racks with a needy broker than other replicas: one is free
        return 0
    others = {ctx.group(b) for b in kept if b != broker}
    return 0 if any(count and group not in others for group, count in needy) else 1
