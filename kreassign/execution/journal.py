"""The journal of a batched reassignment: what a later run needs to resume, cancel or roll back.

One JSON file per plan and cluster (default ``$XDG_STATE_HOME/kreassign/clusters/<cluster id>/<plan id>.json``, see
``memory.py``; the journal records the cluster's id too), written atomically
(temporary file, fsync, rename) and readable by its owner only, when a run starts and when it ends. While
it runs, what changes (a step started or finished, a new throttle, an adapted per-broker limit, a throttle
config the run is about to write: ``throttles_written``, see ``throttles.py``) is appended to
``<journal>.log``, one JSON line per change, fsynced once per poll that changed something; ``load`` replays it
over the journal (a torn last line, from a crash while writing it, is ignored), and ``save`` folds it back in. A
journal without a log (written by an earlier version) resumes as it is. Next to it:

* ``<journal>.lock``: held (``flock``) by the process that runs the plan, so a second run of the same
  command knows the plan is being executed, and a run after a crash or ``kill -9`` knows it is not;
* ``<journal>.control``: requests to the running process (a new throttle, cancel, keep its throttles: ``watch.py``),
  read on every poll;
* ``<stem>-original.json``: the assignment from before the plan's first run, in the Apache reassignment format
  (the rollback file). Written once, when the plan's first run starts, and never overwritten: a run after a
  cancel, Ctrl-C, a failure or ``kill -9`` resumes the same journal; a run after a completed one starts anew,
  and the completed run's journal and original are first kept under names with their start time
  (``archive``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from kreassign.errors import CommandError
from kreassign.model import TopicPartition
from kreassign.planning.throttles import (
    FOLLOWER_THROTTLED_RATE,
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    LOG_DIR_THROTTLED_RATE,
)

JOURNAL_VERSION = 2
"""Version 2 records the id of the cluster the run was made on (``cluster_id``); version 1 (written before issue 39)
does not, and is still read (its ``cluster_id`` is None: ``memory.py`` decides whose it is)."""
READABLE_VERSIONS = (1, 2)
LOCK_ATTEMPTS = 5
"""How many times ``try_lock`` opens the lock file again when it was removed under it (see ``try_lock``)."""
BUSY_RETRIES, BUSY_RETRY_S = 2, 0.01
"""``is_running_elsewhere`` asks again this many times, this far apart, before it says a lock is held: the pruning
of an ended run's state holds a lock for microseconds, a run for as long as it runs."""
COMPACT_LINES = 10_000
"""Lines the log may reach before the journal is rewritten with them folded in."""


class RunStatus(StrEnum):
    """Where a batched run stands (the journal's ``status``) or how it ended (the executor's outcome).
    The journal's JSON holds the values, so journals of earlier versions still load."""

    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    FAILED = "failed"

    @property
    def resumable(self) -> bool:
        """The same command resumes a run of the plan that ended so (a cancelled one too: its completed steps
        stay, and its original assignment with them); a completed run is followed by a new one."""
        return self is not RunStatus.COMPLETED

    @property
    def cancellable(self) -> bool:
        """A run that ended so may have left steps in flight or throttles behind (its process died, or its
        clean-up was cut short): --cancel reverts and restores them."""
        return self in (RunStatus.RUNNING, RunStatus.INTERRUPTED, RunStatus.FAILED)


def how_it_ended(status: RunStatus, message: str) -> str:
    """ "cancelled by --cancel (pid 12)", "interrupted by SIGINT", "failed (why)": the status said once."""
    if not message:
        return str(status)
    if message.startswith(str(status)):
        return message
    return f"{status} ({message})"


