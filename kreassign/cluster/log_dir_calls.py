"""The adapter's log directory calls, DescribeLogDirs and AlterReplicaLogDirs through kafka-python, one request
per broker, all in flight at once: where each replica's log is (and its future log), moving it to another
dir, replica sizes for --progress, and every dir of a broker with its sizes for --write-cluster-snapshot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kreassign.cluster.broker_releases import is_cordoned, volume_bytes
from kreassign.cluster.kafka_clients import KafkaClients
from kreassign.cluster.kafka_errors import ERRORS_PACKAGE, KAFKA_STORAGE_ERROR, JavaException, error_for, java_exception
from kreassign.cluster.port import LogDirUsage, ReplicaLogDirInfo
from kreassign.errors import ClusterError, CommandError, KreassignError
from kreassign.javacompat.hashes import java_replica_hash
from kreassign.javacompat.hashmap import DEFAULT_JAVA_VERSION, copy_capacity, iteration_order
from kreassign.model import TopicPartition, TopicPartitionReplica


class LogDirCalls(KafkaClients):
    """DescribeLogDirs and AlterReplicaLogDirs of a ``KafkaCluster``."""

    def describe_replica_log_dirs(
        self, replicas: Iterable[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        """One DescribeLogDirs per broker, all in flight at once, like Java's describeReplicaLogDirs."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeReplicaLogDirs"
        wanted = list(dict.fromkeys(replicas))
        if not wanted:
            return {}
        by_broker = self._partitions_by_broker(wanted, call)
        topic_type = DescribeLogDirsRequest.DescribableLogDirTopic

        def builder(topics: Mapping[str, list[int]]) -> Callable[[], Any]:
            return lambda: DescribeLogDirsRequest(topics=[topic_type(topic=t, partitions=p) for t, p in topics.items()])

        requests = {broker_id: builder(topics) for broker_id, topics in by_broker.items()}
        responses = self._send_to_known_brokers(call, requests)
        current: dict[TopicPartitionReplica, str] = {}
        future: dict[TopicPartitionReplica, str] = {}
        for broker_id, response in responses.items():
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            for log_dir in response.results:
                if log_dir.error_code == KAFKA_STORAGE_ERROR:
                    continue  # an offline log directory lists no replicas
                if log_dir.error_code:
                    illegal = java_exception(log_dir.error_code).class_name
                    raise ClusterError(
                        f"java.lang.IllegalStateException: The error {illegal} for log directory "
                        f"{log_dir.log_dir} in the response from broker {broker_id} is illegal"
                    )
                for topic in log_dir.topics:
                    for p in topic.partitions:
                        replica = TopicPartitionReplica(topic.name, p.partition_index, broker_id)
                        (future if p.is_future_key else current)[replica] = log_dir.log_dir
        # As in Java, every replica asked of a broker has an answer: no current log dir when the broker
        # does not list the replica (not hosted, or in an offline log dir).
        return {r: ReplicaLogDirInfo(current=current.get(r), future=future.get(r)) for r in wanted}

    def alter_replica_log_dirs(self, moves: Mapping[TopicPartitionReplica, str]) -> set[TopicPartitionReplica]:
        """One AlterReplicaLogDirs per broker, all in flight at once. The failure reported is the one
        the Apache tool meets first, iterating Java's ``alterReplicaLogDirs(...).values()`` map."""
        from kafka.protocol.admin import AlterReplicaLogDirsRequest

        call = "alterReplicaLogDirs"
        if not moves:
            return set()
        capacity = copy_capacity(len(moves), DEFAULT_JAVA_VERSION)
        java_order = iteration_order(list(moves), java_replica_hash, initial_capacity=capacity)
        failures: dict[TopicPartitionReplica, JavaException | KreassignError] = {}
        accepted: set[TopicPartitionReplica] = set()
        if self.using_controllers:
            failures = dict.fromkeys(moves, self.errors.unsupported_with_controllers())
        else:
            failures, accepted = self._alter_replica_log_dirs(moves, call, AlterReplicaLogDirsRequest)
        for replica in java_order:
            cause = failures.get(replica)
            if cause is None:
                continue
            if isinstance(cause, JavaException) and cause.class_name.endswith(".ReplicaNotAvailableException"):
                continue  # not on its broker yet: the tool retries
            error = CommandError(f"Failed to alter dir for {replica}")
            error.add_note(str(cause) if isinstance(cause, JavaException) else cause.message)
            raise error
        return accepted

    def _alter_replica_log_dirs(
        self, moves: Mapping[TopicPartitionReplica, str], call: str, request_type: Any
    ) -> tuple[dict[TopicPartitionReplica, JavaException | KreassignError], set[TopicPartitionReplica]]:
        failures: dict[TopicPartitionReplica, JavaException | KreassignError] = {}
        try:
            self._kafka_python_admin(call)
            known = self._known_brokers({r.broker_id for r in moves}, call)
        except KreassignError as exc:  # Java fails every replica's future with the call's exception
            return dict.fromkeys(moves, exc), set()
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for replica, path in moves.items():
            if replica.broker_id in known:
                by_broker[replica.broker_id][path][replica.topic].append(replica.partition)
        missing = {r.broker_id for r in moves} - known
        if missing:
            unknown = self._unknown_brokers_error(call, missing)
            failures.update({r: unknown for r in moves if r.broker_id in missing})
        dir_type = request_type.AlterReplicaLogDir
        topic_type = dir_type.AlterReplicaLogDirTopic

        def builder(dirs: Mapping[str, Mapping[str, list[int]]]) -> Callable[[], Any]:
            return lambda: request_type(
                dirs=[
                    dir_type(path=path, topics=[topic_type(name=t, partitions=p) for t, p in topics.items()])
                    for path, topics in dirs.items()
                ]
            )

        requests = {broker_id: builder(dirs) for broker_id, dirs in by_broker.items()}
        try:
            responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline())
        except KreassignError as exc:
            failures.update({r: exc for r in moves if r.broker_id in by_broker})
            return failures, set()
        accepted: set[TopicPartitionReplica] = set()
        for broker_id, response in responses.items():
            for topic in response.results:
                for p in topic.partitions:
                    replica = TopicPartitionReplica(topic.topic_name, p.partition_index, broker_id)
                    if replica not in moves:
                        continue
                    if p.error_code:
                        failures[replica] = java_exception(p.error_code)  # Java ignores any message here
                    else:
                        accepted.add(replica)
        for replica in moves:
            if replica.broker_id in by_broker and replica not in accepted and replica not in failures:
                failures[replica] = JavaException(
                    ERRORS_PACKAGE + "ApiException",
                    f"The response from broker {replica.broker_id} did not contain a result for replica {replica}",
                )
        return failures, accepted

    # -------------------------------------------------------------------------- replica state (--progress)
    def replica_sizes(
        self,
        broker_ids: Iterable[int],
        partitions: Iterable[TopicPartition] | None = None,
        timeout_s: float | None = None,
    ) -> dict[TopicPartitionReplica, int]:
        """One DescribeLogDirs (all topics, or only ``partitions``) per broker, all in flight at once,
        for at most ``timeout_s`` (default: the API timeout). A replica moving between log dirs counts its
        current log only; offline log dirs and brokers missing from the metadata are left out."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeLogDirs"
        wanted = set(broker_ids)
        if not wanted:
            return {}
        if self.using_controllers:
            raise self.errors.unsupported_with_controllers()
        self._kafka_python_admin(call)
        known = self._known_brokers(wanted, call)
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in dict.fromkeys(partitions):
                by_topic[tp.topic].append(tp.partition)
            if not by_topic:
                return {}
            topic_type = DescribeLogDirsRequest.DescribableLogDirTopic
            topics = [topic_type(topic=t, partitions=p) for t, p in sorted(by_topic.items())]
        requests = {broker_id: (lambda: DescribeLogDirsRequest(topics=topics)) for broker_id in sorted(known)}
        responses = self._run_kafka_python(call, self._send_to_brokers, requests, self._deadline(timeout_s))
        sizes: dict[TopicPartitionReplica, int] = {}
        for broker_id, response in responses.items():
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            for log_dir in response.results:
                if log_dir.error_code:
                    continue  # an offline log directory lists no replicas
                for topic in log_dir.topics:
                    for p in topic.partitions:
                        if not p.is_future_key:
                            sizes[TopicPartitionReplica(topic.name, p.partition_index, broker_id)] = p.partition_size
        return sizes

    def describe_log_dirs(self, broker_ids: Iterable[int]) -> dict[int, list[LogDirUsage]]:
        """Every log directory of each broker with the size of each replica in it (DescribeLogDirs
        for all topics, one request per broker, all in flight at once)."""
        from kafka.protocol.admin import DescribeLogDirsRequest

        call = "describeLogDirs"
        wanted = list(dict.fromkeys(broker_ids))
        if not wanted:
            return {}
        requests = {broker_id: (lambda: DescribeLogDirsRequest(topics=None)) for broker_id in wanted}
        responses = self._send_to_known_brokers(call, requests)
        result: dict[int, list[LogDirUsage]] = {}
        for broker_id in wanted:
            response = responses[broker_id]
            if getattr(response, "error_code", 0):
                raise error_for(java_exception(response.error_code))
            dirs = []
            for log_dir in response.results:
                sizes = {
                    TopicPartition(topic.name, p.partition_index): p.partition_size
                    for topic in ([] if log_dir.error_code else log_dir.topics)
                    for p in topic.partitions
                    if not p.is_future_key
                }
                total, usable = volume_bytes(log_dir)
                dirs.append(LogDirUsage(log_dir.log_dir, sizes, total, usable, cordoned=is_cordoned(log_dir)))
            result[broker_id] = sorted(dirs, key=lambda d: d.path)
        return result
