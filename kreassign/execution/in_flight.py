"""The steps a batched run has in flight, and the slots they take: how many steps each broker is part of, and
the copies into each broker and out of each leader serving them (``planning.steps.select_steps`` reads both)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kreassign.model import TopicPartition
from kreassign.planning.steps import Step, serving, step_brokers


@dataclass
class Moving:
    step: Step
    since: float
    brokers: frozenset[int] = frozenset()
    serving: int | None = None  # the leader that serves its copies
    electing: bool = False
    lagging_since: float | None = None
    ended: bool = False  # the controller no longer lists its reassignment


class InFlight:
    def __init__(self) -> None:
        self.steps: dict[TopicPartition, Moving] = {}
        self.broker_load: Counter[int] = Counter()
        self.copies_in: Counter[int] = Counter()  # copies in flight into each broker (new replicas)
        self.copies_out: Counter[int] = Counter()  # and out of it (as the leader serving them)

    def add(self, step: Step, leader: int | None, now: float) -> None:
        brokers = step_brokers(step, leader)
        source = serving(step, leader)
        self.steps[step.partition] = Moving(step, now, brokers, source)
        self.broker_load.update(brokers)
        if step.adding:
            self.copies_in.update(step.adding)
            self.copies_out[source] += len(step.adding)

    def remove(self, tp: TopicPartition) -> Moving | None:
        """Frees the step's slots (the brokers with free slots are for the next steps to start)."""
        moving = self.steps.pop(tp, None)
        if moving is None:
            return None
        self.broker_load.subtract(moving.brokers)
        if moving.step.adding:
            self.copies_in.subtract(moving.step.adding)
            self.copies_out[moving.serving] -= len(moving.step.adding)
            for b in (*moving.step.adding, moving.serving):
                if self.copies_in[b] <= 0:
                    del self.copies_in[b]
                if self.copies_out[b] <= 0:
                    del self.copies_out[b]
        for b in moving.brokers:
            if self.broker_load[b] <= 0:
                del self.broker_load[b]
        return moving
