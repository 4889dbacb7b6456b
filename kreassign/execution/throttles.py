"""Throttles of a batched reassignment: recorded before the first step, narrowed to the replicas that move
now, and restored when the run ends, however it ends.

Topic lists (``leader.replication.throttled.replicas`` and ``follower...``): the run adds its entries for
the steps in flight (leader side the replicas a moving partition already has, follower side the replicas
it is adding) and removes them when the steps finish, reading the current value first, so entries that
someone else adds while the run goes on are kept. At the end the lists hold what they held before the run
(plus anything others added meanwhile). Broker rates are set on every broker the plan touches and put back
to their recorded values (deleted if they were absent). A broker that is offline cannot have its configs
changed: its rates are left for later (the resume or ``--cancel`` restores them) and reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.execution.signals import whole_request
from kreassign.planning.steps import Step
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIR_THROTTLED_RATE,
    TOPIC_LEVEL_THROTTLES,
)

Recorded = dict[str, dict[str, dict[str, str | None]]]
_BROKER_RATES = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIR_THROTTLED_RATE)


def record_throttles(port: ClusterPort, topics: Iterable[str], brokers: Iterable[int]) -> Recorded:
    """The throttle configs of these topics and brokers as they are now (None: not set)."""
    resources = [_topic(t) for t in sorted(set(topics))] + [_broker(b) for b in sorted(set(brokers))]
    described = port.describe_configs(resources)
    recorded: Recorded = {"topic": {}, "broker": {}}
    for resource in resources:
        values = described.get(resource, {})
        if resource.type is ResourceType.TOPIC:
            recorded["topic"][resource.name] = {name: values.get(name) for name in TOPIC_LEVEL_THROTTLES}
        else:
            recorded["broker"][resource.name] = {name: values.get(name) for name in _BROKER_RATES}
    return recorded


def _topic(name: str) -> ConfigResource:
    return ConfigResource(ResourceType.TOPIC, name)


def _broker(broker_id: int | str) -> ConfigResource:
    return ConfigResource(ResourceType.BROKER, str(broker_id))


def entries(value: str | None) -> set[str]:
    """The entries of a throttled-replicas list (``p:b``, or ``*``)."""
    return {e.strip() for e in (value or "").split(",") if e.strip()}


_UNSURE = "\0unsure"
"""What :attr:`ThrottleLifecycle.written` holds for a list while its write has no answer: equal to no value."""


def _op(config: str, value: str | None) -> ConfigOp:
    return ConfigOp(config, OpType.DELETE) if value is None else ConfigOp(config, OpType.SET, value)


class ThrottleLifecycle:
    """Owns every throttle change of one run. ``restore()`` is safe to call more than once."""

    def __init__(self, port: ClusterPort, recorded: Recorded, clock: Callable[[], float] = time.monotonic) -> None:
        self.port = port
        self.recorded = recorded
        self.clock = clock
        # ("topic t" | "broker b", config) -> when this run last wrote it (the watch of others' changes waits
        # for a broker to learn the write before it takes a missing value for someone else's doing)
        self.written_at: dict[tuple[str, str], float] = {}
        self.ours: dict[tuple[str, str], set[str]] = {}  # (topic, config) -> entries this run wants there now
        # every entry this run ever added: a broker can answer DescribeConfigs with a value older than our
        # last write (metadata propagates asynchronously), and such an entry must not pass for someone else's
        self.ours_ever: dict[tuple[str, str], set[str]] = {}
        self.written: dict[tuple[str, str], str | None] = {}  # the value this run last wrote
        self.rates_set: set[str] = set()  # brokers whose rates this run changed
        self.pending: list[str] = []  # what restore() could not do (offline brokers)

    def adopt_current(self, live: Iterable[int]) -> None:
        """A run of this plan may have died with its throttles set: whatever differs from the record now is
        taken as that run's, so that it is undone at the end (brokers not in ``live`` cannot be read)."""
        topics = list(self.recorded.get("topic", {}))
        up = {str(b) for b in live}
        brokers = [b for b in self.recorded.get("broker", {}) if b in up]
        self.rates_set.update(b for b in self.recorded.get("broker", {}) if b not in up)
        described = self.port.describe_configs([_topic(t) for t in topics] + [_broker(b) for b in brokers])
        for topic in topics:
            now = described.get(_topic(topic), {})
            for config in TOPIC_LEVEL_THROTTLES:
                extra = entries(now.get(config)) - entries(self.recorded["topic"][topic].get(config))
                if extra:
                    self.ours[(topic, config)] = set(extra)
                    self.ours_ever[(topic, config)] = set(extra)
        for broker in brokers:
            now = described.get(_broker(broker), {})
            if any(now.get(c) != self.recorded["broker"][broker].get(c) for c in _BROKER_RATES):
                self.rates_set.add(broker)

    def set_rates(self, brokers: Iterable[int], inter_broker: int, log_dir: int) -> None:
        """Broker rates for the run (-1: leave that rate alone)."""
        values: dict[str, str | None] = {}
        if inter_broker >= 0:
            values[LEADER_THROTTLED_RATE] = str(inter_broker)
            values[FOLLOWER_THROTTLED_RATE] = str(inter_broker)
        if log_dir >= 0:
            values[LOG_DIR_THROTTLED_RATE] = str(log_dir)
        if not values:
            return
        changes = {_broker(b): [_op(c, v) for c, v in values.items()] for b in sorted(set(brokers))}
        if changes:
            # counted as set before the call: a signal that arrives while it runs (or right after it returns)
            # must still find these brokers in restore(); putting back a rate that was never changed is harmless
            self.rates_set.update(r.name for r in changes)
            with whole_request():
                self.port.incremental_alter_configs(changes)
            now = self.clock()
            self.written_at.update({(f"broker {r.name}", op.name): now for r, ops in changes.items() for op in ops})

    def set_rate_everywhere(self, inter_broker: int, log_dir: int) -> None:
        """A new rate while running: every broker this run throttles gets it."""
        self.set_rates([int(b) for b in self.rates_set], inter_broker, log_dir)

    def has_lists(self) -> bool:
        """Whether this run has entries of its own in a topic's throttled-replica list now."""
        return any(self.ours.values())

    def throttle_moving(self, steps: Iterable[Step]) -> None:
        """The topic lists hold, besides what others put there, exactly the entries of these steps."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for step in steps:
            topic, p = step.partition.topic, step.partition.partition
            wanted.setdefault((topic, LEADER_THROTTLED_REPLICAS), set()).update(f"{p}:{b}" for b in step.source)
            wanted.setdefault((topic, FOLLOWER_THROTTLED_REPLICAS), set()).update(f"{p}:{b}" for b in step.adding)
        keys = {k for k, v in wanted.items() if v} | {k for k, v in self.ours.items() if v}
        if keys and any(wanted.get(k, set()) != self.ours.get(k, set()) for k in keys):
            self._rewrite_lists(keys, wanted)

    def _rewrite_lists(self, keys: set[tuple[str, str]], wanted: Mapping[tuple[str, str], set[str]]) -> None:
        topics = sorted({topic for topic, _ in keys})
        described = self.port.describe_configs([_topic(t) for t in topics])
        changes: dict[ConfigResource, list[ConfigOp]] = {}
        writes: dict[tuple[str, str], str | None] = {}
        for topic, config in sorted(keys):
            current = described.get(_topic(topic), {}).get(config)
            recorded = self.recorded.get("topic", {}).get(topic, {}).get(config)
            if (current or "").strip() == "*" or (recorded or "").strip() == "*":
                continue  # every replica of the topic is throttled already
            ever = self.ours_ever.setdefault((topic, config), set())
            others = entries(current) - ever - self.ours.get((topic, config), set())
            others |= entries(recorded) & entries(current)  # what was there before the run stays
            mine = wanted.get((topic, config), set()) - others
            ever |= mine
            kept = others | mine
            if kept == entries(recorded) and recorded is not None:
                value: str | None = recorded  # back to the exact text that was there
            else:
                value = ",".join(sorted(kept)) if kept else None
            # compare with our own last write when there is one: the value read back may be older than it
            if value != self.written.get((topic, config), current):
                changes.setdefault(_topic(topic), []).append(_op(config, value))
                writes[(topic, config)] = value
            self.ours[(topic, config)] = mine
        if changes:
            # until the answer comes, what the topic holds is unknown: a value read back may predate this write
            # (or the write may have failed), so the next comparison must not trust either
            self.written.update(dict.fromkeys(writes, _UNSURE))
            with whole_request():
                self.port.incremental_alter_configs(changes)
            self.written.update(writes)
            now = self.clock()
            self.written_at.update({(f"topic {topic}", config): now for topic, config in writes})

    def forget_topic(self, topic: str) -> None:
        """A deleted topic: its configs went with it, nothing of it is left to restore."""
        for table in (self.ours, self.ours_ever, self.written):
            for key in [k for k in table if k[0] == topic]:
                del table[key]
        self.recorded.get("topic", {}).pop(topic, None)

    def restore(self, offline: Iterable[int] = ()) -> None:
        """Take this run's entries out of the topic lists and put the recorded broker rates back. Brokers
        in ``offline`` cannot be changed now: they are listed in ``pending``."""
        failures: list[str] = []
        try:
            self.throttle_moving([])
        except Exception as exc:  # keep going: the broker rates may still be restorable
            failures.append(f"topic throttle lists: {getattr(exc, 'message', exc)}")
        away = {str(b) for b in offline}
        self.pending = sorted(self.rates_set & away, key=int)
        for broker in sorted(self.rates_set - away, key=int):
            before = self.recorded.get("broker", {}).get(broker, {})
            try:
                with whole_request():
                    self.port.incremental_alter_configs(
                        {_broker(broker): [_op(c, before.get(c)) for c in _BROKER_RATES]}
                    )
            except Exception as exc:
                failures.append(f"broker {broker}: {getattr(exc, 'message', exc)}")
                continue
            self.rates_set.discard(broker)
        if failures:
            raise ThrottleRestoreError(failures)


def restore_recorded(port: ClusterPort, recorded: Recorded) -> list[str]:
    """After a crash: undo whatever differs from the record. Returns the offline brokers left for later."""
    live = {b.id for b in port.describe_brokers()}
    lifecycle = ThrottleLifecycle(port, recorded)
    lifecycle.adopt_current(live)
    lifecycle.restore(offline=[int(b) for b in recorded.get("broker", {}) if int(b) not in live])
    return lifecycle.pending


class ThrottleRestoreError(Exception):
    def __init__(self, failures: list[str]) -> None:
        super().__init__("could not restore throttles of " + "; ".join(failures))
        self.failures = failures
