"""The docs a user reads are kept true by tests: README.md is the front page (at most 300 lines), every
relative link of README.md, docs/ and the other READMEs leads to a file that exists, and every option of
``--help`` is documented in README.md or docs/ (issue 33: the reference moved from a 1,053-line README into
docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
PAGES += [ROOT / "smoke" / "README.md", ROOT / "completions" / "README.md", ROOT / "man" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)
    text = "\n".join(lines)
    # the two commands of the project, and .ci/run calling the test one
    assert "./scripts/demo" in text and "./scripts/test" in text
    assert "`.ci/run` calls exactly `./scripts/test`" in text
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("exec ./scripts/test")


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert not broken, broken


def test_every_option_of_the_help_is_documented():
    from kreassign.cli.spec import SPECS

    docs = "\n".join(p.read_text(encoding="utf-8") for p in PAGES if p.exists())
    missing = [name for name in SPECS if f"--{name}" not in docs]
    assert not missing, missing
