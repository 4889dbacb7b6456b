"""Java integer overflow: what a value becomes as a Java ``int`` or ``long``."""

from __future__ import annotations

from typing import Final

INT_MIN: Final = -(2**31)
INT_MAX: Final = 2**31 - 1
LONG_MIN: Final = -(2**63)
LONG_MAX: Final = 2**63 - 1


def to_int32(value: int) -> int:
    """Wrap like a Java ``(int)`` cast: keep the low 32 bits, two's complement."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def to_int64(value: int) -> int:
    """Wrap like Java ``long`` arithmetic: keep the low 64 bits, two's complement."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value & (1 << 63) else value


def wrap(value: int, bits: int) -> int:
    """Two's complement overflow of a Java ``int`` (``bits`` 32) or ``long`` (64)."""
    return to_int32(value) if bits == 32 else to_int64(value)


def java_div(a: int, b: int) -> int:
    """Java integer division: rounds toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def java_rem(a: int, b: int) -> int:
    """Java ``%``: the sign of the dividend."""
    return a - b * java_div(a, b)
