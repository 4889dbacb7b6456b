"""What others do to a batched run while it goes on, and what the run makes of it.

Others act on the cluster while a run is in flight: an Apache ``--cancel`` (or ``kafka-reassign-partitions``,
or an AlterPartitionReassignments cancel from any client) cancels its steps, ``kafka-configs`` or an Apache
``--verify`` removes its throttles, a topic is deleted. The run notices what it did not do, and never goes on
with less protection than it started with: a step cancelled by another client, or a throttle of the run
removed by another client, stops the run as its own ``--cancel`` does (the executor reverts what is in flight,
restores the throttles, records who did what, and exits 4). A deleted topic's partitions are dropped from
the run, which goes on with the others.

* :func:`ended_step` says what became of a step the controller no longer lists, from the partition's
  metadata: done, still shown under way by a lagging broker, cancelled by another client, or moved elsewhere.
* :class:`ThrottleWatch` reads the run's throttle configs (the topic lists of the steps in flight, the rates
  of their brokers) and reports those another client removed.
* :class:`ThrottleKeeper` holds what a kreassign ``--verify`` (or Apache-form ``--cancel``) asked before it cleared
  every throttle as the Apache tool does (:func:`ask_to_keep_throttles`, through the run's control file): while that
  process lives, and a moment after, the run puts back its own throttles that vanish instead of stopping.
* :func:`deleted_topics` says which topics of the plan the cluster no longer has.
* :func:`waiting_out_metadata_lag` waits for the brokers to learn a topic just created.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from kreassign.cluster.port import ClusterPort, ConfigResource, ResourceType
from kreassign.errors import UnknownTopicOrPartitionError
from kreassign.execution.journal import Journal
from kreassign.execution.registry import process_alive
from kreassign.execution.throttles import ThrottleLifecycle, entries
from kreassign.model import PartitionInfo
from kreassign.planning.steps import Step
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    LEADER_THROTTLED_RATE,
    LOG_DIR_THROTTLED_RATE,
)

METADATA_LAG_ALLOWANCE = 15.0
"""Seconds a run waits for the brokers to learn a topic the controller already has (one just created), and
for a broker's metadata to show a step the controller has finished."""

THROTTLE_CHECK_S = 1.0
"""How often the run reads its throttle configs back (the topic lists of its steps in flight, the rates of
their brokers): one DescribeConfigs for the topics, one per broker."""

THROTTLE_CONFIRM_S = 2.0
"""A throttle config of the run seen missing counts as removed by another client only this long after the run
last wrote it: a broker may answer with a value older than the run's last write for a moment (metadata
propagates asynchronously). A config the run wrote earlier than that and now missing is removed at once:
while it is missing the copies it throttled run at full speed."""


KEEP_REQUEST = "keep_throttles"
"""The control-file request of a process about to clear every throttle as the Apache tool does (``{"pid": N, "by":
"--verify"}``): the run puts back its own throttles that vanish while that process lives, and a moment after."""

KEEP_AFTER_S = THROTTLE_CONFIRM_S + THROTTLE_CHECK_S
"""How long a keep request still covers once its process is gone: a broker may show a removal that late."""

KEEP_AT_MOST_S = 120.0
"""How long a keep request covers at most while its process lives (a pid reused by a long-lived process)."""


T = TypeVar("T")


def waiting_out_metadata_lag(
    call: Callable[[], T],
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    event: Callable[[str], None],
    allowance: float = METADATA_LAG_ALLOWANCE,
) -> T:
    """``call()``, tried again while it fails for a topic the broker asked does not know yet: a broker learns
    a new topic from the controller's metadata log some time after it was created, and a request goes to
    any broker. After ``allowance`` seconds the error stands (the topic really is unknown)."""
    deadline = clock() + allowance
    told = False
    while True:
        try:
            return call()
        except UnknownTopicOrPartitionError as exc:
            if clock() >= deadline:
                raise
            if not told:
                event(f"A broker does not know a topic of the plan yet; waiting up to {allowance:.0f} s ({exc})")
                told = True
            sleep(0.5)


class Ended(Enum):
    DONE = "done"
    LAGGING = "lagging"  # the broker asked has not learned the end yet: wait, never submit again
    CANCELLED = "cancelled"  # cancelled by another client: Kafka reverted it
    MOVED = "moved"  # another client put the partition elsewhere


def confirmed_done(step: Step, current: PartitionInfo) -> bool:
    """Whether metadata that shows ``step``'s target as the replicas says the step finished. A step that adds
    replicas and drops none shows its target while it runs too, so a broker whose metadata lags behind another
    client's cancel still shows it: only an ISR holding every replica it adds confirms the end (the controller
    ends a reassignment only with its whole target in the ISR). Other steps show their target only once done."""
    adding = set(step.target) - set(step.source)
    if not adding or not set(step.source) <= set(step.target):
        return True
    return adding <= set(current.isr)


