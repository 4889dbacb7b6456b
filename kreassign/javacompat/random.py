"""An exact port of ``java.util.Random`` and ``java.util.Collections.shuffle``.

The Apache tool proposes assignments with ``StripedReplicaPlacer(new Random())``. To give the same
proposal for the same seed, every draw has to match Java bit for bit: the 48-bit linear congruential
generator, the seed scrambling of ``new Random(seed)`` / ``setSeed``, and the exact algorithm of each
``nextXxx`` method (``nextInt(bound)`` has a power-of-two path and a rejection loop).

Standard library only. Checked against a real JVM by ``tests/unit/test_javacompat_random.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, MutableSequence
from typing import TypeVar

from kreassign.javacompat.arithmetic import to_int32, to_int64

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK_48 = (1 << 48) - 1
_DOUBLE_UNIT = 1.0 / (1 << 53)

_T = TypeVar("_T")


class JavaRandom:
    """``java.util.Random``: same seed, same sequence.

    ``JavaRandom(seed)`` behaves like ``new Random(seed)`` (``seed`` is taken as a Java ``long``: only
    its low 64 bits count). ``JavaRandom()`` seeds itself from ``os.urandom``, the counterpart of
    Java's unseeded ``new Random()``.
    """

    __slots__ = ("_seed",)

    def __init__(self, seed: int | None = None) -> None:
        self._seed = 0
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "big", signed=True)
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """``Random.setSeed(long)``: the same state as ``new Random(seed)``."""
        self._seed = (seed ^ _MULTIPLIER) & _MASK_48

    def next_bits(self, bits: int) -> int:
        """``Random.next(int bits)``: advance the generator, return the top ``bits`` bits as an int."""
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK_48
        return to_int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` without ``bound``; ``nextInt(bound)`` with it (``0 <= result < bound``)."""
        if bound is None:
            return self.next_bits(32)
        if bound <= 0:
            # Java throws IllegalArgumentException("bound must be positive").
            raise ValueError("bound must be positive")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:  # a power of two: take the high bits
            return (bound * r) >> 31
        # Reject the over-represented candidates: Java loops while ``u - r + m`` overflows an int.
        u = r
        r = u % bound
        while u - r + m > 0x7FFFFFFF:
            u = self.next_bits(31)
            r = u % bound
        return r

    def next_ints(self, bounds: Iterable[int]) -> list[int]:
        """``nextInt(bound)`` for each bound in turn, with the generator inlined (hot path of the placer)."""
        seed = self._seed
        out: list[int] = []
        append = out.append
        for bound in bounds:
            if bound <= 0:
                self._seed = seed
                raise ValueError("bound must be positive")
            seed = (seed * _MULTIPLIER + _ADDEND) & _MASK_48
            r = seed >> 17  # next(31)
            m = bound - 1
            if bound & m == 0:
                append((bound * r) >> 31)
                continue
            u = r
            r = u % bound
            while u - r + m > 0x7FFFFFFF:
                seed = (seed * _MULTIPLIER + _ADDEND) & _MASK_48
                u = seed >> 17
                r = u % bound
            append(r)
        self._seed = seed
        return out

    def next_long(self) -> int:
        """``nextLong()``."""
        return to_int64((self.next_bits(32) << 32) + self.next_bits(32))

    def next_boolean(self) -> bool:
        """``nextBoolean()``."""
        return self.next_bits(1) != 0

    def next_double(self) -> float:
        """``nextDouble()``."""
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * _DOUBLE_UNIT


def java_shuffle(items: MutableSequence[_T], rng: JavaRandom) -> None:
    """``Collections.shuffle(list, rnd)`` in place: from the end, swap each slot with a random earlier one.

    Lists of fewer than two elements draw nothing from ``rng``, exactly like Java.
    """
    for i in range(len(items), 1, -1):
        j = rng.next_int(i)
        items[i - 1], items[j] = items[j], items[i - 1]
