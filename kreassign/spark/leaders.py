"""Stages 6 and 7 of the Spark engine (the leaders): per-topic quotas, rounds for the other partitions, chains on
the driver if needed, and the leader put first (:func:`_leaders`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate, islice, repeat
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kreassign.planning.balanced.chains import move_along_chains
from kreassign.planning.balanced.leaders import (
    LEADER_ROUNDS,
    assign_leaders,
    assign_topic_leaders,
    incumbent_leader,
    leader_quotas,
)
from kreassign.planning.balanced.shed import shed_from_broker
from kreassign.planning.balanced.targets import counts_targets, within_tolerance
from kreassign.planning.context import BalanceContext
from kreassign.spark.frames import _grouped, _ints, _keep, _replace, _small, _table, _Timings
from kreassign.spark.lookups import _member, _TopicCodes

_LEAD = "topic string, partition long, kept array<long>, leader long"
_DROP = "topic string, partition long"


def _leader_counts(lead: DataFrame) -> tuple[Counter[int], int]:
    """One job: partitions led per broker, and how many have no leader."""
    rows = lead.groupBy("leader").count().collect()
    led = Counter({int(r[0]): int(r[1]) for r in rows if r[0] is not None})
    return led, sum(int(r[1]) for r in rows if r[0] is None)


def _topics(spark: SparkSession, topics: Iterable[str]) -> DataFrame:
    """A small table of topic names, for a broadcast join."""
    return F.broadcast(_table(spark, [(t,) for t in sorted(set(topics))], "topic string"))


def _leaders(
    state: DataFrame,
    ctx: BalanceContext,
    per_topic: Mapping[str, int],
    spark: SparkSession,
    tick: _Timings,
    cached: list[DataFrame],
    codes: _TopicCodes,
) -> DataFrame:
    """The leader stage of :func:`kreassign.planning.balanced.engine.plan_balanced`: the topics with a quota
    (:func:`kreassign.planning.balanced.leaders.leader_quotas`) one group each, then rounds for the other
    partitions, then chains on the driver if needed. ``per_topic``: partitions per topic."""
    partitions = sum(per_topic.values())
    brokers = len(ctx.brokers)
    quotas = leader_quotas(ctx, per_topic)
    rows = state.select("topic", "partition", "kept", "current")

    def topic_leaders(group: dict[str, list]) -> dict[str, list]:
        """Per topic with a quota (one group each): its leaders."""
        topic = group["topic"][0]
        parts = [
            (p, _ints(k), incumbent_leader(_ints(c), _ints(k)))
            for p, k, c in zip(group["partition"], group["kept"], group["current"], strict=True)
        ]
        chosen = dict(assign_topic_leaders(ctx, quotas[topic], parts))
        return {
            "topic": group["topic"],
            "partition": group["partition"],
            "kept": group["kept"],
            "leader": [chosen[p] for p in group["partition"]],
        }

    if quotas:
        quota_topics = _topics(spark, quotas)
        fixed = _keep(_grouped(rows.join(quota_topics, "topic"), "topic", topic_leaders, _LEAD), cached)
        rest = rows.join(quota_topics, "topic", "left_anti")
    else:
        fixed, rest = spark.createDataFrame([], _LEAD), rows
    first = F.get("current", 0)  # null when there is none
    lead = _keep(
        rest.select(
            "topic", "partition", "kept", F.when(F.array_contains("kept", first), first).cast("long").alias("leader")
        ),
        cached,
    )
    led, orphans_left = _leader_counts(lead.unionByName(fixed))  # the leaders of quota topics never change
    tick("leader counts")
    for _ in range(LEADER_ROUNDS if len(quotas) < len(per_topic) else 0):
        targets = counts_targets(ctx.brokers, led, partitions)
        if not orphans_left and all(led[b] <= targets[b] for b in ctx.brokers):
            break
        over = _table(spark, [(b,) for b in ctx.brokers if led[b] > targets[b]], "leader long")
        shed = _leader_shed(led, targets, codes, codes.coded(per_topic), brokers)
        held = (
            lead.join(F.broadcast(over), "leader")
            .join(codes.frame, "topic")
            .select("leader", "code", "partition", _leader_rank(ctx.brokers, led, targets))
        )
        dropped = _grouped(held, "leader", shed, _DROP).withColumn("drop", F.lit(True))
        lead = _keep(
            lead.join(
                _small(dropped, sum(led[b] - targets[b] for b in ctx.brokers if led[b] > targets[b])),
                ["topic", "partition"],
                "left",
            )
            .withColumn("was", F.col("leader"))
            .withColumn("leader", F.when(F.col("drop"), F.lit(None).cast("long")).otherwise(F.col("leader")))
            .drop("drop"),
            cached,
        )
        orphans, gone, topic_led = [], Counter(), Counter()
        # one job, one row per topic with orphans: its orphans (the driver keeps them anyway: they are the
        # leaderships given up, not the partitions), and how many of its partitions each of their replicas
        # leads (the (topic, broker) pairs assign_leaders reads)
        for r in _orphans(lead).collect():
            for o in r.o:
                orphans.append((r.topic, int(o.partition), _ints(o.kept)))
                if o.was is not None:
                    gone[int(o.was)] += 1
            topic_led.update({(r.topic, int(x.leader)): int(x.n) for x in r.l or ()})
        led = led - gone
        fixes = assign_leaders(ctx, orphans, led, targets, topic_led)
        led.update(fixes.values())
        orphans_left = len(orphans) - len(fixes)
        lead = _keep(_replace(lead.drop("was"), fixes, "leader", spark), cached)
        tick("leader round")
    rows_out = lead.select("topic", "partition", "kept", "leader").unionByName(fixed)
    if not within_tolerance(ctx, led, partitions):  # chains on the driver
        rows_out = _replace(rows_out, _leader_chains(ctx, rows_out, cached), "leader", spark)
        tick("leader chains")
    leader = F.col("leader")
    return _keep(  # leaders.order_replicas: the leader first, then the other replicas
        rows_out.select(
            "topic", "partition", F.concat(F.array(leader), F.filter("kept", lambda b: b != leader)).alias("replicas")
        ),
        cached,
    )


def _orphans(lead: DataFrame) -> DataFrame:
    """Per topic with partitions without a leader: those (``o``: partition, kept, was), and how many of its
    other partitions each broker among their replicas leads (``l``: leader, n). One job; what reaches the
    driver is bounded by the orphans and the brokers, not by the topics' partitions."""
    orphan = F.col("leader").isNull()
    per_topic = lead.where(orphan).groupBy("topic").agg(F.collect_list(F.struct("partition", "kept", "was")).alias("o"))
    asked = per_topic.select("topic", F.explode(F.array_distinct(F.flatten("o.kept"))).alias("leader"))
    counts = (
        lead.where(~orphan)
        .join(asked, ["topic", "leader"], "left_semi")
        .groupBy("topic", "leader")
        .agg(F.count(F.lit(1)).alias("n"))
        .groupBy("topic")
        .agg(F.collect_list(F.struct("leader", "n")).alias("l"))
    )
    return per_topic.join(counts, "topic", "left")


