"""The architecture's invariants, checked on the source: no import cycle between the package's
modules, the orchestrator's sub-packages importing only downwards, and no function longer than
50 lines where the code lives."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
#: Import name of each folder, as pyproject's package-dir maps them.
PACKAGES = {"npu_codemod": ROOT / "src" / "npu_codemod", "npu_codemod.codemods": ROOT / "codemods",
            "npu_codemod.plugins": ROOT / "plugins", "npu_codemod.orchestrator": ROOT / "orchestrator",
            "npu_codemod.reports": ROOT / "reports"}
MAX_LINES = 50


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [part for part in path.relative_to(folder).with_suffix("").parts
                     if part != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports (anywhere in the file, functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {target for target in targets if target in known and target != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycle() -> None:
    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert cycles(graph) == []


def test_the_cycle_check_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: The orchestrator's layers, lowest first: a module may import its own layer's packages and
#: lower ones only. ``git`` takes plain values and returns records; ``prs`` and ``verify`` build
#: on it; ``batch`` runs repositories through all three; ``commands`` and ``cli`` on top. The
#: modules at the orchestrator's root (records, redaction, the repo list, the loaded rules) are shared.
LAYERS = {"git": 0, "prs": 1, "verify": 1, "batch": 2, "commands": 3, "cli": 4}
ORCHESTRATOR = "npu_codemod.orchestrator."


def layer(module: str) -> "int | None":
    if not module.startswith(ORCHESTRATOR):
        return None
    return LAYERS.get(module[len(ORCHESTRATOR):].split(".")[0])


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for every import of a higher layer's module."""
    found = []
    for importer, targets in sorted(graph.items()):
        own = layer(importer)
        for target in sorted(targets):
            other = layer(target)
            if own is not None and other is not None and other > own:
                found.append(f"{importer} -> {target}")
    return found


def test_the_orchestrators_packages_import_only_downwards() -> None:
    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert upward_imports(graph) == []


def test_the_layer_check_can_fail() -> None:
    graph = {f"{ORCHESTRATOR}git.branches": {f"{ORCHESTRATOR}batch.jobs", f"{ORCHESTRATOR}results"},
             f"{ORCHESTRATOR}prs.publish": {f"{ORCHESTRATOR}verify.records", f"{ORCHESTRATOR}git.repository"}}
    assert upward_imports(graph) == [f"{ORCHESTRATOR}git.branches -> {ORCHESTRATOR}batch.jobs"]


def long_functions(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_LINES:
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)"


def test_no_function_is_longer_than_50_lines() -> None:
    folders = ("codemods", "orchestrator", "plugins", "reports")
    assert [where for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))
            for where in long_functions(path)] == []