def ended_step(step: Step, current: PartitionInfo, lagging_for: float) -> Ended:
    """What became of ``step``, which the controller no longer lists, from the partition's metadata
    (``lagging_for``: how long it has already looked unfinished). Kafka reverts a cancelled step by dropping the
    replicas being added and keeping the others in the reassignment's order (the target's first): the source's
    replicas in another order is a cancel at once; in the source's own order it is what a broker whose metadata
    lags the controller also shows, so it counts as a cancel only after METADATA_LAG_ALLOWANCE."""
    replicas = tuple(current.replicas)
    if replicas == step.target:
        if confirmed_done(step, current) or lagging_for >= METADATA_LAG_ALLOWANCE:
            return Ended.DONE
        return Ended.LAGGING  # the step under way, or its cancel not yet shown: the ISR will tell
    shown, source = set(replicas), set(step.source)
    if shown == source | set(step.target) and shown != source:
        return Ended.LAGGING  # the broker's metadata still shows the step under way
    within = lagging_for < METADATA_LAG_ALLOWANCE
    if shown == source:
        return Ended.LAGGING if replicas == step.source and within else Ended.CANCELLED
    return Ended.LAGGING if within else Ended.MOVED


@dataclass(frozen=True)
class Removed:
    """A throttle config of the run another client removed."""

    what: str  # e.g. "follower.replication.throttled.replicas of topic t" or "... rate of broker 2"

    def __str__(self) -> str:
        return f"throttle config {self.what} removed by another client"


RATES_NOT_REPORTED = (
    "The brokers report none of this run's throttle rates (Kafka 2.4 brokers leave "
    f"{LEADER_THROTTLED_RATE} and {FOLLOWER_THROTTLED_RATE} out of DescribeConfigs): the run watches its topic "
    "throttles only, and would not notice another client removing a rate"
)
"""Said once per run (stderr) when the brokers never show the rates the run set (the broker matrix, Kafka 2.4)."""


