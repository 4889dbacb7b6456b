"""The layering rules of docs/development.md's Layout section, held by reading every import of every module (those
inside functions too) with the ast module. A new module falls under the rule of the package it is in.

Two rules hold the shape of the house: no module imports a module of a higher floor (``LAYERS``), and no modules
import each other, directly or round a longer loop (an import cycle), lazy imports inside functions included."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "kreassign"

PURE_CORE = (
    "kreassign.model",
    "kreassign.errors",
    "kreassign.humanize",
    "kreassign.javacompat",
    "kreassign.gcpause",
    "kreassign.formats",
    "kreassign.planning",
    "kreassign.documents",
)
"""Standard library only, and nothing of the packages that do I/O or talk to users."""

IO_PACKAGES = (
    "kreassign.cli",
    "kreassign.cluster",
    "kreassign.spark",
    "kreassign.actions",
    "kreassign.execution",
    "kreassign.zookeeper",
    "kreassign.devcluster",
    "kreassign.snapshot",
)

LAYERS = (
    ("kreassign", "kreassign.errors", "kreassign.gcpause"),
    ("kreassign.javacompat",),
    ("kreassign.model", "kreassign.humanize"),
    ("kreassign.formats", "kreassign.planning", "kreassign.documents"),
    ("kreassign.cluster",),
    ("kreassign.snapshot",),
    ("kreassign.spark",),
    ("kreassign.execution",),
    ("kreassign.actions",),
    ("kreassign.zookeeper",),
    ("kreassign.cli", "kreassign.__main__"),
    ("kreassign.devcluster",),
)
"""The floors, bottom up: a module imports modules of its own floor or of lower ones, never of a higher one (the
executor is called by the actions, it never calls them; the command line calls the actions, never the other way).
``kreassign`` here is the package's ``__init__`` alone (its version)."""

