"""The tests' own layout: helpers live once, in ``tests/support/`` (or ``npu_codemod.testing``),
and no test module imports another test module."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: Helpers once defined in many test modules, each a little differently: now in support/.
SHARED = ("migrated", "reported", "messages", "with_remote", "_record")


def top_level_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def module_paths() -> list[Path]:
    return sorted(TESTS.glob("test_*.py"))


def test_no_test_module_imports_another() -> None:
    modules = {path.stem for path in module_paths()}
    imports = {path.name: sorted(imported_modules(path) & modules) for path in module_paths()}
    assert {name: found for name, found in imports.items() if found} == {}


def test_the_shared_helpers_are_defined_in_no_test_module() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in module_paths():
        for name in top_level_functions(path) & set(SHARED):
            where[name].append(path.name)
    assert dict(where) == {}
