"""kreassign.javacompat is standard library only and imports nothing of kreassign but its errors."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import kreassign.javacompat

PACKAGE = Path(kreassign.javacompat.__file__).parent
ALLOWED_OWN = ("kreassign.errors", "kreassign.javacompat")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_javacompat_imports_only_the_standard_library_and_kreassign_errors() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 5
    wrong = [
        f"{path.name}: {name}"
        for path in modules
        for name in _imports(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not any(name == own or name.startswith(own + ".") for own in ALLOWED_OWN)
    ]
    assert wrong == []
