"""What every planning stage shares: a partition as planning sees it (:data:`Row`) and the chosen brokers with
the rules (:class:`BalanceContext`). Standard library only; the bottom of ``kreassign.planning``'s imports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from operator import itemgetter

from kreassign.errors import CommandError
from kreassign.planning.placement_model import InvalidReplicationFactorError
from kreassign.planning.racklimits import RackHold, rack_limits, rack_totals

Row = tuple[str, int, tuple[int, ...], int]
"""One partition as planning sees it: topic, partition, current replicas, size in bytes (0 if unknown)."""


@dataclass(frozen=True)
class BalanceContext:
    """The chosen brokers and the rules; small and picklable (shipped to Spark workers)."""

    brokers: tuple[int, ...]  # sorted ids
    racks: tuple[str | None, ...]  # per broker, same order; None: no rack (its own group)
    replication_factor: int | None = None
    current_load: tuple[tuple[int, int], ...] = ()  # (broker, replicas) before planning, any broker

    def __post_init__(self) -> None:
        groups = tuple(rack if rack is not None else f"\0{b}" for b, rack in zip(self.brokers, self.racks, strict=True))
        object.__setattr__(self, "_group", dict(zip(self.brokers, groups, strict=True)))
        object.__setattr__(self, "_broker_set", frozenset(self.brokers))
        object.__setattr__(self, "_group_sizes", sorted(Counter(groups).values(), reverse=True))
        object.__setattr__(self, "_load", dict(self.current_load))
        # Spread order: brokers of each rack by id, racks taken in turn (rack order: name), so that any run
        # of consecutive brokers in this order spans as many racks as possible.
        by_group: dict[str, list[int]] = {}
        for broker in self.brokers:
            by_group.setdefault(self._group[broker], []).append(broker)  # type: ignore[attr-defined]
        names = sorted(by_group)
        ranked = sorted(
            ((i, names.index(g), b) for g in names for i, b in enumerate(by_group[g])),
        )
        object.__setattr__(self, "_spread", {b: rank for rank, (_, _, b) in enumerate(ranked)})
        object.__setattr__(self, "_caps", {})

    def rack_groups(self) -> dict[int, str] | None:
        """Broker -> rack, when racks constrain placement (rack awareness on and racks known)."""
        return None if any(r is None for r in self.racks) else self._group  # type: ignore[attr-defined]

    def uneven_racks(self) -> bool:
        """Do the racks differ in size (only then may the rack rule hold one away from the mean)?"""
        group_of = self.rack_groups()
        return group_of is not None and len(set(Counter(group_of.values()).values())) > 1

    def rack_holds(self, rf_counts: Mapping[int, int]) -> tuple[dict[str, int], list[RackHold]]:
        """The racks the rack rule holds away from the common level of the brokers, for partitions of
        ``rf_counts`` (replication factor -> partitions): rack -> total, and why
        (:func:`kreassign.planning.racklimits.rack_totals`); empty without racks and in the usual case."""
        group_of = self.rack_groups()
        if group_of is None:
            return {}, []
        sizes = dict(Counter(group_of.values()))
        if len(set(sizes.values())) <= 1:  # racks of one size (or one rack): the mean fits every rack
            return {}, []
        total = sum(rf * n for rf, n in rf_counts.items())
        fixed, holds = rack_totals(sizes, total, rack_limits(sizes, rf_counts, self.rack_cap))
        members = {h.rack: tuple(b for b in self.brokers if group_of[b] == h.rack) for h in holds}
        return fixed, [replace(h, brokers=members[h.rack]) for h in holds]

    def group(self, broker: int) -> str:
        return self._group[broker]  # type: ignore[attr-defined]

    def chosen(self, broker: int) -> bool:
        return broker in self._broker_set  # type: ignore[attr-defined]

    def spread_rank(self, broker: int) -> int:
        return self._spread[broker]  # type: ignore[attr-defined]

    def load(self, broker: int) -> int:
        return self._load.get(broker, 0)  # type: ignore[attr-defined]

    def target_rf(self, current: int) -> int:
        return self.replication_factor if self.replication_factor is not None else current

    def rack_cap(self, rf: int) -> int:
        """Most replicas of one partition on one rack: the least c with sum(min(c, rack size)) >= rf."""
        caps: dict[int, int] = self._caps  # type: ignore[attr-defined]
        if rf not in caps:
            sizes: list[int] = self._group_sizes  # type: ignore[attr-defined]
            if rf > len(self.brokers):
                raise InvalidReplicationFactorError(
                    f"The target replication factor of {rf} cannot be reached because only "
                    f"{len(self.brokers)} broker(s) are chosen."
                )
            cap = max(1, -(-rf // len(sizes)))
            while sum(min(cap, s) for s in sizes) < rf:
                cap += 1
            caps[rf] = cap
        return caps[rf]

    def fits(self, broker: int, replicas: Sequence[int], cap: int) -> bool:
        """May ``broker`` join a partition whose replicas are ``replicas``?"""
        group_of: dict[int, str] = self._group  # type: ignore[attr-defined]  # the chosen brokers' groups
        group = group_of.get(broker)
        if group is None or broker in replicas:
            return False
        return list(map(group_of.get, replicas)).count(group) < cap


def make_context(
    brokers: Iterable[tuple[int, str | None]],
    replication_factor: int | None,
    rows: Iterable[Row] = (),
    current_load: Mapping[int, int] | None = None,
) -> BalanceContext:
    """``brokers``: the chosen (id, rack) pairs; ``current_load`` (or ``rows``) the replicas per broker now."""
    pairs = sorted(dict(brokers).items())
    if not pairs:
        raise CommandError("No broker of --broker-list is in the cluster.")
    if replication_factor is not None and replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive."
        )
    if current_load is None:
        current_load = Counter(chain.from_iterable(map(itemgetter(2), rows)))
    return BalanceContext(
        tuple(b for b, _ in pairs),
        tuple(r for _, r in pairs),
        replication_factor,
        tuple(sorted(current_load.items())),
    )
