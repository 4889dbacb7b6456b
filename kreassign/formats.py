"""The Apache tool's two JSON file formats: parse them with its rules and messages, print its output.

Mirrors ``ReassignPartitionsCommand`` of Apache Kafka 4.3.1 (``parsePartitionReassignmentData``,
``parseExecuteAssignmentArgs``, ``parseTopicsData``, ``parseGenerateAssignmentArgs``,
``formatAsReassignmentJson``) on top of :mod:`kreassign.jsoncompat`, which reads JSON the way Kafka's
Jackson does. Every error is a :mod:`kreassign.errors` type whose message is the Java exception's
``getMessage()``, i.e. what the Apache tool prints after ``Error: ``.

Messages that list a Java ``HashSet`` (duplicate entries) use Java's iteration order, reproduced by
:class:`_JavaHashSet`.

Standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Generic, TypeVar

from kreassign import jsoncompat
from kreassign.errors import CommandError, InvalidJsonError
from kreassign.jsoncompat import JacksonError, JsonValue, node_to_string, quote_json_string
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
    return jsoncompat.decode_utf8_like_java(data)


# ---------------------------------------------------------------------------------------------------
# Kafka's JsonValue / DecodeJson, on jsoncompat values
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
    if type(value) is int and jsoncompat.INT_MIN <= value <= jsoncompat.INT_MAX:
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


def _java_list_text(items: Iterable[object]) -> str:
    """``AbstractCollection.toString()``."""
    return "[" + ", ".join(map(str, items)) + "]"


# ---------------------------------------------------------------------------------------------------
# Reassignment JSON
# ---------------------------------------------------------------------------------------------------


def parse_reassignment_json(text: str) -> ReassignmentPlan:
    """``parsePartitionReassignmentData``: what ``--execute``, ``--verify`` and ``--cancel`` read.

    Partitions keep file order and duplicates; ``log_dirs`` holds the replicas whose log dir is not
    ``"any"`` (a later entry for the same replica wins, as in the Java ``HashMap``).
    """
    with jsoncompat.gc_paused():
        root = _as_json_object(jsoncompat.try_parse_full(text))
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
        or not jsoncompat.INT_MIN <= partition <= jsoncompat.INT_MAX
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
    return set(map(type, values)) == {int} and min(values) >= jsoncompat.INT_MIN and max(values) <= jsoncompat.INT_MAX  # type: ignore[type-var,operator]


def _checked_entry(fields: dict[str, JsonValue]) -> _Entry:
    """The entry decoded field by field in the Apache tool's order, raising its first error."""
    topic = _decode_string(_required_field(fields, "topic"))
    partition = _decode_int(_required_field(fields, "partition"))
    replicas = _decode_list(_required_field(fields, "replicas"), _decode_int)
    has_dirs = "log_dirs" in fields
    dirs = _decode_list(fields["log_dirs"], _decode_string) if has_dirs else [ANY_LOG_DIR] * len(replicas)
    if len(replicas) != len(dirs):
        raise CommandError(
            f"Size of replicas list {_java_list_text(replicas)} is different from size of log dirs list "
            f"{_java_list_text(dirs)} for partition {TopicPartition(topic, partition)}"
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
        duplicate_partitions = duplicates([tp for tp, _ in plan.partitions], _topic_partition_hash, None)
        raise CommandError(
            "Partition reassignment contains duplicate topic partitions: " + ",".join(map(str, duplicate_partitions))
        )
    problems = []
    for topic_partition, replicas in plan.partitions:
        if len(set(replicas)) != len(replicas):
            repeated = duplicates(replicas, _integer_hash, _compare_numbers)
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


def format_topics_json(topics: Iterable[TopicAssignmentColumns]) -> str:
    """``formatAsReassignmentJson`` from columns: the same bytes, topics sorted like ``compareTopicPartitions``
    (``String.compareTo``: UTF-16 code units, which differs from Python's code point order only between
    characters above U+FFFF and those in U+E000..U+FFFF). One string per partition, built by one f-string."""
    by_name = {name: (name, partitions, replicas, dirs) for name, partitions, replicas, dirs in topics}
    names = sorted(by_name)
    if not all(name.isascii() or not jsoncompat.has_supplementary_characters(name) for name in names):
        names.sort(key=_utf16_key)
    quoted: dict[str | None, str] = {None: '"' + ANY_LOG_DIR + '"'}
    dirs_text: dict[tuple[str | None, ...], str] = {}
    any_dirs: dict[int, str] = {}
    texts: list[str] = []
    for name in names:
        _, partitions, replicas, dirs = by_name[name]
        head = '{"topic":' + quote_json_string(name) + ',"partition":'
        if dirs is None:
            for length in set(map(len, replicas)) - any_dirs.keys():
                any_dirs[length] = ",".join(['"' + ANY_LOG_DIR + '"'] * length)
            entries = [
                f'{head}{p},"replicas":[{",".join(map(str, on))}],"log_dirs":[{any_dirs[len(on)]}]}}'
                for p, on in zip(partitions, replicas, strict=True)
            ]
        else:
            for one in set(map(tuple, dirs)) - dirs_text.keys():
                for log_dir in set(one) - quoted.keys():
                    quoted[log_dir] = quote_json_string(log_dir)  # type: ignore[arg-type]
                dirs_text[one] = ",".join([quoted[log_dir] for log_dir in one])
            entries = [
                f'{head}{p},"replicas":[{",".join(map(str, on))}],"log_dirs":[{dirs_text[tuple(where)]}]}}'
                for p, on, where in zip(partitions, replicas, dirs, strict=True)
            ]
        if entries:
            texts.append(",".join(entries))  # a topic at a time: the entries of one topic live at once
    return '{"version":1,"partitions":[' + ",".join(texts) + "]}"


# ---------------------------------------------------------------------------------------------------
# Topics-to-move JSON and broker list (--generate)
# ---------------------------------------------------------------------------------------------------


def parse_topics_to_move_json(text: str) -> list[str]:
    """``parseTopicsData``: a document Jackson cannot read at all is "not a valid JSON"."""
    try:
        tree = jsoncompat.try_parse_full(text)
    except JacksonError:
        raise InvalidJsonError("The input string is not a valid JSON") from None
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
    """``Stream.of(brokerList.split(",")).map(Integer::parseInt)``."""
    return [java_parse_int(part) for part in java_split_on_comma(text)]


def check_broker_list_duplicates(brokers: Sequence[int]) -> None:
    repeated = java_duplicates(brokers, _integer_hash, _compare_numbers)
    if repeated:
        raise CommandError(f"Broker list contains duplicate entries: {_java_list_text(repeated)}")


def check_topic_duplicates(topics: Sequence[str]) -> None:
    repeated = java_duplicates(topics, java_string_hash, _compare_strings)
    if repeated:
        raise CommandError(f"List of topics to reassign contains duplicate entries: {_java_list_text(repeated)}")


def parse_generate_assignment_args(topics_json: str, broker_list: str) -> tuple[list[int], list[str]]:
    """``parseGenerateAssignmentArgs``: brokers, their duplicates, topics, their duplicates."""
    brokers = parse_broker_list(broker_list)
    check_broker_list_duplicates(brokers)
    topics = parse_topics_to_move_json(topics_json)
    check_topic_duplicates(topics)
    return brokers, topics


def java_split_on_comma(text: str) -> list[str]:
    """``String.split(",")``: no separator gives the whole text; otherwise trailing empties are dropped."""
    parts = text.split(",")
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``: optional sign, then Unicode decimal digits (UTF-16 units), 32 bits."""
    units = jsoncompat.java_code_units(text)
    if not units:
        raise _number_format_error(text)
    negative = units[0] == "-"
    digits = units[1:] if units[0] in "+-" else units
    if not digits:
        raise _number_format_error(text)
    value = 0
    for unit in digits:
        digit = unicodedata.decimal(unit, -1)
        if digit < 0:
            raise _number_format_error(text)
        value = value * 10 + digit
        if value > jsoncompat.INT_MAX + negative:
            raise _number_format_error(text)
    return -value if negative else value


def _number_format_error(text: str) -> CommandError:
    """``NumberFormatException.forInputString(s, 10)``."""
    return CommandError(f'For input string: "{text}"')


# ---------------------------------------------------------------------------------------------------
# Java hash codes and HashSet iteration order
# ---------------------------------------------------------------------------------------------------


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def _utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: over UTF-16 code units."""
    data = _utf16_key(text)
    value = 0
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] << 8 | data[index + 1])) & 0xFFFFFFFF
    return _int32(value)


