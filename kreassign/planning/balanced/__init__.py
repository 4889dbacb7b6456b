"""The ``--strategy balanced`` proposal: deterministic, rack-aware, minimal movement. Standard library only.

Goal, for the partitions of the listed topics and the brokers of ``--broker-list`` (the chosen brokers):

* every replica on a broker that is not chosen leaves it; each partition gets the target replication
  factor (``--replication-factor N``, else its current one);
* replicas of a partition sit on distinct racks, at most ``rack_cap(rf)`` per rack (1 when there are at
  least rf racks; the fewest that can fit rf replicas otherwise); without racks (``--disable-rack-aware``
  or no broker has one) every broker is its own rack;
* replicas per chosen broker end at ``floor(R/B)`` or ``ceil(R/B)`` (R replicas, B brokers), leaders per
  broker at ``floor(P/B)`` or ``ceil(P/B)`` (P partitions); when racks differ in size and the rack rule
  holds a rack away from that mean (the only broker left of a rack must hold a replica of every partition),
  the racks' totals follow what the rule allows (:mod:`kreassign.planning.racklimits`: such a rack holds
  what it must, or all it may) and the other brokers even out among themselves (within one of their own
  mean);
* as few replicas as possible move: a replica stays unless it must leave (broker removed, rack rule,
  replication factor lowered) or its broker is above its target; the brokers with the most kept replicas
  take the ``ceil`` targets. When racks allow it, the replicas moved are exactly the forced moves plus
  ``sum(max(0, kept_b - target_b))``, which no balanced plan can beat.
* free choices (which replicas leave an over-target broker, which replica leads) first even out each
  topic (its replicas and its leaders over the brokers), then bytes: a broker above the mean bytes sheds,
  one at a time, the replica whose size is closest to its remaining excess divided by the number it still
  sheds, any other broker its smallest (fewest bytes moved); bytes per broker are best effort and
  reported, not bounded.

The computation is a pipeline of small pure stages so that the Spark engine (``kreassign.spark``) runs
the very same functions, per partition, per broker and per topic in parallel, with only aggregates
(per broker, per topic) and the few left-over rows going through the driver:

1. :func:`normalize_partition` (per partition): kept replicas and vacancies.
2. :func:`counts_targets` (driver, from per-broker counts, and the racks' totals the rack rule fixes, from
   the partitions per replication factor): replica targets per broker.
3. :func:`shed_from_broker` (per broker): which kept replicas leave an over-target broker: from the
   topics it holds most above their even share (``topic_totals``, one sum per topic), and, among
   those, the sizes that bring its bytes to the mean.
4. :class:`SlotPlan` (driver, from per-broker deficits and per-topic vacancy counts) and
   :func:`fill_topic` (per topic): under-target brokers' free slots, striped over the topics in name
   order, matched to the vacancies of each topic.
5. :func:`repair_leftovers` (driver): vacancies the topic could not fill within its slots.
6. :func:`counts_targets` again for leaders, :func:`shed_from_broker` for leaderships over target (from
   the topics the broker leads most above their even share), and :func:`assign_leaders` (driver) for
   the partitions left without a leader (furthest below target, then fewest leaders of the topic);
   :func:`leader_chains` (driver) only if a broker is still outside floor..ceil.
7. :func:`order_replicas` (per partition): the leader first, then the other replicas.

Every stage sorts its input, so the order rows arrive in (Spark's shuffles) never matters.

One module per stage, each importing only ``context``, ``bounds`` and the stages before it (this package
imports none): ``normalize`` (1), ``targets`` (2, and :func:`within_tolerance`), ``shed`` (3), ``fill`` (4),
``repair`` (5), ``chains`` (the last resort of the rounds), ``leaders`` (6 and 7), and ``engine`` (the local
engine: :func:`plan_balanced`, all the stages in one process).
"""
