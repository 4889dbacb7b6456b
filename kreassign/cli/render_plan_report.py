"""The balanced plan report on stderr (numbers from ``kreassign.planning.quality``): plain text when piped,
with rich bars per broker (before / after) on a terminal."""

from __future__ import annotations

from kreassign.humanize import format_bytes
from kreassign.planning.quality import Dimension, PlanQuality
from kreassign.planning.trafficlimits import TrafficLimit

_LABELS = {
    "replicas": "replicas / broker",
    "leaders": "leaders / broker",
    "bytes": "bytes / broker",
    "disk_use": "disk use %",
    "topic_replica_spread": "topic replica spread",
    "topic_leader_spread": "topic leader spread",
}


def _value(dimension: Dimension, value: float) -> str:
    if dimension.unit == "bytes":
        return format_bytes(value)
    if dimension.unit == "%":
        return f"{value:.1f}%"
    return f"{value:g}"


def _side(dimension: Dimension, before: bool) -> str:
    s = dimension.before if before else dimension.after
    std = format_bytes(s.std) if dimension.unit == "bytes" else f"{s.std:.1f}"
    return f"{_value(dimension, s.min)}..{_value(dimension, s.max)} (std {std})"


def headline(quality: PlanQuality, engine: str, title: str = "Balanced plan") -> list[str]:
    lines = [
        f"{title} (engine {engine}): {quality.replicas_moved} replica(s) moved (minimum "
        f"{quality.minimum_moves}), {format_bytes(quality.bytes_moved)} of {format_bytes(quality.total_bytes)} "
        f"copied (lower bound {format_bytes(quality.bytes_lower_bound)}), {quality.leaders_changed} leader(s) "
        f"changed, {quality.partitions} partition(s).",
    ]
    lines += left_behind_lines(quality)
    lines += rack_hold_lines(quality)
    band = quality.byte_band
    if band is not None and not band.mean:
        lines.append("Bytes per broker: the partitions' sizes are unknown (0 bytes): not balanced.")
    elif band is not None:
        pct = f"{band.tolerance * 100:g}%"
        held = [o.broker for o in band.outside if o.reason == "rack rule"]
        whose = "the mean" if not held else "the mean of the brokers the racks leave free"
        line = f"Bytes per broker: within {pct} of {whose} ({format_bytes(band.low)}..{format_bytes(band.high)})"
        others = [o for o in band.outside if o.reason != "rack rule"]
        if others:
            named = ", ".join(
                f"{o.broker} ({format_bytes(o.bytes)}: "
                + (f"holds a replica of {format_bytes(o.largest)}" if o.reason == "large replica" else "no move fits")
                + ")"
                for o in others[:5]
            )
            more = f" and {len(others) - 5} more" if len(others) > 5 else ""
            line += f" but {len(others)} broker(s): {named}{more}"
        if held and set(held) >= set(quality.brokers):
            line = "Bytes per broker: what the racks set (above), evened out within each rack"
        elif held:
            who = f"broker {held[0]} holds" if len(held) == 1 else f"brokers {_brokers(held)} hold"
            line += f"; {who} what the racks set (above)"
        lines.append(line + ".")
    choice = quality.log_dirs
    if choice is not None and choice.volumes:
        within = choice.moved_within
        parts = []
        if choice.replicas > within:
            parts.append(
                f"{choice.replicas - within} new replica(s) given a dir on {choice.brokers} broker(s) with several "
                "volumes"
            )
        if within:
            parts.append(
                f"{within} replica(s) ({format_bytes(choice.bytes_moved_within)}) moved to another volume of "
                "their broker"
            )
        fullest = choice.fullest()
        if fullest is not None:
            parts.append(f"fullest volume after: {_volume_share(fullest)}")
        lines.append("Log dirs: " + "; ".join(parts) + ".")
        above = choice.above_limit()
        if above:
            named = ", ".join(_volume_share(v) for v in above[:3])
            more = f" and {len(above) - 3} more" if len(above) > 3 else ""
            lines.append(
                f"Log dirs above --max-disk-usage after the plan: {named}{more} (no room on the broker's other "
                "volumes for the replicas of the listed topics)."
            )
    lines += traffic_lines(quality)
    spent = quality.budget
    if spent is not None:
        if spent.budget.unit == "bytes":
            used = f"{format_bytes(spent.used)} of {format_bytes(spent.budget.amount)}"
            more = abs(spent.extra_replicas)
            other = f"{more} {'more' if spent.extra_replicas >= 0 else 'fewer'} replica(s) moved"
        else:
            used = f"{spent.used} of {spent.budget.amount} replica(s)"
            other = f"{format_bytes(abs(spent.extra_bytes))} {'more' if spent.extra_bytes >= 0 else 'less'} copied"
        lines.append(f"Move budget: {used} used ({other}) beyond the plan without a budget.")
    lines.append(f"Balancedness score: {quality.score_before:.1f} -> {quality.score_after:.1f} (of 100)")
    return lines


