"""--list: the reassignments running in the cluster."""

from __future__ import annotations

from kreassign.actions.common import Output
from kreassign.cluster.port import ClusterPort
from kreassign.planning.states import render_current_reassignments


def list_reassignments(port: ClusterPort, out: Output) -> None:
    out(render_current_reassignments(port.list_reassignments()) + "\n")
