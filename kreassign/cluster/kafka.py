"""The ClusterPort over a real Kafka cluster.

confluent-kafka (librdkafka) describes the cluster and topics, reads and alters configs, elects
leaders and lists offsets. librdkafka has no AlterPartitionReassignments, ListPartitionReassignments,
DescribeLogDirs or AlterReplicaLogDirs, so those four go through kafka-python, whose client is made
only when one of them is first needed. With ``--bootstrap-controller`` (KRaft controllers, which
librdkafka cannot talk to) kafka-python also carries DescribeCluster and the config calls, exactly the
calls Java's admin client supports against controllers; the others fail like Java's do. The batched
executor's reads of topic metadata in each poll (``read_topics``) are kafka-python Metadata requests too:
librdkafka's describeTopics took 3 to 8 times as long for a topic of 2,000 partitions.

Both clients are imported inside methods, so importing this module stays cheap.

Errors carry the text the Apache tool prints after ``Error: ``: Java's exception class and
``getMessage()``, which is the broker's error message when it sent one, else the default message
of the Kafka error code (``kafka_errors``); the clients' own failures read the same way
(``client_errors``). Where Java would wait for a broker that is not in the cluster metadata until its
deadline, the same error is raised at once, after the calls Java completes meanwhile.

Modules of this adapter: ``kafka_clients`` (both clients, deadlines, waiting, sending, errors), the calls by
concern, each a subclass of ``KafkaClients`` that :class:`KafkaCluster` joins (``topic_calls``,
``reassignment_calls``, ``log_dir_calls``, ``config_calls``, ``offset_calls``), ``broker_releases`` (what
older brokers lack, and what the adapter does instead), ``controller_quorum`` (``--bootstrap-controller``),
``kafka_python_calls`` and ``librdkafka_calls`` (shaping calls for each client), ``client_config``
(``--command-config``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kreassign.cluster.config_calls import ConfigCalls
from kreassign.cluster.kafka_errors import ELECTION_NOT_NEEDED, partition_error_of_call
from kreassign.cluster.librdkafka_calls import refuse_names_librdkafka_would_cut
from kreassign.cluster.log_dir_calls import LogDirCalls
from kreassign.cluster.offset_calls import OffsetCalls
from kreassign.cluster.port import read_topic_columns
from kreassign.cluster.reassignment_calls import ReassignmentCalls
from kreassign.errors import PartitionError
from kreassign.model import TopicColumns, TopicPartition


class KafkaCluster(ReassignmentCalls, LogDirCalls, ConfigCalls, OffsetCalls):
    """``ClusterPort`` over Kafka, like the Apache tool's ``Admin`` (no connection until first use).

    ``request_timeout_s`` is the per-call deadline (Java's ``default.api.timeout.ms``, 60 s); a
    ``default.api.timeout.ms`` in the client config takes precedence, as in Java.
    """

    def describe_topic_columns(self, topics: Iterable[str]) -> dict[str, TopicColumns]:
        return read_topic_columns(self, topics)

    # -------------------------------------------------------------------------- leaders
    def elect_preferred_leaders(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionError]:
        """Per-partition ``getMessage()`` of failed elections; ELECTION_NOT_NEEDED is not a failure."""
        from confluent_kafka import ElectionType, KafkaError
        from confluent_kafka import TopicPartition as NativeTopicPartition

        call = "electLeaders"
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}  # an empty list would mean "every partition" to librdkafka
        if not self.config.librdkafka_can_connect:
            return self._kp_elect_preferred_leaders(wanted)
        refuse_names_librdkafka_would_cut([tp.topic for tp in wanted])
        admin = self._librdkafka()
        # confluent-kafka 2.16 cannot take request_timeout here (its C wrapper rejects keyword
        # arguments); the deadline is socket.timeout.ms, i.e. request.timeout.ms.
        future = admin.elect_leaders(
            ElectionType.PREFERRED, [NativeTopicPartition(tp.topic, tp.partition) for tp in wanted]
        )
        results = self._wait(future, call)
        failures: dict[TopicPartition, PartitionError] = {}
        for native, outcome in results.items():
            if outcome is None:
                continue
            error = outcome if isinstance(outcome, KafkaError) else outcome.args[0]
            if error.code() in (ELECTION_NOT_NEEDED, KafkaError.NO_ERROR):
                continue
            tp = TopicPartition(native.topic, native.partition)
            if error.code() > 0:
                failures[tp] = partition_error_of_call(self.errors.from_librdkafka(error, call))
            else:  # librdkafka's own (a timeout, the transport): no Java exception
                failures[tp] = PartitionError(error.str(), "", error.retriable())
        return failures

    def snapshot_file(self) -> str | None:
        return None

    def recorded_rates(self) -> dict[TopicPartition, tuple[float, float]]:
        return {}  # a live cluster records no rates: --sample-rates measures them

    def recorded_partition_rates(self) -> dict[tuple[str, int], tuple[float, float]]:
        return {}