def traffic_lines(quality: PlanQuality) -> list[str]:
    """Bytes in and out per second per broker, before and after, and what the traffic goals did (only when the
    partitions' rates are known)."""
    traffic = quality.traffic
    if traffic is None:
        return []
    lines = []
    for side in ("in", "out"):
        sides = []
        for after in (False, True):
            values = [getattr(traffic, f"{side}_{'after' if after else 'before'}").get(b, 0.0) for b in traffic.brokers]
            sides.append(
                f"{format_bytes(min(values))}/s..{format_bytes(max(values))}/s "
                f"(up to {100 * traffic.spread(side, after):.1f}% from the mean)"
            )
        lines.append(f"Bytes {side} per broker: {sides[0]} -> {sides[1]}.")
    verdict = "within" if traffic.within else "not all within"
    lines.append(
        f"Traffic: {verdict} {100 * traffic.tolerance:g}% of the mean after the plan; {traffic.leader_moves} "
        f"leadership(s) changed and {traffic.replica_moves} replica(s) moved for it, "
        f"{format_bytes(max(traffic.extra_bytes, 0))} more copied."
    )
    return lines + [_limit_line(limit) for limit in traffic.limits]


def _limit_line(limit: TrafficLimit) -> str:
    """Why one side of the traffic goals is missed (:mod:`kreassign.planning.trafficlimits`)."""
    side = f"Bytes {limit.side}"
    past = f"{'above' if limit.above else 'below'} {_rate(limit.edge)}"
    if limit.reason == "traffic" and limit.side == "out":
        most = f"the {limit.partitions} partition(s) of most traffic"
        if limit.above:
            return (
                f"{side}: {most} (at least {_rate(limit.least)} each from the leader) cannot be led evenly by "
                f"{limit.brokers} brokers: one leads {limit.per_broker} of them, {_rate(limit.bound)} or more, {past}."
            )
        return (
            f"{side}: {most} cannot give each of {limit.brokers} brokers a leadership: one leads none of them, "
            f"{_rate(limit.bound)} or less, {past}."
        )
    if limit.reason == "traffic":
        most = f"the {limit.partitions} partition(s) written fastest"
        if limit.above:
            return (
                f"{side}: {most} (at least {_rate(limit.least)} each, {limit.slots} replicas) cannot spread evenly "
                f"over {limit.brokers} brokers: one holds {limit.per_broker} of their replicas, {_rate(limit.bound)} "
                f"or more, {past}."
            )
        return (
            f"{side}: {most} have {limit.slots} replica(s) for {limit.brokers} brokers: one holds none of them, "
            f"{_rate(limit.bound)} or less, {past}."
        )
    at = f"broker {limit.broker} ends at {_rate(limit.value)}, {past}"
    if limit.reason == "rack rule":
        return f"{side}: {at}: it holds what the racks set (above)."
    if limit.reason == "replicas stay":
        return f"{side}: {at}: bytes in follow the replicas, which a leadership plan does not move."
    return f"{side}: {at}: no leadership or replica swap tried keeps the other goals and brings it closer."


def _rate(value: float) -> str:
    return f"{format_bytes(value)}/s"


