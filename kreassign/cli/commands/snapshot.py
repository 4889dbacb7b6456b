"""--write-cluster-snapshot FILE: the cluster (or the topics of --topics-to-move-json-file) to a snapshot."""

from __future__ import annotations

from kreassign.cli.commands import Invocation
from kreassign.cli.exit_codes import ExitCode


def run(inv: Invocation) -> int:
    from kreassign.actions.balanced import write_cluster_snapshot
    from kreassign.actions.common import read_input_file

    topics = inv.args.value("topics-to-move-json-file")
    path = str(inv.args.value("write-cluster-snapshot"))
    window = inv.args.long_value("sample-rates")
    topics_json = read_input_file(topics) if topics is not None else None
    write_cluster_snapshot(inv.port, path, topics_json, inv.err, sample_rates_s=window)
    return ExitCode.OK
