"""Throttles of a batched reassignment, by ownership: recorded before the first step, narrowed to the replicas
that move now, and at the end put back only where the run still holds what it wrote and nothing it throttles
still moves.

Topic lists (``leader.replication.throttled.replicas`` and ``follower...``): the run adds its entries for
the steps in flight (leader side the replicas a moving partition already has, follower side the replicas
it is adding) and removes them when the steps finish, reading the current value first, so entries that
someone else adds while the run goes on are kept. Broker rates are set on every broker the plan touches.

What the run writes is in its journal before it is on the cluster (``JournalState.throttles_written``: each
rate with its value, each list entry it added), next to what was there before (``recorded_throttles``). A
resume, or ``--cancel`` after a crash, takes as the run's own only what the journal says it wrote and the
cluster still shows; anything else there now is someone else's, and becomes the value to put back.

At the end (completion, ``--cancel``, Ctrl-C, a failure), before anything is removed, the reassignments in
flight are read: the list entries of partitions still reassigning stay, and so does a rate that holds back a
copy still moving (a list names the copy's replica on that broker); the run says what it kept and who removes
it later. A rate someone else changed after the run set it (``kafka-configs --alter``, the Apache tool) is
theirs: kept, with one line. Several runs on one cluster share a broker's rates through
``throttle_claims.py``: the last one out restores the value from before the first. A broker that is offline
cannot have its configs changed: its rates are left for later (the resume or ``--cancel`` restores them).
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

from kreassign.cluster.port import ClusterPort, ConfigOp, ConfigResource, OpType, ResourceType
from kreassign.execution.signals import whole_request
from kreassign.execution.throttle_claims import ClaimTable, Release, ThrottleClaims
from kreassign.model import PartitionReassignment, TopicPartition
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
Held = dict[str, dict[str, dict]]  # JournalState.throttles_written
Key = tuple[str, str]  # (broker id, rate config)
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


def _partition_of(entry: str) -> int:
    try:
        return int(entry.split(":", 1)[0])
    except ValueError:
        return -1


def _brokers(keys: Iterable[Key]) -> str:
    return ",".join(sorted({b for b, _ in keys}, key=int))


class ThrottleLifecycle:
    """Owns every throttle change of one run. ``restore()`` is safe to call more than once.

    ``on_write(change)``: called before each write with what the run is about to hold (the journal's
    ``throttles_written``, a value None: no longer held); ``claims``: the cluster's shared claims of broker rates
    (``throttle_claims.py``; None: the journal's record alone); ``event``: kreassign's lines on stderr."""

    def __init__(
        self,
        port: ClusterPort,
        recorded: Recorded,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_write: Callable[[Held], object] | None = None,
        claims: ThrottleClaims | None = None,
        event: Callable[[str], None] | None = None,
    ) -> None:
        self.port = port
        self.recorded = recorded
        self.clock = clock
        self.on_write = on_write or (lambda change: None)
        self.claims = claims
        self.event = event or (lambda message: None)
        # ("topic t" | "broker b", config) -> when this run last wrote it (the watch of others' changes waits
        # for a broker to learn the write before it takes a missing value for someone else's doing)
        self.written_at: dict[tuple[str, str], float] = {}
        self.ours: dict[tuple[str, str], set[str]] = {}  # (topic, config) -> entries this run wants there now
        # every entry this run ever added: a broker can answer DescribeConfigs with a value older than our
        # last write (metadata propagates asynchronously), and such an entry must not pass for someone else's
        self.ours_ever: dict[tuple[str, str], set[str]] = {}
        self.written: dict[tuple[str, str], str | None] = {}  # the value this run last wrote
        self.rates: dict[Key, str] = {}  # the broker rates this run wrote and holds, with the value it wrote
        self._history: dict[Key, set[str]] = {}  # every value it wrote there: a broker may answer an older one
        self._told_changed: set[Key] = set()
        # rates someone else changed after this run set them: theirs, not rewritten (but on --additional --throttle)
        self.yielded: set[Key] = set()
        self.pending: list[str] = []  # what restore() could not do (offline brokers)

    @property
    def rates_set(self) -> set[str]:
        """The brokers this run holds a rate of."""
        return {broker for broker, _ in self.rates}

    @property
    def throttled_brokers(self) -> set[str]:
        """The brokers this run throttles, those whose rates someone else has taken over included."""
        return self.rates_set | {broker for broker, _ in self.yielded}

    def held(self) -> Held:
        """What the run holds now, as the journal keeps it (``JournalState.throttles_written``)."""
        held: Held = {"broker": {}, "topic": {}}
        for (broker, config), value in sorted(self.rates.items()):
            held["broker"].setdefault(broker, {})[config] = value
        for (topic, config), mine in sorted(self.ours.items()):
            if mine:
                held["topic"].setdefault(topic, {})[config] = sorted(mine)
        return {kind: names for kind, names in held.items() if names}

    def _hold(self, key: Key, value: str) -> None:
        self.rates[key] = value
        self._history.setdefault(key, set()).add(value)

    def _before(self, key: Key) -> str | None:
        return self.recorded.get("broker", {}).get(key[0], {}).get(key[1])

    def adopt(self, live: Iterable[int], held: Held) -> dict[Key, str]:
        """A resume, or ``--cancel`` after a crash: the run's own are what ``held`` (its journal) says it wrote
        and the cluster still shows. Anything else there now is someone else's and becomes the value to put
        back (``recorded``). A broker not in ``live`` cannot be read: what the journal says is taken as held.
        Returns the rates the run had set that someone else has changed since (to what)."""
        up = {str(b) for b in live}
        topics = list(self.recorded.get("topic", {}))
        brokers = [b for b in self.recorded.get("broker", {}) if b in up]
        described = self.port.describe_configs([_topic(t) for t in topics] + [_broker(b) for b in brokers])
        changed: dict[Key, str] = {}
        lost: list[Key] = []
        for broker, before in self.recorded.get("broker", {}).items():
            mine = held.get("broker", {}).get(broker, {})
            now = described.get(_broker(broker), {})
            for config in _BROKER_RATES:
                value = now.get(config)
                if config in mine and (broker not in up or value == mine[config]):
                    self._hold((broker, config), mine[config])
                elif broker in up:
                    before[config] = value
                    if config in mine:  # the run's no longer: its claim goes, a value set by someone else stays
                        lost.append((broker, config))
                        if value is not None:
                            changed[(broker, config)] = value
        if lost:
            with self._claim_table() as table:
                for key in lost:
                    if table is not None and self.claims is not None and self.claims.holder in table.holders(key):
                        table.release(self.claims.holder, key, holding=False)
        for topic, before in self.recorded.get("topic", {}).items():
            now = described.get(_topic(topic), {})
            for config in TOPIC_LEVEL_THROTTLES:
                present = entries(now.get(config))
                mine = set(held.get("topic", {}).get(topic, {}).get(config, [])) & present
                mine -= entries(before.get(config))
                if mine:
                    self.ours[(topic, config)] = set(mine)
                    self.ours_ever[(topic, config)] = set(mine)
                    before[config] = ",".join(sorted(present - mine)) or None
                else:
                    before[config] = now.get(config)
        return changed

    def set_rates(
        self,
        brokers: Iterable[int],
        inter_broker: int,
        log_dir: int,
        respect_others: bool = False,
        reclaim: bool = False,
    ) -> None:
        """Broker rates for the run (-1: leave that rate alone), but those someone else took over since this run
        set them, unless ``reclaim`` (a new rate the operator asked this run for). ``respect_others``: read them
        first, to find those taken over since (``--throttle auto`` moving its rates)."""
        values: dict[str, str] = {}
        if inter_broker >= 0:
            values[LEADER_THROTTLED_RATE] = str(inter_broker)
            values[FOLLOWER_THROTTLED_RATE] = str(inter_broker)
        if log_dir >= 0:
            values[LOG_DIR_THROTTLED_RATE] = str(log_dir)
        keys = {(str(b), c): v for b in sorted(set(brokers)) for c, v in values.items()}
        if reclaim:
            self.yielded -= set(keys)
        keys = {key: value for key, value in keys.items() if key not in self.yielded}
        if respect_others:
            keys = self._not_taken(keys)
        if not keys:
            return
        changes: dict[ConfigResource, list[ConfigOp]] = {}
        for (broker, config), value in keys.items():
            changes.setdefault(_broker(broker), []).append(_op(config, value))
        with self._claim_table() as table:
            if table is not None:
                for key, value in keys.items():
                    table.hold(self.claims.holder, key, value, self._before(key))  # type: ignore[union-attr]
            change: Held = {"broker": {}}
            for (broker, config), value in keys.items():
                change["broker"].setdefault(broker, {})[config] = value
            self.on_write(change)  # the journal knows of a write before the cluster does
            # held from before the call: a signal that arrives while it runs (or right after it returns) must
            # still find these rates in restore(); putting back a rate that was never changed is harmless
            for key, value in keys.items():
                self._hold(key, value)
            with whole_request():
                self.port.incremental_alter_configs(changes)
        now = self.clock()
        self.written_at.update({(f"broker {broker}", config): now for broker, config in keys})

    def _not_taken(self, keys: dict[Key, str]) -> dict[Key, str]:
        """``keys`` but the rates this run set that someone else has changed since (said once each)."""
        mine = [key for key in keys if key in self.rates]
        if not mine:
            return keys
        described = self.port.describe_configs([_broker(b) for b in sorted({b for b, _ in mine}, key=int)])
        taken = {
            key: value
            for key in mine
            if (value := described.get(_broker(key[0]), {}).get(key[1])) is not None
            and value not in self._history.get(key, ())
        }
        self._tell_changed(taken)
        self.yielded.update(taken)
        return {key: value for key, value in keys.items() if key not in taken}

    def _tell_changed(self, changed: Mapping[Key, str]) -> None:
        new = {key: value for key, value in sorted(changed.items()) if key not in self._told_changed}
        if new:
            self._told_changed.update(new)
            said = ", ".join(f"{config} of broker {broker} ({value})" for (broker, config), value in new.items())
            self.event(f"Kept {said}: changed by someone else after this run set it, it is theirs now")

    @contextlib.contextmanager
    def _claim_table(self) -> Iterator[ClaimTable | None]:
        if self.claims is None:
            yield None
            return
        with self.claims.table() as table:
            yield table

    def set_rate_everywhere(self, inter_broker: int, log_dir: int) -> None:
        """A new rate while running (``--additional --throttle``): every broker this run throttles gets it."""
        self.set_rates([int(b) for b in self.throttled_brokers], inter_broker, log_dir, reclaim=True)

    def has_lists(self) -> bool:
        """Whether this run has entries of its own in a topic's throttled-replica list now."""
        return any(self.ours.values())

    def throttle_moving(self, steps: Iterable[Step], kept: Iterable[TopicPartition] = ()) -> None:
        """The topic lists hold, besides what others put there, exactly the entries of these steps (and those the
        run holds of the partitions ``kept``)."""
        wanted = self._held_of(set(kept))
        for step in steps:
            topic, p = step.partition.topic, step.partition.partition
            wanted.setdefault((topic, LEADER_THROTTLED_REPLICAS), set()).update(f"{p}:{b}" for b in step.source)
            wanted.setdefault((topic, FOLLOWER_THROTTLED_REPLICAS), set()).update(f"{p}:{b}" for b in step.adding)
        self._narrow_lists(wanted)

    def _narrow_lists(self, wanted: Mapping[tuple[str, str], set[str]]) -> None:
        keys = {k for k, v in wanted.items() if v} | {k for k, v in self.ours.items() if v}
        if keys and any(wanted.get(k, set()) != self.ours.get(k, set()) for k in keys):
            self._rewrite_lists(keys, wanted)

    def _rewrite_lists(self, keys: set[tuple[str, str]], wanted: Mapping[tuple[str, str], set[str]]) -> None:
        topics = sorted({topic for topic, _ in keys})
        described = self.port.describe_configs([_topic(t) for t in topics])
        changes: dict[ConfigResource, list[ConfigOp]] = {}
        writes: dict[tuple[str, str], str | None] = {}
        holding: Held = {"topic": {}}
        for topic, config in sorted(keys):
            current = described.get(_topic(topic), {}).get(config)
            recorded = self.recorded.get("topic", {}).get(topic, {}).get(config)
            if (current or "").strip() == "*" or (recorded or "").strip() == "*":
                self.ours[(topic, config)] = set()
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
                # until the answer, both what it held and what it is given count as the run's
                either = sorted(mine | self.ours.get((topic, config), set()))
                holding["topic"].setdefault(topic, {})[config] = either or None
            self.ours[(topic, config)] = mine
        if changes:
            self.on_write(holding)
            # until the answer comes, what the topic holds is unknown: a value read back may predate this write
            # (or the write may have failed), so the next comparison must not trust either
            self.written.update(dict.fromkeys(writes, _UNSURE))
            with whole_request():
                self.port.incremental_alter_configs(changes)
            self.written.update(writes)
            now = self.clock()
            self.written_at.update({(f"topic {topic}", config): now for topic, config in writes})

    def put_back(self, brokers: Iterable[int], rates: bool = True) -> list[str]:
        """What the run holds (as its journal says) and the cluster no longer shows, written again: a process that
        cleared every throttle as the Apache tool does had asked the run to keep its own (``watch.ThrottleKeeper``).
        Each missing rate of ``brokers`` gets its value back (the value of its top holder, when runs share it: the
        one that was there), each topic list the run's entries; a rate someone else changed stays theirs.
        ``rates``: whether the brokers report rates at all (Kafka 2.4's do not). Returns what was written again."""
        lists = [key for key, mine in self.ours.items() if mine]
        up = {str(b) for b in brokers}
        keys = [key for key in self.rates if key[0] in up] if rates else []
        topics = sorted({topic for topic, _ in lists})
        if not topics and not keys:
            return []
        described = self.port.describe_configs(
            [_topic(t) for t in topics] + [_broker(b) for b in sorted({b for b, _ in keys}, key=int)]
        )
        missing = [key for key in keys if described.get(_broker(key[0]), {}).get(key[1]) is None]
        gone = {
            key
            for key in lists
            if "*" not in (shown := entries(described.get(_topic(key[0]), {}).get(key[1])))
            and not self.ours[key] <= shown
        }
        put: list[str] = []
        if missing:
            with self._claim_table() as table:
                changes: dict[ConfigResource, list[ConfigOp]] = {}
                for broker, config in missing:
                    stack = table.data.get(broker, {}).get(config, []) if table is not None else []
                    value = stack[-1]["value"] if stack else self.rates[(broker, config)]
                    changes.setdefault(_broker(broker), []).append(_op(config, value))
                with whole_request():
                    self.port.incremental_alter_configs(changes)
            now = self.clock()
            self.written_at.update({(f"broker {broker}", config): now for broker, config in missing})
            put.append(f"the throttle rates of broker(s) {_brokers(missing)}")
        if gone:
            for key in gone:
                self.written.pop(key, None)  # what was written last is gone: compare with what is there now
            self._rewrite_lists(gone, {key: set(self.ours[key]) for key in gone})
            put.append("the throttled-replica entries of topic(s) " + ",".join(sorted({t for t, _ in gone})))
        return put

    def forget_topic(self, topic: str) -> None:
        """A deleted topic: its configs went with it, nothing of it is left to restore."""
        for table in (self.ours, self.ours_ever, self.written):
            for key in [k for k in table if k[0] == topic]:
                del table[key]
        self.recorded.get("topic", {}).pop(topic, None)
        self.on_write({"topic": {topic: dict.fromkeys(TOPIC_LEVEL_THROTTLES)}})

    def restore(self, offline: Iterable[int] = (), own: Iterable[TopicPartition] = ()) -> None:
        """The end of the run: its entries out of the topic lists and its broker rates put back, but what still
        protects a copy in flight (a reassignment of a partition not in ``own``, the run's own reverted steps),
        and what someone else changed since the run wrote it. Brokers in ``offline`` cannot be changed now:
        they are listed in ``pending``."""
        if not self.rates and not self.has_lists():
            self.pending = []
            return
        try:
            own = set(own)
            moving = {tp: r for tp, r in self.port.list_reassignments().items() if r.adding and tp not in own}
        except Exception as exc:  # what still moves is unknown: nothing is removed (the resume or --cancel does)
            raise ThrottleRestoreError(
                [
                    f"the reassignments in flight could not be read ({getattr(exc, 'message', exc)}), so every one "
                    "is left as it is"
                ]
            ) from None
        failures: list[str] = []
        kept_lists: set[TopicPartition] = set()
        try:
            kept_lists = self._release_lists(set(moving))
        except Exception as exc:  # keep going: the broker rates may still be restorable
            failures.append(f"topic throttle lists: {getattr(exc, 'message', exc)}")
        away = {str(b) for b in offline}
        self.pending = sorted({b for b, _ in self.rates if b in away}, key=int)
        kept_rates: list[Key] = []
        try:
            kept_rates = self._release_rates(moving, away, failures)
        except Exception as exc:
            failures.append(f"broker rates: {getattr(exc, 'message', exc)}")
        if kept_lists or kept_rates:
            self._tell_kept(kept_lists, kept_rates, moving)
        if failures:
            raise ThrottleRestoreError(failures)

    def _held_of(self, partitions: set[TopicPartition]) -> dict[tuple[str, str], set[str]]:
        """The list entries the run holds of these partitions."""
        return {
            (topic, config): {e for e in mine if TopicPartition(topic, _partition_of(e)) in partitions}
            for (topic, config), mine in self.ours.items()
        }

    def _release_lists(self, moving: set[TopicPartition]) -> set[TopicPartition]:
        """The run's list entries out, but those of partitions still reassigning (returned)."""
        self._narrow_lists(self._held_of(moving))
        return {TopicPartition(t, _partition_of(e)) for (t, _), mine in self.ours.items() for e in mine}

    def _throttling(self, moving: Mapping[TopicPartition, PartitionReassignment]) -> set[Key]:
        """The rates that hold back a copy still in flight: a list of its topic names the copy's replica."""
        if not moving:
            return set()
        described = _describe_topics(self.port, sorted({tp.topic for tp in moving}))
        keys: set[Key] = set()
        for tp, running in moving.items():

            def listed(config: str, broker: int, topic: str = tp.topic, p: int = tp.partition) -> bool:
                now = entries(described.get(topic, {}).get(config))
                last = self.written.get((topic, config))
                now |= entries(None if last == _UNSURE else last)
                return "*" in now or f"{p}:{broker}" in now

            for broker in running.adding:
                if listed(FOLLOWER_THROTTLED_REPLICAS, broker):
                    keys.add((str(broker), FOLLOWER_THROTTLED_RATE))
            for broker in running.replicas:
                if broker not in running.adding and listed(LEADER_THROTTLED_REPLICAS, broker):
                    keys.add((str(broker), LEADER_THROTTLED_RATE))
        return keys

    def _release_rates(
        self, moving: Mapping[TopicPartition, PartitionReassignment], away: set[str], failures: list[str]
    ) -> list[Key]:
        """The run's rates put back where it still holds them (the claims say to what), left to another run
        that holds them too, or kept (someone else changed them; a copy in flight needs them: returned)."""
        held = {key: value for key, value in self.rates.items() if key[0] not in away}
        if not held:
            return []
        brokers = sorted({b for b, _ in held}, key=int)
        described = self.port.describe_configs([_broker(b) for b in brokers])
        throttling = self._throttling(moving)
        kept: list[Key] = []
        changed: dict[Key, str] = {}
        others: dict[str, list[Key]] = {}
        with self._claim_table() as table:
            for broker in brokers:
                now = described.get(_broker(broker), {})
                before = copy.deepcopy(table.data) if table is not None else None
                ops: list[ConfigOp] = []
                released: list[Key] = []
                for config in _BROKER_RATES:
                    key = (broker, config)
                    if key not in held:
                        continue
                    current = now.get(config)
                    holding = current == held[key] or current in self._history.get(key, ())
                    alone = table is None or not [h for h in table.holders(key) if h != self.claims.holder]  # type: ignore[union-attr]
                    if holding and alone and key in throttling:
                        kept.append(key)
                        continue
                    release = self._release(table, key, holding)
                    released.append(key)
                    if release.action == "restore" and release.value != current:
                        ops.append(_op(config, release.value))
                    elif release.action == "other":
                        others.setdefault(release.by, []).append(key)
                    elif release.action == "changed" and current is not None:
                        changed[key] = current
                if ops:
                    try:
                        with whole_request():
                            self.port.incremental_alter_configs({_broker(broker): ops})
                    except Exception as exc:
                        failures.append(f"broker {broker}: {getattr(exc, 'message', exc)}")
                        if table is not None and before is not None:
                            table.data = before
                        continue
                for key in released:
                    del self.rates[key]
                if released:
                    self.on_write({"broker": {broker: dict.fromkeys(config for _, config in released)}})
        self._tell_changed(changed)
        for holder, keys in sorted(others.items()):
            self.event(
                f"Left the throttle rates of broker(s) {_brokers(keys)} to the other batched run that throttles them "
                f"too (journal {holder}): it puts them back at its end"
            )
        return kept

    def _release(self, table: ClaimTable | None, key: Key, holding: bool) -> Release:
        if table is not None and self.claims is not None and self.claims.holder in table.holders(key):
            return table.release(self.claims.holder, key, holding)
        return Release("restore", self._before(key)) if holding else Release("changed")

    def _tell_kept(
        self, lists: set[TopicPartition], rates: list[Key], moving: Mapping[TopicPartition, PartitionReassignment]
    ) -> None:
        kept = []
        if rates:
            kept.append(f"the throttle rates of broker(s) {_brokers(rates)}")
        if lists:
            kept.append("the throttled-replica entries of " + ",".join(str(tp) for tp in sorted(lists)))
        partitions = sorted(moving)
        named = ",".join(str(tp) for tp in partitions[:5]) + (
            f" and {len(partitions) - 5} more" if len(partitions) > 5 else ""
        )
        self.event(
            f"Kept {' and '.join(kept)}: reassignments this run did not submit still copy under them ({named}). "
            "A --verify of their plan removes them once those complete (the Apache tool's too), or the next run "
            "of this plan does"
        )


def _describe_topics(port: ClusterPort, topics: list[str]) -> dict[str, dict[str, str]]:
    """The configs of these topics, by name (a topic deleted meanwhile is left out)."""
    try:
        described = port.describe_configs([_topic(t) for t in topics])
    except Exception:
        described = {}
        for topic in topics:
            with contextlib.suppress(Exception):
                described.update(port.describe_configs([_topic(topic)]))
    return {resource.name: values for resource, values in described.items()}


def restore_recorded(
    port: ClusterPort,
    recorded: Recorded,
    held: Held,
    *,
    claims: ThrottleClaims | None = None,
    event: Callable[[str], None] | None = None,
) -> tuple[list[str], Held]:
    """After a crash: put back what the run (its journal's ``held``) still holds, as its own end would have.
    Returns the offline brokers left for later and what the run still holds."""
    live = {b.id for b in port.describe_brokers()}
    lifecycle = ThrottleLifecycle(port, recorded, claims=claims, event=event)
    lifecycle._tell_changed(lifecycle.adopt(live, held))
    lifecycle.restore(offline=[int(b) for b in recorded.get("broker", {}) if int(b) not in live])
    return lifecycle.pending, lifecycle.held()


class ThrottleRestoreError(Exception):
    def __init__(self, failures: list[str]) -> None:
        super().__init__("could not restore throttles of " + "; ".join(failures))
        self.failures = failures
