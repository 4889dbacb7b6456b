"""The release files are checked by their own linters and kept consistent with the package (issue 41): the
container image recipe by hadolint, the release workflow and the example smoke workflow by actionlint, the
executable's launchers and the release scripts by shellcheck,; the image recipe names this version's bundle,
runs as a user that is not root, keeps the state folder in a volume, and is what packaging/image_rootfs.py
(its test without docker) can carry out."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kreassign import __version__

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "packaging"))

import build_executable  # noqa: E402
import image_rootfs  # noqa: E402


def lint(tool: str, *args: str) -> None:
    proc = subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_recipe_passes_hadolint():
    lint("hadolint", "packaging/Dockerfile")


@pytest.mark.parametrize("workflow", [".github/workflows/release.yml", "examples/github-actions-smoke.yml"])
def test_the_workflows_pass_actionlint(workflow):
    lint("actionlint", "-no-color", workflow)


def test_the_launchers_and_release_scripts_pass_shellcheck():
    lint("shellcheck", "-s", "sh", "packaging/launcher.sh", "packaging/bundle-launcher.sh")
    lint("shellcheck", "-e", "SC1091", "scripts/release", "scripts/build-executable")


def test_the_image_recipe_runs_this_versions_bundle_as_a_user_with_its_state_in_a_volume():
    steps = image_rootfs.instructions(ROOT / "packaging" / "Dockerfile")
    by_name: dict[str, list[str]] = {}
    for name, rest in steps:
        by_name.setdefault(name, []).append(rest)
    assert by_name["FROM"] == ["debian:bookworm-slim"]
    assert by_name["ARG"] == [f"BUNDLE=kreassign-{__version__}-linux-x86_64", "DIST=dist"]
    assert by_name["ENV"] == ["XDG_STATE_HOME=/state"] and json.loads(by_name["VOLUME"][0]) == ["/state"]
    (user,) = by_name["USER"]
    assert re.fullmatch(r"[1-9][0-9]*:[1-9][0-9]*", user), user
    assert json.loads(by_name["ENTRYPOINT"][0]) == ["kafka-reassign-partitions"]
    assert steps[-2:] == [("ENTRYPOINT", '["kafka-reassign-partitions"]'), ("CMD", '["--help"]')]


def fake_wheel(path: Path, requires: list[str]) -> Path:
    """A wheel's layout: its package, its metadata with these requirements, its data (scripts, man page)."""
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("kreassign/__init__.py", "")
        metadata = "Name: kreassign\n" + "".join(f"Requires-Dist: {line}\n" for line in requires)
        wheel.writestr("kreassign-0.1.0.dist-info/METADATA", metadata)
        wheel.writestr("kreassign-0.1.0.data/data/share/man/man1/kreassign.1", "")
    return path


def test_a_cached_builds_dependencies_are_kept_without_the_wheels_own_files_and_keyed_by_what_makes_them(
    tmp_path, monkeypatch
):
    """packaging/build_executable.py --cache keeps pip's tree of the dependencies (pruned) and installs only the
    wheel itself on the next build of the same requirements and week: the suite's build skips resolving on PyPI."""
    wheel = fake_wheel(tmp_path / "a.whl", ["typer>=0.12", 'aws-msk-iam-sasl-signer-python; extra == "aws"'])
    key = build_executable.dependencies_key(wheel)
    assert build_executable.dependencies_key(fake_wheel(tmp_path / "b.whl", ["typer>=0.12"])) != key
    monkeypatch.setattr(build_executable, "AWS_SERVICES", ("sts",))
    assert build_executable.dependencies_key(wheel) != key
    monkeypatch.undo()
    gmtime = build_executable.time.gmtime
    monkeypatch.setattr(build_executable.time, "gmtime", lambda *_: gmtime(86400 * 400))
    assert build_executable.dependencies_key(wheel) != key  # another week: resolved again
    monkeypatch.undo()
    target = tmp_path / "target"
    for name in ("kreassign", "kreassign-0.1.0.dist-info", "bin", "share", "typer", "botocore/data/sts"):
        (target / name).mkdir(parents=True)
        (target / name / "f").write_text(name)
    deps = tmp_path / "deps"
    for old in ("old1", "old2"):
        (deps / old).mkdir(parents=True)
    build_executable.keep_dependencies(target, deps / key, wheel)
    kept = sorted(str(p.relative_to(deps / key)) for p in (deps / key).rglob("f"))
    assert kept == ["botocore/data/sts/f", "typer/f"]
    assert len([p for p in deps.iterdir()]) == 2 and (deps / key).is_dir()  # the newest two trees stay
