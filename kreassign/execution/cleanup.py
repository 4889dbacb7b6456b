"""The end of a batched run, however it ends: revert the steps in flight exactly, restore the throttles, elect
the preferred leaders.

A revert is exact or it is not a revert. Kafka undoes a cancelled reassignment by dropping the replicas being
added and keeping the others in the order the reassignment listed them (the target's replicas first), so a
leader step ``[1,3,4,2]`` from ``[2,3,4]`` comes back as ``[3,4,2]``: its preferred leader is then broker 3,
neither the source's nor the target's. After the cancel, each partition whose order differs from its step's
source gets a reassignment to that source (the same replicas in another order: it copies nothing and ends at
once), and then, as at the end of every run, the preferred leader of each partition the run touched is
elected where it is in sync.

Also used by ``--cancel`` of a run that died (``kill -9``): its step in flight is reverted the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kreassign.cluster.port import ClusterPort
from kreassign.errors import CommandError, KreassignError, PartitionError, UnknownTopicOrPartitionError
from kreassign.execution.journal import RunStatus
from kreassign.execution.signals import whole_request
from kreassign.execution.throttles import ThrottleLifecycle
from kreassign.model import PartitionInfo, PartitionReassignment, TopicPartition
from kreassign.planning.steps import Step, replica_ids

REORDER_WAIT_S = 15.0
"""How long the clean-up waits for the brokers' metadata to show a cancelled step reverted, and then its
reorder done, before it reports the partition's order as left to put back."""

FINISHED_OR_LAGGING_S = 3.0
"""A leader step that was no longer running when the clean-up cancelled it, and whose metadata shows its target
(which holds the source's replicas): finished, or cancelled by someone else and shown by a broker whose metadata
lags. Read again for this long before it counts as finished."""

OFFLINE_RECHECKS = 5
"""How many times (a second apart) clean-up asks again before leaving an offline broker's rates for later."""

Event = Callable[[str], None]


def cancel_steps(
    port: ClusterPort, steps: Iterable[TopicPartition]
) -> tuple[list[TopicPartition], set[TopicPartition], list[str]]:
    """Cancel the reassignments of these steps in flight. Returns the partitions reverted, those whose
    reassignment was no longer running (finished since the last poll, or cancelled by someone else), and the
    problems."""
    partitions = list(steps)
    if not partitions:
        return [], set(), []
    try:
        with whole_request():
            errors = port.alter_reassignments(dict.fromkeys(partitions))
    except Exception as exc:
        return [], set(), [f"could not cancel the steps in flight: {getattr(exc, 'message', exc)}"]
    ended = {tp for tp, e in errors.items() if _not_running(e)}
    reverted = [tp for tp in partitions if tp not in errors]
    problems = [f"could not cancel the step of {tp}: {errors[tp]}" for tp in sorted(errors) if tp not in ended]
    return reverted, ended, problems


def _not_running(error: PartitionError) -> bool:
    # a step that finished since the last poll has nothing left to cancel; a deleted topic has nothing left
    return error.exception in ("NoReassignmentInProgressException", "UnknownTopicOrPartitionException")


def read_partitions(port: ClusterPort, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionInfo]:
    """The metadata of these partitions; those of a deleted topic are left out."""
    wanted = set(partitions)
    topics = sorted({tp.topic for tp in wanted})
    try:
        described = port.read_topics(topics)
    except UnknownTopicOrPartitionError:
        described = {}
        for topic in topics:  # one of them was deleted: the others one by one
            with contextlib.suppress(UnknownTopicOrPartitionError):
                described.update(port.read_topics([topic]))
    return {
        TopicPartition(topic, info.partition): info
        for topic, infos in described.items()
        for info in infos
        if TopicPartition(topic, info.partition) in wanted
    }


