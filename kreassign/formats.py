"""The Apache tool's two JSON file formats: parse them with its rules and messages, print its output.

Mirrors ``ReassignPartitionsCommand`` of Apache Kafka 4.4.0 (``parsePartitionReassignmentData``,
``parseExecuteAssignmentArgs``, ``parseTopicsData``, ``parseGenerateAssignmentArgs``,
``formatAsReassignmentJson``) on top of :mod:`kreassign.javacompat.jackson_reader`, which reads JSON the
way Kafka's Jackson does. Every error is a :mod:`kreassign.errors` type whose message is the Java exception's
``getMessage()``, i.e. what the Apache tool prints after ``Error: ``.

Messages that list a Java ``HashSet`` (duplicate entries) use Java's iteration order, reproduced by
:mod:`kreassign.javacompat.hashmap`.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import TypeVar

from kreassign.errors import CommandError, InvalidJsonError
from kreassign.gcpause import gc_paused
from kreassign.javacompat.arithmetic import INT_MAX, INT_MIN
from kreassign.javacompat.hashes import (
    java_int_compare,
    java_int_hash,
    java_string_compare,
    java_string_hash,
    java_topic_partition_hash,
)
from kreassign.javacompat.hashmap import hash_set_order
from kreassign.javacompat.jackson_errors import JacksonError
from kreassign.javacompat.jackson_nodes import JsonValue
from kreassign.javacompat.jackson_reader import try_parse_full
from kreassign.javacompat.jackson_writer import node_to_string, quote_json_string
from kreassign.javacompat.text import (
    decode_utf8_like_java,
    has_supplementary_characters,
    java_collection_text,
    java_parse_int,
    java_split_on_comma,
    utf16_units,
)
from kreassign.model import ANY_LOG_DIR, ReassignmentPlan, TopicPartition, TopicPartitionReplica

__all__ = [
    "check_broker_list_duplicates",
    "check_topic_duplicates",
    "decode_file_bytes",
    "format_reassignment_json",
    "parse_broker_list",
    "parse_generate_assignment_args",
    "parse_reassignment_json",
    "parse_topics_to_move_json",
    "validate_execute_plan",
]

EARLIEST_VERSION = 1
EARLIEST_TOPICS_JSON_VERSION = 1


def decode_file_bytes(data: bytes) -> str:
    """Kafka's ``Utils.readFileAsString`` decoding: UTF-8, malformed bytes replaced the way Java does."""
    return decode_utf8_like_java(data)


# ---------------------------------------------------------------------------------------------------
# Kafka's JsonValue / DecodeJson, on Jackson tree values
# ---------------------------------------------------------------------------------------------------


def _as_json_object(value: JsonValue) -> dict[str, JsonValue]:
    """``JsonValue.asJsonObject()``."""
    if type(value) is not dict:
        raise InvalidJsonError(f"Expected JSON object, received {node_to_string(value)}")
    return value


def _as_json_array(value: JsonValue) -> list[JsonValue]:
    """``JsonValue.asJsonArray()``."""
    if type(value) is not list:
        raise InvalidJsonError(f"Expected JSON array, received {node_to_string(value)}")
    return value


def _required_field(fields: dict[str, JsonValue], name: str) -> JsonValue:
    """``JsonObject.apply(name)``."""
    if name not in fields:
        raise InvalidJsonError(f"No such field exists: `{name}`")
    return fields[name]


def _decode_mismatch(expected: str, value: JsonValue) -> InvalidJsonError:
    return InvalidJsonError(f"Expected `{expected}` value, received {node_to_string(value)}")


def _decode_int(value: JsonValue) -> int:
    """``DecodeJson.DecodeInteger``: only ``node.isInt()`` (an integer token within 32 bits)."""
    if type(value) is int and INT_MIN <= value <= INT_MAX:
        return value
    raise _decode_mismatch("Integer", value)


def _decode_string(value: JsonValue) -> str:
    """``DecodeJson.DecodeString``."""
    if type(value) is str:
        return value
    raise _decode_mismatch("String", value)


_T = TypeVar("_T")


def _decode_list(value: JsonValue, decode_element: Callable[[JsonValue], _T]) -> list[_T]:
    """``DecodeJson.decodeList``."""
    if type(value) is not list:
        raise _decode_mismatch("JSON array", value)
    return [decode_element(element) for element in value]


def _version_field(root: dict[str, JsonValue], earliest: int) -> int:
    return _decode_int(root["version"]) if "version" in root else earliest


def _unsupported_version(version: int) -> InvalidJsonError:
    return InvalidJsonError(f"Not supported version field value {version}")


# ---------------------------------------------------------------------------------------------------
# Reassignment JSON
# ---------------------------------------------------------------------------------------------------


