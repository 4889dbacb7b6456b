"""Sizes and durations as operators read them (decimal units, h:mm:ss)."""

from __future__ import annotations


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = round(seconds)
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
