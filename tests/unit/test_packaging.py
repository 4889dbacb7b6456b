"""The wheel ships the man page and the shell completions, and pip installs them where man and the shells look
(issue 26 item 12): the wheel is built from this checkout, installed into a bare venv, and the installed man
page is rendered at 80 columns with every option name whole (no hyphenation across lines)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kreassign.cli import docgen
from kreassign.cli.spec import SPECS

INSTALLED = {
    "share/man/man1/kreassign.1": "man/kreassign.1",
    "share/bash-completion/completions/kreassign.bash": "completions/kreassign.bash",
    "share/zsh/site-functions/_kreassign": "completions/_kreassign",
    "share/fish/vendor_completions.d/kreassign.fish": "completions/kreassign.fish",
}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A bare venv with the wheel of this checkout installed (without its dependencies: only files count)."""
    folder = tmp_path_factory.mktemp("wheel")
    source = folder / "source"  # a copy of the tracked files: the build leaves nothing in the checkout
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=docgen.ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (docgen.ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(docgen.ROOT / name, source / name)
    for generated in INSTALLED.values():  # as generated now, committed or not
        shutil.copy2(docgen.ROOT / generated, source / generated)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder / "dist"), str(source)],
        check=True,
        timeout=600,
        env=env,
    )
    (wheel,) = (folder / "dist").glob("kreassign-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for path in INSTALLED:
        assert any(name.endswith(f".data/data/{path}") for name in names), (path, names)
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=300)
    pip = folder / "venv" / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "--no-deps", str(wheel)], check=True, timeout=300, env=env)
    return folder / "venv"


@pytest.mark.parametrize("path", sorted(INSTALLED))
def test_wheel_installs_the_man_page_and_completions(venv, path):
    installed = venv / path
    assert installed.is_file(), f"{path} not installed into the venv"
    assert installed.read_text(encoding="utf-8") == (docgen.ROOT / INSTALLED[path]).read_text(encoding="utf-8")


def _rendered(page: Path, env: dict[str, str] | None = None, via_man: bool = False) -> str:
    command = ["man", "-l", str(page)] if via_man else ["groff", "-man", "-Tutf8", str(page)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True, timeout=60)
    return re.sub(r".\x08", "", done.stdout)  # no overstrike bold/underline


def test_installed_man_page_renders_option_names_whole_at_80_columns(venv):
    page = venv / "share/man/man1/kreassign.1"
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0", "PAGER": "cat", "MANPAGER": "cat"}
    text = _rendered(page, env, via_man=shutil.which("man") is not None)
    assert "\u2010\n" not in text and not re.search(r"-\n", text), "a word is hyphenated across lines"
    for name in SPECS:
        assert f"--{name}" in text, name
    assert "--topics-to-move-json-file" in text and "--write-cluster-snapshot FILE" in text


def test_man_finds_the_page_of_the_venv_on_the_path(venv):
    """man maps each bin directory of PATH to its ../share/man: `man kreassign` works once the venv is active."""
    env = {**os.environ, "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
    env.pop("MANPATH", None)
    done = subprocess.run(["man", "-w", "kreassign"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == (venv / "share/man/man1/kreassign.1").resolve()


def test_synopsis_offers_the_snapshot_instead_of_the_cluster_and_write_cluster_snapshot():
    text = _rendered(docgen.ROOT / "man/kreassign.1")
    synopsis = " ".join(text[text.index("SYNOPSIS") : text.index("DESCRIPTION")].split())
    assert "[--watch [SECONDS]]" in synopsis
    assert "{--bootstrap-server HOST:PORT | --cluster-snapshot-file FILE} --generate" in synopsis
    assert "kreassign --cluster-snapshot-file FILE --execute --reassignment-json-file FILE --dry-run" in synopsis
    assert "kreassign --bootstrap-server HOST:PORT --write-cluster-snapshot FILE" in synopsis
    # a snapshot is never offered beside a required --bootstrap-server
    for usage in synopsis.split("kreassign ")[1:]:
        if usage.startswith("--bootstrap-server"):
            assert "--cluster-snapshot-file" not in usage, usage