def parse_reassignment_json(text: str) -> ReassignmentPlan:
    """``parsePartitionReassignmentData``: what ``--execute``, ``--verify`` and ``--cancel`` read.

    Partitions keep file order and duplicates; ``log_dirs`` holds the replicas whose log dir is not
    ``"any"`` (a later entry for the same replica wins, as in the Java ``HashMap``).
    """
    with gc_paused():
        root = _as_json_object(try_parse_full(text))
        version = _version_field(root, EARLIEST_VERSION)
        if version != 1:
            raise _unsupported_version(version)
        partitions: list[tuple[TopicPartition, tuple[int, ...]]] = []
        log_dirs: dict[TopicPartitionReplica, str] = {}
        if "partitions" in root:
            for entry in _as_json_array(root["partitions"]):
                _read_partition_entry(_as_json_object(entry), partitions, log_dirs)
        return ReassignmentPlan(tuple(partitions), log_dirs)


def _read_partition_entry(
    fields: dict[str, JsonValue],
    partitions: list[tuple[TopicPartition, tuple[int, ...]]],
    log_dirs: dict[TopicPartitionReplica, str],
) -> None:
    topic, partition, replicas, dirs = _plain_entry(fields) or _checked_entry(fields)
    topic = as_sent_to_kafka(topic)
    if dirs is not None:
        dirs = [as_sent_to_kafka(d) for d in dirs]
    partitions.append((TopicPartition(topic, partition), tuple(replicas)))
    if dirs is not None and dirs.count(ANY_LOG_DIR) != len(dirs):
        for broker, log_dir in zip(replicas, dirs, strict=True):
            if log_dir != ANY_LOG_DIR:
                log_dirs[TopicPartitionReplica(topic, partition, broker)] = log_dir


_Entry = tuple[str, int, list[int], "list[str] | None"]


def _plain_entry(fields: dict[str, JsonValue]) -> _Entry | None:
    """The usual well-formed entry, checked with few Python operations; None if anything is unusual."""
    topic = fields.get("topic")
    partition = fields.get("partition")
    replicas = fields.get("replicas")
    dirs = fields.get("log_dirs")
    if (
        type(topic) is not str
        or type(partition) is not int
        or not INT_MIN <= partition <= INT_MAX
        or type(replicas) is not list
        or (replicas and not _all_int32(replicas))
    ):
        return None
    if dirs is None:
        return (topic, partition, replicas, None) if "log_dirs" not in fields else None
    if type(dirs) is not list or len(dirs) != len(replicas) or (dirs and set(map(type, dirs)) != {str}):
        return None
    return topic, partition, replicas, dirs  # type: ignore[return-value]


def _all_int32(values: list[JsonValue]) -> bool:
    return set(map(type, values)) == {int} and min(values) >= INT_MIN and max(values) <= INT_MAX  # type: ignore[type-var,operator]


def _checked_entry(fields: dict[str, JsonValue]) -> _Entry:
    """The entry decoded field by field in the Apache tool's order, raising its first error."""
    topic = _decode_string(_required_field(fields, "topic"))
    partition = _decode_int(_required_field(fields, "partition"))
    replicas = _decode_list(_required_field(fields, "replicas"), _decode_int)
    has_dirs = "log_dirs" in fields
    dirs = _decode_list(fields["log_dirs"], _decode_string) if has_dirs else [ANY_LOG_DIR] * len(replicas)
    if len(replicas) != len(dirs):
        raise CommandError(
            f"Size of replicas list {java_collection_text(replicas)} is different from size of log dirs list "
            f"{java_collection_text(dirs)} for partition {TopicPartition(topic, partition)}"
        )
    return topic, partition, replicas, dirs


def validate_execute_plan(
    plan: ReassignmentPlan, duplicates: Callable[..., list] | None = None
) -> dict[TopicPartition, tuple[int, ...]]:
    """The checks ``parseExecuteAssignmentArgs`` adds, in its order; returns the target replicas.

    ``duplicates`` lists repeated elements in the order the tool prints them (default: the Java
    ``HashSet`` of the current tool, :func:`java_duplicates`; Kafka 2.8 used Scala collections)."""
    duplicates = duplicates or java_duplicates
    if not plan.partitions:
        raise CommandError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in plan.partitions):
        raise CommandError("Partition replica list cannot be empty")
    targets = dict(plan.partitions)
    if len(targets) != len(plan.partitions):
        duplicate_partitions = duplicates([tp for tp, _ in plan.partitions], java_topic_partition_hash, None)
        raise CommandError(
            "Partition reassignment contains duplicate topic partitions: " + ",".join(map(str, duplicate_partitions))
        )
    problems = []
    for topic_partition, replicas in plan.partitions:
        if len(set(replicas)) != len(replicas):
            repeated = duplicates(replicas, java_int_hash, java_int_compare)
            problems.append(f"{topic_partition} contains multiple entries for {','.join(map(str, repeated))}")
    if problems:
        raise CommandError("Partition replica lists may not contain duplicate entries: " + ". ".join(problems))
    return targets