def _integer_hash(value: int) -> int:
    return _int32(value)


def _topic_partition_hash(tp: TopicPartition) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode()``."""
    return _int32(31 * (31 + tp.partition) + java_string_hash(tp.topic))


def _compare_numbers(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _compare_strings(a: str, b: str) -> int:
    """``String.compareTo``: UTF-16 code unit order."""
    key_a, key_b = _utf16_key(a), _utf16_key(b)
    return (key_a > key_b) - (key_a < key_b)


_K = TypeVar("_K", bound=Hashable)
Comparator = Callable[[_K, _K], int]


def java_duplicates(items: Iterable[_K], hash_code: Callable[[_K], int], compare: Comparator[_K] | None) -> list[_K]:
    """``ToolsUtils.duplicates``: each repeated element once, in the iteration order of its HashSet.

    ``compare`` is the natural order when the element class is ``Comparable`` (used by tree bins).
    """
    seen: set[_K] = set()
    duplicates = _JavaHashSet(hash_code, compare)
    for item in items:
        if item in seen:
            duplicates.add(item)
        else:
            seen.add(item)
    return duplicates.in_iteration_order()


class _Node(Generic[_K]):
    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right")

    def __init__(self, hash_value: int, key: _K) -> None:
        self.hash = hash_value
        self.key = key
        self.next: _Node[_K] | None = None
        self.prev: _Node[_K] | None = None
        self.left: _Node[_K] | None = None
        self.right: _Node[_K] | None = None
        self.parent: _Node[_K] | None = None
        self.red = False


class _JavaHashSet(Generic[_K]):
    """``java.util.HashSet`` (a default ``HashMap``), enough to know its iteration order.

    Plain bins keep insertion order and split in order on resize; a bin past 8 entries (in a table of
    at least 64) becomes a red-black tree whose linked order changes as Java's does. Keys of a class
    that is not ``Comparable`` with equal hash codes are ordered by ``System.identityHashCode`` in Java,
    which no one can predict (here: as if the newer key had the smaller identity hash code).
    """

    _TREEIFY_THRESHOLD = 8
    _UNTREEIFY_THRESHOLD = 6
    _MIN_TREEIFY_CAPACITY = 64

    def __init__(self, hash_code: Callable[[_K], int], compare: Comparator[_K] | None) -> None:
        self._hash_code = hash_code
        self._compare = compare
        self._members: set[_K] = set()
        self._table: list[_Node[_K] | None] = []
        self._threshold = 0
        self._tree_bins: set[int] = set()

    def add(self, key: _K) -> None:
        if key in self._members:
            return
        self._members.add(key)
        hashed = self._hash_code(key)
        spread = _int32(hashed ^ ((hashed & 0xFFFFFFFF) >> 16))
        if not self._table:
            self._resize()
        index = spread & (len(self._table) - 1)
        head = self._table[index]
        if head is None:
            self._table[index] = _Node(spread, key)
        elif index in self._tree_bins:
            self._put_tree_value(index, spread, key)
        else:
            count = 1
            node = head
            while node.next is not None:
                node = node.next
                count += 1
            node.next = _Node(spread, key)
            if count >= self._TREEIFY_THRESHOLD:
                self._treeify_bin(index)
        if len(self._members) > self._threshold:
            self._resize()

    def in_iteration_order(self) -> list[_K]:
        keys = []
        for head in self._table:
            node = head
            while node is not None:
                keys.append(node.key)
                node = node.next
        return keys

    # -- table -------------------------------------------------------------------------------------

    def _resize(self) -> None:
        old = self._table
        if not old:
            self._table = [None] * 16
            self._threshold = 12
            return
        capacity = len(old) * 2
        self._threshold *= 2
        self._table = [None] * capacity
        old_tree_bins, self._tree_bins = self._tree_bins, set()
        for index, head in enumerate(old):
            if head is None:
                continue
            low, high = self._split_in_order(head, len(old))
            for target, nodes in ((index, low), (index + len(old), high)):
                if not nodes:
                    continue
                self._link(target, nodes)
                stays_tree = index in old_tree_bins and len(nodes) > self._UNTREEIFY_THRESHOLD
                if stays_tree:
                    self._tree_bins.add(target)
                    if low and high:
                        self._treeify(target)

    @staticmethod
    def _split_in_order(head: _Node[_K], bit: int) -> tuple[list[_Node[_K]], list[_Node[_K]]]:
        low: list[_Node[_K]] = []
        high: list[_Node[_K]] = []
        node: _Node[_K] | None = head
        while node is not None:
            (high if node.hash & bit else low).append(node)
            node = node.next
        return low, high

    def _link(self, index: int, nodes: list[_Node[_K]]) -> None:
        previous = None
        for node in nodes:
            node.prev = previous
            node.next = None
            if previous is not None:
                previous.next = node
            previous = node
        self._table[index] = nodes[0]

    # -- tree bins ---------------------------------------------------------------------------------

    def _direction(self, key: _K, hash_value: int, other: _Node[_K]) -> int:
        if other.hash > hash_value:
            return -1
        if other.hash < hash_value:
            return 1
        order = self._compare(key, other.key) if self._compare is not None else 0
        return order if order != 0 else -1  # tieBreakOrder: identity hash codes, unpredictable

    def _treeify_bin(self, index: int) -> None:
        if len(self._table) < self._MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        nodes = []
        node = self._table[index]
        while node is not None:
            nodes.append(node)
            node = node.next
        self._link(index, nodes)  # plain nodes have no prev links; tree nodes do
        self._tree_bins.add(index)
        self._treeify(index)

    def _treeify(self, index: int) -> None:
        root: _Node[_K] | None = None
        node = self._table[index]
        while node is not None:
            node.left = node.right = None
            if root is None:
                node.parent = None
                node.red = False
                root = node
            else:
                self._attach(root, node)
                root = self._balance_insertion(root, node)
            node = node.next
        assert root is not None
        self._move_root_to_front(index, root)

    def _attach(self, root: _Node[_K], node: _Node[_K]) -> _Node[_K]:
        parent = root
        while True:
            direction = self._direction(node.key, node.hash, parent)
            child = parent.left if direction <= 0 else parent.right
            if child is None:
                node.parent = parent
                if direction <= 0:
                    parent.left = node
                else:
                    parent.right = node
                return parent
            parent = child

    def _put_tree_value(self, index: int, hash_value: int, key: _K) -> None:
        root = self._table[index]
        assert root is not None
        while root.parent is not None:
            root = root.parent
        node = _Node(hash_value, key)
        parent = self._attach(root, node)
        following = parent.next
        node.next = following
        parent.next = node
        node.prev = parent
        if following is not None:
            following.prev = node
        self._move_root_to_front(index, self._balance_insertion(root, node))

    def _move_root_to_front(self, index: int, root: _Node[_K]) -> None:
        first = self._table[index]
        if root is first:
            return
        self._table[index] = root
        before, after = root.prev, root.next
        if after is not None:
            after.prev = before
        if before is not None:
            before.next = after
        if first is not None:
            first.prev = root
        root.next = first
        root.prev = None

    @staticmethod
    def _rotate_left(root: _Node[_K], node: _Node[_K]) -> _Node[_K]:
        right = node.right
        if right is None:
            return root
        node.right = right.left
        if right.left is not None:
            right.left.parent = node
        right.parent = node.parent
        if node.parent is None:
            root = right
            right.red = False
        elif node.parent.left is node:
            node.parent.left = right
        else:
            node.parent.right = right
        right.left = node
        node.parent = right
        return root

    @staticmethod
    def _rotate_right(root: _Node[_K], node: _Node[_K]) -> _Node[_K]:
        left = node.left
        if left is None:
            return root
        node.left = left.right
        if left.right is not None:
            left.right.parent = node
        left.parent = node.parent
        if node.parent is None:
            root = left
            left.red = False
        elif node.parent.right is node:
            node.parent.right = left
        else:
            node.parent.left = left
        left.right = node
        node.parent = left
        return root

    def _balance_insertion(self, root: _Node[_K], node: _Node[_K]) -> _Node[_K]:
        """``HashMap.TreeNode.balanceInsertion`` (CLR red-black insertion fix-up)."""
        node.red = True
        while True:
            parent = node.parent
            if parent is None:
                node.red = False
                return node
            grand = parent.parent
            if not parent.red or grand is None:
                return root
            if parent is grand.left:
                uncle = grand.right
                if uncle is not None and uncle.red:
                    uncle.red = parent.red = False
                    grand.red = True
                    node = grand
                    continue
                if node is parent.right:
                    node = parent
                    root = self._rotate_left(root, node)
                    parent = node.parent
                    grand = parent.parent if parent is not None else None
                if parent is not None:
                    parent.red = False
                    if grand is not None:
                        grand.red = True
                        root = self._rotate_right(root, grand)
            else:
                uncle = grand.left
                if uncle is not None and uncle.red:
                    uncle.red = parent.red = False
                    grand.red = True
                    node = grand
                    continue
                if node is parent.left:
                    node = parent
                    root = self._rotate_right(root, node)
                    parent = node.parent
                    grand = parent.parent if parent is not None else None
                if parent is not None:
                    parent.red = False
                    if grand is not None:
                        grand.red = True
                        root = self._rotate_left(root, grand)
