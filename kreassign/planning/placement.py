"""The ``--generate`` proposal of the Apache tool, reproduced exactly. Standard library only.

Kafka 4.3.1's ``ReassignPartitionsCommand.generateAssignment`` proposes replicas with
``StripedReplicaPlacer(new Random())`` from kafka-metadata. Given the same cluster, the same topics and the
same ``java.util.Random`` seed, the functions here return the very same replica lists:

* :func:`get_broker_metadata` is ``getBrokerMetadata``: the brokers in the order ``describeCluster``
  hands them to the tool, the racks kept or dropped, the "Not all brokers have rack information" error.
* :func:`place_topic` is ``StripedReplicaPlacer.place`` for one topic (rack lists, striping with random
  start offsets, the reshuffle after each round of brokers, the ``InvalidReplicationFactorException``
  messages).
* :func:`calculate_assignment` is ``calculateAssignment``: one placement per topic, all topics sharing
  one random generator, in the iteration order of the tool's ``HashMap``s.

That last point is why :class:`JavaHashMap` exists. The order in which topics are placed (each placement
consumes random numbers) is the iteration order of a ``HashMap<String, ...>`` filled from a
``HashMap<TopicPartition, ...>``, itself filled from a chain of maps built by the tool and the admin client.
Iteration order of a ``java.util.HashMap`` depends on the table size (which depends on the constructor,
on the Java release for pre-sized copies, and on the history of resizes), on the bucket of each key, and
on the order of keys inside a bucket (insertion order for ``put``, reverse insertion order for
``computeIfAbsent``, tree order once a bucket holds 8 or 9 keys). :class:`JavaHashMap` replays the node
layout of a ``java.util.HashMap`` exactly; :func:`_iteration_order` gets the same answer faster by
replaying node by node only the buckets that can turn into trees.

Trees are not exotic here: ``TopicPartition("t-20", 0)`` and ``TopicPartition("t-10", 1)`` have the same
hash code, so numbered topic names fill buckets of up to one key per partition. Where Java itself is not
reproducible: a tree bucket holding two keys with the *same* hash code of a class that is not
``Comparable`` (``TopicPartition``, ``Optional``) is ordered by ``System.identityHashCode``, which changes
from run to run (the same puts give different orders even within one JVM); we break such ties one fixed
way. That order reaches the proposal only in rare cases (which topic comes first when two topics share a
bucket of ``groupedByTopic``; which partition gives a topic its replication factor).
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from kreassign.errors import CommandError
from kreassign.model import TopicPartition
from kreassign.planning.javarandom import JavaRandom, java_shuffle
from kreassign.planning.placement_model import InvalidReplicationFactorError, UsableBroker

__all__ = [
    "DEFAULT_JAVA_VERSION",
    "NOT_ALL_BROKERS_HAVE_RACKS",
    "ClusterNode",
    "JavaHashMap",
    "calculate_assignment",
    "describe_cluster_node_order",
    "get_broker_metadata",
    "java_string_compare",
    "java_string_hash",
    "place_topic",
    "topic_partition_hash",
]

#: The Java feature release whose ``java.util`` pre-sizing rules we follow by default. Java 19 changed
#: how ``new HashSet<>(collection)`` and ``new HashMap<>(map)`` size their table, which can change the
#: order topics are placed in; 17 is the JVM the Apache tool runs on in our harness.
DEFAULT_JAVA_VERSION = 17
_PRESIZING_CHANGED_IN = 19

NOT_ALL_BROKERS_HAVE_RACKS = (
    "Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
    "assignment without rack information."
)

K = TypeVar("K", bound=Hashable)


# --------------------------------------------------------------------------------------------------
# Java hash codes and comparisons


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _utf16_units(text: str) -> Sequence[int]:
    if text.isascii():
        return text.encode("ascii")
    data = text.encode("utf-16-be")
    return struct.unpack(f">{len(data) // 2}H", data)


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a Java int."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return _to_int32(h)


def java_string_compare(a: str, b: str) -> int:
    """The sign of ``a.compareTo(b)``: Java compares UTF-16 code units, not code points."""
    if not (a.isascii() and b.isascii()):
        a_units, b_units = a.encode("utf-16-be"), b.encode("utf-16-be")
        return (a_units > b_units) - (a_units < b_units)
    return (a > b) - (a < b)


def topic_partition_hash(topic_hash: int, partition: int) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``, as a Java int."""
    return _to_int32(31 * (31 + partition) + topic_hash)


def _f32(value: float) -> float:
    """Round to the nearest Java ``float``."""
    return struct.unpack("f", struct.pack("f", value))[0]


# --------------------------------------------------------------------------------------------------
# java.util.HashMap layout