THIRD_PARTY_HOMES = {
    # third-party top-level package -> the only kreassign packages that may import it
    "typer": ("kreassign.cli",),
    "click": ("kreassign.cli",),
    "rich": ("kreassign.cli",),
    "tabulate": ("kreassign.cli",),
    "confluent_kafka": ("kreassign.cluster", "kreassign.devcluster"),
    "kafka": ("kreassign.cluster", "kreassign.devcluster"),
    "pyspark": ("kreassign.spark",),
    "pandas": ("kreassign.spark",),
    "pyarrow": ("kreassign.spark",),
    "py4j": ("kreassign.spark",),
    "kazoo": ("kreassign.zookeeper", "kreassign.devcluster"),
    # AWS MSK IAM (the aws extra): the signer library and the AWS SDK under it
    "aws_msk_iam_sasl_signer": ("kreassign.cluster",),
    "boto3": ("kreassign.cluster",),
    "botocore": ("kreassign.cluster",),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, wherever it stands."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:  # `from kreassign import cli` imports the module kreassign.cli
                yield node.lineno, f"{target}.{alias.name}" if _is_module(f"{target}.{alias.name}") else target


def _is_module(name: str) -> bool:
    parts = name.split(".")
    if parts[0] != "kreassign":
        return False
    path = PACKAGE_ROOT.joinpath(*parts[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


MODULES = sorted(PACKAGE_ROOT.rglob("*.py"))


def _floor(module: str) -> int | None:
    """The floor of a module: that of the longest declared package it is in."""
    best: tuple[int, int] | None = None
    for floor, packages in enumerate(LAYERS):
        for package in packages:
            inside = module == package or (package != "kreassign" and module.startswith(package + "."))
            if inside and (best is None or len(package) > best[1]):
                best = (floor, len(package))
    return None if best is None else best[0]


def _resolved(target: str) -> str:
    """The module an import names (``from kreassign.x import name`` imports the module kreassign.x)."""
    parts = target.split(".")
    while len(parts) > 1 and not _is_module(".".join(parts)):
        parts = parts[:-1]
    return ".".join(parts)


def _cycles() -> list[str]:
    """One line per import cycle between modules (a strongly connected set of modules, Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for path in MODULES:
        module = _module_name(path)
        graph.setdefault(module, set())
        for line, target in _imports(path):
            if target.split(".")[0] == "kreassign" and (imported := _resolved(target)) != module:
                graph[module].add(imported)
                where.setdefault((module, imported), f"{path.relative_to(PACKAGE_ROOT.parent)}:{line}")
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[str] = []

    def visit(node: str) -> None:  # iterative enough: the import graph is shallow
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                members = set(group)
                edges = sorted(where[(a, b)] for a in members for b in graph[a] & members)
                found.append(f"{edges[0]}: an import cycle between {', '.join(sorted(members))} ({'; '.join(edges)})")

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _violations() -> list[str]:
    """One line per broken rule and import statement."""
    problems: list[str] = []
    for path in MODULES:
        module = _module_name(path)
        for line, target in _imports(path):
            where = f"{path.relative_to(PACKAGE_ROOT.parent)}:{line}"
            root = target.split(".")[0]
            if root == "kreassign":
                here, there = _floor(module), _floor(_resolved(target))
                if here is not None and there is not None and there > here:
                    problems.append(f"{where}: a lower floor imports a higher one ({_resolved(target)})")
                if _within(module, PURE_CORE) and _within(target, IO_PACKAGES):
                    problems.append(f"{where}: the pure core imports no I/O package")
                elif _within(module, ("kreassign.javacompat",)) and not _within(
                    target, ("kreassign.javacompat", "kreassign.errors", "kreassign.gcpause")
                ):
                    problems.append(f"{where}: javacompat imports nothing of kreassign but errors and gcpause")
                if _within(target, ("kreassign.cli",)) and not _within(module, ("kreassign.cli", "kreassign.__main__")):
                    problems.append(f"{where}: only cli/ imports cli/")
                if (
                    _within(target, ("kreassign.cluster",))
                    and not _within(target, ("kreassign.cluster.port",))
                    and not _within(module, ("kreassign.cli", "kreassign.cluster", "kreassign.devcluster"))
                ):
                    problems.append(f"{where}: outside cli/ and cluster/ only the ClusterPort protocol is used")
                if (
                    _within(target, ("kreassign.spark",))
                    and target != "kreassign.spark"
                    and not _within(module, ("kreassign.spark",))
                ):
                    problems.append(f"{where}: the pyspark pipeline is reached through kreassign.spark only")
                continue
            if root in sys.stdlib_module_names or root == "__future__":
                continue
            if _within(module, PURE_CORE):
                problems.append(f"{where}: the pure core imports no third-party package")
            elif root not in THIRD_PARTY_HOMES:
                problems.append(f"{where}: a third-party package with no declared home in the layering rules")
            elif not _within(module, THIRD_PARTY_HOMES[root]):
                problems.append(f"{where}: only {', '.join(THIRD_PARTY_HOMES[root])} may import {root}")
    return list(dict.fromkeys(problems + _cycles()))


def test_every_module_is_read():
    assert len(MODULES) > 40
    assert {_module_name(p) for p in MODULES} >= {"kreassign.model", "kreassign.cli.entry", "kreassign.planning"}


def test_layering_rules_hold():
    assert _violations() == []


def test_every_module_has_a_floor():
    assert [m for m in map(_module_name, MODULES) if _floor(m) is None] == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("planning/x.py", "import rich\n", "the pure core imports no third-party package"),
        ("planning/x.py", "def f():\n    from kreassign.cluster import port\n", "the pure core imports no I/O package"),
        ("execution/x.py", "from kreassign.cluster.kafka import KafkaCluster\n", "only the ClusterPort protocol"),
        ("actions/x.py", "from kreassign.cli import app\n", "only cli/ imports cli/"),
        ("actions/x.py", "import pyspark\n", "only kreassign.spark may import pyspark"),
        ("spark/x.py", "import numpy\n", "no declared home"),
        ("actions/x.py", "from ..spark import pipeline\n", "through kreassign.spark only"),
        ("javacompat/x.py", "from kreassign.model import TopicPartition\n", "javacompat imports nothing"),
        ("execution/x.py", "def f():\n    from kreassign.actions import traffic\n", "a lower floor imports a higher"),
        ("actions/x.py", "from kreassign.actions import y\n", "an import cycle between"),
        ("actions/y.py", "def f():\n    from kreassign.actions.x import g\n", "an import cycle between"),
    ],
    ids=[
        "third-party-in-core",
        "io-in-core",
        "adapter-in-executor",
        "cli-in-actions",
        "pyspark",
        "unknown",
        "relative",
        "javacompat-on-model",
        "lazy-upward",
        "cycle",
        "lazy-cycle",
    ],
)
def test_rules_catch_violations(tmp_path, monkeypatch, module, source, expected):
    """Each rule fires on a module that breaks it (a copy of the tree plus one bad file)."""
    import shutil

    fake_root = tmp_path / "kreassign"
    shutil.copytree(PACKAGE_ROOT, fake_root, ignore=shutil.ignore_patterns("__pycache__"))
    bad = fake_root / module
    bad.write_text(source, encoding="utf-8")
    partner = {"actions/x.py": ("actions/y.py", "def g():\n    from kreassign.actions import x\n"),
               "actions/y.py": ("actions/x.py", "from kreassign.actions import y\n")}.get(module)  # fmt: skip
    if partner and "cycle" in expected:  # the other half of the loop
        (fake_root / partner[0]).write_text(partner[1], encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_ROOT", fake_root)
    monkeypatch.setattr(sys.modules[__name__], "MODULES", sorted(fake_root.rglob("*.py")))
    problems = _violations()
    assert problems and all(f"kreassign/{module}:" in problem for problem in problems), problems
    assert any(expected in problem for problem in problems), problems


MODULE_LINE_LIMIT = 900


def test_no_module_is_over_the_line_limit():
    """A module over 900 lines holds several concerns: split it by concern (the house rule of the project)."""
    over = {
        str(path.relative_to(PACKAGE_ROOT.parent)): lines
        for path in MODULES
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINE_LIMIT
    }
    assert over == {}
