"""A repository's Python files read with ``ast``, for the analysis hooks: each file's module
name, its ``ast`` (parsed once for every hook that asks), what its imports bind, and which of
the repository's module-qualified names an imported dotted name is.

Repository-wide facts name module-level functions and classes by ``<module>.<name>``, where
``<module>`` is the file's path from the repository root, dotted (``models/benchmark.py`` ->
``models.benchmark``); a file that imports one spells it as its import says (``import
benchmark``, ``from .models import benchmark``), which :func:`nearest_name` maps back.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import PurePosixPath
from typing import AbstractSet, Optional


def module_parts(path: str) -> tuple[str, ...]:
    """``("models", "benchmark")`` for ``models/benchmark.py``; a package is its folder."""
    parts = [part for part in PurePosixPath(path.replace("\\", "/")).with_suffix("").parts
             if part not in ("/", "")]
    return tuple(parts[:-1] if parts and parts[-1] == "__init__" else parts)


@lru_cache(maxsize=2)
def module_ast(text: str) -> Optional[ast.Module]:
    """The module's ``ast``, or None when it is not Python 3 (no facts, no cross-file calls)
    or nests deeper than CPython turns into ``ast`` objects (an expression of thousands of
    terms, which fissix parses). Kept for the next caller: each analysis hook of a file
    parses the same text (do not edit the tree)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def imported_names(tree: ast.Module, path: str) -> dict[str, str]:
    """Local name -> the dotted name it is imported as, anywhere in the module (relative
    imports resolved from ``path``); a name imported as two different things is left out."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                found.setdefault(local, set()).add(alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom):
            base = _from_module(node, path)
            for alias in node.names:
                if base is not None and alias.name != "*":
                    found.setdefault(alias.asname or alias.name, set()).add(f"{base}.{alias.name}")
    return {local: targets.pop() for local, targets in found.items() if len(targets) == 1}


def _from_module(node: ast.ImportFrom, path: str) -> Optional[str]:
    """The absolute module of ``from <module> import ...`` (``.``-relative ones from ``path``)."""
    if not node.level:
        return node.module
    package = module_parts(path)
    if not PurePosixPath(path).name.startswith("__init__."):
        package = package[:-1]
    if node.level - 1 > len(package):
        return None
    base = list(package[: len(package) - (node.level - 1)])
    return ".".join(base + ([node.module] if node.module else [])) or None


def ast_dotted_name(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for an ``ast`` name or attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def nearest_name(target: str, package: tuple[str, ...], known: AbstractSet[str]) -> Optional[str]:
    """The module-qualified name among ``known`` that ``target`` (a dotted name as imported by
    a file of ``package``) is: the nearest folder first, as Python finds a script's
    neighbours, then the single one of the repository whose name ends so; else None."""
    candidates = [".".join((*package[:depth], target)) for depth in range(len(package), -1, -1)]
    found = next((name for name in candidates if name in known), None)
    if found is None:
        ending = [name for name in known if name.endswith("." + target)]
        found = ending[0] if len(ending) == 1 else None
    return found
