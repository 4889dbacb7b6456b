"""Sizes and durations as operators read them: binary units, ETAs like ``3m05s``, elapsed time as h:mm:ss.
One place, so that --progress and the batched run's display say the same thing the same way."""

from __future__ import annotations


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


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = round(seconds)
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