def restore_order(
    port: ClusterPort,
    steps: Mapping[TopicPartition, Step],
    *,
    reverted: Iterable[TopicPartition] = (),
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    event: Event,
) -> list[str]:
    """Put each partition whose step was cancelled back at the step's source in its exact order. ``steps``:
    the steps cancelled (by this run or by someone else) and those that were no longer running when this run
    cancelled them (finished: left alone; cancelled by someone else first: put back). ``reverted``: those known
    to be cancelled, whose metadata is waited for until it shows the source's replicas (a leader step's target
    holds the source's replicas too: under way, and as a broker whose metadata lags shows it after the cancel,
    its replicas are the target's). Returns the problems."""
    if not steps:
        return []
    known = set(reverted)

    started = clock()

    def settled(tp: TopicPartition, current: PartitionInfo) -> bool:
        shown, step = set(current.replicas), steps[tp]
        if tp in known:
            return shown == set(step.source)
        if shown == set(step.source):
            return True
        # the target's replicas: finished, unless the step held the source's (a leader step: its target is what
        # a broker whose metadata lags shows of a step cancelled by someone else): looked at a while longer
        return tuple(current.replicas) == step.target and (
            not set(step.source) <= set(step.target) or clock() - started >= FINISHED_OR_LAGGING_S
        )

    deadline = started + REORDER_WAIT_S
    info = read_partitions(port, steps)
    # the metadata of the broker asked may show the step under way a moment after the cancel
    while True:
        unsettled = [tp for tp in info if not settled(tp, info[tp])]
        if not unsettled or clock() >= deadline:
            break
        sleep(0.2)
        info.update(read_partitions(port, unsettled))
    reorder = {
        tp: steps[tp].source
        for tp, current in info.items()
        if set(current.replicas) == set(steps[tp].source) and tuple(current.replicas) != steps[tp].source
    }
    problems = [
        f"the replicas of {tp} still show its step under way ({replica_ids(info[tp].replicas)}); check its order"
        for tp in sorted(info)
        if not settled(tp, info[tp])
    ]
    if not reorder:
        return problems
    for tp in sorted(reorder):
        event(
            f"{tp}: Kafka's revert left the replicas as {replica_ids(info[tp].replicas)}; putting back the source's "
            f"order {replica_ids(reorder[tp])} (copies nothing)"
        )
    try:
        with whole_request():
            errors = port.alter_reassignments(dict(reorder))
    except KreassignError as exc:
        return [*problems, f"could not put back the replica order of {_names(reorder)}: {exc.message}"]
    problems += [f"could not put back the replica order of {tp}: {errors[tp]}" for tp in sorted(errors)]
    waiting = {tp: r for tp, r in reorder.items() if tp not in errors}
    deadline = clock() + REORDER_WAIT_S
    while waiting:
        with contextlib.suppress(KreassignError):
            running = port.list_reassignments(list(waiting))
            shown = read_partitions(port, waiting)
            for tp in list(waiting):
                if tp not in running and tp in shown and tuple(shown[tp].replicas) == waiting[tp]:
                    del waiting[tp]
        if not waiting or clock() >= deadline:
            break
        sleep(0.2)
    if waiting:
        problems.append(f"the reorder of {_names(waiting)} to its source's order was not seen done")
    return problems


def _names(partitions: Iterable[TopicPartition]) -> str:
    return ",".join(str(tp) for tp in sorted(partitions))


def elect_preferred(port: ClusterPort, partitions: Iterable[TopicPartition], event: Event) -> None:
    """Elect the preferred leader of each of these partitions that another replica leads while the preferred
    one is in sync (a broker that restarted during the run, a step reverted). Best effort: what the controller
    refuses is reported, never a problem of the clean-up."""
    try:
        info = read_partitions(port, partitions)
    except KreassignError as exc:
        event(f"Preferred leaders not checked: {exc.message}")
        return
    due = sorted(
        tp
        for tp, current in info.items()
        if current.replicas
        and current.leader != current.replicas[0]
        and current.replicas[0] in current.isr
        and current.leader is not None
    )
    if not due:
        return
    try:
        with whole_request():
            errors = port.elect_preferred_leaders(due)
    except KreassignError as exc:
        event(f"Preferred leader election of {_names(due)} failed: {exc.message}")
        return
    elected = [tp for tp in due if tp not in errors or errors[tp].exception == "ElectionNotNeededException"]
    if elected:
        event(f"Elected the preferred leader of {_names(elected)}")
    for tp in sorted(set(due) - set(elected)):
        event(f"{tp}: preferred leader not elected ({errors[tp]})")


def replaced_steps(
    port: ClusterPort, steps: Mapping[TopicPartition, Step]
) -> dict[TopicPartition, PartitionReassignment]:
    """Of these steps in flight, those whose partition another client has reassigned elsewhere since the last
    poll (an Apache ``--execute --additional`` of the plan): not the run's to cancel. Unknown (the list failed):
    none, as before."""
    if not steps:
        return {}
    try:
        running = port.list_reassignments(list(steps))
    except Exception:
        return {}
    return {tp: r for tp, r in running.items() if tp in steps and set(r.target) != set(steps[tp].target)}


def finished_steps(port: ClusterPort, steps: Mapping[TopicPartition, Step]) -> set[TopicPartition]:
    """Of these steps, no longer running when the clean-up cancelled them, those whose partition shows their
    target: they finished just before (a step cancelled by someone else shows its source)."""
    if not steps:
        return set()
    info = read_partitions(port, steps)
    return {tp for tp, current in info.items() if tuple(current.replicas) == steps[tp].target}


