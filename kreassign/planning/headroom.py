"""``--throttle auto``: the replication throttle of each broker from its network capacity and the traffic it
serves (pure, standard library only).

A broker's traffic, from its partitions' write and read rates (``planning.traffic``):

* in: the writes to every partition it hosts (produced to it as leader, fetched as a follower);
* out: what its leaderships serve, the reads of consumer groups and the replication of the writes to each
  follower.

Kafka's throttle of a broker holds both ways (``leader.replication.throttled.rate`` out, ``follower...`` in), so
the one rate must fit the busier direction: ``max_utilisation x capacity - max(in, out)``, never below
``FLOOR_SHARE`` of the capacity (a run that copies nothing never ends)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

FLOOR_SHARE = 0.05
"""The least throttle ``--throttle auto`` sets: this share of the broker's capacity."""

DEFAULT_MAX_UTILISATION = 0.8


@dataclass(frozen=True)
class BrokerTraffic:
    bytes_in: float = 0.0
    bytes_out: float = 0.0


@dataclass(frozen=True)
class Headroom:
    """The throttle for one broker, and what it came from."""

    broker: int
    rate: int  # bytes/s
    capacity: float
    traffic: BrokerTraffic
    floored: bool  # the traffic left less than the floor: the floor is the rate


def broker_traffic(
    partitions: Mapping[object, tuple[int | None, Iterable[int]]],
    writes: Mapping[object, float],
    reads: Mapping[object, float],
) -> dict[int, BrokerTraffic]:
    """``partitions``: partition -> (its leader, its replicas); ``writes``/``reads``: bytes/s per partition."""
    inbound: dict[int, float] = {}
    outbound: dict[int, float] = {}
    for tp, (leader, replicas) in partitions.items():
        hosts = list(dict.fromkeys(replicas))
        written = writes.get(tp, 0.0)
        for b in hosts:
            inbound[b] = inbound.get(b, 0.0) + written
        if leader is not None and leader >= 0:
            followers = len([b for b in hosts if b != leader])
            outbound[leader] = outbound.get(leader, 0.0) + reads.get(tp, 0.0) + written * followers
    return {b: BrokerTraffic(inbound.get(b, 0.0), outbound.get(b, 0.0)) for b in sorted({*inbound, *outbound})}


def auto_throttles(
    capacities: Mapping[int, float],
    traffic: Mapping[int, BrokerTraffic],
    max_utilisation: float = DEFAULT_MAX_UTILISATION,
) -> dict[int, Headroom]:
    """The throttle of each broker with a capacity: ``max_utilisation x capacity - max(in, out)``, at least
    ``FLOOR_SHARE x capacity``."""
    result = {}
    for broker, capacity in sorted(capacities.items()):
        served = traffic.get(broker, BrokerTraffic())
        left = max_utilisation * capacity - max(served.bytes_in, served.bytes_out)
        floor = FLOOR_SHARE * capacity
        result[broker] = Headroom(broker, int(max(left, floor)), capacity, served, left < floor)
    return result


def parse_capacities(text: str) -> dict[int, float]:
    """``--broker-capacity-file``: a JSON object, broker id -> bytes/s (each a finite number above 0); ValueError
    says what is wrong."""
    import json

    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(document, dict) or not document:
        raise ValueError('expected an object of broker ids and bytes/s, like {"1": 125000000}')
    capacities = {}
    for key, value in document.items():
        if not str(key).strip().isdigit():
            raise ValueError(f"'{key}' is not a broker id")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            # JSON as Python reads it takes Infinity (and 1e999): a rate that no throttle can be set to
            raise ValueError(f"the capacity of broker {key} must be bytes/s above 0, not {json.dumps(value)}")
        capacities[int(key)] = float(value)
    return capacities
