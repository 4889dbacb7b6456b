"""Start-up stays light: the CLI imports no Kafka client, pyspark or rich until an action needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kreassign import KAFKA_COMPAT_VERSION, __version__

HEAVY = ("confluent_kafka", "kafka", "pyspark", "rich", "tabulate", "kazoo")

PROBE = """
import sys
{body}
heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})
print('HEAVY=' + ','.join(heavy))
"""


def _loaded_heavy_modules(body: str) -> list[str]:
    code = PROBE.format(body=body, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    marker = next(line for line in out.splitlines() if line.startswith("HEAVY="))
    return [m for m in marker.removeprefix("HEAVY=").split(",") if m]


@pytest.mark.parametrize(
    "body",
    [
        "import kreassign.cli.entry, kreassign.cli.app, kreassign.cli.argv",
        "from kreassign.cli.entry import main; main(['--version'])",
        "from kreassign.cli.app import run; run(['--list'])",  # usage error path
        "import kreassign.cluster.port, kreassign.planning.throttles, kreassign.actions.verify",
        "import kreassign.actions.progress, kreassign.planning.progress, kreassign.cli.render_progress",
        "from kreassign.cli.app import run; run(['--zookeeper', 'h:1', '--list'])",  # refused --zookeeper
        "import kreassign.zookeeper.legacy, kreassign.zookeeper.command",
        "import kreassign.snapshot, kreassign.planning.balanced.engine, kreassign.actions.balanced, kreassign.spark",
    ],
    ids=[
        "import-cli",
        "version",
        "usage-error",
        "import-core",
        "import-progress",
        "zookeeper-refused",
        "import-zookeeper-path",
        "import-planning-at-scale",
    ],
)
def test_no_heavy_imports(body):
    assert _loaded_heavy_modules(body) == []


@pytest.mark.parametrize("script", ["kreassign", "kafka-reassign-partitions"])
def test_console_scripts_print_version(script):
    exe = Path(sys.executable).with_name(script)
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert proc.stdout == f"{__version__} (kreassign; Apache Kafka {KAFKA_COMPAT_VERSION} compatible)\n"
    assert proc.stderr == ""


def test_python_dash_m_runs_the_cli():
    proc = subprocess.run([sys.executable, "-m", "kreassign", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_unencodable_character_in_an_error_is_printed_like_java(tmp_path):
    """A lone surrogate in Jackson's message (astral character where a value is expected) prints as '?'."""
    bad = tmp_path / "astral.json"
    bad.write_bytes('{"version":\U0001f600}'.encode())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kreassign",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--execute",
            "--reassignment-json-file",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("Error: Unexpected character ('?' (code 55357 / 0xd83d)): expected a valid value")
    assert "Traceback" not in proc.stderr