_DEFAULT_INITIAL_CAPACITY = 16
_MAXIMUM_CAPACITY = 1 << 30
_INT_MAX = 0x7FFFFFFF
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64


def _table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``capacity`` (1 for 0 or 1)."""
    if capacity <= 1:
        return 1
    return min(1 << (capacity - 1).bit_length(), _MAXIMUM_CAPACITY)


def _hash_set_capacity(size: int, java_version: int) -> int:
    """The initial capacity ``new HashSet<>(collection)`` gives its map."""
    if java_version < _PRESIZING_CHANGED_IN:
        return max(int(_f32(size / 0.75)) + 1, 16)  # new HashMap<>(max((int) (size / .75f) + 1, 16))
    return math.ceil(max(size, 12) / 0.75)  # HashMap.newHashMap(max(size, 12))


def _copy_capacity(size: int, java_version: int) -> int:
    """The capacity ``new HashMap<>(map)`` pre-sizes its table for (``putMapEntries``)."""
    if java_version < _PRESIZING_CHANGED_IN:
        return min(int(_f32(_f32(size / 0.75) + 1.0)), _MAXIMUM_CAPACITY)
    return min(math.ceil(size / 0.75), _MAXIMUM_CAPACITY)


def _grown_table(capacity: int, threshold: int) -> tuple[int, int]:
    """``HashMap.resize`` arithmetic: the new (capacity, threshold) from the current ones.

    A capacity of 0 means no table yet; then ``threshold`` holds the initial capacity (0 = default).
    """
    new_threshold = 0
    if capacity > 0:
        if capacity >= _MAXIMUM_CAPACITY:
            return capacity, _INT_MAX
        new_capacity = capacity << 1
        if new_capacity < _MAXIMUM_CAPACITY and capacity >= _DEFAULT_INITIAL_CAPACITY:
            new_threshold = threshold << 1
    elif threshold > 0:
        new_capacity = threshold
    else:
        new_capacity = _DEFAULT_INITIAL_CAPACITY
        new_threshold = int(0.75 * _DEFAULT_INITIAL_CAPACITY)
    if new_threshold == 0:
        ft = new_capacity * 0.75  # exact in float: the capacity is a power of two
        fits = new_capacity < _MAXIMUM_CAPACITY and ft < _MAXIMUM_CAPACITY
        new_threshold = int(ft) if fits else _INT_MAX
    return new_capacity, new_threshold


class _Node:
    """A ``HashMap.Node``, or a ``HashMap.TreeNode`` when ``tree`` is set."""

    __slots__ = ("hash", "key", "left", "next", "parent", "prev", "red", "right", "tree")

    def __init__(self, hash_code: int, key: object, next_node: _Node | None) -> None:
        self.hash = hash_code
        self.key = key
        self.next = next_node
        self.tree = False
        self.parent: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.prev: _Node | None = None
        self.red = False


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    left = p.left
    if left is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """``TreeNode.balanceInsertion`` (red-black insertion fix-up, CLR style)."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