TopicAssignmentColumns = tuple[str, Sequence[int], Sequence[Sequence[int]], "Sequence[Sequence[str | None]] | None"]
"""One topic for :func:`format_topics_json`: its name, its partition numbers in ascending order, each
partition's replicas, and each partition's log dir per replica (None, or None for a replica: ``"any"``)."""


def format_reassignment_json(
    assignments: Mapping[TopicPartition, Sequence[int]],
    log_dirs: Mapping[TopicPartitionReplica, str],
) -> str:
    """``formatAsReassignmentJson``: Jackson's compact JSON, partitions sorted by topic then number."""
    by_topic: dict[str, list[TopicPartition]] = {}
    for tp in assignments:
        by_topic.setdefault(tp.topic, []).append(tp)
    topics: list[TopicAssignmentColumns] = []
    for topic, tps in by_topic.items():
        tps.sort(key=attrgetter("partition"))
        replicas = [assignments[tp] for tp in tps]
        dirs = None
        if log_dirs:
            dirs = [
                tuple(log_dirs.get(TopicPartitionReplica(topic, tp.partition, broker)) for broker in on)
                for tp, on in zip(tps, replicas, strict=True)
            ]
        topics.append((topic, [tp.partition for tp in tps], replicas, dirs))
    return format_topics_json(topics)


def sort_topic_names(names: Iterable[str]) -> list[str]:
    """Topic names in the order of ``compareTopicPartitions`` (``String.compareTo``)."""
    ordered = sorted(names)
    if not all(name.isascii() or not has_supplementary_characters(name) for name in ordered):
        ordered.sort(key=utf16_units)
    return ordered


def topic_entry_head(name: str) -> str:
    """The text of a partition's entry in :func:`format_topics_json` up to its partition number."""
    return '{"topic":' + quote_json_string(name) + ',"partition":'


def format_topics_json(topics: Iterable[TopicAssignmentColumns]) -> str:
    """``formatAsReassignmentJson`` from columns: the same bytes, topics sorted like ``compareTopicPartitions``
    (``String.compareTo``: UTF-16 code units, which differs from Python's code point order only between
    characters above U+FFFF and those in U+E000..U+FFFF). One string per partition, built by one %-format."""
    return "".join(topics_json_pieces(topics))


def topics_json_pieces(topics: Iterable[TopicAssignmentColumns]) -> Iterator[str]:
    """:func:`format_topics_json` a piece at a time, in order: its opening, the entries of each topic (a
    comma before all but the first), its closing; only one topic's text is made at a time."""
    by_name = {name: (name, partitions, replicas, dirs) for name, partitions, replicas, dirs in topics}
    names = sort_topic_names(by_name)
    quoted: dict[str | None, str] = {None: '"' + ANY_LOG_DIR + '"'}
    dirs_text: dict[tuple[str | None, ...], str] = {}
    any_dirs: dict[int, str] = {}
    yield '{"version":1,"partitions":['
    separator = ""
    for name in names:
        _, partitions, replicas, dirs = by_name[name]
        # a %-template per replica count: one formatting per partition (%d of an int is its str())
        head = topic_entry_head(name).replace("%", "%%") + '%d,"replicas":['
        lengths = set(map(len, replicas))
        if dirs is None:
            for length in lengths - any_dirs.keys():
                any_dirs[length] = ",".join(['"' + ANY_LOG_DIR + '"'] * length)  # no "%" to escape
            forms = {n: head + ",".join(["%d"] * n) + '],"log_dirs":[' + any_dirs[n] + "]}" for n in lengths}
            if len(lengths) == 1:  # one replica count: the whole topic in one formatting, its values a flat tuple
                yield separator + _format_run(forms, partitions, replicas, ())
                separator = ","
                continue
            entries = [forms[len(on)] % (p, *on) for p, on in zip(partitions, replicas, strict=True)]
        else:
            for one in set(map(tuple, dirs)) - dirs_text.keys():
                for log_dir in set(one) - quoted.keys():
                    quoted[log_dir] = quote_json_string(log_dir)  # type: ignore[arg-type]
                dirs_text[one] = ",".join([quoted[log_dir] for log_dir in one])
            forms = {n: head + ",".join(["%d"] * n) + '],"log_dirs":[%s]}' for n in lengths}
            if len(lengths) == 1:
                yield separator + _format_run(
                    forms, partitions, replicas, (map(dirs_text.__getitem__, map(tuple, dirs)),)
                )
                separator = ","
                continue
            entries = [
                forms[len(on)] % (p, *on, dirs_text[tuple(where)])
                for p, on, where in zip(partitions, replicas, dirs, strict=True)
            ]
        if entries:
            yield separator + ",".join(entries)  # a topic at a time: the entries of one topic live at once
            separator = ","
    yield "]}"


