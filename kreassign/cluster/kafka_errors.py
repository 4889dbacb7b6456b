"""Kafka's errors as the Apache tool prints them: the error-code table and the Java exceptions.

An error the Apache tool reports reads ``<exception class>: <getMessage()>``; ``getMessage()`` is the
broker's error message when it sent one, else the default message of the Kafka error code
(``KAFKA_ERRORS``, taken from ``org.apache.kafka.common.protocol.Errors`` of the pinned release).
``error_for`` gives the kreassign error type for such an exception. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kreassign.errors import (
    TRANSIENT_JAVA_EXCEPTIONS,
    AuthorizationError,
    ClusterError,
    ClusterTimeoutError,
    KreassignError,
    PartitionError,
    TransientClusterError,
    UnknownTopicOrPartitionError,
)

ERRORS_PACKAGE = "org.apache.kafka.common.errors."
TIMEOUT_EXCEPTION = ERRORS_PACKAGE + "TimeoutException"
UNKNOWN_TOPIC_EXCEPTION = ERRORS_PACKAGE + "UnknownTopicOrPartitionException"

# Kafka protocol error codes the adapter acts on.
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC = 17
NOT_CONTROLLER = 41
KAFKA_STORAGE_ERROR = 56
ELECTION_NOT_NEEDED = 84
# LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH: Java retries these.
LEADERSHIP_MOVED = frozenset({5, 6, 74, 75})


@dataclass(frozen=True)
class JavaException:
    """A Java exception as the Apache tool prints it: ``<class>: <getMessage()>``."""

    class_name: str
    message: str

    def __str__(self) -> str:
        return f"{self.class_name}: {self.message}"


def java_exception(code: int, server_message: str | None = None) -> JavaException:
    """What Java's ``ApiError(code, message).exception()`` is: the server's message when it sent one,
    else the default message of the error code. Unknown codes are UNKNOWN_SERVER_ERROR, as in Java."""
    name, default = KAFKA_ERRORS.get(code, KAFKA_ERRORS[-1])
    class_name = name if "." in name else ERRORS_PACKAGE + name
    return JavaException(class_name, default if server_message is None else server_message)


def error_for(java: JavaException) -> ClusterError:
    """The kreassign error type for a Java exception, with the Java text as its message."""
    text = str(java)
    if java.class_name.endswith("AuthorizationException"):
        return AuthorizationError(text)
    if java.class_name == UNKNOWN_TOPIC_EXCEPTION:
        return UnknownTopicOrPartitionError(text)
    if java.class_name == TIMEOUT_EXCEPTION:
        return ClusterTimeoutError(text)
    if java.class_name.removeprefix(ERRORS_PACKAGE) in TRANSIENT_JAVA_EXCEPTIONS:
        return TransientClusterError(text)
    return ClusterError(text)


def _java_parts(error: KreassignError) -> tuple[str, str]:
    """(Java exception class, ``getMessage()``) of one of our errors; the class is "" when its text names none."""
    head, separator, tail = error.message.partition(": ")
    if separator and (head.startswith("org.apache.kafka.") or head.startswith("java.")):
        return head, tail
    return "", error.message


def java_message(error: KreassignError) -> str:
    """``getMessage()`` of the Java exception behind one of our errors (its text without the class)."""
    return _java_parts(error)[1]


def partition_error(java: JavaException) -> PartitionError:
    """One partition's failure from the error code the broker answered for it."""
    return PartitionError(java.message, java.class_name.rpartition(".")[2])


def partition_error_of_call(failure: KreassignError) -> PartitionError:
    """One partition's failure when the whole call failed (Java fails every partition's future with it)."""
    java_class, message = _java_parts(failure)
    return PartitionError(message, java_class.rpartition(".")[2], isinstance(failure, TransientClusterError))