class JavaHashMap(Generic[K]):
    """The key layout of a ``java.util.HashMap``, to reproduce its iteration order.

    Only keys are kept (callers keep values in a ``dict``). Each operation moves nodes exactly as the
    JDK does: lazy table allocation, resizes that split buckets in order, tail insertion for ``put``,
    head insertion and early resize for ``computeIfAbsent``, buckets turned into red-black trees at 8/9
    keys (or a resize while the table is smaller than 64), trees split and untreeified on resize.

    ``hash_code`` gives Java's ``key.hashCode()``. ``compare`` gives the sign of ``compareTo`` for keys
    of a ``Comparable`` class (``String``, ``Integer``) and is ``None`` for other classes, whose equal-hash
    ties Java breaks by identity hash code (not reproducible; see the module docstring).
    """

    __slots__ = ("_compare", "_hash_code", "_keys", "_size", "_table", "_threshold")

    def __init__(
        self,
        hash_code: Callable[[K], int],
        compare: Callable[[K, K], int] | None = None,
        initial_capacity: int | None = None,
    ) -> None:
        self._hash_code = hash_code
        self._compare = compare
        self._table: list[_Node | None] = []
        self._size = 0
        # Like Java: until the table exists, ``threshold`` holds the initial capacity (0 = default).
        self._threshold = 0 if initial_capacity is None else _table_size_for(initial_capacity)
        self._keys: set[K] = set()

    # -- public operations -----------------------------------------------------------------------

    def put(self, key: K) -> bool:
        """``put``/``putIfAbsent`` (same layout); ``True`` when the key was new."""
        if key in self._keys:
            return False
        if not self._table:
            self._resize()
        self._link_at_tail(key)
        self._size += 1
        if self._size > self._threshold:
            self._resize()
        return True

    def compute_if_absent(self, key: K) -> bool:
        """``computeIfAbsent`` with a function that never returns null; ``True`` when the key was new."""
        if self._size > self._threshold or not self._table:
            self._resize()  # before the lookup, even when the key is present
        if key in self._keys:
            return False
        self._link_at_head(key)
        self._size += 1
        return True

    @classmethod
    def _replay(
        cls,
        hash_code: Callable[[K], int],
        compare: Callable[[K, K], int] | None,
        keys: Sequence[K],
        capacities: Sequence[int],
        final_capacity: int,
        at_head: bool,
    ) -> JavaHashMap[K]:
        """Insert ``keys`` (new, distinct) with the table resized to the given capacity before each one.

        For a subset of a map's keys whose buckets never share a tree with the other keys: the resizes
        follow the whole map's schedule, which the subset alone would not trigger.
        """
        layout = cls(hash_code, compare)
        link = layout._link_at_head if at_head else layout._link_at_tail
        for key, capacity in zip(keys, capacities, strict=True):
            if not layout._table:
                layout._table = [None] * capacity
            while len(layout._table) < capacity:
                layout._resize()
            link(key)
        while len(layout._table) < final_capacity:
            layout._resize()
        layout._size = len(keys)
        return layout

    def _link_at_tail(self, key: K) -> None:
        """The structural part of ``putVal`` for a new key."""
        h = self._spread(key)
        tab = self._table
        i = (len(tab) - 1) & h
        p = tab[i]
        node = _Node(h, key, None)
        if p is None:
            tab[i] = node
        elif p.tree:
            self._put_tree_node(tab, p, node)
        else:
            bin_count = 0
            while p.next is not None:
                p = p.next
                bin_count += 1
            p.next = node
            if bin_count >= _TREEIFY_THRESHOLD - 1:
                self._treeify_bin(tab, h)
        self._keys.add(key)

    def _link_at_head(self, key: K) -> None:
        """The structural part of ``computeIfAbsent`` for a new key."""
        h = self._spread(key)
        tab = self._table
        i = (len(tab) - 1) & h
        first = tab[i]
        if first is not None and first.tree:
            self._put_tree_node(tab, first, _Node(h, key, None))
        else:
            bin_count = 0
            e = first
            while e is not None:
                bin_count += 1
                e = e.next
            tab[i] = _Node(h, key, first)
            if bin_count >= _TREEIFY_THRESHOLD - 1:
                self._treeify_bin(tab, h)
        self._keys.add(key)

    def _slots(self) -> Iterator[tuple[int, K]]:
        """(slot, key) in iteration order."""
        for slot, first in enumerate(self._table):
            e = first
            while e is not None:
                yield slot, e.key  # type: ignore[misc]
                e = e.next

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[K]:
        """The keys in Java iteration order (table slots in order, each bucket's chain in order)."""
        for first in self._table:
            e = first
            while e is not None:
                yield e.key  # type: ignore[misc]
                e = e.next

    @property
    def capacity(self) -> int:
        """The length of the table (0 before the first insertion)."""
        return len(self._table)

    # -- internals ---------------------------------------------------------------------------------

    def _spread(self, key: K) -> int:
        h = self._hash_code(key)
        return _to_int32(h ^ ((h & 0xFFFFFFFF) >> 16))

    def _direction(self, key: object, other: object) -> int:
        """For equal hashes: ``compareComparables``, else ``tieBreakOrder`` (taken as "<=")."""
        if self._compare is not None:
            result = self._compare(key, other)  # type: ignore[arg-type]
            if result != 0:
                return result
        return -1

    def _resize(self) -> list[_Node | None]:
        old_tab = self._table
        old_cap = len(old_tab)
        new_cap, self._threshold = _grown_table(old_cap, self._threshold)
        if new_cap == old_cap:
            return old_tab
        new_tab: list[_Node | None] = [None] * new_cap
        self._table = new_tab
        mask = new_cap - 1
        for j, e in enumerate(old_tab):
            if e is None:
                continue
            if e.next is None:
                new_tab[e.hash & mask] = e
            elif e.tree:
                self._split(new_tab, e, j, old_cap)
            else:  # preserve order
                lo_head = lo_tail = hi_head = hi_tail = None
                while e is not None:
                    nxt = e.next
                    if e.hash & old_cap == 0:
                        if lo_tail is None:
                            lo_head = e
                        else:
                            lo_tail.next = e
                        lo_tail = e
                    else:
                        if hi_tail is None:
                            hi_head = e
                        else:
                            hi_tail.next = e
                        hi_tail = e
                    e = nxt
                if lo_tail is not None:
                    lo_tail.next = None
                    new_tab[j] = lo_head
                if hi_tail is not None:
                    hi_tail.next = None
                    new_tab[j + old_cap] = hi_head
        return new_tab

    def _treeify_bin(self, tab: list[_Node | None], h: int) -> None:
        if len(tab) < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        head = tab[(len(tab) - 1) & h]
        prev = None
        e = head
        while e is not None:
            e.tree = True
            e.prev = prev
            e.parent = e.left = e.right = None
            e.red = False
            prev = e
            e = e.next
        if head is not None:
            self._treeify(tab, head)

    def _treeify(self, tab: list[_Node | None], head: _Node) -> None:
        root: _Node | None = None
        x: _Node | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                h = x.hash
                p = root
                while True:
                    ph = p.hash
                    if ph > h:
                        direction = -1
                    elif ph < h:
                        direction = 1
                    else:
                        direction = self._direction(x.key, p.key)
                    xp = p
                    child = p.left if direction <= 0 else p.right
                    if child is None:
                        x.parent = xp
                        if direction <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        assert root is not None
        self._move_root_to_front(tab, root)

    @staticmethod
    def _move_root_to_front(tab: list[_Node | None], root: _Node) -> None:
        index = (len(tab) - 1) & root.hash
        first = tab[index]
        if root is not first:
            tab[index] = root
            rp = root.prev
            rn = root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None

    def _put_tree_node(self, tab: list[_Node | None], first: _Node, x: _Node) -> None:
        """``TreeNode.putTreeVal`` for a key known to be absent."""
        root = first
        while root.parent is not None:
            root = root.parent
        h = x.hash
        p = root
        while True:
            ph = p.hash
            if ph > h:
                direction = -1
            elif ph < h:
                direction = 1
            else:
                direction = self._direction(x.key, p.key)
            xp = p
            child = p.left if direction <= 0 else p.right
            if child is None:
                xpn = xp.next
                x.tree = True
                x.next = xpn
                if direction <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(tab, _balance_insertion(root, x))
                return
            p = child

    def _split(self, tab: list[_Node | None], head: _Node, index: int, bit: int) -> None:
        lo_head = lo_tail = hi_head = hi_tail = None
        lo_count = hi_count = 0
        e: _Node | None = head
        while e is not None:
            nxt = e.next
            e.next = None
            if e.hash & bit == 0:
                e.prev = lo_tail
                if lo_tail is None:
                    lo_head = e
                else:
                    lo_tail.next = e
                lo_tail = e
                lo_count += 1
            else:
                e.prev = hi_tail
                if hi_tail is None:
                    hi_head = e
                else:
                    hi_tail.next = e
                hi_tail = e
                hi_count += 1
            e = nxt
        if lo_head is not None:
            if lo_count <= _UNTREEIFY_THRESHOLD:
                tab[index] = self._untreeify(lo_head)
            else:
                tab[index] = lo_head
                if hi_head is not None:  # else the whole tree stayed here
                    self._treeify(tab, lo_head)
        if hi_head is not None:
            if hi_count <= _UNTREEIFY_THRESHOLD:
                tab[index + bit] = self._untreeify(hi_head)
            else:
                tab[index + bit] = hi_head
                if lo_head is not None:
                    self._treeify(tab, hi_head)

    @staticmethod
    def _untreeify(head: _Node) -> _Node:
        e: _Node | None = head
        while e is not None:
            e.tree = False
            e.parent = e.left = e.right = e.prev = None
            e.red = False
            e = e.next
        return head