def left_behind_lines(quality: PlanQuality) -> list[str]:
    """A warning when a broker the plan empties (left out of it) keeps replicas of topics the plan does not
    move (Kafka's internal ones, which ``--topics-regex '.*'`` skips): stopping it would leave them
    under-replicated."""
    behind = quality.left_behind
    if not behind:
        return []
    brokers = list(behind)
    counts = [sum(behind[b].values()) for b in brokers]
    per_topic: dict[str, int] = {}
    for topics in behind.values():
        for topic, n in topics.items():
            per_topic[topic] = per_topic.get(topic, 0) + n
    named = ", ".join(f"{t}: {n}" for t, n in sorted(per_topic.items())[:3])
    more = f" and {len(per_topic) - 3} more topic(s)" if len(per_topic) > 3 else ""
    one = len(brokers) == 1
    who = f"broker {brokers[0]} keeps" if one else f"brokers {_brokers(brokers)} keep"
    return [
        f"Warning: {who} {_brokers(counts)} replica(s) of topics this plan does not move ({named}{more}); "
        f"stopping {'it' if one else 'them'} would leave those under-replicated: plan them too "
        "(--topics-regex '.*|__.*' takes Kafka's internal topics as well)."
    ]


def _left(quality: PlanQuality, b: int, short: bool = False) -> str:
    """A broker's note in the table: ``removed``, and what it keeps that the plan does not move (``short``: the
    count alone, beside the bars)."""
    kept = sum(quality.left_behind.get(b, {}).values())
    return "removed" + (f"; keeps {kept}" + ("" if short else " not planned") if kept else "")


def rack_hold_lines(quality: PlanQuality) -> list[str]:
    """One sentence per rack the rack rule holds away from the mean: its brokers, their replicas, and why."""
    replicas = quality.per_broker["replicas"][1]
    total = sum(replicas.get(b, 0) for b in quality.brokers)
    mean = f"{round(total / len(quality.brokers), 1):g}" if quality.brokers else "0"
    lines = []
    for hold in quality.rack_holds:
        counts = sorted(replicas.get(b, 0) for b in hold.brokers)
        held = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
        one = len(hold.brokers) == 1
        who = f"broker {hold.brokers[0]} holds" if one else f"brokers {_brokers(hold.brokers)} hold"
        each = "" if one else " each"
        side = "above" if hold.must else "below"
        copies = "a replica" if hold.per_partition == 1 else f"{hold.per_partition} replicas"
        mixed = len({n for _, n in hold.by_rf}) > 1  # replication factors whose partitions differ there
        per_rf = ", ".join(f"{_NUMBERS.get(n, n)} of replication factor {rf}" for rf, n in hold.by_rf)
        if hold.must:
            where = (
                f"it is the only broker left in rack {hold.rack}"
                if one
                else f"they are the only {len(hold.brokers)} brokers left in rack {hold.rack}"
            )
            why = f"{where}, and each partition keeps " + (f"replicas there: {per_rf}" if mixed else f"{copies} there")
        elif mixed:
            why = f"rack {hold.rack} may take only so many replicas of each partition: {per_rf}"
        else:
            why = f"rack {hold.rack} may take only {copies.replace('a replica', 'one replica')} of each partition"
        lines.append(f"Racks: {who} {held} replicas{each}, {side} the mean of {mean}: {why}.")
    return lines


_NUMBERS = {0: "none", 1: "one", 2: "two", 3: "three"}


def _brokers(ids) -> str:
    """1, 2 and 3."""
    ids = [str(b) for b in ids]
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]


def render_plan_report_text(quality: PlanQuality, engine: str, title: str = "Balanced plan") -> str:
    lines = headline(quality, engine, title)
    lines.append(f"{'dimension':<22} {'before: min..max (std)':>36}    after: min..max (std)")
    for d in quality.dimensions:
        lines.append(f"{_LABELS[d.name]:<22} {_side(d, True):>36} -> {_side(d, False)}")
    traffic = quality.traffic
    head = f"{'broker':>8} {'replicas':>17} {'leaders':>15} {'bytes':>25}"
    lines.append(head + (f"  {'in /s':>25} {'out /s':>25}" if traffic is not None else ""))
    replicas, leaders, sizes = (quality.per_broker[k] for k in ("replicas", "leaders", "bytes"))
    for b in quality.shown:
        note = "" if b in quality.brokers else f"  ({_left(quality, b)})"
        rates = ""
        if traffic is not None:  # bytes in and out per second, before -> after
            rates = "".join(
                f"  {format_bytes(getattr(traffic, side + '_before').get(b, 0.0)):>12} -> "
                f"{format_bytes(getattr(traffic, side + '_after').get(b, 0.0)):<9}"
                for side in ("in", "out")
            )
            note = rates + note
        lines.append(
            f"{b:>8} {replicas[0].get(b, 0):>7} -> {replicas[1].get(b, 0):<6} "
            f"{leaders[0].get(b, 0):>6} -> {leaders[1].get(b, 0):<5} "
            f"{format_bytes(sizes[0].get(b, 0)):>10} -> {format_bytes(sizes[1].get(b, 0)):<9}{note}".rstrip()
        )
    return "\n".join(lines) + "\n"


