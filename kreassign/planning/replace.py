"""``--generate --replace-broker OLD=NEW[,...]``: new brokers take retired ones' replicas one for one (pure,
standard library only).

Every replica on OLD goes to NEW at the same position of its partition's replica list (so a partition OLD
led is led by NEW, and every other replica stays where it is); partitions without a replica on a retired
broker do not move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kreassign.planning.steps import replica_ids

Row = tuple[str, int, tuple[int, ...], int]
Key = tuple[str, int]


class ReplaceError(ValueError):
    """A replacement that cannot be made as asked (the message is the one line the user sees)."""


@dataclass(frozen=True)
class RackBreak:
    """Partitions that get two replicas in one rack because NEW's rack differs from OLD's."""

    old: int
    new: int
    old_rack: str | None
    new_rack: str | None
    partitions: int


def parse_replacements(text: str) -> dict[int, int]:
    """``OLD=NEW[,OLD=NEW...]``, in the order given. Raises :class:`ReplaceError`."""
    pairs: dict[int, int] = {}
    news: set[int] = set()
    for part in text.split(","):
        old_text, sep, new_text = part.strip().partition("=")
        try:
            if not sep:
                raise ValueError
            old, new = int(old_text.strip()), int(new_text.strip())
            if old < 0 or new < 0:
                raise ValueError
        except ValueError:
            raise ReplaceError(
                f"Invalid --replace-broker '{text}': expected OLD=NEW broker ids, several separated by commas "
                "(e.g. 4=7,5=8)"
            ) from None
        if old == new:
            raise ReplaceError(f"Invalid --replace-broker '{text}': broker {old} would replace itself")
        if old in pairs:
            raise ReplaceError(f"Invalid --replace-broker '{text}': broker {old} is replaced twice")
        if new in news:
            raise ReplaceError(f"Invalid --replace-broker '{text}': broker {new} replaces two brokers")
        pairs[old] = new
        news.add(new)
    if set(pairs) & news:
        both = min(set(pairs) & news)
        raise ReplaceError(f"Invalid --replace-broker '{text}': broker {both} is both replaced and replacing")
    return pairs


def plan_replacement(rows: Sequence[Row], pairs: Mapping[int, int]) -> dict[Key, list[int]]:
    """Every row's replicas with each OLD replaced by its NEW in place. Raises :class:`ReplaceError` when a
    NEW already holds a replica of a partition its OLD holds (the first such partition, in row order)."""
    plan: dict[Key, list[int]] = {}
    for topic, partition, replicas, _size in rows:
        after = [pairs.get(r, r) for r in replicas]
        if len(set(after)) != len(after):
            old = next(r for r in replicas if r in pairs and pairs[r] in replicas)
            raise ReplaceError(
                f"Broker {pairs[old]} already holds a replica of {topic}-{partition} (replicas "
                f"{replica_ids(replicas)}), so it cannot take broker {old}'s; no plan was written."
            )
        plan[(topic, partition)] = after
    return plan


def rack_breaks(rows: Sequence[Row], pairs: Mapping[int, int], racks: Mapping[int, str | None]) -> list[RackBreak]:
    """Per pair whose racks differ: how many partitions end with two replicas in one rack that had every
    replica in its own rack before (the rack rule broken by the replacement)."""
    counts: dict[tuple[int, int], int] = {}
    for _topic, _partition, replicas, _size in rows:
        movers = [r for r in replicas if r in pairs and racks.get(r) != racks.get(pairs[r])]
        if not movers:
            continue
        before = [racks.get(r) for r in replicas]
        if None in before or len(set(before)) != len(before):
            continue
        after = [racks.get(pairs.get(r, r)) for r in replicas]
        if None in after or len(set(after)) == len(after):
            continue
        for r in movers:
            if after.count(racks.get(pairs[r])) > 1:
                counts[(r, pairs[r])] = counts.get((r, pairs[r]), 0) + 1
    return [RackBreak(old, new, racks.get(old), racks.get(new), n) for (old, new), n in sorted(counts.items())]
