"""What the tests do with a cluster they are done with."""

from __future__ import annotations

from kreassign.devcluster.cluster import LocalKafkaCluster


def discard(cluster: LocalKafkaCluster) -> None:
    """Kill every node at once (SIGKILL, as when the test process dies): the cluster and its data are thrown
    away, and a controlled shutdown, which proves nothing here, takes a KRaft broker a second or more and a
    ZooKeeper-mode broker about 18 s (the last ones have no broker to give their leaders to)."""
    for node in cluster.nodes:
        cluster.stop_node(node.node_id, hard=True)
    cluster.stop()