def restore_throttles(
    port: ClusterPort,
    throttles: ThrottleLifecycle,
    recorded_brokers: set[int],
    live: set[int],
    sleep: Callable[[float], None],
    own: Iterable[TopicPartition] = (),
) -> tuple[set[int], list[str]]:
    """Put back the throttles the run holds (brokers offline left for later; what protects a reassignment in
    flight of a partition not in ``own``, the run's own reverted steps, kept). Returns the live brokers as
    last read, and the problems."""
    problems: list[str] = []
    try:
        # a loaded cluster can fence a running broker for a few seconds: look again before giving up on it (only
        # for a broker whose rates the run holds: one it holds nothing on is not waited for)
        holding = recorded_brokers & {int(b) for b in throttles.rates_set}
        for attempt in range(OFFLINE_RECHECKS):
            with contextlib.suppress(Exception):  # else restore with what the last poll saw
                live = {b.id for b in port.describe_brokers()}
            if not holding - live or attempt == OFFLINE_RECHECKS - 1:
                break
            sleep(1.0)
        throttles.restore(offline=recorded_brokers - live, own=own)
        if throttles.pending:
            problems.append(
                "the throttle rates of offline broker(s) "
                + ",".join(throttles.pending)
                + " stay until a later run of this plan (or --cancel) restores them"
            )
    except Exception as exc:
        problems.append(str(getattr(exc, "message", None) or exc))
    return live, problems


def guarded(call: Callable[[], list[str] | None]) -> list[str]:
    """A step of the clean-up that must not stop the next ones: its failure is one more problem."""
    try:
        return list(call() or [])
    except Exception as exc:
        return [str(getattr(exc, "message", None) or exc)]


def revert_steps(
    port: ClusterPort,
    steps: Mapping[TopicPartition, Step],
    cancelled_by_others: Mapping[TopicPartition, Step],
    deleted: set[str],
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    event: Event,
) -> tuple[list[TopicPartition], list[TopicPartition], list[str]]:
    """Cancel the run's ``steps`` still in flight and put their partitions (and those of the steps others
    cancelled) back in the source's exact order. Returns the steps reverted, those no longer running when
    cancelled, and the problems."""
    reverted: list[TopicPartition] = []
    ended: list[TopicPartition] = []
    problems: list[str] = []
    if steps:
        reverted, ended, problems = cancel_steps(port, steps)
        # Kafka's revert keeps the step's order: put the source's back (the steps others cancelled too,
        # and those no longer running when cancelled: someone may have cancelled them first)
        back = {tp: steps[tp] for tp in [*reverted, *ended] if tp.topic not in deleted}
        back.update(cancelled_by_others)
    else:
        back = dict(cancelled_by_others)
    if back:
        known = {*reverted, *cancelled_by_others}
        problems += guarded(lambda: restore_order(port, back, reverted=known, clock=clock, sleep=sleep, event=event))
    return reverted, ended, problems


def end_run(run: Any, status: RunStatus, message: str) -> list[TopicPartition]:
    """The end of the ``BatchedExecutor`` ``run``, in its ``finally``: revert the steps in flight (unless done) to
    their source's exact order, restore throttles, elect preferred leaders, record the end."""
    steps = {tp: m.step for tp, m in run.moving.items() if not m.electing}
    if status is not RunStatus.COMPLETED:
        for tp, running in replaced_steps(run.port, steps).items():  # someone else's now: left to run
            del steps[tp]
            run._forget(tp)
            run._taken_over(tp, running)
        run._tell_taken()
    reverted, ended, problems = revert_steps(
        run.port,
        steps if status is not RunStatus.COMPLETED else {},
        run.cancelled_by_others,
        run.deleted,
        clock=run.clock,
        sleep=run.sleep,
        event=run.reporter.event,
    )
    # a step no longer running when cancelled that shows its target finished just before (counted done, as
    # --progress and the resume count it), as did a step waiting for its leader's election
    try:
        finished = finished_steps(run.port, {tp: steps[tp] for tp in ended})
    except Exception:  # not known: counted as not at their target (the resume reads them again)
        finished = set()
    for tp in [*reverted, *ended]:
        if tp in finished:
            run._complete(tp, steps[tp])
        else:
            run._forget(tp)
    for tp, moving in list(run.moving.items()):
        if moving.electing:
            run._complete(tp, moving.step)
    if status is not RunStatus.COMPLETED:
        problems += run.dirs.cancel()
    recorded_brokers = {int(b) for b in run.state.recorded_throttles.get("broker", {})}
    run._live, restore_problems = restore_throttles(
        run.port, run.throttles, recorded_brokers, run._live, run.sleep, own=[*steps, *run.cancelled_by_others]
    )
    problems += restore_problems
    run.state.throttles_written = run.throttles.held()
    touched = [tp for tp in run.touched if tp.topic not in run.deleted]
    if touched:
        guarded(lambda: elect_preferred(run.port, touched, run.reporter.event) or [])
    run.state.reverted = sorted({*reverted, *run.cancelled_by_others})
    run.state.status = status if not problems else RunStatus.FAILED
    run.state.message = "; ".join([m for m in [message, *problems] if m])
    try:
        run.save_all()
    except CommandError as exc:
        problems.append(exc.message)
    if problems:
        run.reporter.event("Clean-up incomplete: " + "; ".join(problems))
    run.cleanup_problems = problems
    return sorted({*reverted, *run.cancelled_by_others})
