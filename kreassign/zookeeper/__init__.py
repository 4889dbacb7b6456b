"""The deprecated ``--zookeeper`` path: ``--generate``, ``--execute`` and ``--verify`` through ZooKeeper,
as Kafka 2.8's tool did them, for ZooKeeper-mode clusters (Kafka before 4.0).

Only this package imports kazoo (lazily, in :mod:`kreassign.zookeeper.store`). The reference for every
text and znode is Kafka 2.8.2's ``kafka.admin.ReassignPartitionsCommand``, the last Apache tool with
``--zookeeper``.
"""