def render_plan_report_rich(quality: PlanQuality, engine: str, width: int = 100, title: str = "Balanced plan") -> str:
    """The same report with a bar per broker and dimension: before (dim) and after (bold)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(width=width, record=True, force_terminal=True, file=_Sink())
    for line in headline(quality, engine, title):
        console.print(line, highlight=False)
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("dimension", no_wrap=True)
    table.add_column("before: min..max (std)", justify="right")
    table.add_column("after: min..max (std)")
    sides = [(_LABELS[d.name], _side(d, True), _side(d, False)) for d in quality.dimensions]
    headers = [("dimension", "before: min..max (std)", "after: min..max (std)")]
    if sum(max(len(row[i]) for row in headers + sides) for i in range(3)) + 4 > width:
        # too wide for one row each: the spread (std) goes under min..max, whole, rather than cut mid-cell
        sides = [(a, b.replace(" (std", "\n(std"), c.replace(" (std", "\n(std")) for a, b, c in sides]
    for row in sides:
        table.add_row(*row)
    console.print(table)
    per_broker = dict(quality.per_broker)
    traffic = quality.traffic
    if traffic is not None:  # bytes in and out per second of each broker, before and after
        per_broker["in /s"] = (traffic.in_before, traffic.in_after)
        per_broker["out /s"] = (traffic.out_before, traffic.out_after)
    names = ("replicas", "leaders", "bytes") + (("in /s", "out /s") if traffic is not None else ())
    labels = {name: (lambda v: str(v)) if name in ("replicas", "leaders") else format_bytes for name in names}
    shown = {b: str(b) if b in quality.brokers else f"{b} ({_left(quality, b, short=True)})" for b in quality.shown}
    # each column holds a bar and the longest number after it; the bars shrink until the table fits the width
    longest = {
        name: max([1, *(len(labels[name](per_broker[name][i].get(b, 0))) for b in quality.shown for i in (0, 1))])
        for name in names
    }
    first = max([len("broker"), *(len(label) for label in shown.values())])
    room = (width - first - 2 * len(names) - sum(n + 1 for n in longest.values())) // len(names)
    bar_width = max(3, min((width - 8) // len(names) - 13, room))
    console.print("Per broker, before the plan (upper bar) and after it (lower bar):", highlight=False)
    brokers = Table(box=None, pad_edge=False, show_edge=False)
    brokers.add_column("broker", justify="right", no_wrap=True)
    for name in names:
        brokers.add_column(name)
    peaks = {name: max([1, *per_broker[name][0].values(), *per_broker[name][1].values()]) for name in names}
    for b in quality.shown:
        cells = []
        for name in names:
            before, after = (per_broker[name][i].get(b, 0) for i in (0, 1))
            label = labels[name]
            cell = Text()
            cell.append(_bar(before, peaks[name], bar_width), style="dim")
            cell.append(f" {label(before)}\n", style="dim")
            cell.append(_bar(after, peaks[name], bar_width), style="bold green" if b in quality.brokers else "red")
            cell.append(f" {label(after)}")
            cells.append(cell)
        brokers.add_row(shown[b], *cells)
    console.print(brokers)
    return console.export_text(styles=True)


def _bar(value: float, peak: float, width: int) -> str:
    eighths = round(8 * width * value / peak) if peak else 0
    full, part = divmod(eighths, 8)
    return ("█" * full + ("" if not part else " ▏▎▍▌▋▊▉"[part])).ljust(width)


class _Sink:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def _volume_share(volume) -> str:
    """``/data-1 of broker 4, 83.0%``: a volume of known total, how full it ends."""
    return f"{volume.label} of broker {volume.broker}, {100 * volume.after / volume.total:.1f}%"
