"""--adaptive: the cluster's health, sampled a slice at a time so that a sample costs the same on a cluster
of any size: the topics of the steps in flight every sample, the cluster's other topics in turn."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kreassign.cluster.port import ClusterPort, ConfigResource, ResourceType
from kreassign.errors import KreassignError, UnknownTopicOrPartitionError, is_transient
from kreassign.model import PartitionInfo, PartitionReassignment, TopicPartition
from kreassign.planning.progress import UnderReplication, classify_urp

STALLED_COPY_S = 60.0
"""--adaptive: a copy whose bytes have not grown for this long has stopped progressing."""

HEALTH_SLICE_PARTITIONS = 10_000
"""--adaptive: about how many partitions of the cluster one health sample reads. The topics of the steps in
flight are read every sample; the others in turn, a slice at a time, so a sample costs the same on a
cluster of any size (the whole cluster is read every ceil(partitions / slice) samples)."""

TOPIC_LIST_REFRESH_S = 60.0
"""--adaptive: how often the cluster's list of topics is read again."""

MIN_INSYNC_REPLICAS = "min.insync.replicas"


class MinInsyncReplicas:
    """Each topic's min.insync.replicas (read once per topic), and whether an idle partition may move now."""

    def __init__(self, port: ClusterPort) -> None:
        self.port = port
        self.known: dict[str, int] = {}

    def read(self, topics: set[str]) -> None:
        unknown = sorted(topics - set(self.known))
        if not unknown:
            return
        try:
            described = self.port.describe_configs([ConfigResource(ResourceType.TOPIC, t) for t in unknown])
        except KreassignError as exc:
            if not is_transient(exc):
                raise
            return  # asked again next time
        for topic in unknown:
            value = described.get(ConfigResource(ResourceType.TOPIC, topic), {}).get(MIN_INSYNC_REPLICAS)
            self.known[topic] = int(value) if value and value.isdigit() else 1

    def waits(self, tp: TopicPartition, info: PartitionInfo) -> str | None:
        """Why an idle partition must not move now (KIP-352: a replica of its own out of the ISR), or None."""
        if classify_urp(info, None) is not UnderReplication.UNDER_REPLICATED:
            return None
        least = self.known.get(tp.topic, 1)
        out = ",".join(str(b) for b in info.replicas if b not in info.isr)
        if len(info.isr) <= least:
            return f"{tp} waits: at or under min.insync.replicas (ISR {len(info.isr)} of {len(info.replicas)}, min {least})"
        return f"{tp} waits: under-replicated (out of ISR: {out})"


class ClusterHealth:
    def __init__(
        self,
        port: ClusterPort,
        plan_partitions: int,
        plan_topics: set[str],
        read_min_isr: Callable[[set[str]], None],
    ) -> None:
        self.port = port
        self._read_min_isr = read_min_isr
        self._plan_partitions = plan_partitions
        self._plan_topics = plan_topics or {""}
        # the health of each topic of the cluster as last read (partitions at min ISR, really under-replicated,
        # and how many it has), the topics in the order they are read, and where the next slice starts
        self._topic_health: dict[str, tuple[int, int, int]] = {}
        self._health_topics: list[str] = []
        self._health_listed_at = float("-inf")
        self._health_cursor = 0
        self._copy_seen: dict[TopicPartition, tuple[int, float]] = {}  # bytes copied, since when

    def _slice(self, now: float, moving: Mapping[TopicPartition, Any]) -> list[str]:
        """The topics this health sample reads: those of the steps in flight, then the next of the cluster's
        topics in turn, up to about HEALTH_SLICE_PARTITIONS partitions."""
        if now - self._health_listed_at >= TOPIC_LIST_REFRESH_S:
            self._health_listed_at = now
            self._health_topics = self.port.list_topic_names()
            listed = set(self._health_topics)
            for gone in set(self._topic_health) - listed:
                del self._topic_health[gone]
            self._health_cursor %= max(1, len(self._health_topics))
        known = [health[2] for health in self._topic_health.values()]
        # a topic not read yet counts as the mean topic read so far (at first: of the plan's)
        guess = max(1, round(sum(known) / len(known) if known else self._plan_partitions / len(self._plan_topics)))

        def size(topic: str) -> int:
            health = self._topic_health.get(topic)
            return guess if health is None else health[2]

        chosen = dict.fromkeys(sorted({tp.topic for tp in moving}))
        budget = HEALTH_SLICE_PARTITIONS - sum(size(t) for t in chosen)
        topics = self._health_topics
        for _ in range(len(topics)):
            if budget <= 0:
                break
            topic = topics[self._health_cursor]
            self._health_cursor = (self._health_cursor + 1) % len(topics)
            if topic not in chosen:
                chosen[topic] = None
                budget -= size(topic)
        return list(chosen)

    def sample(
        self,
        now: float,
        moving: Mapping[TopicPartition, Any],
        partial: Mapping[TopicPartition, int],
        min_isr: Mapping[str, int],
    ) -> tuple[int, int, int]:
        """Partitions at or under min ISR, really under-replicated (a slice of the topics read now, the others
        as last read), and the copies in flight (``moving``: the executor's steps, with ``step`` and
        ``electing``) whose bytes (``partial``) have not grown for STALLED_COPY_S."""
        try:
            described = self.port.read_topics(self._slice(now, moving))
        except UnknownTopicOrPartitionError:  # deleted since the list was read: read the list again next time
            self._health_listed_at = float("-inf")
            described = {}
        self._read_min_isr(set(described))
        for topic, infos in described.items():
            least = min_isr.get(topic, 1)
            at_min = under = 0
            for info in infos:
                tp = TopicPartition(topic, info.partition)
                step = moving.get(tp)
                adding = () if step is None else step.step.adding
                own = [b for b in info.replicas if b not in adding]  # a replica being added is not missing
                if len(info.isr) <= least and any(b not in info.isr for b in own):
                    at_min += 1
                reassigning = None if step is None else PartitionReassignment(info.replicas, adding, ())
                if classify_urp(info, reassigning) is UnderReplication.UNDER_REPLICATED:
                    under += 1
            self._topic_health[topic] = (at_min, under, len(infos))
        stalled = 0
        for tp, step in moving.items():
            copied = partial.get(tp, 0)
            seen = self._copy_seen.get(tp)
            if seen is None or seen[0] != copied:
                self._copy_seen[tp] = (copied, now)
            elif step.step.adding and not step.electing and now - seen[1] >= STALLED_COPY_S:
                stalled += 1
        for tp in set(self._copy_seen) - set(moving):
            del self._copy_seen[tp]
        return (
            sum(health[0] for health in self._topic_health.values()),
            sum(health[1] for health in self._topic_health.values()),
            stalled,
        )