def _leader_chains(ctx: BalanceContext, rows: DataFrame, cached: list[DataFrame]) -> dict[tuple[str, int], int]:
    """:func:`kreassign.planning.balanced.leaders.leader_chains` on (topic, partition, kept, leader) rows, with the
    partitions held in arrays on the driver (tens of bytes each, not a dict of tuples): streamed in
    (topic, partition) order, the order that function takes them in, one row per topic (its partitions,
    leaders, replicas as plain lists: no Row object per partition). Returns the leaders that change."""
    names: list[str] = []
    topic_of, partition_of, leader, flat, start = array("l"), array("q"), array("q"), array("q"), array("q", [0])
    without = F.coalesce(F.col("leader"), F.lit(_NO_LEADER))
    entries = F.sort_array(F.collect_list(F.struct("partition", without.alias("leader"), "kept")))
    per_topic = rows.groupBy("topic").agg(entries.alias("e"))
    lists = per_topic.select(
        "topic",
        F.col("e.partition").alias("partitions"),
        F.col("e.leader").alias("leaders"),
        F.transform("e.kept", F.size).alias("sizes"),
        F.flatten("e.kept").alias("kept"),
    )
    # kept: ordering samples it (one job) before it shuffles it; the next slice is fetched while one is read
    for r in _keep(lists, cached).orderBy("topic").toLocalIterator(prefetchPartitions=True):
        topic_of.extend(repeat(len(names), len(r.partitions)))
        names.append(r.topic)
        partition_of.extend(r.partitions)
        leader.extend(r.leaders)
        flat.extend(r.kept)
        start.extend(islice(accumulate(r.sizes, initial=start[-1]), 1, None))
    by_leader: dict[int, array] = {}
    for i, b in enumerate(leader):
        led = by_leader.get(b)
        if led is None:
            led = by_leader[b] = array("q")
        led.append(i)
    by_leader.pop(_NO_LEADER, None)
    load = Counter(leader)
    load.pop(_NO_LEADER, None)
    changed: dict[int, int] = {}

    def edges(u: int) -> Iterator[tuple[int, int]]:
        for i in by_leader.get(u, ()):
            if leader[i] == u:
                yield from ((i, v) for v in flat[start[i] : start[i + 1]] if v != u and ctx.chosen(v))

    def move(i: int, u: int, v: int) -> None:
        leader[i] = changed[i] = v
        by_leader.setdefault(v, array("q")).append(i)

    move_along_chains(list(ctx.brokers), load, edges, move)
    return {(names[topic_of[i]], partition_of[i]): v for i, v in changed.items()}


_NO_LEADER = -(1 << 62)


def _leader_shed(
    led: Counter[int], targets: Mapping[int, int], codes: _TopicCodes, per_topic: Mapping[int, int], brokers: int
):
    """Per broker above its leader target (one group each, rows with ``rank``, see :func:`_leader_rank`, and
    the topic's ``code``): the leaderships it gives up (from the topics it leads most above their even share,
    ``per_topic`` the partitions per topic code over ``brokers``)."""
    names = codes.names

    def shed(group: dict[str, list]) -> dict[str, list]:
        broker = group["leader"][0]
        topics, partitions, ranks = group["code"], group["partition"], group["rank"]
        candidates = list(zip(topics, partitions, [0] * len(topics), ranks, strict=True))
        chosen = shed_from_broker(led[broker] - targets[broker], None, candidates, per_topic, brokers)
        return {"topic": [names[t] for t, _ in chosen], "partition": [p for _, p in chosen]}

    return shed


def _leader_rank(brokers: Iterable[int], led: Mapping[int, int], targets: Mapping[int, int]) -> Any:
    """:func:`kreassign.planning.balanced.leaders.leader_rank` of each partition's ``kept``, as a column ``rank``."""
    below = [b for b in brokers if led.get(b, 0) < targets.get(b, 0)]
    return (-F.size(F.filter("kept", lambda b: _member(below, b)))).cast("long").alias("rank")