# code -> (exception class, default message), from org.apache.kafka.common.protocol.Errors of Kafka
# 4.3.1 (generated with a few lines of Java over Errors.values()). Classes without a package are in
# org.apache.kafka.common.errors.
KAFKA_ERRORS: Mapping[int, tuple[str, str]] = {
    -1: ("UnknownServerException", "The server experienced an unexpected error when processing the request."),
    1: (
        "OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the server.",
    ),
    2: (
        "CorruptRecordException",
        (
            "This message has failed its CRC checksum, exceeds the valid size, has a null key for a "
            "compacted topic, or is otherwise corrupt."
        ),
    ),
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    4: ("InvalidFetchSizeException", "The requested fetch size is invalid."),
    5: (
        "LeaderNotAvailableException",
        ("There is no leader for this topic-partition as we are in the middle of a leadership election."),
    ),
    6: (
        "NotLeaderOrFollowerException",
        (
            "For requests intended only for the leader, this error indicates that the broker is not the"
            " current leader. For requests intended for any replica, this error indicates that the "
            "broker is not a replica of the topic partition."
        ),
    ),
    7: ("TimeoutException", "The request timed out."),
    8: ("BrokerNotAvailableException", "The broker is not available."),
    9: (
        "ReplicaNotAvailableException",
        (
            "The replica is not available for the requested topic-partition. Produce/Fetch requests and"
            " other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if "
            "the broker is not a replica of the topic-partition."
        ),
    ),
    10: (
        "RecordTooLargeException",
        "The request included a message larger than the max message size the server will accept.",
    ),
    11: ("ControllerMovedException", "The controller moved to another broker."),
    12: ("OffsetMetadataTooLarge", "The metadata field of the offset request was too large."),
    13: ("NetworkException", "The server disconnected before a response was received."),
    14: (
        "CoordinatorLoadInProgressException",
        "The coordinator is loading and hence can't process requests.",
    ),
    15: ("CoordinatorNotAvailableException", "The coordinator is not available."),
    16: ("NotCoordinatorException", "This is not the correct coordinator."),
    17: ("InvalidTopicException", "The request attempted to perform an operation on an invalid topic."),
    18: (
        "RecordBatchTooLargeException",
        "The request included message batch larger than the configured segment size on the server.",
    ),
    19: (
        "NotEnoughReplicasException",
        "Messages are rejected since there are fewer in-sync replicas than required.",
    ),
    20: (
        "NotEnoughReplicasAfterAppendException",
        "Messages are written to the log, but to fewer in-sync replicas than required.",
    ),
    21: ("InvalidRequiredAcksException", "Produce request specified an invalid value for required acks."),
    22: ("IllegalGenerationException", "Specified group generation id is not valid."),
    23: (
        "InconsistentGroupProtocolException",
        (
            "The group member's supported protocols are incompatible with those of existing members or "
            "first group member tried to join with empty protocol type or empty protocol list."
        ),
    ),
    24: ("InvalidGroupIdException", "The group id is invalid."),
    25: ("UnknownMemberIdException", "The coordinator is not aware of this member."),
    26: (
        "InvalidSessionTimeoutException",
        (
            "The session timeout is not within the range allowed by the broker (as configured by "
            "group.min.session.timeout.ms and group.max.session.timeout.ms)."
        ),
    ),
    27: ("RebalanceInProgressException", "The group is rebalancing, so a rejoin is needed."),
    28: ("InvalidCommitOffsetSizeException", "The committing offset data size is not valid."),
    29: ("TopicAuthorizationException", "Topic authorization failed."),
    30: ("GroupAuthorizationException", "Group authorization failed."),
    31: ("ClusterAuthorizationException", "Cluster authorization failed."),
    32: ("InvalidTimestampException", "The timestamp of the message is out of acceptable range."),
    33: ("UnsupportedSaslMechanismException", "The broker does not support the requested SASL mechanism."),
    34: ("IllegalSaslStateException", "Request is not valid given the current SASL state."),
    35: ("UnsupportedVersionException", "The version of API is not supported."),
    36: ("TopicExistsException", "Topic with this name already exists."),
    37: ("InvalidPartitionsException", "Number of partitions is below 1."),
    38: (
        "InvalidReplicationFactorException",
        "Replication factor is below 1 or larger than the number of available brokers.",
    ),
    39: ("InvalidReplicaAssignmentException", "Replica assignment is invalid."),
    40: ("InvalidConfigurationException", "Configuration is invalid."),
    41: ("NotControllerException", "This is not the correct controller for this cluster."),
    42: (
        "InvalidRequestException",
        (
            "This most likely occurs because of a request being malformed by the client library or the "
            "message was sent to an incompatible broker. See the broker logs for more details."
        ),
    ),
    43: (
        "UnsupportedForMessageFormatException",
        "The message format version on the broker does not support the request.",
    ),
    44: ("PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    45: ("OutOfOrderSequenceException", "The broker received an out of order sequence number."),
    46: ("DuplicateSequenceException", "The broker received a duplicate sequence number."),
    47: ("InvalidProducerEpochException", "Producer attempted to produce with an old epoch."),
    48: ("InvalidTxnStateException", "The producer attempted a transactional operation in an invalid state."),
    49: (
        "InvalidPidMappingException",
        ("The producer attempted to use a producer id which is not currently assigned to its transactional id."),
    ),
    50: (
        "InvalidTxnTimeoutException",
        (
            "The transaction timeout is larger than the maximum value allowed by the broker (as "
            "configured by transaction.max.timeout.ms)."
        ),
    ),
    51: (
        "ConcurrentTransactionsException",
        (
            "The producer attempted to update a transaction while another concurrent operation on the "
            "same transaction was ongoing."
        ),
    ),
    52: (
        "TransactionCoordinatorFencedException",
        (
            "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the "
            "current coordinator for a given producer."
        ),
    ),
    53: ("TransactionalIdAuthorizationException", "Transactional Id authorization failed."),
    54: ("SecurityDisabledException", "Security features are disabled."),
    55: (
        "OperationNotAttemptedException",
        (
            "The broker did not attempt to execute this operation. This may happen for batched RPCs "
            "where some operations in the batch failed, causing the broker to respond without trying "
            "the rest."
        ),
    ),
    56: ("KafkaStorageException", "Disk error when trying to access log file on the disk."),
    57: ("LogDirNotFoundException", "The user-specified log directory is not found in the broker config."),
    58: ("SaslAuthenticationException", "SASL Authentication failed."),
    59: (
        "UnknownProducerIdException",
        (
            "This exception is raised by the broker if it could not locate the producer metadata "
            "associated with the producerId in question. This could happen if, for instance, the "
            "producer's records were deleted because their retention time had elapsed. Once the last "
            "records of the producerId are removed, the producer's metadata is removed from the broker,"
            " and future appends by the producer will return this exception."
        ),
    ),
    60: ("ReassignmentInProgressException", "A partition reassignment is in progress."),
    61: ("DelegationTokenDisabledException", "Delegation Token feature is not enabled."),
    62: ("DelegationTokenNotFoundException", "Delegation Token is not found on server."),
    63: ("DelegationTokenOwnerMismatchException", "Specified Principal is not valid Owner/Renewer."),
    64: (
        "UnsupportedByAuthenticationException",
        (
            "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
            "delegation token authenticated channels."
        ),
    ),
    65: ("DelegationTokenAuthorizationException", "Delegation Token authorization failed."),
    66: ("DelegationTokenExpiredException", "Delegation Token is expired."),
    67: ("InvalidPrincipalTypeException", "Supplied principalType is not supported."),
    68: ("GroupNotEmptyException", "The group is not empty."),
    69: ("GroupIdNotFoundException", "The group id does not exist."),
    70: ("FetchSessionIdNotFoundException", "The fetch session ID was not found."),
    71: ("InvalidFetchSessionEpochException", "The fetch session epoch is invalid."),
    72: (
        "ListenerNotFoundException",
        (
            "There is no listener on the leader broker that matches the listener on which metadata "
            "request was processed."
        ),
    ),
    73: ("TopicDeletionDisabledException", "Topic deletion is disabled."),
    74: (
        "FencedLeaderEpochException",
        "The leader epoch in the request is older than the epoch on the broker.",
    ),
    75: (
        "UnknownLeaderEpochException",
        "The leader epoch in the request is newer than the epoch on the broker.",
    ),
    76: (
        "UnsupportedCompressionTypeException",
        "The requesting client does not support the compression type of given partition.",
    ),
    77: ("StaleBrokerEpochException", "Broker epoch has changed."),
    78: (
        "OffsetNotAvailableException",
        (
            "The leader high watermark has not caught up from a recent leader election so the offsets "
            "cannot be guaranteed to be monotonically increasing."
        ),
    ),
    79: (
        "MemberIdRequiredException",
        ("The group member needs to have a valid member id before actually entering a consumer group."),
    ),
    80: ("PreferredLeaderNotAvailableException", "The preferred leader was not available."),
    81: ("GroupMaxSizeReachedException", "The group has reached its maximum size."),
    82: (
        "FencedInstanceIdException",
        (
            "The broker rejected this static consumer since another consumer with the same "
            "group.instance.id has registered with a different member.id."
        ),
    ),
    83: ("EligibleLeadersNotAvailableException", "Eligible topic partition leaders are not available."),
    84: ("ElectionNotNeededException", "Leader election not needed for topic partition."),
    85: ("NoReassignmentInProgressException", "No partition reassignment is in progress."),
    86: (
        "GroupSubscribedToTopicException",
        ("Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    ),
    87: (
        "org.apache.kafka.common.InvalidRecordException",
        "This record has failed the validation on broker and hence will be rejected.",
    ),
    88: ("UnstableOffsetCommitException", "There are unstable offsets that need to be cleared."),
    89: ("ThrottlingQuotaExceededException", "The throttling quota has been exceeded."),
    90: (
        "ProducerFencedException",
        "There is a newer producer with the same transactionalId which fences the current one.",
    ),
    91: ("ResourceNotFoundException", "A request illegally referred to a resource that does not exist."),
    92: ("DuplicateResourceException", "A request illegally referred to the same resource twice."),
    93: (
        "UnacceptableCredentialException",
        "Requested credential would not meet criteria for acceptability.",
    ),
    94: (
        "InconsistentVoterSetException",
        (
            "Indicates that the either the sender or recipient of a voter-only request is not one of "
            "the expected voters."
        ),
    ),
    95: ("InvalidUpdateVersionException", "The given update version was invalid."),
    96: (
        "FeatureUpdateFailedException",
        "Unable to update finalized features due to an unexpected server error.",
    ),
    97: (
        "PrincipalDeserializationException",
        (
            "Request principal deserialization failed during forwarding. This indicates an internal "
            "error on the broker cluster security setup."
        ),
    ),
    98: ("SnapshotNotFoundException", "Requested snapshot was not found."),
    99: (
        "PositionOutOfRangeException",
        ("Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    ),
    100: ("UnknownTopicIdException", "This server does not host this topic ID."),
    101: ("DuplicateBrokerRegistrationException", "This broker ID is already in use."),
    102: ("BrokerIdNotRegisteredException", "The given broker ID was not registered."),
    103: ("InconsistentTopicIdException", "The log's topic ID did not match the topic ID in the request."),
    104: (
        "InconsistentClusterIdException",
        "The clusterId in the request does not match that found on the server.",
    ),
    105: ("TransactionalIdNotFoundException", "The transactionalId could not be found."),
    106: ("FetchSessionTopicIdException", "The fetch session encountered inconsistent topic ID usage."),
    107: ("IneligibleReplicaException", "The new ISR contains at least one ineligible replica."),
    108: (
        "NewLeaderElectedException",
        ("The AlterPartition request successfully updated the partition state but the leader has changed."),
    ),
    109: ("OffsetMovedToTieredStorageException", "The requested offset is moved to tiered storage."),
    110: (
        "FencedMemberEpochException",
        ("The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin."),
    ),
    111: (
        "UnreleasedInstanceIdException",
        ("The instance ID is still used by another member in the consumer group. That member must leave first."),
    ),
    112: (
        "UnsupportedAssignorException",
        "The assignor or its version range is not supported by the consumer group.",
    ),
    113: (
        "StaleMemberEpochException",
        (
            "The member epoch is stale. The member must retry after receiving its updated member epoch "
            "via the ConsumerGroupHeartbeat API."
        ),
    ),
    114: ("MismatchedEndpointTypeException", "The request was sent to an endpoint of the wrong type."),
    115: ("UnsupportedEndpointTypeException", "This endpoint type is not supported yet."),
    116: ("UnknownControllerIdException", "This controller ID is not known."),
    117: (
        "UnknownSubscriptionIdException",
        "Client sent a push telemetry request with an invalid or outdated subscription ID.",
    ),
    118: (
        "TelemetryTooLargeException",
        "Client sent a push telemetry request larger than the maximum size the broker will accept.",
    ),
    119: (
        "InvalidRegistrationException",
        "The controller has considered the broker registration to be invalid.",
    ),
    120: (
        "TransactionAbortableException",
        (
            "The server encountered an error with the transaction. The client can abort the transaction"
            " to continue using this transactional ID."
        ),
    ),
    121: (
        "InvalidRecordStateException",
        "The record state is invalid. The acknowledgement of delivery could not be completed.",
    ),
    122: ("ShareSessionNotFoundException", "The share session was not found."),
    123: ("InvalidShareSessionEpochException", "The share session epoch is invalid."),
    124: (
        "FencedStateEpochException",
        ("The share coordinator rejected the request because the share-group state epoch did not match."),
    ),
    125: ("InvalidVoterKeyException", "The voter key doesn't match the receiving replica's key."),
    126: ("DuplicateVoterException", "The voter is already part of the set of voters."),
    127: ("VoterNotFoundException", "The voter is not part of the set of voters."),
    128: ("InvalidRegularExpression", "The regular expression is not valid."),
    129: (
        "RebootstrapRequiredException",
        "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
    ),
    130: ("StreamsInvalidTopologyException", "The supplied topology is invalid."),
    131: ("StreamsInvalidTopologyEpochException", "The supplied topology epoch is invalid."),
    132: ("StreamsTopologyFencedException", "The supplied topology epoch is outdated."),
    133: ("ShareSessionLimitReachedException", "The limit of share sessions has been reached."),
}
