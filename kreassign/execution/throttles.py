"""Throttles of a batched reassignment: recorded before the first step, narrowed to the replicas that move
now, and restored exactly when the run ends, however it ends.

Topic lists (``leader.replication.throttled.replicas`` and ``follower...``) hold the entries that were
there before the run plus ours for the steps in flight: leader side the replicas a moving partition
already has, follower side the replicas it is adding. Broker rates are set on every broker the plan
touches. Restoring writes back each recorded value (or deletes a config that was absent), and only for the
configs the run changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType
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
_KIND = {ResourceType.TOPIC: "topic", ResourceType.BROKER: "broker"}
_BROKER_RATES = (LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE, LOG_DIR_THROTTLED_RATE)


def record_throttles(port: ClusterPort, topics: Iterable[str], brokers: Iterable[int]) -> Recorded:
    """The throttle configs of these topics and brokers as they are now (None: not set)."""
    resources = [ConfigResource(ResourceType.TOPIC, t) for t in sorted(set(topics))]
    resources += [ConfigResource(ResourceType.BROKER, str(b)) for b in sorted(set(brokers))]
    described = port.describe_configs(resources)
    recorded: Recorded = {"topic": {}, "broker": {}}
    for resource in resources:
        values = described.get(resource, {})
        names = TOPIC_LEVEL_THROTTLES if resource.type is ResourceType.TOPIC else _BROKER_RATES
        recorded[_KIND[resource.type]][resource.name] = {name: values.get(name) for name in names}
    return recorded


def _entries(value: str | None) -> set[str]:
    return {e.strip() for e in (value or "").split(",") if e.strip()}


def _resource(kind: str, name: str) -> ConfigResource:
    return ConfigResource(ResourceType.TOPIC if kind == "topic" else ResourceType.BROKER, name)


class ThrottleLifecycle:
    """Owns every throttle change of one run. ``restore()`` is safe to call more than once."""

    def __init__(self, port: ClusterPort, recorded: Recorded) -> None:
        self.port = port
        self.recorded = recorded
        self.applied: dict[tuple[str, str], dict[str, str | None]] = {}  # what we last wrote

    def _write(self, kind: str, name: str, values: Mapping[str, str | None]) -> None:
        current = self.applied.get((kind, name))
        if current is None:
            current = dict(self.recorded.get(kind, {}).get(name, {}))
        ops = [
            ConfigOp(config, OpType.DELETE) if value is None else ConfigOp(config, OpType.SET, value)
            for config, value in values.items()
            if current.get(config) != value
        ]
        if not ops:
            return
        self.port.incremental_alter_configs({_resource(kind, name): ops})
        self.applied[(kind, name)] = {**current, **values}

    def adopt_current(self) -> None:
        """Read the throttle configs of every recorded resource as they are now, so that whatever differs
        from the record (left by a run that died, for example) is restored at the end."""
        resources = [_resource(kind, name) for kind, names in self.recorded.items() for name in names]
        described = self.port.describe_configs(resources) if resources else {}
        for resource in resources:
            kind = _KIND[resource.type]
            now = described.get(resource, {})
            names = TOPIC_LEVEL_THROTTLES if kind == "topic" else _BROKER_RATES
            current = {config: now.get(config) for config in names}
            if current != self.recorded[kind][resource.name]:
                self.applied[(kind, resource.name)] = current

    def set_rates(self, brokers: Iterable[int], inter_broker: int, log_dir: int) -> None:
        """Broker rates for the run (-1: leave that rate alone)."""
        for broker in sorted(set(brokers)):
            values: dict[str, str | None] = {}
            if inter_broker >= 0:
                values[LEADER_THROTTLED_RATE] = str(inter_broker)
                values[FOLLOWER_THROTTLED_RATE] = str(inter_broker)
            if log_dir >= 0:
                values[LOG_DIR_THROTTLED_RATE] = str(log_dir)
            if values:
                self._write("broker", str(broker), values)

    def throttle_moving(self, steps: Iterable[Step]) -> None:
        """Topic replica lists for exactly these in-flight steps (plus what was there before the run)."""
        leader: dict[str, set[str]] = {}
        follower: dict[str, set[str]] = {}
        for step in steps:
            topic, p = step.partition.topic, step.partition.partition
            leader.setdefault(topic, set()).update(f"{p}:{b}" for b in step.source)
            follower.setdefault(topic, set()).update(f"{p}:{b}" for b in step.adding)
        topics = set(leader) | {name for kind, name in self.applied if kind == "topic"}
        for topic in sorted(topics):
            before = self.recorded.get("topic", {}).get(topic, {})
            values: dict[str, str | None] = {}
            for config, ours in ((LEADER_THROTTLED_REPLICAS, leader), (FOLLOWER_THROTTLED_REPLICAS, follower)):
                recorded = before.get(config)
                if recorded is not None and recorded.strip() == "*":
                    values[config] = recorded  # everything is throttled already
                    continue
                entries = _entries(recorded) | ours.get(topic, set())
                values[config] = ",".join(sorted(entries)) if entries else None
                if not ours.get(topic) and values[config] is not None:
                    values[config] = recorded
            self._write("topic", topic, values)

    def set_rate_everywhere(self, inter_broker: int, log_dir: int) -> None:
        """A new rate while running: every broker this run throttles gets it."""
        brokers = [int(name) for kind, name in self.applied if kind == "broker"]
        self.set_rates(brokers, inter_broker, log_dir)

    def restore(self) -> None:
        """Put back every config this run changed, as recorded before the first step."""
        failures = []
        for (kind, name), values in sorted(self.applied.items()):
            before = self.recorded.get(kind, {}).get(name, {})
            ops = [
                ConfigOp(config, OpType.DELETE)
                if before.get(config) is None
                else ConfigOp(config, OpType.SET, before[config])
                for config, value in values.items()
                if value != before.get(config)
            ]
            if not ops:
                continue
            try:
                self.port.incremental_alter_configs({_resource(kind, name): ops})
            except Exception as exc:  # keep restoring the others; report every failure at the end
                failures.append(f"{kind} {name}: {exc}")
                continue
            self.applied[(kind, name)] = dict(before)
        if failures:
            raise ThrottleRestoreError(failures)


def restore_recorded(port: ClusterPort, recorded: Recorded) -> None:
    """After a crash: put back the recorded value of every throttle config of the recorded resources."""
    lifecycle = ThrottleLifecycle(port, recorded)
    lifecycle.adopt_current()
    lifecycle.restore()


class ThrottleRestoreError(Exception):
    def __init__(self, failures: list[str]) -> None:
        super().__init__("could not restore throttles of " + "; ".join(failures))
        self.failures = failures
