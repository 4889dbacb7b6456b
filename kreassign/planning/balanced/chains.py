"""The last resort of the balanced pipeline (driver, only when the rounds of stages 3 to 5, or of stage 6,
leave a broker outside floor..ceil of the mean): replicas (:func:`replica_chains`) or leaderships
(:func:`kreassign.planning.balanced.leaders.leader_chains`) moved along shortest chains
(:func:`move_along_chains`). Standard library only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from kreassign.planning.context import BalanceContext

K = TypeVar("K")


CHAIN_SEARCH_LIMIT = 2_000_000
"""Most (partition, broker) pairs one chain search looks at before it gives up."""


def replica_chains(
    ctx: BalanceContext,
    replicas: Mapping[tuple[str, int], Sequence[int]],
    bands: Mapping[int, tuple[int, int]] | None = None,
) -> dict[tuple[str, int], tuple[int, ...]]:
    """The last resort when the rounds leave a broker outside floor..ceil of the mean (racks that are
    nearly full): move replicas along chains (a replica of u moves to v, one of v to w ...), see
    :func:`move_along_chains`. Each hop is one more replica moved. Runs on the driver, only when
    needed; returns the changed partitions. ``bands``: floor..ceil per broker when the rack rule holds some
    away from the mean (:func:`kreassign.planning.racklimits.broker_bands`)."""
    state = {key: list(r) for key, r in replicas.items()}
    load = Counter(b for r in state.values() for b in r)
    on: dict[int, list[tuple[str, int]]] = {}
    for key in sorted(state):
        for b in state[key]:
            on.setdefault(b, []).append(key)
    order = sorted(ctx.brokers, key=ctx.spread_rank)
    changed: dict[tuple[str, int], tuple[int, ...]] = {}
    budget = [CHAIN_SEARCH_LIMIT]

    def edges(u: int) -> Iterable[tuple[tuple[str, int], int]]:
        for key in on.get(u, ()):
            members = state[key]
            if u in members:
                rest = [b for b in members if b != u]
                cap = ctx.rack_cap(len(members))
                budget[0] -= len(order)
                if budget[0] < 0:
                    return
                yield from ((key, v) for v in order if ctx.fits(v, rest, cap))

    def move(key: tuple[str, int], u: int, v: int) -> None:
        members = state[key]
        members[members.index(u)] = v
        on.setdefault(v, []).append(key)
        changed[key] = tuple(members)

    move_along_chains(order, load, edges, move, bands)
    return changed


def move_along_chains(
    order: Sequence[int],
    load: Counter[int],
    edges: Callable[[int], Iterable[tuple[K, int]]],
    move: Callable[[K, int, int], None],
    bands: Mapping[int, tuple[int, int]] | None = None,
) -> None:
    """Even out ``load`` over the brokers of ``order`` to floor..ceil of the mean with shortest chains:
    ``edges(u)`` lists (item, v) where item may pass from u to v; ``move`` applies one hop. First from
    each broker above the ceil to any below it, then from any above the floor to those below it. ``bands``:
    each broker's own floor..ceil instead (the rack rule holds some away from the mean)."""
    from collections import deque

    if not order:
        return
    if bands is None:
        floor, extra = divmod(sum(load[b] for b in order), len(order))
        bands = dict.fromkeys(order, (floor, floor + (1 if extra else 0)))
    floors = {b: band[0] for b, band in bands.items()}
    ceils = {b: band[1] for b, band in bands.items()}

    def chain(starts: Sequence[int], wanted: Mapping[int, int]) -> bool:
        previous: dict[int, tuple[int, K] | None] = dict.fromkeys(starts)
        queue = deque(starts)
        while queue:
            u = queue.popleft()
            for item, v in edges(u):
                if v in previous:
                    continue
                previous[v] = (u, item)
                if load[v] < wanted[v]:
                    while previous[v] is not None:
                        u, item = previous[v]  # type: ignore[misc]
                        move(item, u, v)
                        load[u] -= 1
                        load[v] += 1
                        v = u
                    return True
                queue.append(v)
        return False

    for start in order:
        while load[start] > ceils[start] and chain([start], ceils):
            pass
    while any(load[b] < floors[b] for b in order):
        donors = [b for b in order if load[b] > floors[b]]
        if not donors or not chain(donors, floors):
            break
