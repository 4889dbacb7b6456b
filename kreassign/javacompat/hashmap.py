"""The layout of a ``java.util.HashMap`` (and of the ``HashSet`` built on one), to reproduce its iteration order.

Apache's texts list the members of Java hash sets and maps in their iteration order (``Clearing
topic-level throttles on topics ...``, ``Unable to find partition: ...``), and ``--generate`` places
topics in the order of a chain of hash maps. Iteration order of a ``java.util.HashMap`` depends on the
table size (which depends on the constructor, on the Java release for pre-sized copies, and on the history
of resizes), on the bucket of each key, and on the order of keys inside a bucket (insertion order for
``put``, reverse insertion order for ``computeIfAbsent``, tree order once a bucket holds 8 or 9 keys in a
table of 64 or more). :class:`JavaHashMap` replays the node layout exactly (removal included);
:func:`iteration_order` gets the same answer faster by replaying node by node only the buckets that can
turn into trees.

Trees are not exotic: ``TopicPartition("t-20", 0)`` and ``TopicPartition("t-10", 1)`` have the same hash
code, and so have ``"Aa"`` and ``"BB"``. Where Java itself is not reproducible: a tree bucket holding two
keys with the *same* hash code of a class that is not ``Comparable`` (``TopicPartition``, ``Optional``)
is ordered by ``System.identityHashCode``, which changes from run to run; we break such ties one fixed way
(as if the newer key had the smaller identity hash code).
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from kreassign.javacompat.arithmetic import to_int32

__all__ = [
    "DEFAULT_JAVA_VERSION",
    "JavaHashMap",
    "copy_capacity",
    "grown_table",
    "hash_set_capacity",
    "hash_set_order",
    "iteration_order",
    "table_size_for",
]

#: The Java feature release whose ``java.util`` pre-sizing rules we follow by default. Java 19 changed
#: how ``new HashSet<>(collection)`` and ``new HashMap<>(map)`` size their table, which can change
#: iteration orders; 17 is the JVM the Apache tool runs on in our harness.
DEFAULT_JAVA_VERSION = 17
_PRESIZING_CHANGED_IN = 19

K = TypeVar("K", bound=Hashable)


def _f32(value: float) -> float:
    """Round to the nearest Java ``float``."""
    return struct.unpack("f", struct.pack("f", value))[0]


_DEFAULT_INITIAL_CAPACITY = 16
_MAXIMUM_CAPACITY = 1 << 30
_INT_MAX = 0x7FFFFFFF
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``capacity`` (1 for 0 or 1)."""
    if capacity <= 1:
        return 1
    return min(1 << (capacity - 1).bit_length(), _MAXIMUM_CAPACITY)


def hash_set_capacity(size: int, java_version: int) -> int:
    """The initial capacity ``new HashSet<>(collection)`` gives its map."""
    if java_version < _PRESIZING_CHANGED_IN:
        return max(int(_f32(size / 0.75)) + 1, 16)  # new HashMap<>(max((int) (size / .75f) + 1, 16))
    return math.ceil(max(size, 12) / 0.75)  # HashMap.newHashMap(max(size, 12))


def copy_capacity(size: int, java_version: int) -> int:
    """The capacity ``new HashMap<>(map)`` pre-sizes its table for (``putMapEntries``)."""
    if java_version < _PRESIZING_CHANGED_IN:
        return min(int(_f32(_f32(size / 0.75) + 1.0)), _MAXIMUM_CAPACITY)
    return min(math.ceil(size / 0.75), _MAXIMUM_CAPACITY)


def grown_table(capacity: int, threshold: int) -> tuple[int, int]:
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


def _balance_deletion(root: _Node, x: _Node | None) -> _Node:
    """``TreeNode.balanceDeletion`` (red-black deletion fix-up, CLR style)."""
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        xpl = xp.left
        if xpl is x:
            xpr = xp.right
            if xpr is not None and xpr.red:
                xpr.red = False
                xp.red = True
                root = _rotate_left(root, xp)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is None:
                x = xp
            else:
                sl, sr = xpr.left, xpr.right
                if (sr is None or not sr.red) and (sl is None or not sl.red):
                    xpr.red = True
                    x = xp
                else:
                    if sr is None or not sr.red:
                        if sl is not None:
                            sl.red = False
                        xpr.red = True
                        root = _rotate_right(root, xpr)
                        xp = x.parent
                        xpr = None if xp is None else xp.right
                    if xpr is not None:
                        xpr.red = False if xp is None else xp.red
                        sr = xpr.right
                        if sr is not None:
                            sr.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_left(root, xp)
                    x = root
        else:  # symmetric
            if xpl is not None and xpl.red:
                xpl.red = False
                xp.red = True
                root = _rotate_right(root, xp)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is None:
                x = xp
            else:
                sl, sr = xpl.left, xpl.right
                if (sl is None or not sl.red) and (sr is None or not sr.red):
                    xpl.red = True
                    x = xp
                else:
                    if sl is None or not sl.red:
                        if sr is not None:
                            sr.red = False
                        xpl.red = True
                        root = _rotate_left(root, xpl)
                        xp = x.parent
                        xpl = None if xp is None else xp.left
                    if xpl is not None:
                        xpl.red = False if xp is None else xp.red
                        sl = xpl.left
                        if sl is not None:
                            sl.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_right(root, xp)
                    x = root