def _format_run(
    forms: Mapping[int, str], partitions: Sequence[int], replicas: Sequence[Sequence[int]], extra: tuple
) -> str:
    """The entries of a topic whose partitions all have the same replica count (``forms``: its one
    template), comma-separated: the template repeated once per partition, formatted once with the values of
    every partition (partition, replicas, then the columns of ``extra``) flattened in C."""
    (form,) = forms.values()
    values = tuple(chain.from_iterable(zip(partitions, *zip(*replicas, strict=True), *extra, strict=True)))
    return ",".join([form] * len(partitions)) % values


def _topic_partition_sort_key(topic_partitions: Iterable[TopicPartition]) -> Callable[[TopicPartition], tuple]:
    """``compareTopicPartitions``: ``String.compareTo`` (UTF-16 code units), then the partition.

    Python orders strings by code point, which differs from UTF-16 order only between characters
    above U+FFFF and those in U+E000..U+FFFF.
    """
    topics = {tp.topic for tp in topic_partitions}
    if all(topic.isascii() or not has_supplementary_characters(topic) for topic in topics):
        return attrgetter("topic", "partition")
    return lambda tp: (utf16_units(tp.topic), tp.partition)


# ---------------------------------------------------------------------------------------------------
# Topics-to-move JSON and broker list (--generate)
# ---------------------------------------------------------------------------------------------------


def parse_topics_to_move_json(text: str) -> list[str]:
    """``parseTopicsData``: a document Jackson cannot read at all is "not a valid JSON"."""
    try:
        tree = try_parse_full(text)
    except JacksonError as exc:  # Apache prints only this line; the cause tells kreassign's hint where
        raise InvalidJsonError("The input string is not a valid JSON") from exc
    root = _as_json_object(tree)
    version = _version_field(root, EARLIEST_TOPICS_JSON_VERSION)
    if version != 1:
        raise _unsupported_version(version)
    if "topics" not in root:
        return []
    return [
        as_sent_to_kafka(_decode_string(_required_field(_as_json_object(entry), "topic")))
        for entry in _as_json_array(root["topics"])
    ]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def as_sent_to_kafka(text: str) -> str:
    """A name as the Java clients put it on the wire (``String.getBytes(UTF_8)``): a lone surrogate,
    which JSON's ``\\ud800`` escapes can make, becomes ``?``. The Python clients cannot encode it at
    all (librdkafka crashed on it), and Java prints such a name as ``?`` anyway."""
    return text if text.isascii() else _LONE_SURROGATE.sub("?", text)


def parse_broker_list(text: str) -> list[int]:
    """``Stream.of(brokerList.split(",")).map(Integer::parseInt)``; a note says what was wrong."""
    try:
        return [java_parse_int(part) for part in java_split_on_comma(text)]
    except CommandError as error:
        if any(c.isspace() for c in text):
            compact = ",".join(part.strip() for part in text.split(","))
            error.add_note(f"--broker-list takes broker ids separated by commas, without spaces: '{compact}'.")
        else:
            error.add_note(f"--broker-list takes broker ids separated by commas (e.g. 1,2,3), not '{text}'.")
        raise


def check_broker_list_duplicates(brokers: Sequence[int]) -> None:
    repeated = java_duplicates(brokers, java_int_hash, java_int_compare)
    if repeated:
        raise CommandError(f"Broker list contains duplicate entries: {java_collection_text(repeated)}")


def check_topic_duplicates(topics: Sequence[str]) -> None:
    repeated = java_duplicates(topics, java_string_hash, java_string_compare)
    if repeated:
        raise CommandError(f"List of topics to reassign contains duplicate entries: {java_collection_text(repeated)}")


def parse_generate_assignment_args(topics_json: str, broker_list: str) -> tuple[list[int], list[str]]:
    """``parseGenerateAssignmentArgs``: brokers, their duplicates, topics, their duplicates."""
    brokers = parse_broker_list(broker_list)
    check_broker_list_duplicates(brokers)
    topics = parse_topics_to_move_json(topics_json)
    check_topic_duplicates(topics)
    return brokers, topics


_K = TypeVar("_K", bound=Hashable)
Comparator = Callable[[_K, _K], int]


def java_duplicates(items: Iterable[_K], hash_code: Callable[[_K], int], compare: Comparator[_K] | None) -> list[_K]:
    """``ToolsUtils.duplicates``: each repeated element once, in the iteration order of its HashSet.

    ``compare`` is the natural order when the element class is ``Comparable`` (used by tree bins).
    """
    seen: set[_K] = set()
    repeated = []
    for item in items:
        if item in seen:
            repeated.append(item)
        else:
            seen.add(item)
    return hash_set_order(repeated, hash_code, compare)