def plan_id(targets: Mapping[TopicPartition, Sequence[int]]) -> str:
    """Same plan file content (whatever its order or formatting), same id."""
    canonical = json.dumps(sorted([tp.topic, tp.partition, list(r)] for tp, r in targets.items()))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def state_dir() -> Path:
    """``$XDG_STATE_HOME/kreassign`` (default ``~/.local/state/kreassign``)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kreassign"


def cluster_state_dir(cluster_id: str) -> Path:
    """Where what kreassign remembers of one cluster lives: ``<state dir>/clusters/<cluster id>``. A cluster id
    is URL-safe base64 (KRaft and ZooKeeper mode alike); any other text is named by its hash instead."""
    safe = cluster_id if cluster_id and all(c.isascii() and (c.isalnum() or c in "-_") for c in cluster_id) else ""
    if not safe:
        safe = "id-" + hashlib.sha256(cluster_id.encode()).hexdigest()[:22]
    return state_dir() / "clusters" / safe


def cluster_journal_path(cluster_id: str, targets: Mapping[TopicPartition, Sequence[int]]) -> Path:
    """The default journal of a plan on one cluster: ``<state dir>/clusters/<cluster id>/<plan id>.json``."""
    return cluster_state_dir(cluster_id) / f"{plan_id(targets)}.json"


def legacy_journal_path(targets: Mapping[TopicPartition, Sequence[int]]) -> Path:
    """Where a version before issue 39 kept the default journal of a plan, for whatever cluster it ran on."""
    return state_dir() / f"{plan_id(targets)}.json"


@dataclass
class JournalState:
    plan_id: str
    status: RunStatus
    original: dict[TopicPartition, tuple[int, ...]]
    target: dict[TopicPartition, tuple[int, ...]]
    limits: dict[str, int | None]
    throttle: int = -1
    log_dir_throttle: int = -1
    # throttle configs as they were before the first step: {"topic"|"broker": {name: {config: value|None}}}
    recorded_throttles: dict[str, dict[str, dict[str, str | None]]] = field(default_factory=dict)
    # what the run wrote and still holds: {"broker": {id: {rate: value}}, "topic": {name: {list: [entries]}}}
    # (a journal of an earlier version does not say: guessed when it is loaded, guess_throttles_written)
    throttles_written: dict[str, dict[str, dict]] | None = field(default_factory=dict)
    # partition -> (source, target) of the step in flight
    in_flight: dict[TopicPartition, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    steps_done: dict[TopicPartition, int] = field(default_factory=dict)
    pid: int = 0
    started: float = 0.0
    updated: float = 0.0
    message: str = ""
    broker_limit: int | None = None  # the per-broker limit as --adaptive last set it
    limit_changes: list[dict] = field(default_factory=list)  # {"at", "from", "to", "reason"} of --adaptive
    reverted: list[TopicPartition] = field(default_factory=list)  # the steps in flight the end of the run reverted
    cluster_id: str | None = None  # the cluster the run was made on (None: a version-1 journal)

    def to_json(self) -> dict:
        return {
            "version": JOURNAL_VERSION,
            "kind": "kreassign-journal",
            "cluster_id": self.cluster_id,
            "plan_id": self.plan_id,
            "status": self.status,
            "message": self.message,
            "pid": self.pid,
            "started": self.started,
            "updated": self.updated,
            "limits": self.limits,
            "throttle": self.throttle,
            "log_dir_throttle": self.log_dir_throttle,
            "recorded_throttles": self.recorded_throttles,
            "throttles_written": self.throttles_written,
            "broker_limit": self.broker_limit,
            "limit_changes": self.limit_changes,
            "reverted": [{"topic": tp.topic, "partition": tp.partition} for tp in self.reverted],
            "partitions": [
                {
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "original": list(self.original.get(tp, ())),
                    "target": list(target),
                    "in_flight": None if tp not in self.in_flight else [list(r) for r in self.in_flight[tp]],
                    "steps_done": self.steps_done.get(tp, 0),
                }
                for tp, target in self.target.items()
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> JournalState:
        if (
            not isinstance(data, dict)
            or data.get("kind") != "kreassign-journal"
            or data.get("version") not in READABLE_VERSIONS
        ):
            raise ValueError(f"not a kreassign journal of version {' or '.join(map(str, READABLE_VERSIONS))}")
        cluster_id = data.get("cluster_id") if data["version"] >= 2 else None
        if cluster_id is not None and not isinstance(cluster_id, str):
            raise ValueError("its cluster_id is not a string")
        state = cls(
            cluster_id=cluster_id,
            plan_id=data["plan_id"],
            status=RunStatus(data["status"]),
            original={},
            target={},
            limits=data.get("limits", {}),
            throttle=data.get("throttle", -1),
            log_dir_throttle=data.get("log_dir_throttle", -1),
            recorded_throttles=data.get("recorded_throttles", {}),
            throttles_written=data.get("throttles_written"),
            pid=data.get("pid", 0),
            started=data.get("started", 0.0),
            updated=data.get("updated", 0.0),
            message=data.get("message", ""),
            broker_limit=data.get("broker_limit"),
            limit_changes=list(data.get("limit_changes", [])),
            reverted=[TopicPartition(r["topic"], r["partition"]) for r in data.get("reverted", [])],
        )
        for entry in data["partitions"]:
            tp = TopicPartition(entry["topic"], entry["partition"])
            state.original[tp] = tuple(entry["original"])
            state.target[tp] = tuple(entry["target"])
            state.apply_partition(tp, entry)
        return state

    def apply_partition(self, tp: TopicPartition, entry: dict) -> None:
        """A partition's in-flight step and steps done, from the journal or a line of its log."""
        if entry.get("in_flight") is not None:
            source, target = entry["in_flight"]
            self.in_flight[tp] = (tuple(source), tuple(target))
        else:
            self.in_flight.pop(tp, None)
        self.steps_done[tp] = entry.get("steps_done", 0)

    def partition_record(self, tp: TopicPartition) -> dict:
        """A line of the log: the partition's step in flight and steps done as they are now."""
        flight = self.in_flight.get(tp)
        return {
            "topic": tp.topic,
            "partition": tp.partition,
            "in_flight": None if flight is None else [list(r) for r in flight],
            "steps_done": self.steps_done.get(tp, 0),
        }

    def settings_record(self) -> dict:
        """A line of the log: the rates and the adapted per-broker limit as they are now."""
        return {
            "throttle": self.throttle,
            "log_dir_throttle": self.log_dir_throttle,
            "broker_limit": self.broker_limit,
            "limit_changes": self.limit_changes[-1:],
        }

    def guess_throttles_written(self) -> dict[str, dict[str, dict]]:
        """What a run of an earlier version held (its journal does not say what it wrote): its rate on each
        broker it recorded, and with a rate the list entries of its steps in flight."""
        rates: dict[str, str] = {}
        if self.throttle >= 0:
            rates = {LEADER_THROTTLED_RATE: str(self.throttle), FOLLOWER_THROTTLED_RATE: str(self.throttle)}
        if self.log_dir_throttle >= 0:
            rates[LOG_DIR_THROTTLED_RATE] = str(self.log_dir_throttle)
        brokers = self.recorded_throttles.get("broker", {})
        held: dict[str, dict[str, dict]] = {"broker": {b: dict(rates) for b in brokers} if rates else {}, "topic": {}}
        for tp, (source, target) in self.in_flight.items() if self.throttle >= 0 else ():
            lists = held["topic"].setdefault(tp.topic, {})
            lists.setdefault(LEADER_THROTTLED_REPLICAS, []).extend(f"{tp.partition}:{b}" for b in source)
            adding = [f"{tp.partition}:{b}" for b in target if b not in source]
            lists.setdefault(FOLLOWER_THROTTLED_REPLICAS, []).extend(adding)
        return held

    def note_throttles_written(self, change: Mapping[str, Mapping[str, Mapping[str, object]]]) -> dict:
        """What the run holds after a throttle write (a value None: no longer held); returns the log line."""
        held = self.throttles_written if self.throttles_written is not None else {}
        self.throttles_written = held
        for kind, names in change.items():
            for name, configs in names.items():
                mine = held.setdefault(kind, {}).setdefault(name, {})
                for config, value in configs.items():
                    if value is None:
                        mine.pop(config, None)
                    else:
                        mine[config] = value
                if not mine:
                    held[kind].pop(name)
        return {"throttles_written": change}

    def replay(self, record: dict) -> None:
        if "partition" in record:
            tp = TopicPartition(record["topic"], record["partition"])
            if tp in self.target:
                self.apply_partition(tp, record)
            return
        if "throttles_written" in record:
            self.note_throttles_written(record["throttles_written"])
            return
        self.throttle = record.get("throttle", self.throttle)
        self.log_dir_throttle = record.get("log_dir_throttle", self.log_dir_throttle)
        self.broker_limit = record.get("broker_limit", self.broker_limit)
        for change in record.get("limit_changes", []):
            if change not in self.limit_changes[-1:]:
                self.limit_changes.append(change)


