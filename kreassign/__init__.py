"""kreassign: a drop-in replacement for Apache Kafka's kafka-reassign-partitions tool."""

__version__ = "0.1.0"

#: The Apache Kafka release whose kafka-reassign-partitions contract kreassign keeps.
KAFKA_COMPAT_VERSION = "4.4.0"
