"""Traffic rates of partitions from what any Admin client may read, and which moves cannot catch up.
Standard library only: samples in, rates out.

A sample of a partition is its log start and end offsets (ListOffsets earliest / latest) and the size of its
leader's replica (DescribeLogDirs); two samples ``window_s`` seconds apart give

* the bytes written per second: the growth of the log's size over the window when the log lost no segment
  (the start offset did not move), else the messages appended (end offset rate) times the bytes per message
  of the log (its size over its offset span);
* the bytes read per second by consumer groups: for each group that committed an offset at both ends of the
  window, the committed-offset rate times the bytes per message, summed over groups.

Limits (also in the user docs): the bytes are the on-disk (compressed) bytes, which is what replication
copies; a window shorter than the bursts sees a burst or a lull; a group that does not commit, or commits
less often than the window, reads nothing here; a leader moving during the window makes the two sizes those
of two replicas.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LogSample:
    """One partition at one moment: log start and end offsets, and its leader's log size in bytes (None or
    negative: unknown)."""

    start: int
    end: int
    size: int | None = None

    @property
    def known_size(self) -> int | None:
        return self.size if self.size is not None and self.size >= 0 else None


@dataclass(frozen=True)
class PartitionRates:
    """What the window showed of one partition; ``notes`` says what the estimate did about an edge case."""

    write_bytes_per_s: float
    read_bytes_per_s: float
    bytes_per_message: float | None
    notes: tuple[str, ...] = ()


def bytes_per_message(sample: LogSample) -> float | None:
    """The log's mean bytes per message (offsets, so per record of a batch): size over offset span;
    None for an empty log or an unknown size."""
    span = sample.end - sample.start
    size = sample.known_size
    if span <= 0 or size is None:
        return None
    return size / span


def _mean_bytes_per_message(before: LogSample, after: LogSample) -> float | None:
    later = bytes_per_message(after)
    return later if later is not None else bytes_per_message(before)


def write_rate(before: LogSample, after: LogSample, window_s: float) -> tuple[float, float | None, tuple[str, ...]]:
    """Bytes written per second over the window, the bytes per message used, and notes."""
    if window_s <= 0:
        raise ValueError("the sampling window must be longer than 0 seconds")
    if after.end < before.end:
        return 0.0, None, ("offsets reset during the window (the log was deleted or truncated): rate unknown, 0",)
    messages = after.end - before.end
    per_message = _mean_bytes_per_message(before, after)
    if messages == 0:
        return 0.0, per_message, ()
    notes: tuple[str, ...] = ()
    size_before, size_after = before.known_size, after.known_size
    if after.start == before.start and size_before is not None and size_after is not None:
        if size_after >= size_before:
            return (size_after - size_before) / window_s, per_message, ()
    elif after.start > before.start:
        notes = (
            f"retention deleted {after.start - before.start} messages during the window: "
            "rate from the offsets appended times the bytes per message",
        )
    if per_message is None:
        return 0.0, None, (*notes, f"{messages} messages appended but their size is unknown: rate 0")
    return messages * per_message / window_s, per_message, notes


def read_rate(
    committed_before: Mapping[str, int],
    committed_after: Mapping[str, int],
    per_message: float | None,
    window_s: float,
    between: Sequence[tuple[float, Mapping[str, int]]] = (),
) -> tuple[float, tuple[str, ...]]:
    """Bytes read per second by the groups that committed at both ends of the window (``group -> offset``).

    A group commits now and then (a Java consumer every 5 s by default), so its committed offset moves in steps:
    over a window of W seconds it moves by the commits that fell in the window, which is up to one commit interval
    C more or less than W's worth (measured: a 30 s window read 15 % low against commits every 5 s). With
    ``between`` (the committed offsets read during the window: (seconds since its start, group -> offset), in
    order), a group seen committing at least twice is measured from its first commit seen to its last, a whole
    number of its intervals: each commit is placed midway between the reads around it, so the error is the reads'
    spacing, not C."""
    if window_s <= 0:
        raise ValueError("the sampling window must be longer than 0 seconds")
    per_second = 0.0
    notes: list[str] = []
    for group, after in sorted(committed_after.items()):
        before = committed_before.get(group)
        if before is None or before < 0 or after < 0:
            continue
        if after < before:
            notes.append(f"group {group} moved its offset back during the window: not counted")
            continue
        per_second += _commits_rate(group, before, after, window_s, between)
    if per_second and per_message is None:
        notes.append(f"{round(per_second * window_s)} messages read but their size is unknown: rate 0")
        return 0.0, tuple(notes)
    return (per_second * per_message if per_second else 0.0), tuple(notes)  # type: ignore[operator]


def _commits_rate(
    group: str, before: int, after: int, window_s: float, between: Sequence[tuple[float, Mapping[str, int]]]
) -> float:
    """Messages per second the group read: between its first and last commits seen, else over the window."""
    reads = [(0.0, before), *((at, offsets[group]) for at, offsets in between if group in offsets), (window_s, after)]
    changes = [
        ((reads[i - 1][0] + reads[i][0]) / 2, reads[i][1])
        for i in range(1, len(reads))
        if reads[i][1] != reads[i - 1][1]
    ]
    if len(changes) >= 2 and changes[-1][0] > changes[0][0] and changes[-1][1] >= changes[0][1]:
        return (changes[-1][1] - changes[0][1]) / (changes[-1][0] - changes[0][0])
    return (after - before) / window_s


def estimate_rates(
    before: Mapping[object, LogSample],
    after: Mapping[object, LogSample],
    committed_before: Mapping[object, Mapping[str, int]],
    committed_after: Mapping[object, Mapping[str, int]],
    window_s: float,
    committed_between: Sequence[tuple[float, Mapping[object, Mapping[str, int]]]] = (),
) -> dict[object, PartitionRates]:
    """Rates of every partition sampled at both ends of the window (keys: partitions); ``committed_between``: the
    groups' committed offsets read during the window (``read_rate``)."""
    rates = {}
    for tp, last in after.items():
        first = before.get(tp)
        if first is None:
            continue
        written, per_message, notes = write_rate(first, last, window_s)
        between = [(at, committed[tp]) for at, committed in committed_between if tp in committed]
        read, read_notes = read_rate(
            committed_before.get(tp, {}), committed_after.get(tp, {}), per_message, window_s, between
        )
        rates[tp] = PartitionRates(written, read, per_message, notes + read_notes)
    return rates