class Journal:
    """The journal file and its lock and control files."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.control_path = self.path.with_name(self.path.name + ".control")
        self.original_path = self.path.with_name(self.path.stem + "-original.json")
        self.log_path = self.path.with_name(self.path.name + ".log")
        self._lock_fd: int | None = None
        self._log_lines = 0

    # ---- the journal itself
    def check_location(self) -> None:
        """Fail before anything happens on the cluster when the journal cannot be written there."""
        for folder in [self.path.parent, *self.path.parent.parents]:
            if folder.exists():
                if not folder.is_dir():
                    raise CommandError(f"Cannot write the journal {self.path}: {folder} is not a directory")
                break
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise CommandError(f"Cannot write the journal {self.path}: {exc.strerror or exc}") from None

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> JournalState:
        try:
            state = JournalState.from_json(json.loads(self.path.read_text(encoding="utf-8")))
            for record in self._log_records():
                state.replay(record)
            if state.throttles_written is None:
                state.throttles_written = state.guess_throttles_written()
            return state
        except FileNotFoundError:
            raise CommandError(f"No journal at {self.path}") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CommandError(
                f"The journal {self.path} cannot be read ({exc}); remove it or pass --journal-file"
            ) from None

    def save(self, state: JournalState) -> None:
        """The whole journal, atomically; the log is folded in (removed once the journal is on disk)."""
        state.updated = time.time()
        self._write_private(self.path, json.dumps(state.to_json(), indent=1) + "\n")
        self.log_path.unlink(missing_ok=True)
        self._log_lines = 0

    def append(self, state: JournalState, records: list[dict]) -> None:
        """Changes since the last write, appended to the log with one fsync. Past ``COMPACT_LINES`` lines
        (and at least one line per partition of the plan), the journal is rewritten instead."""
        if not records:
            return
        if self._log_lines + len(records) > max(COMPACT_LINES, len(state.target)):
            self.save(state)
            return
        text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        try:
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, text.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise CommandError(f"Cannot write {self.log_path}: {exc.strerror or exc}") from None
        self._log_lines += len(records)

    def _log_records(self) -> list[dict]:
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        records = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                break  # the last line, torn by a crash while it was written
            if isinstance(record, dict):
                records.append(record)
        return records

    def keep_original(self, text: str) -> None:
        """The assignment from before the plan's first run; never overwritten once on disk."""
        if not self.original_path.exists():
            self._write_private(self.original_path, text)

    def archive(self, state: JournalState) -> Journal:
        """A completed run's journal and original assignment, kept under names with the run's start time
        (``<stem>-<UTC time>.json``, ``<stem>-<UTC time>-original.json``) before a new run of the plan starts
        anew. Returns the archived journal."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(state.started or time.time()))
        kept = Journal(self.path.with_name(f"{self.path.stem}-{stamp}{self.path.suffix}"))
        again = 1
        while kept.path.exists() or kept.original_path.exists():  # two runs started in the same second
            again += 1
            kept = Journal(self.path.with_name(f"{self.path.stem}-{stamp}-{again}{self.path.suffix}"))
        self.save(state)  # its log folded in
        try:
            if self.original_path.exists():
                os.replace(self.original_path, kept.original_path)
            os.replace(self.path, kept.path)
        except OSError as exc:
            raise CommandError(
                f"Cannot keep the completed run's journal as {kept.path}: {exc.strerror or exc}"
            ) from None
        return kept

    def _write_private(self, path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")  # mode 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise CommandError(f"Cannot write {path}: {exc.strerror or exc}") from None

    # ---- the lock held while a process runs the plan
    def try_lock(self) -> bool:
        """Take the run lock; False when another process holds it. The pruning of old state (``memory.py``) may
        remove the lock file of an ended run while this process opens it: a lock taken on a file no longer at its
        path is let go and taken again on the file there now (the inode is checked once the lock is held)."""
        for _ in range(LOCK_ATTEMPTS):
            try:
                self.lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise CommandError(f"Cannot create {self.lock_path}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            if self._is_lock_file(fd):
                self._lock_fd = fd
                return True
            os.close(fd)  # removed (or replaced) since it was opened: the lock of that file locks nothing
        raise CommandError(f"Cannot take the lock {self.lock_path}: it keeps being removed")

    def _is_lock_file(self, fd: int) -> bool:
        try:
            here = os.stat(self.lock_path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (held.st_dev, held.st_ino) == (here.st_dev, here.st_ino)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def remove_lock_file(self) -> None:
        """Once the lock is held (``try_lock``): its file goes (the pruning of an ended run's state). Whoever
        opened it meanwhile finds, once it holds the lock, that it is no longer the file at the path."""
        assert self._lock_fd is not None, "remove_lock_file needs the lock"
        self.lock_path.unlink(missing_ok=True)

    def is_running_elsewhere(self) -> bool:
        if self._lock_fd is not None:
            return False
        for attempt in range(BUSY_RETRIES + 1):
            if not self.lock_path.exists():
                return False
            if self.try_lock():
                self.unlock()
                return False
            if attempt < BUSY_RETRIES:  # the pruning of old state holds it for a moment, a run for its whole time
                time.sleep(BUSY_RETRY_S)
        return True

    # ---- requests to the running process
    def read_control(self) -> dict:
        try:
            data = json.loads(self.control_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def request(self, **changes: object) -> None:
        control = self.read_control()
        control.update(changes)
        self._write_private(self.control_path, json.dumps(control) + "\n")

    def clear_control(self) -> None:
        self.control_path.unlink(missing_ok=True)

    def take_control(self) -> dict:
        """The requests of the control file, taken at once (the running process): the file is renamed before it is
        read, so that a request written meanwhile (a --verify's, a --cancel's) lands in a new file for the next
        poll instead of being removed unread."""
        taken = self.control_path.with_name(f"{self.control_path.name}.{os.getpid()}.taken")
        try:
            os.replace(self.control_path, taken)
        except OSError:
            return {}
        try:
            data = json.loads(taken.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        finally:
            taken.unlink(missing_ok=True)
        return data if isinstance(data, dict) else {}