class JavaHashMap(Generic[K]):
    """The key layout of a ``java.util.HashMap``, to reproduce its iteration order.

    Only keys are kept (callers keep values in a ``dict``). Each operation moves nodes exactly as the
    JDK does: lazy table allocation, resizes that split buckets in order, tail insertion for ``put``,
    head insertion and early resize for ``computeIfAbsent``, buckets turned into red-black trees at 8/9
    keys (or a resize while the table is smaller than 64), trees split and untreeified on resize,
    removal that unlinks, rebalances or untreeifies a tree bin.

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
        self._threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
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

    def remove(self, key: K, *, movable: bool = True) -> bool:
        """``remove(key)``; ``movable=False`` is ``Iterator.remove`` (a tree bin keeps its first node).

        ``True`` when the key was present."""
        if key not in self._keys:
            return False
        tab = self._table
        index = (len(tab) - 1) & self._spread(key)
        first = tab[index]
        before = None
        node = first
        while node is not None and node.key != key:
            before = node
            node = node.next
        assert node is not None
        if node.tree:
            self._remove_tree_node(tab, node, movable)
        elif before is None:
            tab[index] = node.next
        else:
            before.next = node.next
        self._keys.discard(key)
        self._size -= 1
        return True

    def remove_all(self, keys: Sequence[K]) -> None:
        """``AbstractSet.removeAll(keys)`` on the map's key set (``HashSet.removeAll``): when the set is
        larger it removes each of ``keys``, else it walks its own keys and removes those in ``keys`` with
        ``Iterator.remove``."""
        if self._size > len(keys):
            for key in keys:
                self.remove(key)
        else:
            gone = set(keys)
            for key in list(self):
                if key in gone:
                    self.remove(key, movable=False)

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
        return to_int32(h ^ ((h & 0xFFFFFFFF) >> 16))

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
        new_cap, self._threshold = grown_table(old_cap, self._threshold)
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

    def _remove_tree_node(self, tab: list[_Node | None], p: _Node, movable: bool) -> None:
        """``TreeNode.removeTreeNode``."""
        index = (len(tab) - 1) & p.hash
        first = root = tab[index]
        assert root is not None
        succ, pred = p.next, p.prev
        if pred is None:
            tab[index] = first = succ
        else:
            pred.next = succ
        if succ is not None:
            succ.prev = pred
        if first is None:
            return
        while root.parent is not None:
            root = root.parent
        if movable and (root.right is None or root.left is None or root.left.left is None):
            tab[index] = self._untreeify(first)  # too small
            return
        pl, pr = p.left, p.right
        if pl is not None and pr is not None:
            s = pr
            while s.left is not None:  # find successor
                s = s.left
            s.red, p.red = p.red, s.red  # swap colors
            sr = s.right
            pp = p.parent
            if s is pr:  # p was s's direct parent
                p.parent = s
                s.right = p
            else:
                sp = s.parent
                p.parent = sp
                if sp is not None:
                    if s is sp.left:
                        sp.left = p
                    else:
                        sp.right = p
                s.right = pr
                pr.parent = s
            p.left = None
            p.right = sr
            if sr is not None:
                sr.parent = p
            s.left = pl
            pl.parent = s
            s.parent = pp
            if pp is None:
                root = s
            elif p is pp.left:
                pp.left = s
            else:
                pp.right = s
            replacement = sr if sr is not None else p
        elif pl is not None:
            replacement = pl
        elif pr is not None:
            replacement = pr
        else:
            replacement = p
        if replacement is not p:
            pp = replacement.parent = p.parent
            if pp is None:
                root = replacement
                replacement.red = False
            elif p is pp.left:
                pp.left = replacement
            else:
                pp.right = replacement
            p.left = p.right = p.parent = None
        r = root if p.red else _balance_deletion(root, replacement)
        if replacement is p:  # detach
            pp = p.parent
            p.parent = None
            if pp is not None:
                if p is pp.left:
                    pp.left = None
                elif p is pp.right:
                    pp.right = None
        if movable:
            self._move_root_to_front(tab, r)

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
    threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
    keys: list[K] = []
    inserted_at: list[int] = []  # the table capacity when each key went in
    seen: set[K] = set()
    for key in calls:
        if compute_if_absent:
            if len(keys) > threshold or capacity == 0:
                capacity, threshold = grown_table(capacity, threshold)
            if key not in seen:
                seen.add(key)
                keys.append(key)
                inserted_at.append(capacity)
        elif key not in seen:
            if capacity == 0:
                capacity, threshold = grown_table(capacity, threshold)
            seen.add(key)
            keys.append(key)
            inserted_at.append(capacity)
            if len(keys) > threshold:
                capacity, threshold = grown_table(capacity, threshold)
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


def iteration_order(
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


def hash_set_order(
    items: Iterable[K],
    hash_code: Callable[[K], int],
    compare: Callable[[K, K], int] | None = None,
    *,
    initial_capacity: int | None = None,
) -> list[K]:
    """The members of a new ``HashSet`` (``new HashSet<>(initial_capacity)``, or the default one, which
    ``Collectors.toSet()`` makes too) after ``add`` of each of ``items`` (repeats ignored), in Java
    iteration order. ``compare``: as for :class:`JavaHashMap`."""
    return iteration_order(list(items), hash_code, compare, initial_capacity=initial_capacity)
