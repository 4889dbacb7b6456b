"""docs/broker-matrix.md against tests/integration/test_broker_matrix.py: every cell of the release tables
names the test that backs it (a key of the "Tests" table), that test exists and runs on that release, and
every (test, release) the module runs has its cell. Read with the ast module: nothing of the matrix starts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "broker-matrix.md"
MODULE = ROOT / "tests" / "integration" / "test_broker_matrix.py"

ROW = re.compile(r"^\| (\d+\.\d+\.\d+) \((ZooKeeper|KRaft)\) \|(.*)\|$")
KEY_ROW = re.compile(r"^\| ([A-Z]) \| `(test_\w+)` \|")
CELL_KEY = re.compile(r"\(([A-Z])\)\s*$")


def releases_by_test() -> dict[str, set[str]]:
    """Each matrix test and the release ids (``2.4.1-zookeeper``) it runs on."""
    tree = ast.parse(MODULE.read_text())
    lists: dict[str, list[tuple[str, str]]] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in ("RELEASES", "HEAVY", "TIERED"):
            lists[target.id] = ast.literal_eval(node.value)
    tests: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            chosen = "RELEASES"
            for decorator in node.decorator_list:
                parametrize = (
                    isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize"
                )
                if parametrize and ast.literal_eval(decorator.args[0]) == "matrix_cluster":
                    chosen = ast.unparse(decorator.args[1])
            tests[node.name] = {f"{version}-{mode}" for version, mode in lists[chosen]}
    return tests


def test_every_cell_of_the_release_tables_names_a_test_that_runs_on_that_release():
    tests = releases_by_test()
    keys: dict[str, str] = {}
    covered: set[tuple[str, str]] = set()
    for line in DOC.read_text().splitlines():
        if match := KEY_ROW.match(line):
            keys[match.group(1)] = match.group(2)
            continue
        match = ROW.match(line)
        if not match:
            continue
        release = f"{match.group(1)}-{match.group(2).lower()}"
        for cell in match.group(3).split("|"):
            key = CELL_KEY.search(cell.strip())
            assert key, f"{release}: the cell {cell.strip()!r} names no test"
            test = keys.get(key.group(1))
            assert test in tests, f"{release}: ({key.group(1)}) is not a test of the matrix"
            assert release in tests[test], f"{release}: {test} does not run on this release"
            covered.add((test, release))
    assert keys, "no Tests table"
    missing = {(test, release) for test, releases in tests.items() for release in releases} - covered
    assert not missing, f"runs without a cell in docs/broker-matrix.md: {sorted(missing)}"
