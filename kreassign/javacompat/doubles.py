"""``Double.toString(double)`` as Java 17 prints it (``jdk.internal.math.FloatingDecimal``), including its
non-shortest outputs (Java 19 changed to the shortest form; the Apache tool runs on 17 in our harness)."""

from __future__ import annotations

import math
import struct
from typing import Final

from kreassign.javacompat.arithmetic import java_div as _java_div
from kreassign.javacompat.arithmetic import java_rem as _java_rem
from kreassign.javacompat.arithmetic import wrap as _wrap

__all__ = ["java_double_to_string"]

_EXP_SHIFT: Final = 52
_LONG_5_POW: Final = tuple(5**i for i in range(27))
_SMALL_5_POW: Final = tuple(5**i for i in range(14))
_N_5_BITS: Final = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52,
                    54, 56, 59, 61)  # fmt: skip
_INSIGNIFICANT_DIGITS: Final = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
                                8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14,
                                14, 14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19)  # fmt: skip


def java_double_to_string(value: float) -> str:
    """``Double.toString(double)`` as Java 17 prints it."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    negative = bool(bits >> 63)
    fraction = bits & ((1 << _EXP_SHIFT) - 1)
    exponent = (bits >> _EXP_SHIFT) & 0x7FF
    if exponent == 0:
        if fraction == 0:
            return "-0.0" if negative else "0.0"
        leading_zeros = 64 - fraction.bit_length()
        shift = leading_zeros - (63 - _EXP_SHIFT)
        fraction <<= shift
        exponent = 1 - shift
        significant_bits = 64 - leading_zeros
    else:
        fraction |= 1 << _EXP_SHIFT
        significant_bits = _EXP_SHIFT + 1
    digits, decimal_exponent = _binary_to_decimal(exponent - 1023, fraction, significant_bits)
    return ("-" if negative else "") + _format_java_decimal(digits, decimal_exponent)


def _develop_long_digits(decimal_exponent: int, value: int, insignificant: int) -> tuple[str, int]:
    if insignificant:
        pow10 = _LONG_5_POW[insignificant] << insignificant
        residue = value % pow10
        value //= pow10
        decimal_exponent += insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return text.rstrip("0"), decimal_exponent + len(text)


def _estimate_decimal_exponent(fraction: int, binary_exponent: int) -> int:
    mantissa = struct.unpack("<d", struct.pack("<Q", (1023 << _EXP_SHIFT) | (fraction & ((1 << _EXP_SHIFT) - 1))))[0]
    estimate = (mantissa - 1.5) * 0.289529654 + 0.176091259 + binary_exponent * 0.301029995663981
    return math.floor(estimate)


def _binary_to_decimal(binary_exponent: int, fraction: int, significant_bits: int) -> tuple[str, int]:
    """FloatingDecimal.BinaryToASCIIBuffer.dtoa: returns (digits, decExponent)."""
    tail_zeros = (fraction & -fraction).bit_length() - 1
    fraction_bits = _EXP_SHIFT + 1 - tail_zeros
    tiny_bits = max(0, fraction_bits - binary_exponent - 1)
    if (
        -21 <= binary_exponent <= 62
        and tiny_bits < len(_LONG_5_POW)
        and fraction_bits + _N_5_BITS[tiny_bits] < 64
        and tiny_bits == 0
    ):
        insignificant = 0
        if binary_exponent > significant_bits:
            power = binary_exponent - significant_bits - 1
            insignificant = _INSIGNIFICANT_DIGITS[power] if 1 < power < len(_INSIGNIFICANT_DIGITS) else 0
        if binary_exponent >= _EXP_SHIFT:
            fraction <<= binary_exponent - _EXP_SHIFT
        else:
            fraction >>= _EXP_SHIFT - binary_exponent
        return _develop_long_digits(0, fraction, insignificant)

    decimal_exponent = _estimate_decimal_exponent(fraction, binary_exponent)
    b5 = max(0, -decimal_exponent)
    b2 = b5 + tiny_bits + binary_exponent
    s5 = max(0, decimal_exponent)
    s2 = s5 + tiny_bits
    m5 = b5
    m2 = b2 - significant_bits
    fraction >>= tail_zeros
    b2 -= fraction_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if fraction_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = fraction_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
        powers = _SMALL_5_POW if width == 32 else _LONG_5_POW
        b = _wrap(_wrap(_wrap(fraction, width) * powers[b5], width) << (b2 & (width - 1)), width)
        s = _wrap(powers[s5] << (s2 & (width - 1)), width)
        m = _wrap(powers[m5] << (m2 & (width - 1)), width)
        return _generate_digits_fixed(b, s, m, decimal_exponent, width)
    return _generate_digits_big(fraction * 5**b5 << b2, 5**s5 << s2, 10 * (5**m5 << m2), decimal_exponent)


def _generate_digits_fixed(b: int, s: int, m: int, decimal_exponent: int, width: int) -> tuple[str, int]:
    tens = _wrap(s * 10, width)
    digits: list[int] = []
    q = _java_div(b, s)
    b = _wrap(10 * _java_rem(b, s), width)
    m = _wrap(m * 10, width)
    low = b < m
    high = _wrap(b + m, width) > tens
    if q == 0 and not high:
        decimal_exponent -= 1
    else:
        digits.append(q)
    if decimal_exponent < -3 or decimal_exponent >= 8:
        high = low = False
    while not low and not high:
        q = _java_div(b, s)
        b = _wrap(10 * _java_rem(b, s), width)
        m = _wrap(m * 10, width)
        if m > 0:
            low = b < m
            high = _wrap(b + m, width) > tens
        else:
            low = high = True
        digits.append(q)
    low_digit_difference = _wrap(_wrap(b << 1, width) - tens, width)
    return _round_digits(digits, decimal_exponent + 1, high, low, low_digit_difference)


def _generate_digits_big(b: int, s: int, m10: int, decimal_exponent: int) -> tuple[str, int]:
    ten_s = 10 * s
    digits: list[int] = []
    q, b = divmod(b, s)
    b *= 10
    low = b < m10
    high = ten_s <= b + m10
    if q == 0 and not high:
        decimal_exponent -= 1
    else:
        digits.append(q)
    if decimal_exponent < -3 or decimal_exponent >= 8:
        high = low = False
    while not low and not high:
        q, b = divmod(b, s)
        b *= 10
        m10 *= 10
        low = b < m10
        high = ten_s <= b + m10
        digits.append(q)
    low_digit_difference = (2 * b > ten_s) - (2 * b < ten_s) if high and low else 0
    return _round_digits(digits, decimal_exponent + 1, high, low, low_digit_difference)


def _round_digits(
    digits: list[int], decimal_exponent: int, high: bool, low: bool, low_digit_difference: int
) -> tuple[str, int]:
    round_up = high and (not low or low_digit_difference > 0 or (low_digit_difference == 0 and digits[-1] % 2 == 1))
    if round_up:
        index = len(digits) - 1
        while digits[index] == 9 and index > 0:
            digits[index] = 0
            index -= 1
        if digits[index] == 9:
            decimal_exponent += 1
            digits[0] = 1
        else:
            digits[index] += 1
    return "".join(map(str, digits)), decimal_exponent


def _format_java_decimal(digits: str, decimal_exponent: int) -> str:
    """FloatingDecimal.BinaryToASCIIBuffer.getChars without the sign."""
    if 0 < decimal_exponent < 8:
        whole = digits[:decimal_exponent]
        if len(digits) < decimal_exponent:
            return whole + "0" * (decimal_exponent - len(digits)) + ".0"
        return whole + "." + (digits[decimal_exponent:] or "0")
    if -3 < decimal_exponent <= 0:
        return "0." + "0" * -decimal_exponent + digits
    exponent = decimal_exponent - 1 if decimal_exponent > 0 else -(-decimal_exponent + 1)
    return digits[0] + "." + (digits[1:] or "0") + "E" + str(exponent)
