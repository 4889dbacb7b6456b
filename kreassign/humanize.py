"""Sizes and durations as operators read them: binary units, ETAs like ``3m05s``, elapsed time as h:mm:ss.
One place, so that --progress and the batched run's display say the same thing the same way; and sizes as
operators write them (:func:`parse_size`)."""

from __future__ import annotations

import re


def format_eta(seconds: float | None) -> str:
    """``45s``, ``3m05s``, ``2h00m07s``; ``unknown`` without a rate."""
    if seconds is None:
        return "unknown"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_bytes(count: int | float) -> str:
    """Binary units, one decimal: ``512 B``, ``1.5 KiB``, ``3.0 MiB``."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def never_ends(bound: bool) -> str:
    """The ETA of copies slower than the writes to their partitions (``planning.eta.Eta.losing``): ``not at this
    throttle`` when the throttle is the rate, ``not at this rate`` when a slower copy was measured."""
    return "not at this throttle" if bound else "not at this rate"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = round(seconds)
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


SIZE_UNITS = {
    "B": 1,
    **{f"{p}B": 1000**i for i, p in enumerate("KMGTP", 1)},
    **{f"{p}iB": 1024**i for i, p in enumerate("KMGTP", 1)},
}
"""Units :func:`parse_size` reads (any case): B; KB, MB, GB, TB, PB (powers of 1000); KiB .. PiB (of 1024)."""

_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]+)\s*")


def parse_size(text: str) -> int | None:
    """Bytes of ``50GB``, ``1.5 TiB``, ``512b``: a non-negative number and one unit of :data:`SIZE_UNITS`,
    rounded down to whole bytes. None when ``text`` is not such a size (a bare number has no unit)."""
    match = _SIZE.fullmatch(text)
    if match is None:
        return None
    units = {unit.lower(): factor for unit, factor in SIZE_UNITS.items()}
    factor = units.get(match.group(2).lower())
    if factor is None:
        return None
    number = match.group(1)
    whole, _, fraction = number.partition(".")
    # exact for any number of decimals (no float rounding): whole * factor + fraction * factor / 10^len
    scaled = int(whole or "0") * factor + (int(fraction) * factor // 10 ** len(fraction) if fraction else 0)
    return scaled