def _spread_hash(hash_code: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` (as an unsigned value; only its low bits are used here)."""
    h = hash_code & 0xFFFFFFFF
    return h ^ (h >> 16)


def _order_with_few_trees(
    calls: Sequence[K],
    hash_code: Callable[[K], int],
    compare: Callable[[K, K], int] | None,
    initial_capacity: int | None,
    compute_if_absent: bool,
) -> list[K] | None:
    """The iteration order after ``calls``, computed bucket-wise; ``None`` when that cannot be done.

    Without tree bins the layout is simple: resizes keep the relative order of keys in a bucket, so in
    the final table a bucket lists its keys in insertion order (``put``) or in reverse insertion order
    (``computeIfAbsent`` inserts at the head). So we replay only the table size, and find the buckets
    that ever held enough keys to become a tree on an insertion. The keys of those buckets (as of the
    first table where that happens in their lineage, since a tree mixes keys that later split apart)
    are replayed node by node with :meth:`JavaHashMap._replay`. ``None`` when that happens while the
    table is smaller than 64, where Java resizes early instead: then the whole map needs replaying.
    """
    capacity = 0
    threshold = 0 if initial_capacity is None else _table_size_for(initial_capacity)
    keys: list[K] = []
    inserted_at: list[int] = []  # the table capacity when each key went in
    seen: set[K] = set()
    for key in calls:
        if compute_if_absent:
            if len(keys) > threshold or capacity == 0:
                capacity, threshold = _grown_table(capacity, threshold)
            if key not in seen:
                seen.add(key)
                keys.append(key)
                inserted_at.append(capacity)
        elif key not in seen:
            if capacity == 0:
                capacity, threshold = _grown_table(capacity, threshold)
            seen.add(key)
            keys.append(key)
            inserted_at.append(capacity)
            if len(keys) > threshold:
                capacity, threshold = _grown_table(capacity, threshold)
    count = len(keys)
    spread = [_spread_hash(hash_code(key)) for key in keys]

    # Buckets that may have become trees: at each capacity, those holding more keys than an insertion
    # can find without treeifying (put treeifies at 8 keys found, computeIfAbsent at 7). Only the first
    # such bucket of each lineage counts: it holds all the keys its tree can ever mix.
    limit = _TREEIFY_THRESHOLD - 1 if compute_if_absent else _TREEIFY_THRESHOLD
    crowded: dict[int, set[int]] = {}  # capacity -> buckets
    held = 0
    while held < count:
        level = inserted_at[held]
        while held < count and inserted_at[held] == level:
            held += 1
        if held > limit:
            mask = level - 1
            buckets = Counter([h & mask for h in spread[:held]])
            new = {
                bucket
                for bucket, n in buckets.items()
                if n > limit and not any(bucket & (lower - 1) in crowded[lower] for lower in crowded)
            }
            if new:
                if level < _MIN_TREEIFY_CAPACITY:
                    return None  # Java resizes early here: the table sizes themselves change
                crowded[level] = new

    in_tree = bytearray(count)
    for level, buckets in crowded.items():
        level_mask = level - 1
        for i in [i for i, h in enumerate(spread) if h & level_mask in buckets]:
            in_tree[i] = 1
    tree_keys = [i for i in range(count) if in_tree[i]]
    mask = capacity - 1
    if compute_if_absent:  # newest first in a bucket
        ranked = [(((spread[i] & mask) << 32) | (count - i), keys[i]) for i in range(count) if not in_tree[i]]
    else:
        ranked = [(((spread[i] & mask) << 32) | i, keys[i]) for i in range(count) if not in_tree[i]]
    if tree_keys:
        replay = JavaHashMap._replay(
            hash_code,
            compare,
            [keys[i] for i in tree_keys],
            [inserted_at[i] for i in tree_keys],
            capacity,
            compute_if_absent,
        )
        ranked += [((slot << 32) | rank, key) for rank, (slot, key) in enumerate(replay._slots())]
    ranked.sort(key=lambda item: item[0])
    return [key for _, key in ranked]


def _iteration_order(
    calls: Sequence[K],
    hash_code: Callable[[K], int],
    compare: Callable[[K, K], int] | None = None,
    *,
    initial_capacity: int | None = None,
    compute_if_absent: bool = False,
) -> list[K]:
    """The keys of a new ``HashMap`` after ``put`` (or ``computeIfAbsent``) of each of ``calls``, in Java
    iteration order. Bucket-wise when possible, else a full :class:`JavaHashMap` replay."""
    order = _order_with_few_trees(calls, hash_code, compare, initial_capacity, compute_if_absent)
    if order is not None:
        return order
    layout = JavaHashMap(hash_code, compare, initial_capacity)
    insert = layout.compute_if_absent if compute_if_absent else layout.put
    for key in calls:
        insert(key)
    return list(layout)


def _int_compare(a: int, b: int) -> int:
    return (a > b) - (a < b)


# --------------------------------------------------------------------------------------------------
# getBrokerMetadata


class ClusterNode(Protocol):
    """A broker as ``describeCluster`` reports it (``kreassign.model.Broker`` fits)."""

    @property
    def id(self) -> int: ...

    @property
    def rack(self) -> str | None: ...


_NodeT = TypeVar("_NodeT", bound=ClusterNode)


def describe_cluster_node_order(nodes: Iterable[_NodeT]) -> list[_NodeT]:
    """The order ``Admin.describeCluster().nodes()`` returns brokers in.

    The admin client collects the brokers of the DescribeCluster response into a ``HashMap<Integer, Node>``
    and returns its ``values()``: ascending ids when all ids are below the table size, bucket order
    otherwise. ``nodes`` is taken in response order (that order only matters for ids sharing a bucket).
    """
    by_id: dict[int, _NodeT] = {}
    layout: JavaHashMap[int] = JavaHashMap(_to_int32, _int_compare)
    for node in nodes:
        if layout.put(node.id):
            by_id[node.id] = node
    return [by_id[broker_id] for broker_id in layout]


def get_broker_metadata(
    nodes: Iterable[ClusterNode], broker_ids: Iterable[int], enable_rack_awareness: bool
) -> list[UsableBroker]:
    """``getBrokerMetadata``: the chosen brokers that exist, in ``describeCluster`` order.

    ``nodes`` are all the brokers of the cluster (DescribeCluster response order); ``broker_ids`` the
    ``--broker-list`` (ids that do not exist are silently left out, like the Apache tool does). Racks are
    dropped unless ``enable_rack_awareness``. Raises ``CommandError`` when rack awareness is on and some,
    but not all, of the chosen brokers have a rack.
    """
    wanted = set(broker_ids)
    result = [
        UsableBroker(node.id, node.rack if enable_rack_awareness else None)
        for node in describe_cluster_node_order(nodes)
        if node.id in wanted
    ]
    rackless = sum(1 for broker in result if broker.rack is None)
    if enable_rack_awareness and rackless not in (0, len(result)):
        raise CommandError(NOT_ALL_BROKERS_HAVE_RACKS)
    return result


# --------------------------------------------------------------------------------------------------
# StripedReplicaPlacer


class _ClusterLayout:
    """What a ``RackList`` derives from the broker list before it draws any random number.

    Racks are numbered in ``rackNames`` order (sorted, the rackless "rack" first). Each rack has two
    ``BrokerList``s, numbered as slots: ``2 * rack`` for its unfenced brokers, ``2 * rack + 1`` for its
    fenced ones, each sorted by id. ``shuffle_slots`` lists the slots in the order ``initialize`` and
    ``shuffle`` visit them: racks in the iteration order of the placer's ``HashMap<Optional<String>,
    Rack>``, fenced list before unfenced list. ``draw_slots`` / ``draw_bounds`` are the non-empty ones
    among them, which draw ``nextInt(size)`` in ``initialize``.
    """

    __slots__ = (
        "draw_bounds",
        "draw_slots",
        "rack_count",
        "shuffle_slots",
        "slots",
        "total_brokers",
        "unfenced_brokers",
    )

    def __init__(self, brokers: Iterable[UsableBroker]) -> None:
        racks: JavaHashMap[str | None] = JavaHashMap(_optional_string_hash)
        fenced: dict[str | None, list[int]] = {}
        unfenced: dict[str | None, list[int]] = {}
        total = unfenced_total = 0
        for broker in brokers:
            if racks.put(broker.rack):
                fenced[broker.rack] = []
                unfenced[broker.rack] = []
            if broker.fenced:
                fenced[broker.rack].append(broker.id)
            else:
                unfenced[broker.rack].append(broker.id)
                unfenced_total += 1
            total += 1
        names = sorted(fenced, key=_optional_string_sort_key)
        position = {name: i for i, name in enumerate(names)}
        slots: list[list[int]] = []
        for name in names:
            slots.append(sorted(unfenced[name]))
            slots.append(sorted(fenced[name]))
        self.slots: tuple[list[int], ...] = tuple(slots)
        self.rack_count = len(names)
        self.shuffle_slots = tuple(s for name in racks for s in (2 * position[name] + 1, 2 * position[name]))
        self.draw_slots = tuple(s for s in self.shuffle_slots if slots[s])
        self.draw_bounds = tuple(len(slots[s]) for s in self.draw_slots)
        self.total_brokers = total
        self.unfenced_brokers = unfenced_total


def _optional_string_hash(rack: str | None) -> int:
    return 0 if rack is None else java_string_hash(rack)


def _optional_string_sort_key(rack: str | None) -> tuple[int, bytes]:
    """``OptionalStringComparator``: empty first, then ``String.compareTo`` (UTF-16 code units)."""
    return (0, b"") if rack is None else (1, rack.encode("utf-16-be"))


class _PlacementLoopError(RuntimeError):
    """Java would loop forever here; we stop instead."""


class _RackList:
    """``StripedReplicaPlacer.RackList``: one per topic, fed by one shared random generator.

    The ``BrokerList`` objects of Java are flattened into per-slot arrays (see ``_ClusterLayout``):
    ``_brokers`` (shared with the layout until a shuffle needs a private copy), ``_offsets``,
    ``_indexes`` and ``_epochs``.
    """

    __slots__ = (
        "_brokers",
        "_epoch",
        "_epochs",
        "_indexes",
        "_layout",
        "_offset",
        "_offsets",
        "_owned",
        "_rack_names",
        "_rng",
    )

    def __init__(self, layout: _ClusterLayout, rng: JavaRandom) -> None:
        self._rng = rng
        self._layout = layout
        slot_count = len(layout.slots)
        self._brokers = list(layout.slots)
        self._owned = [False] * slot_count
        self._indexes = [0] * slot_count
        self._epochs = [0] * slot_count
        # Rack.initialize for each rack in HashMap order: nextInt(size) per non-empty BrokerList.
        offsets = [0] * slot_count
        for slot, offset in zip(layout.draw_slots, rng.next_ints(layout.draw_bounds), strict=True):
            offsets[slot] = offset
        self._offsets = offsets
        self._rack_names = list(range(layout.rack_count))
        self._offset = rng.next_int(layout.rack_count) if layout.rack_count else 0
        self._epoch = 0

    def _next(self, slot: int, epoch: int) -> int:
        """``BrokerList.next(epoch)``."""
        brokers = self._brokers[slot]
        if not brokers:
            return -1
        size = len(brokers)
        if self._epochs[slot] != epoch:
            self._epochs[slot] = epoch
            self._indexes[slot] = 0
            self._offsets[slot] = (self._offsets[slot] + 1) % size
        index = self._indexes[slot]
        if index >= size:
            return -1
        self._indexes[slot] = index + 1
        return brokers[(index + self._offsets[slot]) % size]

    def place(self, replication_factor: int) -> list[int]:
        layout = self._layout
        unfenced_brokers = layout.unfenced_brokers
        if self._epoch == unfenced_brokers and unfenced_brokers > 1:
            self._shuffle()
            self._epoch = 0
        rack_count = layout.rack_count
        if self._offset == rack_count:
            self._offset = 0
        epoch = self._epoch
        names = self._rack_names
        next_broker = self._next

        # The first replica: the next unfenced broker, from the rack at the offset or after it.
        first_rack_index = self._offset
        misses = 0
        while True:
            result = next_broker(2 * names[first_rack_index], epoch)
            if result >= 0:
                replicas = [result]
                break
            misses += 1
            if misses > rack_count:
                raise _PlacementLoopError("no unfenced broker left in this round")
            first_rack_index += 1
            if first_rack_index == rack_count:
                first_rack_index = 0

        # The others: one per rack from the offset on, skipping the first replica's rack once;
        # Rack.next takes unfenced brokers first, then fenced ones.
        rack_index = self._offset
        for _ in range(1, replication_factor):
            result = -1
            misses = 0
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    slot = 2 * names[rack_index]
                    result = next_broker(slot, epoch)
                    if result < 0:
                        result = next_broker(slot + 1, epoch)
                        misses += 1
                        if result < 0 and misses > rack_count:
                            raise _PlacementLoopError("no broker left in this round")
                rack_index += 1
                if rack_index == rack_count:
                    rack_index = 0
            replicas.append(result)
        self._epoch += 1
        self._offset += 1
        return replicas

    def _shuffle(self) -> None:
        rng = self._rng
        java_shuffle(self._rack_names, rng)
        for slot in self._layout.shuffle_slots:
            if len(self._brokers[slot]) > 1:  # Collections.shuffle draws nothing for shorter lists
                if not self._owned[slot]:
                    self._brokers[slot] = list(self._brokers[slot])
                    self._owned[slot] = True
                java_shuffle(self._brokers[slot], rng)


def _check_replication_factor(replication_factor: int, layout: _ClusterLayout) -> None:
    """The checks of ``StripedReplicaPlacer.place``, in its order, with its messages."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive."
        )
    if layout.unfenced_brokers == 0:
        raise InvalidReplicationFactorError(
            "All brokers are currently fenced, or have all their log directories cordoned."
        )
    if replication_factor > layout.total_brokers:
        raise InvalidReplicationFactorError(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{layout.total_brokers} broker(s) are registered or some brokers have all their log "
            "directories cordoned."
        )


def _place(layout: _ClusterLayout, partition_count: int, replication_factor: int, rng: JavaRandom) -> list[list[int]]:
    rack_list = _RackList(layout, rng)  # draws its random numbers before the checks, like Java
    _check_replication_factor(replication_factor, layout)
    try:
        return [rack_list.place(replication_factor) for _ in range(partition_count)]
    except _PlacementLoopError as exc:  # pragma: no cover - Java hangs forever here
        raise CommandError(f"Replica placement cannot finish: {exc}") from exc


def place_topic(
    partition_count: int,
    replication_factor: int,
    brokers: Sequence[UsableBroker],
    rng: JavaRandom,
) -> list[list[int]]:
    """``StripedReplicaPlacer(rng).place(new PlacementSpec(0, partition_count, rf), cluster)``.

    ``brokers`` in the order the cluster describer yields them (see :func:`get_broker_metadata`).
    Returns one replica list per partition, partition 0 first. Raises
    ``InvalidReplicationFactorError`` with the placer's message when no placement is possible.
    """
    return _place(_ClusterLayout(brokers), partition_count, replication_factor, rng)


# --------------------------------------------------------------------------------------------------
# calculateAssignment


def _topic_placement_order(
    partitions_by_topic: Mapping[str, Sequence[int]],
    topic_order: Sequence[str],
    java_version: int,
) -> list[tuple[str, list[TopicPartition]]]:
    """Replay the maps between the topics JSON and ``calculateAssignment``'s ``groupedByTopic``.

    Returns the topics in ``groupedByTopic`` iteration order, each with its partitions in the order
    they were added to its list (so the first one is ``assignment.get(0)``).
    """
    topic_hashes = {topic: java_string_hash(topic) for topic in topic_order}
    topic_hash = topic_hashes.__getitem__
    compare = java_string_compare
    # parseGenerateAssignmentArgs -> describeTopics(adminClient, new HashSet<>(topics))
    capacity = _hash_set_capacity(len(topic_order), java_version)
    requested = _iteration_order(topic_order, topic_hash, compare, initial_capacity=capacity)
    # KafkaAdminClient: topicFutures = new HashMap<>(names.size()), filled from new ArrayList<>(set) ...
    futures = _iteration_order(requested, topic_hash, compare, initial_capacity=len(requested))
    # ... and returned as new HashMap<>(topicFutures)
    capacity = _copy_capacity(len(futures), java_version) if futures else None
    returned = _iteration_order(futures, topic_hash, compare, initial_capacity=capacity)
    # ReassignPartitionsCommand.describeTopics: res = new HashMap<>(), filled from the futures map
    described = _iteration_order(returned, topic_hash, compare)

    # getReplicaAssignmentForTopics: res = new HashMap<>(); each topic's partitions in response order.
    # (Plain tuples stand for TopicPartition here: they hash much faster than the dataclass.)
    listed = [(topic, p) for topic in described for p in partitions_by_topic[topic]]
    tp_hashes = {tp: topic_partition_hash(topic_hashes[tp[0]], tp[1]) for tp in listed}
    tp_hash = tp_hashes.__getitem__
    by_partition = _iteration_order(listed, tp_hash)
    # toReplicaIds: Collectors.toMap into a new HashMap (putIfAbsent, in iteration order)
    current_parts = _iteration_order(by_partition, tp_hash)
    # calculateAssignment: groupedByTopic.computeIfAbsent(topic, ...).add(entry)
    grouped = _iteration_order([topic for topic, _ in current_parts], topic_hash, compare, compute_if_absent=True)
    lists: dict[str, list[TopicPartition]] = {topic: [] for topic in grouped}
    for topic, partition in current_parts:
        lists[topic].append(TopicPartition(topic, partition))
    return list(lists.items())


def calculate_assignment(
    current: Mapping[TopicPartition, Sequence[int]],
    brokers: Sequence[UsableBroker],
    rng: JavaRandom,
    *,
    topic_order: Sequence[str] | None = None,
    java_version: int = DEFAULT_JAVA_VERSION,
) -> dict[TopicPartition, list[int]]:
    """``calculateAssignment``: the ``--generate`` proposal for every partition of ``current``.

    ``current`` is the current replica assignment of the topics to move; ``brokers`` comes from
    :func:`get_broker_metadata`; ``rng`` is the one random generator shared by all topics (the Apache
    tool's static ``StripedReplicaPlacer``). ``topic_order`` is the order of the topics in the
    topics-to-move JSON (defaults to the order topics first appear in ``current``); it and
    ``java_version`` (the JVM the Apache tool would run on) only matter because they decide in which
    order Java's hash maps place the topics.

    Each topic keeps its partition count; its replication factor is the length of the replica list of
    the partition that comes first in Java's map order (normally all partitions have the same one).
    Partitions of a topic are assumed to be listed by the cluster in ascending order, as brokers do.
    Returns the proposal sorted by topic and partition.
    """
    partitions_by_topic: dict[str, list[int]] = {}
    for tp in current:
        partitions_by_topic.setdefault(tp.topic, []).append(tp.partition)
    for partitions in partitions_by_topic.values():
        partitions.sort()
    order = list(partitions_by_topic) if topic_order is None else list(topic_order)
    if len(set(order)) != len(order) or set(order) != set(partitions_by_topic):
        raise ValueError("topic_order must list each topic of the current assignment exactly once")

    layout = _ClusterLayout(brokers)
    proposal: dict[TopicPartition, list[int]] = {}
    for topic, partitions in _topic_placement_order(partitions_by_topic, order, java_version):
        replication_factor = len(current[partitions[0]])
        placements = _place(layout, len(partitions), replication_factor, rng)
        for partition, replicas in enumerate(placements):
            proposal[TopicPartition(topic, partition)] = replicas
    return dict(sorted(proposal.items()))
