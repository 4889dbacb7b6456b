"""The log dirs a batched run puts replicas in: the plan's ``log_dirs`` other than ``"any"``.

Kafka creates a replica it is given in the log dir named for it beforehand: AlterReplicaLogDirs for a
replica its broker does not host yet records the dir as the replica's preferred one (``LogManager.
maybeUpdatePreferredLogDir``) and answers REPLICA_NOT_AVAILABLE. So before each step the run names the dirs
of the replicas the step adds (:meth:`DirPlacement.prefer`), and the copy lands where the plan says: nothing
is copied twice. The broker keeps that preference in memory only: a broker restarted between the request and
the step creates the replica where it likes, and a replica the plan keeps on its broker may sit in another dir.
So once a partition's steps are done, :meth:`DirPlacement.poll` reads where its replicas are and moves those
that are not in their dir (an intra-broker copy, throttled by ``--replica-alter-log-dirs-throttle``); the
partition counts as done when every replica is in its dir. A run that ends before then (cancelled,
interrupted, failed) cancels the moves still copying (:meth:`DirPlacement.cancel`): each replica stays where
it is, as the Apache tool's ``--cancel`` leaves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreassign.cluster.port import ClusterPort
from kreassign.errors import KreassignError, is_transient
from kreassign.model import TopicPartition, TopicPartitionReplica
from kreassign.planning.steps import Step


class DirPlacement:
    def __init__(self, port: ClusterPort, log_dirs: Mapping[TopicPartitionReplica, str]) -> None:
        self.port = port
        self.wanted: dict[TopicPartition, dict[int, str]] = {}
        for replica, path in log_dirs.items():
            self.wanted.setdefault(TopicPartition(replica.topic, replica.partition), {})[replica.broker_id] = path
        self.pending: dict[TopicPartition, dict[int, str]] = {}  # partitions whose steps are done, dirs not yet
        self.moving: dict[TopicPartitionReplica, str] = {}  # intra-broker moves this run started: the dir left

    def prefer(self, steps: Iterable[Step]) -> None:
        """Names the dir of each replica the steps add (a preference its broker keeps until it creates it)."""
        moves = {
            TopicPartitionReplica(s.partition.topic, s.partition.partition, b): path
            for s in steps
            for b in s.adding
            if (path := self.wanted.get(s.partition, {}).get(b)) is not None
        }
        if moves:
            self.port.alter_replica_log_dirs(moves)  # answers REPLICA_NOT_AVAILABLE: the dir is recorded

    def steps_done(self, tp: TopicPartition) -> bool:
        """The partition's steps are done: True when it is done too (no dir to check), else it waits for
        :meth:`poll`."""
        wanted = self.wanted.get(tp)
        if not wanted:
            return True
        self.pending[tp] = dict(wanted)
        return False

    def forget(self, tp: TopicPartition) -> None:
        self.pending.pop(tp, None)

    def poll(self) -> tuple[list[TopicPartition], list[str]]:
        """Reads where the pending partitions' replicas are and moves those not in their dir. Returns the
        partitions now done and what to report."""
        if not self.pending:
            return [], []
        replicas = [TopicPartitionReplica(tp.topic, tp.partition, b) for tp, dirs in self.pending.items() for b in dirs]
        where = self.port.describe_replica_log_dirs(replicas)
        events: list[str] = []
        to_move: dict[TopicPartitionReplica, str] = {}
        for replica in replicas:
            tp = TopicPartition(replica.topic, replica.partition)
            path = self.pending[tp][replica.broker_id]
            info = where.get(replica)
            if info is None or info.current is None:
                continue  # its broker is offline, or its metadata lags: read again at the next poll
            if info.current == path and info.future is None:
                del self.pending[tp][replica.broker_id]
                if self.moving.pop(replica, None) is not None:
                    events.append(f"{replica_name(replica)} is in log dir {path}")
            elif info.future != path:
                to_move[replica] = path
                self.moving.setdefault(replica, info.current)
        if to_move:
            accepted = self.port.alter_replica_log_dirs(to_move)
            for replica in sorted(accepted, key=TopicPartitionReplica.sort_key):
                events.append(f"Moving {replica_name(replica)} to log dir {to_move[replica]}")
        done = [tp for tp, dirs in self.pending.items() if not dirs]
        for tp in done:
            del self.pending[tp]
        return done, events

    def cancel(self) -> list[str]:
        """Cancels the intra-broker moves this run started that still copy (each replica stays in the dir it
        is in). Returns the problems met."""
        if not self.moving:
            return []
        try:
            where = self.port.describe_replica_log_dirs(list(self.moving))
            back = {r: info.current for r, info in where.items() if info.future is not None and info.current}
            if back:
                self.port.alter_replica_log_dirs(back)  # type: ignore[arg-type]
        except KreassignError as exc:
            kind = "transient " if is_transient(exc) else ""
            return [f"the log-dir moves in flight were not cancelled ({kind}error: {exc.message})"]
        self.moving.clear()
        return []


def replica_name(replica: TopicPartitionReplica) -> str:
    return f"{replica.topic}-{replica.partition} on broker {replica.broker_id}"
