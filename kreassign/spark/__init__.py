"""The Spark engine of ``--generate --strategy balanced`` (optional extra: ``pip install 'kreassign[spark]'``).

Nothing here imports pyspark at module level: ``kreassign.spark.pipeline`` does, and only when
:func:`plan_balanced_spark` runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kreassign.errors import CommandError
from kreassign.planning.balance import BalanceContext

INSTALL_HINT = "--engine spark needs pyspark, pandas and pyarrow: pip install 'kreassign[spark]'"


def plan_balanced_spark(
    snapshot_path: str,
    topics: Sequence[str],
    ctx: BalanceContext,
    *,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    session: Any = None,
) -> dict[tuple[str, int], list[int]]:
    """The balanced plan of ``topics`` in the snapshot file, computed by a PySpark pipeline; equal to
    ``kreassign.planning.balance.plan_balanced`` on the same input."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"{INSTALL_HINT} ({exc.name} is missing)") from None
    from kreassign.spark.pipeline import run_pipeline

    return run_pipeline(snapshot_path, topics, ctx, master=master, conf=conf or {}, session=session)