@dataclass(frozen=True)
class SlowMove:
    """A move whose partition is written at least as fast as the throttle share its copy gets (``broker``: the
    broker whose throttle gives that share, ``leader``: it is the partition's leader, serving the copy)."""

    partition: object
    write_bytes_per_s: float
    share_bytes_per_s: float
    broker: int
    leader: bool = False


def slow_moves(
    adding: Mapping[object, Iterable[int]],
    write_rates: Mapping[object, float],
    throttle: float | Mapping[int, float],
    concurrent: Mapping[int, int] | None = None,
    serving: Mapping[object, int | None] | None = None,
    in_sync: Mapping[object, int] | None = None,
) -> list[SlowMove]:
    """Moves (partition -> brokers receiving a copy) whose copy cannot catch up with the writes, under
    ``throttle`` B/s on every broker (or each broker's own), by the one model of the throttle's shares
    (``planning.eta.binding_shares``): a broker receiving k copies at once gives each a kth of its rate, a leader
    serving k copies (``serving``: each partition's leader) a kth of what its rate leaves after replicating the
    writes to the partitions' in-sync followers (``in_sync``: how many each has besides its leader). Without
    ``concurrent`` every move starts at once (the Apache --execute); a batched run passes its own limit of copies
    per broker. Sorted by partition."""
    from kreassign.planning.eta import binding_shares, rated_copies

    copies = {(tp, b): (b, (serving or {}).get(tp)) for tp, brokers in adding.items() for b in sorted(set(brokers))}
    load: dict[int, float] = {}
    for tp, followers in (in_sync or {}).items():
        leader = (serving or {}).get(tp)
        if leader is not None and followers > 0 and tp in adding:
            load[leader] = load.get(leader, 0.0) + write_rates.get(tp, 0.0) * followers
    shares = binding_shares(rated_copies(copies, throttle), load, concurrent)
    slow = []
    for tp, brokers in sorted(adding.items(), key=lambda item: str(item[0])):
        rate = write_rates.get(tp, 0.0)
        if rate <= 0:
            continue
        for b in sorted(set(brokers)):
            if (tp, b) not in shares:
                continue
            share, via = shares[(tp, b)]
            if rate >= share:
                slow.append(SlowMove(tp, rate, share, via, via != b))
                break
    return slow


class WriteWindow:
    """Write rates of partitions over a sliding window of polls, for the one ETA (``planning.eta``): each poll
    adds the partition's leader and its ``LogSample``; the rate is ``write_rate`` between the newest sample and
    the oldest of about the last ``window_s`` seconds taken from the same leader (a leader that moved makes the
    sizes those of another replica: its window starts again). A first sample may name no leader (the partition's
    largest replica, read with the whole plan): the next one's leader then takes it over."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._samples: dict[object, deque[tuple[float, object, LogSample]]] = {}

    def add(self, at: float, logs: Mapping[object, tuple[object, LogSample]]) -> None:
        """``logs``: partition -> (its leader, its log now). The other partitions keep their samples."""
        for key, (leader, sample) in logs.items():
            samples = self._samples.setdefault(key, deque())
            if samples and samples[-1][1] != leader and samples[-1][1] is not None:
                samples.clear()
            samples.append((at, leader, sample))
            while len(samples) > 2 and at - samples[1][0] >= self.window_s:
                samples.popleft()

    def forget(self, keys: Iterable[object]) -> None:
        for key in keys:
            self._samples.pop(key, None)

    def rate(self, key: object, min_span_s: float = 0.0) -> float | None:
        """Bytes written per second to the partition over the window (None before two samples at least
        ``min_span_s`` apart)."""
        samples = self._samples.get(key)
        if not samples or len(samples) < 2 or samples[-1][0] - samples[0][0] <= max(0.0, min_span_s - 1e-9):
            return None
        return write_rate(samples[0][2], samples[-1][2], samples[-1][0] - samples[0][0])[0]

    def rates(self, min_span_s: float = 0.0) -> dict[object, float]:
        """Every partition with a rate."""
        return {key: rate for key in self._samples if (rate := self.rate(key, min_span_s)) is not None}
