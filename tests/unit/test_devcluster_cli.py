"""``python -m kreassign.devcluster``: ``--dir`` before or after the subcommand (issue 26 item 13). Real
processes; no cluster is started (an impossible one fails before any JVM)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _devcluster(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kreassign.devcluster", *argv], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_status_reads_the_dir_given_before_or_after_the_subcommand(tmp_path, after):
    (tmp_path / "cluster.json").write_text(json.dumps({"nodes": []}) + "\n")
    done = _devcluster("status", "--dir", str(tmp_path)) if after else _devcluster("--dir", str(tmp_path), "status")
    assert (done.returncode, done.stdout) == (0, '{"nodes": []}\n'), done.stderr


def test_start_takes_dir_after_its_own_options(tmp_path):
    """`start --brokers 4 --dir X` was "unrecognized arguments: --dir X". --brokers 0 fails before any JVM,
    in X (its run folder is made there)."""
    done = _devcluster("start", "--brokers", "0", "--dir", str(tmp_path / "x"))
    assert "unrecognized arguments" not in done.stderr
    assert (done.returncode, done.stderr) == (1, "Error: a cluster needs at least one broker and one controller\n")


def test_dir_after_the_subcommand_wins(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "cluster.json").write_text("{}\n")
    done = _devcluster("--dir", str(tmp_path / "a"), "status", "--dir", str(tmp_path / "b"))
    assert (done.returncode, done.stdout) == (0, "{}\n")
    done = _devcluster("stop", "--dir", str(tmp_path / "a"))
    assert (done.returncode, done.stdout) == (0, "no cluster running\n")
