"""Shell completions and the man page are generated from the Typer declaration and held to it.

A failure here means: run ``python -m kreassign.cli.docgen`` and commit the files it writes.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kreassign.cli import docgen
from kreassign.cli.spec import ACTIONS, SPECS

GENERATED = docgen.outputs()


@pytest.mark.parametrize("path", sorted(GENERATED))
def test_generated_file_is_current(path):
    target = docgen.ROOT / path
    assert target.exists(), f"{path} is missing: run python -m kreassign.cli.docgen"
    assert target.read_text(encoding="utf-8") == GENERATED[path], f"{path} is stale: run python -m kreassign.cli.docgen"


@pytest.mark.parametrize("path", sorted(GENERATED))
def test_every_option_is_in_every_generated_file(path):
    text = GENERATED[path]
    if path.endswith(".1"):
        text = text.replace("\\-", "-")
    for name in SPECS:
        expected = f"-l {name} " if path.endswith(".fish") else f"--{name}"
        assert expected in text, (path, name)


def test_man_page_has_the_sections_and_every_exit_status():
    man = GENERATED["man/kreassign.1"]
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES", "EXAMPLES", "SEE ALSO"):
        assert f"\n.SH {section}\n" in man, section
    for code in ("0", "1", "2", "3", "4", "130", "143"):
        assert f"\n.B {code}\n" in man, code
    examples = man[man.index(".SH EXAMPLES") :].replace("\\-", "-")
    for action in ACTIONS:
        assert f"--{action}" in examples, action
    assert "--max-partition-movements" in examples


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_without_warnings():
    proc = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", "-z", str(docgen.ROOT / "man/kreassign.1")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def _complete_bash(words: list[str]) -> list[str]:
    script = (
        f"source {docgen.ROOT / 'completions/kreassign.bash'}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        '_kreassign; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True, cwd=docgen.ROOT)
    return proc.stdout.split()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["kreassign", "--gen"], ["--generate"]),
        (["kreassign", "--output", ""], ["text", "json"]),
        (["kreassign", "--output", "=", "j"], ["json"]),
        (["kreassign", "--reassignment-json-file", "pyproj"], ["pyproject.toml"]),
        (["kreassign", "--throttle", ""], []),
    ],
    ids=["option-name", "choices", "name=value", "file", "number"],
)
def test_bash_completion(words, expected):
    assert _complete_bash(words) == expected


@pytest.mark.parametrize(
    ("shell", "path"),
    [("zsh", "completions/_kreassign"), ("fish", "completions/kreassign.fish")],
)
def test_completion_script_parses(shell, path):
    assert shutil.which(shell), f"{shell} is not installed (./scripts/test installs it with apt-get)"
    flag = ["--no-execute"] if shell == "fish" else ["-n"]
    proc = subprocess.run([shell, *flag, str(docgen.ROOT / path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_check_mode_reports_nothing_stale():
    assert docgen.stale() == []
