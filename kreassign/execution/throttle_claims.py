"""Which batched runs hold a broker's throttle rate, shared by every run on one cluster (its
``cluster_state_dir``): the last run out restores the value from before the first.

Two live runs whose plans share a broker both set its rates. Alone, the second would record the first's rate as
"before" and put it back at its end, after the first had ended and restored nothing (its rate had been
replaced): a rate nobody owns would stay. So each rate (broker, config) has a stack of holders, in the order they
set it, each with the value it wrote and the value it found (``throttle-claims.json``, read and written under an
``flock`` of ``throttle-claims.lock``, with the config writes inside the same lock so that no run reads a rate
another is about to change):

* a run that sets a rate pushes itself (or, resumed, keeps its place) with the value it found: the holder
  below's value, or the value there when nobody holds it;
* a run that ends pops itself. A holder still above it keeps the rate (nothing is written; what the leaver found
  passes up to the holder that had found the leaver's value). On top, the leaver puts back what it found when
  the rate is still its own, and leaves a rate someone else changed since. The last one out thus restores the
  value from before the first.

A holder is a journal (its resolved path): a run that died keeps its claims until its resume or ``--cancel``
pops them; claims of a journal that no longer exists are dropped. Best effort: a state folder that cannot be
written leaves each run with its journal's record alone (:class:`ThrottleLifecycle` falls back to it).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kreassign.cluster.port import ClusterPort
from kreassign.execution.journal import Journal, cluster_state_dir

Key = tuple[str, str]  # (broker id, rate config)

FILE = "throttle-claims.json"


@dataclass(frozen=True)
class Release:
    """What a holder leaving a rate does: ``restore`` writes ``value`` (None: delete); ``other`` leaves it to
    the holder ``by``, still above; ``changed`` leaves a value someone else set after this holder."""

    action: str
    value: str | None = None
    by: str = ""


class ClaimTable:
    """The claims of one cluster, as read under the lock (see the module)."""

    def __init__(self, data: dict) -> None:
        self.data = data

    def _stack(self, key: Key) -> list[dict]:
        return self.data.setdefault(key[0], {}).setdefault(key[1], [])

    def holders(self, key: Key) -> list[str]:
        return [h["holder"] for h in self.data.get(key[0], {}).get(key[1], [])]

    def found(self, holder: str, key: Key) -> str | None:
        """What ``holder`` puts back when it leaves ``key`` on top."""
        for h in self.data.get(key[0], {}).get(key[1], []):
            if h["holder"] == holder:
                return h["found"]
        raise KeyError(key)

    def hold(self, holder: str, key: Key, value: str, current: str | None) -> None:
        """``holder`` sets ``value``; ``current``: the value read there now (a claim of its own keeps its place)."""
        stack = self._stack(key)
        for h in stack:
            if h["holder"] == holder:
                h["value"] = value
                return
        found = current
        if stack and current == stack[-1]["found"] and _alive(stack[-1]["holder"]):
            # the live holder below wrote a moment ago and the broker asked has not learned it yet
            found = stack[-1]["value"]
        stack.append({"holder": holder, "value": value, "found": found})

    def release(self, holder: str, key: Key, holding: bool) -> Release:
        """``holder`` leaves ``key``; ``holding``: the value there now is the one it wrote."""
        stack = self._stack(key)
        index = next((i for i, h in enumerate(stack) if h["holder"] == holder), None)
        if index is None:
            return Release("restore" if holding else "changed")  # not claimed here: the caller decides
        left = stack.pop(index)
        if not stack:
            self.data[key[0]].pop(key[1])
            if not self.data[key[0]]:
                self.data.pop(key[0])
        if index < len(stack):  # a holder above: the rate is its now
            above = stack[index]
            if above["found"] == left["value"]:
                above["found"] = left["found"]
            return Release("other", by=above["holder"])
        if holding:
            return Release("restore", left["found"])
        return Release("changed")

    def prune(self) -> None:
        """Claims of journals that no longer exist go (a run's state removed or pruned)."""
        for broker in list(self.data):
            for config in list(self.data[broker]):
                stack = [h for h in self.data[broker][config] if Path(h["holder"]).exists()]
                if stack:
                    self.data[broker][config] = stack
                else:
                    del self.data[broker][config]
            if not self.data[broker]:
                del self.data[broker]


class ThrottleClaims:
    """The claims file of one cluster's state folder, and the holder of this run (its journal)."""

    def __init__(self, folder: Path, holder: str) -> None:
        self.path = folder / FILE
        self.lock_path = folder / "throttle-claims.lock"  # not *.json.lock: the pruning of old state takes those
        self.holder = holder

    @contextlib.contextmanager
    def table(self) -> Iterator[ClaimTable | None]:
        """The claims under the lock, written back when the block ends (None: the folder cannot be used)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield None
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            table = ClaimTable(data if isinstance(data, dict) else {})
            table.prune()
            try:
                yield table
            finally:  # what was claimed before a failed write is kept: the journal says it too
                with contextlib.suppress(OSError):
                    tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
                    tmp.write_text(json.dumps(table.data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
                    os.chmod(tmp, 0o600)
                    os.replace(tmp, self.path)
        finally:
            os.close(fd)


def _alive(holder: str) -> bool:
    """Whether the run of this journal is alive (it holds the journal's lock)."""
    return Journal(holder).is_running_elsewhere()


def claims_for(port: ClusterPort, journal_path: Path) -> ThrottleClaims | None:
    """The claims of the cluster behind ``port`` (None when it has no id: no claims, the journal alone)."""
    try:
        cluster_id = port.cluster_id()
    except Exception:
        return None
    if not cluster_id:
        return None
    return ThrottleClaims(cluster_state_dir(cluster_id), str(journal_path.resolve()))