class ThrottleWatch:
    """Reads the run's throttles back every THROTTLE_CHECK_S and reports those removed by another client.
    ``event`` tells the user (stderr) what the watch cannot see: once, when the brokers never report the rates."""

    def __init__(
        self,
        port: ClusterPort,
        throttles: ThrottleLifecycle,
        clock: Callable[[], float],
        event: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.port = port
        self.throttles = throttles
        self.clock = clock
        self.event = event
        self._checked = float("-inf")
        #: whether any broker has answered with a rate of the run: a Kafka 2.4 broker leaves its throttle rates
        #: out of DescribeConfigs, so on such a cluster a missing rate says nothing and is not watched
        self._rates_reported = False
        self._told_rates_not_reported = False
        self.keeper = ThrottleKeeper(clock)

    def keeping(self) -> bool:
        """Whether a keep request covers a throttle of the run vanishing now (``ThrottleKeeper``)."""
        return bool(self.keeper.covering())

    def check(
        self,
        brokers: Iterable[int],
        inter_broker: int,
        log_dir: int,
        *,
        starting: bool = False,
        read_requests: Callable[[], object] = lambda: None,
    ) -> Removed | None:
        """The first throttle of the run confirmed removed, or None. ``brokers``: those of the steps in flight
        (their rates are the ones that hold the copies back now) and of those about to start (``starting``);
        ``inter_broker``/``log_dir``: the run's rates (-1: not set by this run).

        While a keep request covers (``ThrottleKeeper``), whatever of the run's is missing is put back at once (one
        line; a write the broker asked has not learned yet is written again, which changes nothing), and the
        throttles are read before every step that starts. A removal seen with no request read yet reads the control
        file once more first (``read_requests``): a --verify writes its request before it clears."""
        now = self.clock()
        keeping = self.keeping()
        if now - self._checked < THROTTLE_CHECK_S and not (keeping and starting):
            return None
        self._checked = now
        if not keeping:
            removed = self._removed(brokers, inter_broker, log_dir, now)
            if removed is None:
                return None
            read_requests()
            if not self.keeping():
                return removed
        self.keeper.tell(self.throttles.put_back(brokers, rates=self._rates_reported), self.event)
        return None

    def _removed(self, brokers: Iterable[int], inter_broker: int, log_dir: int, now: float) -> Removed | None:
        expected: dict[tuple[str, str], tuple[ConfigResource, Callable[[str | None], bool]]] = {}
        for (topic, config), mine in self.throttles.ours.items():
            if mine:
                resource = ConfigResource(ResourceType.TOPIC, topic)
                expected[(f"topic {topic}", config)] = (resource, _holds(set(mine)))
        rates = []
        if inter_broker >= 0:
            rates += [LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE]
        if log_dir >= 0:
            rates.append(LOG_DIR_THROTTLED_RATE)
        for broker in sorted({str(b) for b in brokers} & self.throttles.rates_set, key=int):
            resource = ConfigResource(ResourceType.BROKER, broker)
            for config in rates:
                expected[(f"broker {broker}", config)] = (resource, _is_set)
        if not expected:
            return None
        described = self.port.describe_configs(list(dict.fromkeys(r for r, _ in expected.values())))
        missing = set()
        for key, (resource, holds) in expected.items():
            if holds(described.get(resource, {}).get(key[1])):
                self._rates_reported |= resource.type is ResourceType.BROKER
            elif resource.type is ResourceType.TOPIC or self._rates_reported:
                missing.add(key)
        for key in sorted(missing):
            if now - self.throttles.written_at.get(key, float("-inf")) >= THROTTLE_CONFIRM_S:
                return Removed(f"{key[1]} of {key[0]}")
        self._tell_if_rates_not_reported(
            [key for key, (resource, _) in expected.items() if resource.type is ResourceType.BROKER], now
        )
        return None

    def _tell_if_rates_not_reported(self, rates: list[tuple[str, str]], now: float) -> None:
        """Once per run: the rates were written long enough ago to show, and no broker ever showed one."""
        if self._rates_reported or self._told_rates_not_reported or not rates:
            return
        if all(now - self.throttles.written_at.get(key, float("-inf")) >= THROTTLE_CONFIRM_S for key in rates):
            self._told_rates_not_reported = True
            self.event(RATES_NOT_REPORTED)


def _holds(mine: set[str]) -> Callable[[str | None], bool]:
    def holds(value: str | None) -> bool:
        present = entries(value)
        return "*" in present or mine <= present

    return holds


def _is_set(value: str | None) -> bool:
    return value is not None


def deleted_topics(port: ClusterPort, topics: Iterable[str]) -> set[str]:
    """The topics of ``topics`` the cluster no longer lists."""
    return set(topics) - set(port.list_topic_names())


def ask_to_keep_throttles(journal: Journal, by: str) -> None:
    """Asks the run of ``journal`` (through its control file, read on every poll) to put back its own throttles that
    vanish while this process lives: this process (``by``: ``--verify``, ``--cancel``) is about to clear every throttle
    as the Apache tool does. Best effort: a control file that cannot be written leaves the run as it was (it stops
    when its throttles vanish)."""
    try:
        journal.request(**{KEEP_REQUEST: {"pid": os.getpid(), "by": by}})
    except Exception:
        return


@dataclass
class _Ask:
    by: str
    seen: float
    gone: float | None = None
    told: bool = False


@dataclass
class ThrottleKeeper:
    """The keep requests a run has read (:func:`ask_to_keep_throttles`), by the pid of the process that asked. A
    request covers while that process lives (at most KEEP_AT_MOST_S) and KEEP_AFTER_S after it is gone."""

    clock: Callable[[], float]
    alive: Callable[[int], bool] = process_alive
    asks: dict[int, _Ask] = field(default_factory=dict)

    def asked(self, request: object) -> None:
        if not isinstance(request, dict) or not isinstance(request.get("pid"), int):
            return
        by = request.get("by") if isinstance(request.get("by"), str) else "a command"
        self.asks[request["pid"]] = _Ask(f"{by} (pid {request['pid']})", self.clock())

    def covering(self) -> list[_Ask]:
        """The requests that cover a throttle vanishing now (those over go)."""
        now = self.clock()
        for pid, ask in list(self.asks.items()):
            if ask.gone is None and (now - ask.seen >= KEEP_AT_MOST_S or not self.alive(pid)):
                ask.gone = min(now, ask.seen + KEEP_AT_MOST_S)
            if ask.gone is not None and now - ask.gone >= KEEP_AFTER_S:
                del self.asks[pid]
        return list(self.asks.values())

    def tell(self, put_back: list[str], event: Callable[[str], None]) -> None:
        """One line per request whose throttle clearing the run has made up for."""
        asks = [ask for ask in self.asks.values() if not ask.told]
        if not put_back or not asks:
            return
        for ask in asks:
            ask.told = True
        by = " and ".join(ask.by for ask in asks)
        event(
            f"Put back {' and '.join(put_back)}: {by} cleared them as the Apache tool does, having asked this run to "
            "keep its own; the run goes on"
        )
