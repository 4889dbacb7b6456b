"""What a batched run does when others reassign a partition of its plan, or delete a topic of it.

Another client's reassignment of a partition of the plan (an Apache ``--execute --additional`` of the same plan
from a second shell, someone else's ``kafka-reassign-partitions``) is seen at the next poll, which lists every
reassignment in flight. To exactly the plan's target, it is the plan's progress: the run stops planning the
partition, throttles its copies as its own steps, waits for it (it never cancels it: it is not the run's, not
even at Ctrl-C) and counts it as one step done when the partition shows its target. Elsewhere, the partition is
left alone: it fails (the run goes on with the others and exits 1), and the list entries the run held for it
stay while that reassignment moves (none are added). The end of the run keeps what still protects either
(``throttles.py``).

A topic deleted during the run: its partitions are dropped from the run (failed), their steps and throttles
forgotten (they went with the topic), and the run goes on with the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kreassign.execution.watch import Ended, deleted_topics, ended_step
from kreassign.model import PartitionReassignment, TopicPartition
from kreassign.planning.steps import Step, replica_ids


@dataclass
class Taken:
    """A partition of the plan another client is reassigning, as last listed (``BatchedExecutor.taken``)."""

    running: PartitionReassignment
    to_target: bool  # to the plan's target: the plan's progress, which the run waits for
    lagging_since: float | None = None  # when it ended with metadata still showing it under way

    def step(self, tp: TopicPartition) -> Step:
        """Its move as a step: the replicas it keeps (leader side of the throttle) and those it adds."""
        adding = set(self.running.adding)
        return Step(tp, tuple(r for r in self.running.replicas if r not in adding), self.running.target)


class Others:
    """The part of ``BatchedExecutor`` that follows what others do to its partitions (``self.taken``, deleted
    topics)."""

    def _taken_over(self, tp: TopicPartition, running: PartitionReassignment) -> None:
        """Another client reassigns ``tp``: to the plan's target, the run waits for it as the plan's progress (one
        step, never cancelled by the run); elsewhere, the partition is left alone (failed)."""
        to_target = set(running.target) == set(self.state.target[tp])
        known = self.taken.get(tp)
        self.taken[tp] = Taken(running, to_target if known is None else known.to_target and to_target)
        if known is None and to_target:
            self.waiting.pop(tp, None)
            self.touched.add(tp)
            self._remaining_total += 1 - self._remaining.get(tp, 0)
            self._remaining[tp] = 1
            self._taken_now.append(tp)
        elif known is None or (known.to_target and not to_target):
            self._fail(tp, f"is being reassigned by someone else (to {replica_ids(running.target)})")

    def _tell_taken(self) -> None:
        if self._taken_now:
            names = ",".join(str(tp) for tp in sorted(self._taken_now))
            self._taken_now = []
            self.reporter.event(
                f"{names}: being reassigned by someone else to the plan's target; counted as the plan's progress "
                "when done (this run waits for it and never cancels it)"
            )

    def _settle_taken(self, active: Mapping[TopicPartition, PartitionReassignment]) -> None:
        """The partitions others reassign: still running (as listed now), or ended: at the plan's target (one
        step done), elsewhere (its next step from there), or still shown under way by a lagging broker."""
        for tp in sorted(active.keys() - self.taken.keys() - self.moving.keys()):
            if tp in self.state.target and tp not in self.done and tp not in self.failures:
                self._taken_over(tp, active[tp])
        ended = []
        for tp, taken in list(self.taken.items()):
            if tp in active:
                self._taken_over(tp, active[tp])
            elif taken.to_target:
                ended.append(tp)
            else:
                del self.taken[tp]  # failed: no longer the run's to throttle
        info = self._describe(ended) if ended else {}
        now = self.clock()
        for tp in ended:
            taken, current = self.taken[tp], info.get(tp)
            if current is None:
                del self.taken[tp]
                self._fail(tp, "the partition disappeared (topic deleted?)")
                continue
            lagging_for = 0.0 if taken.lagging_since is None else now - taken.lagging_since
            how = ended_step(taken.step(tp), current, lagging_for)
            if how is Ended.LAGGING:
                taken.lagging_since = taken.lagging_since or now
                continue
            del self.taken[tp]
            self.current[tp], self.leader[tp] = tuple(current.replicas), current.leader
            if how is Ended.DONE:
                self.state.steps_done[tp] = self.state.steps_done.get(tp, 0) + 1
                self._changed.add(tp)
            self._replan(tp)

    def _drop_deleted_topics(self) -> bool:
        """After an unknown topic: the plan's topics the cluster no longer lists are dropped from the run (their
        partitions fail, their steps and throttles are forgotten). False when none was deleted (a broker's
        metadata lags instead)."""
        unfinished = {tp.topic for tp in self.state.target if tp not in self.done and tp not in self.failures}
        gone = deleted_topics(self.port, unfinished - self.deleted)
        if not gone:
            return False
        for topic in sorted(gone):
            self.deleted.add(topic)
            self.throttles.forget_topic(topic)
            self._described.pop(topic, None)
            partitions = [tp for tp in self.state.target if tp.topic == topic]
            self.reporter.event(
                f"Topic {topic} was deleted during the run: its {len(partitions)} partition(s) are dropped from "
                "the run, which goes on with the others"
            )
            for tp in partitions:
                self.touched.discard(tp)
                if tp not in self.done and tp not in self.failures:
                    self._fail(tp, "the topic was deleted during the run", quiet=True)
        self._save_changes()
        return True
