"""An in-memory Kafka cluster that implements ``ClusterPort``, with a clock of its own.

It follows the Kafka behaviour the executor depends on: a reassignment adds the target's new replicas,
which copy the partition at the broker's bandwidth (or at the follower throttle rate, when the replica is
listed in ``follower.replication.throttled.replicas`` and the broker has a rate), join the ISR when they
have caught up, and the reassignment completes only when every target replica is in sync; then the
removed replicas go, and a leader that is no longer a replica is replaced by the first in-sync target
replica. Cancelling drops the replicas being added and keeps the others in the order the reassignment
listed them (Kafka's revert: a step [1,3,4,2] from [2,3,4] comes back as [3,4,2], not [2,3,4]). Brokers
can be stopped and started. Log dirs: one per broker unless ``set_log_dirs`` gives more; a new replica goes
to the dir AlterReplicaLogDirs named for it beforehand (a preference a restarted broker forgets), else to
the broker's first dir; a hosted replica moves to another dir at the ``replica.alter.log.dirs`` rate (or the
bandwidth), and a move to the dir it is in cancels its move.
Time only moves when ``advance`` (or ``sleep``) is called, so tests need no real sleeps.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kreassign.cluster.port import (
    ConfigOp,
    ConfigResource,
    LogDirUsage,
    OpType,
    ReplicaLogDirInfo,
    ResourceType,
    read_topic_columns,
)
from kreassign.errors import CommandError, PartitionError, UnknownTopicOrPartitionError
from kreassign.model import (
    Broker,
    PartitionInfo,
    PartitionReassignment,
    TopicColumns,
    TopicPartition,
    TopicPartitionReplica,
)
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIR_THROTTLED_RATE,
)


@dataclass
class _Partition:
    replicas: list[int]
    isr: list[int]
    leader: int | None
    size: int  # bytes
    end_offset: int  # messages
    copied: dict[int, float] = field(default_factory=dict)  # bytes copied by replicas being added
    original: list[int] | None = None  # set while a reassignment runs
    target: list[int] | None = None
    start_offset: int = 0  # moves when retention deletes
    committed: dict[str, int] = field(default_factory=dict)  # consumer group -> committed offset


class SimulatedCluster:
    def __init__(
        self,
        brokers: Iterable[Broker],
        bandwidth: float = 50_000_000.0,
        shared_links: bool = False,
        cluster_id: str = "simulated-cluster",
    ) -> None:
        self.brokers = {b.id: b for b in brokers}
        self.id = cluster_id  # what cluster_id() answers: two simulated clusters may share a state folder
        self.shared_links = shared_links
        self.offline: set[int] = set()
        self.bandwidth = bandwidth  # bytes/s a broker fetches unthrottled
        self.now = 0.0
        self.partitions: dict[TopicPartition, _Partition] = {}
        self._topics: dict[str, list[TopicPartition]] = {}  # partitions of each topic, in order
        self.configs: dict[ConfigResource, dict[str, str]] = {}
        self.calls: list[str] = []  # every mutating call, for tests
        self.fail_next: dict[str, Exception] = {}  # method name -> exception raised once
        self.deleted_topics: set[str] = set()
        self.log_dirs: dict[int, list[str]] = {}  # brokers with log dirs of their own (set_log_dirs)
        self.replica_dirs: dict[TopicPartitionReplica, str] = {}  # replicas not in their broker's first dir
        self.preferred: dict[TopicPartitionReplica, str] = {}  # dirs named for replicas not hosted yet
        self.dir_moves: dict[TopicPartitionReplica, tuple[str, float]] = {}  # (to, bytes copied)
        self.writes: dict[TopicPartition, tuple[float, float]] = {}  # producers: (bytes/s, bytes per message)
        self._written: dict[TopicPartition, float] = {}  # bytes written so far (fractions kept)

    # ---- set-up and time
    def add_topic(self, name: str, assignment: Sequence[Sequence[int]], size: int = 0, messages: int = 0) -> None:
        for p, replicas in enumerate(assignment):
            self.partitions[TopicPartition(name, p)] = _Partition(
                list(replicas), list(replicas), replicas[0], size, messages
            )
        self._topics[name] = sorted(tp for tp in self.partitions if tp.topic == name)

    def write(self, tp: TopicPartition, bytes_per_s: float, bytes_per_message: float = 1000.0) -> None:
        """A producer writes to the partition from now on (0: stops): its leader's log grows, and copies of it
        must catch up with the writes too."""
        self.writes[tp] = (bytes_per_s, bytes_per_message)

    def delete_topic(self, name: str) -> None:
        """The topic goes, with its configs and any reassignment of its partitions (as in Kafka)."""
        for tp in self._topics.pop(name, []):
            self.partitions.pop(tp, None)
        self.configs.pop(ConfigResource(ResourceType.TOPIC, name), None)
        self.deleted_topics.add(name)

    def _unknown_topics(self, resources: Iterable[ConfigResource]) -> None:
        for r in resources:
            if r.type is ResourceType.TOPIC and r.name in self.deleted_topics:
                # Kafka's DescribeConfigs/IncrementalAlterConfigs of a deleted topic: an empty message
                raise UnknownTopicOrPartitionError("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ")

    def stop_broker(self, broker_id: int) -> None:
        self.offline.add(broker_id)
        for part in self.partitions.values():
            if broker_id in part.isr:
                part.isr.remove(broker_id)
            if part.leader == broker_id:
                part.leader = next((r for r in part.replicas if r in part.isr), None)

    def start_broker(self, broker_id: int) -> None:
        self.offline.discard(broker_id)
        for r in [r for r in self.preferred if r.broker_id == broker_id]:  # kept in memory only
            del self.preferred[r]

    def set_log_dirs(self, broker_id: int, dirs: Sequence[str]) -> None:
        self.log_dirs[broker_id] = list(dirs)

    def _dirs(self, broker_id: int) -> list[str]:
        return self.log_dirs.get(broker_id) or [self._log_dir(broker_id)]

    def _dir_of(self, replica: TopicPartitionReplica) -> str:
        return self.replica_dirs.get(replica) or self._dirs(replica.broker_id)[0]

    def _hosted(self, replica: TopicPartitionReplica) -> bool:
        part = self.partitions.get(TopicPartition(replica.topic, replica.partition))
        return part is not None and replica.broker_id in part.replicas

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for tp, (rate, per_message) in self.writes.items():
            part = self.partitions.get(tp)
            if part is None or part.leader is None or not rate:
                continue
            before = self._written.get(tp, 0.0)
            self._written[tp] = after = before + rate * seconds
            part.size += int(after) - int(before)
            part.end_offset += int(after / per_message) - int(before / per_message)
            for r in part.isr:  # followers in sync keep up with their leader
                if r in part.copied:
                    part.copied[r] = part.size
        shared = self._shared_rates() if self.shared_links else {}
        for tp, part in self.partitions.items():
            if part.leader is None and any(r not in self.offline for r in part.replicas):
                part.leader = next(r for r in part.replicas if r not in self.offline)
                part.isr = [part.leader]
            for r in part.replicas:  # a restarted follower catches up at once (it has the data)
                if r not in part.isr and r not in self.offline and r not in part.copied and part.leader is not None:
                    part.isr.append(r)
            if part.target is None:
                continue
            for r, copied in list(part.copied.items()):
                if r in self.offline or part.leader is None or r in part.isr:
                    continue
                rate = shared.get((tp, r), 0.0) if self.shared_links else self._rate(tp, r)
                part.copied[r] = min(part.size, copied + rate * seconds)
                if part.copied[r] >= part.size:
                    part.isr.append(r)
            if all(r in part.isr for r in part.target):
                self._complete(part)
        for replica, (to, copied) in list(self.dir_moves.items()):
            part = self.partitions.get(TopicPartition(replica.topic, replica.partition))
            if part is None or replica.broker_id not in part.replicas:
                del self.dir_moves[replica]
                continue
            if replica.broker_id in self.offline:
                continue
            copied += self._link_capacity(replica.broker_id, LOG_DIR_THROTTLED_RATE) * seconds
            if copied >= part.size:
                del self.dir_moves[replica]
                self.replica_dirs[replica] = to
            else:
                self.dir_moves[replica] = (to, copied)

    def _link_capacity(self, broker: int, config: str) -> float:
        rate = self.configs.get(ConfigResource(ResourceType.BROKER, str(broker)), {}).get(config)
        return self.bandwidth if rate is None else min(self.bandwidth, float(rate))

    def _shared_rates(self) -> dict[tuple[TopicPartition, int], float]:
        """Max-min fair shares of the links (progressive filling) for every copy under way."""
        links: dict[tuple[str, int], set[tuple[TopicPartition, int]]] = defaultdict(set)
        ends: dict[tuple[TopicPartition, int], tuple[tuple[str, int], tuple[str, int]]] = {}
        for tp, part in self.partitions.items():
            if part.target is None or part.leader is None or part.leader in self.offline:
                continue
            for r in part.copied:
                if r not in part.isr and r not in self.offline:
                    ends[(tp, r)] = (("in", r), ("out", part.leader))
                    links[("in", r)].add((tp, r))
                    links[("out", part.leader)].add((tp, r))
        left = {
            link: self._link_capacity(link[1], FOLLOWER_THROTTLED_RATE if link[0] == "in" else LEADER_THROTTLED_RATE)
            for link in links
        }
        rates: dict[tuple[TopicPartition, int], float] = {}
        while links:
            link = min(links, key=lambda k: left[k] / len(links[k]))
            share = left[link] / len(links[link])
            for copy in links.pop(link):
                rates[copy] = share
                for other in ends[copy]:
                    if other != link and other in links:
                        links[other].discard(copy)
                        left[other] -= share
                        if not links[other]:
                            del links[other]
        return rates

    def _rate(self, tp: TopicPartition, broker: int) -> float:
        topic = self.configs.get(ConfigResource(ResourceType.TOPIC, tp.topic), {})
        throttled = topic.get(FOLLOWER_THROTTLED_REPLICAS, "")
        entries = {e.strip() for e in throttled.split(",")}
        rate = self.configs.get(ConfigResource(ResourceType.BROKER, str(broker)), {}).get(FOLLOWER_THROTTLED_RATE)
        copy = self.bandwidth
        if rate is not None and ("*" in entries or f"{tp.partition}:{broker}" in entries):
            copy = min(self.bandwidth, float(rate))
        leader = self.partitions[tp].leader
        if leader is not None and tp in self.writes:  # the leader's throttle, less what its in-sync followers take
            return min(copy, self._leader_left(leader))
        return copy

    def _leader_left(self, leader: int) -> float:
        """What the leader's throttle leaves the copies: Kafka counts every follower fetch of a partition the leader
        list names against it, in-sync followers' too (their replication of the writes)."""
        rate = self.configs.get(ConfigResource(ResourceType.BROKER, str(leader)), {}).get(LEADER_THROTTLED_RATE)
        if rate is None:
            return self.bandwidth
        taken = 0.0
        for tp, (written, _) in self.writes.items():
            part = self.partitions.get(tp)
            listed = self.configs.get(ConfigResource(ResourceType.TOPIC, tp.topic), {}).get(
                LEADER_THROTTLED_REPLICAS, ""
            )
            entries = {e.strip() for e in listed.split(",")}
            if part is not None and part.leader == leader and ("*" in entries or f"{tp.partition}:{leader}" in entries):
                taken += written * len(set(part.isr) - {leader})
        return max(0.0, float(rate) - taken)

    def _complete(self, part: _Partition) -> None:
        assert part.target is not None
        self._end_reassignment(part, part.target)

    @staticmethod
    def _end_reassignment(part: _Partition, replicas: Sequence[int]) -> None:
        """The reassignment is over (done or cancelled): these replicas stay, the others go."""
        part.replicas = list(replicas)
        part.isr = [r for r in part.replicas if r in part.isr]
        if part.leader not in part.replicas:
            part.leader = next((r for r in part.replicas if r in part.isr), None)
        part.original = part.target = None
        part.copied = {}

    def _fail_if_asked(self, name: str) -> None:
        if name in self.fail_next:
            raise self.fail_next.pop(name)

    # ---- ClusterPort
    def describe_brokers(self) -> list[Broker]:
        self._fail_if_asked("describe_brokers")
        return [b for i, b in sorted(self.brokers.items()) if i not in self.offline]

    def cluster_id(self) -> str | None:
        return self.id

    def list_topic_names(self) -> list[str]:
        return sorted({tp.topic for tp in self.partitions})

    def describe_topic_columns(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        return read_topic_columns(self, topics)

    def describe_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        self._fail_if_asked("describe_topics")
        result: dict[str, list[PartitionInfo]] = {}
        for topic in topics:
            parts = [(tp, self.partitions[tp]) for tp in self._topics.get(topic, []) if tp in self.partitions]
            if not parts:
                raise UnknownTopicOrPartitionError(
                    f"org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic {topic} not found."
                )
            result[topic] = [PartitionInfo(tp.partition, tuple(p.replicas), tuple(p.isr), p.leader) for tp, p in parts]
        return result

    def read_topics(self, topics: Iterable[str]) -> dict[str, list[PartitionInfo]]:
        return self.describe_topics(topics)

    def list_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        self._fail_if_asked("list_reassignments")
        wanted = None if partitions is None else set(partitions)
        result = {}
        for tp, part in self.partitions.items():
            if part.target is None or (wanted is not None and tp not in wanted):
                continue
            assert part.original is not None
            result[tp] = PartitionReassignment(
                tuple(part.replicas),
                tuple(r for r in part.target if r not in part.original),
                tuple(r for r in part.original if r not in part.target),
            )
        return result

    def alter_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None], allow_replication_factor_change: bool = True
    ) -> dict[TopicPartition, PartitionError]:
        self._fail_if_asked("alter_reassignments")
        self.calls.append(f"alter_reassignments {sorted((str(k), v) for k, v in targets.items())}")
        errors = {}
        for tp, target in targets.items():
            part = self.partitions.get(tp)
            if part is None:
                errors[tp] = PartitionError(
                    "This server does not host this topic-partition.", "UnknownTopicOrPartitionException"
                )
                continue
            if target is None:
                if part.target is None:
                    errors[tp] = PartitionError(
                        "There is no ongoing reassignment for this partition.", "NoReassignmentInProgressException"
                    )
                    continue
                assert part.original is not None
                # Kafka's revert: the replicas being added go, the others stay in the reassignment's order
                original = part.original
                self._end_reassignment(part, [r for r in part.replicas if r in original])
                continue
            unknown = [b for b in target if b not in self.brokers]
            if unknown:
                errors[tp] = PartitionError(
                    f"The manual partition assignment includes broker {unknown[0]}, but no such broker is registered.",
                    "InvalidReplicaAssignmentException",
                )
                continue
            original = part.original if part.original is not None else list(part.replicas)
            part.original = original
            part.target = list(target)
            part.replicas = list(target) + [r for r in original if r not in target]
            for r in target:
                if r not in original and r not in part.copied:
                    part.copied[r] = 0.0
                    replica = TopicPartitionReplica(tp.topic, tp.partition, r)
                    self.replica_dirs.pop(replica, None)
                    if replica in self.preferred:  # the broker creates the replica in the dir named for it
                        self.replica_dirs[replica] = self.preferred.pop(replica)
            if all(r in part.isr for r in part.target):
                self._complete(part)
        return errors

    def describe_replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        result = {}
        for r in replicas:
            if r.broker_id in self.offline or r.broker_id not in self.brokers:
                continue
            if not self._hosted(r):
                result[r] = ReplicaLogDirInfo(None)
                continue
            moving = self.dir_moves.get(r)
            result[r] = ReplicaLogDirInfo(self._dir_of(r), moving[0] if moving else None)
        return result

    @staticmethod
    def _log_dir(broker_id: int) -> str:
        return f"/sim/{broker_id}/data"

    def describe_log_dirs(self, broker_ids: Iterable[int]) -> dict[int, list[LogDirUsage]]:
        """One log dir per live broker, with the bytes each replica holds (copied so far while it is added)."""
        sizes = self._replica_bytes(broker_ids)
        return {
            b: [
                LogDirUsage(
                    d,
                    {
                        TopicPartition(r.topic, r.partition): size
                        for r, size in sizes.items()
                        if r.broker_id == b and self._dir_of(r) == d
                    },
                )
                for d in self._dirs(b)
            ]
            for b in dict.fromkeys(broker_ids)
            if b in self.brokers and b not in self.offline
        }

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """Kafka's answer: a replica not hosted yet gets the dir as its preferred one and is not accepted
        (REPLICA_NOT_AVAILABLE, which the tool retries); a hosted one starts moving (or stops, to its own dir)."""
        self._fail_if_asked("alter_replica_log_dirs")
        self.calls.append(f"alter_replica_log_dirs {sorted((str(k), v) for k, v in moves.items())}")
        accepted = set()
        for replica, path in moves.items():
            if path not in self._dirs(replica.broker_id):
                raise CommandError(f"Failed to alter dir for {replica}")
            if not self._hosted(replica):
                self.preferred[replica] = path
                continue
            accepted.add(replica)
            if path == self._dir_of(replica):
                self.dir_moves.pop(replica, None)
            elif self.dir_moves.get(replica, (None,))[0] != path:
                self.dir_moves[replica] = (path, 0.0)
        return accepted

    def describe_configs(self, resources: Iterable[ConfigResource]) -> dict[ConfigResource, dict[str, str]]:
        self._fail_if_asked("describe_configs")
        resources = list(resources)
        self._unknown_topics(resources)
        return {r: dict(self.configs.get(r, {})) for r in resources}

    def incremental_alter_configs(self, changes: Mapping[ConfigResource, Sequence[ConfigOp]]) -> None:
        self._fail_if_asked("incremental_alter_configs")
        self._unknown_topics(changes)
        for resource, ops in changes.items():
            self.calls.append(f"alter_configs {resource.type.value} {resource.name} {[(o.name, o.value) for o in ops]}")
            values = self.configs.setdefault(resource, {})
            for op in ops:
                if op.op is OpType.SET:
                    values[op.name] = str(op.value)
                else:
                    values.pop(op.name, None)
            if not values:
                del self.configs[resource]

    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        errors = {}
        for tp in partitions:
            part = self.partitions[tp]
            preferred = part.replicas[0]
            if part.leader == preferred:
                continue
            if preferred in part.isr and preferred not in self.offline:
                part.leader = preferred
            else:
                errors[tp] = PartitionError(
                    "The preferred leader was not available.", "PreferredLeaderNotAvailableException"
                )
        return errors

    def log_end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.partitions[tp].end_offset for tp in partitions}

    def log_start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.partitions[tp].start_offset for tp in partitions if tp in self.partitions}

    def committed_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, dict[str, int]]:
        return {
            tp: dict(self.partitions[tp].committed)
            for tp in partitions
            if tp in self.partitions and self.partitions[tp].committed
        }

    def replica_sizes(
        self,
        broker_ids: Iterable[int],
        partitions: Iterable[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> dict[TopicPartitionReplica, int]:
        self._fail_if_asked("replica_sizes")
        return self._replica_bytes(broker_ids, partitions)

    def _replica_bytes(
        self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartitionReplica, int]:
        wanted = set(broker_ids) - self.offline
        result = {}
        chosen = (
            self.partitions
            if partitions is None
            else {tp: self.partitions[tp] for tp in partitions if tp in self.partitions}
        )
        for tp, part in chosen.items():
            for r in part.replicas:
                if r in wanted:
                    size = int(part.copied[r]) if r in part.copied else part.size
                    result[TopicPartitionReplica(tp.topic, tp.partition, r)] = size
        return result

    def replica_log_end_offsets(self, replicas: Iterable[TopicPartitionReplica]) -> dict[TopicPartitionReplica, int]:
        result = {}
        for r in replicas:
            part = self.partitions.get(TopicPartition(r.topic, r.partition))
            if part is None or r.broker_id not in part.replicas or r.broker_id in self.offline:
                continue
            if r.broker_id in part.copied and part.size:
                result[r] = int(part.end_offset * part.copied[r.broker_id] / part.size)
            else:
                result[r] = part.end_offset
        return result

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        return {}

    def recorded_partition_rates(self) -> dict[tuple[str, int], tuple[float, float]]:
        return {}

    def snapshot_file(self) -> str | None:
        return None

    def secrets(self) -> list[str]:
        return []

    def close(self) -> None:
        pass
