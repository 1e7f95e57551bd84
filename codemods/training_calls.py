"""Which training code of its import closure a script calls: names, not imports (NPU061).

A ``__main__`` script is an entry of a TF 2.x program when it *runs* training code, not when some
module it imports holds some (``spec/rules-tf2.md`` NPU061: scripts that train nothing, such as
data conversion, export, validation or doc generation, are reported). A tool that imports its
repository's package (``import tensorflow_gnn as tfgnn`` to validate a schema) reaches every
module the package's ``__init__`` imports, the package's trainer among them, and calls none of
it: with an NPU init it could not run where there is no NPU (a Dataflow worker).

The project has no call graph across files; names stand in for one. Each Python file gives one
:data:`CALLS_FACT` (:func:`calls_fact`): the names of its module-level functions and classes that
train when called (``module_training.training_definitions``), and for each of them, for its
module-level code (group ``""``) and for each name an import binds (``=name``: a package's
re-export, ``from .trainer import fit as run_training``), the identifiers it uses through an
import, each after the name of the package it comes from (``runner.run(...)`` after ``from
tensorflow_gnn import runner``: ``tensorflow_gnn.runner``, ``tensorflow_gnn.run``; ``fit(...)``
after ``from pkg.train import fit``: ``pkg.train``, ``pkg.fit``). The standard library's,
TensorFlow's and NumPy's names are left out (no repository training there).

:func:`calls_training` answers for one entry and the files it reaches: the training names of
those files grow, to a fixed point, by every function, class or re-export that uses one; the
entry calls training when its own code uses one of them through a package of the repository
(absl's ``app.run`` is no ``run`` of the repository's). It over-approximates (a name is a name:
a ``train`` function anywhere in the closure matches every use of the repository's ``.train``),
so a real entry keeps its init; a star import (``from lib import *``: bare names of unknown
origin) or a file of the closure that could not be read counts as calling everything, as
before. A module whose module-level code trains when it is imported is the entry's training
without any call (``tf_programs``).
"""

from __future__ import annotations

import ast
import re
import sys
from bisect import bisect_left
from typing import AbstractSet, Iterable, Mapping, Optional, Sequence

from .module_training import may_train_when_run, training_definitions
from .modules import child_fields, module_ast, module_index, statements
from .names import STAR, ast_import_bindings

CALLS_FACT = "tf2-calls:"
#: A group holding a star import's use: the file may call anything it reached.
STAR_GROUP = "*"
#: Groups of names a module-level import binds (re-exports), marked in the fact.
BINDING = "="
#: Libraries whose names are no repository's training: left out of the uses (the facts' size).
_LEFT_OUT = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset({
    "tensorflow", "tensorflow_estimator", "keras", "numpy", "npu_device", "npu_bridge", "__future__",
    "absl", "six", "scipy", "sklearn", "pandas", "matplotlib", "PIL", "cv2", "tqdm", "h5py", "yaml",
    "tensorflow_hub", "tensorflow_addons", "horovod", "torch", "gin"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Module-level blocks whose functions and classes are the module's own (``with scope(): def``).
_BLOCKS = (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.For, ast.AsyncFor, ast.While,
           getattr(ast, "TryStar", ast.Try), ast.ExceptHandler)


def calls_fact(path: str, text: str, tree: Optional[ast.Module] = None, indexed: bool = False) -> Optional[str]:
    """The :data:`CALLS_FACT` of the file at ``path`` (``tree``: its parse, when at hand), or
    None when it cannot be parsed (:func:`calls_training` then takes it for calling anything).
    ``indexed``: the tree's :func:`~.modules.module_index` is at hand (a TF file's, which its
    signals read), so its imports are taken from it, not from a walk of the statements."""
    tree = tree if tree is not None else module_ast(text)
    if tree is None:
        return None
    # No training call spelled anywhere: no function of it trains (the walk spared).
    if may_train_when_run(text):
        trained = training_definitions(tree)
        imports = module_index(tree).imports()  # the index that reading built: no walk
    else:
        trained, imports = frozenset(), module_index(tree).imports() if indexed else _module_imports(tree)
    groups = _uses(tree, path, text, imports)
    written = " ".join(f"{group}:{','.join(sorted(names))}" for group, names in sorted(groups.items()))
    return f"{CALLS_FACT}{path}|{','.join(sorted(trained))}|{written}"


def read_calls(facts: Iterable[str]) -> dict[str, tuple[frozenset[str], dict[str, frozenset[str]]]]:
    """Path -> (training names, uses by group) of the :data:`CALLS_FACT` among ``facts``."""
    found = {}
    for fact in facts:
        if fact.startswith(CALLS_FACT):
            path, trained, written = fact[len(CALLS_FACT):].rsplit("|", 2)
            groups = {}
            for item in filter(None, written.split(" ")):
                group, _, names = item.rpartition(":")
                groups[group] = frozenset(filter(None, names.split(",")))
            found[path] = (frozenset(filter(None, trained.split(","))), groups)
    return found


def calls_training(entry: str, reached: Iterable[str],
                   calls: Mapping[str, tuple[frozenset[str], dict[str, frozenset[str]]]],
                   repository: AbstractSet[str]) -> bool:
    """Does the file ``entry`` use training code of the files it ``reached`` (its import
    closure, itself included), by the names they define (see the module's docstring)? Only
    uses through a package whose name is one of ``repository`` (the names its modules' dotted
    names are made of) count: absl's ``app.run`` is no repository's ``run``. A file of the
    closure with no fact (not parsed) counts as calling everything."""
    paths = sorted(set(reached) | {entry})
    if any(path not in calls or STAR_GROUP in calls[path][1] for path in paths):
        return True
    names = set().union(*(calls[path][0] for path in paths))

    def hits(used: frozenset[str]) -> bool:
        return any(rest in names and root in repository
                   for root, _, rest in (item.partition(".") for item in used))

    grown = bool(names)
    while grown:
        grown = False
        for path in paths:
            for group, used in calls[path][1].items():
                name = group[len(BINDING):] if group.startswith(BINDING) else group
                if name and name not in names and hits(used):
                    names.add(name)
                    grown = True
    return any(hits(used) for group, used in calls[entry][1].items() if not group.startswith(BINDING))


def _uses(tree: ast.Module, path: str, text: str,
          imports: Sequence["ast.Import | ast.ImportFrom"]) -> dict[str, set[str]]:
    """Group -> the identifiers its code uses through ``imports`` (:func:`_module_imports`;
    see the module's docstring); ``text`` is the source of ``tree``: code on no line that
    spells an imported name is not walked (it uses none)."""
    bound: dict[str, list[str]] = {}
    groups: dict[str, set[str]] = {}
    for node in imports:
        for local, target in ast_import_bindings(node, path):
            root = target.partition(".")[0]
            if not root or root in _LEFT_OUT:
                continue
            if local == STAR:
                groups[STAR_GROUP] = set()
                continue
            parts = [f"{root}.{part}" for part in target.split(".")[1:]]
            bound.setdefault(local, []).extend(parts or [root + "."])
            if parts:
                groups.setdefault(BINDING + local, set()).update(parts)
    if not bound:
        return groups
    lines = _lines_naming(text, bound)
    for group, top in _top_nodes(tree):
        if lines is not None and not _spans_one_of(top, lines):
            continue
        used = _used(top, bound, lines)
        if used:
            groups.setdefault(group, set()).update(used)
    return groups


def _lines_naming(text: str, names: Iterable[str]) -> Optional[list[int]]:
    """The numbers (1-based, ascending) of the lines of ``text`` that spell one of ``names``
    or hold a character other than ASCII (an identifier may be spelled so: Python folds it,
    NFKC); None when ``text`` has a carriage return (``ast`` may count its lines otherwise)."""
    if "\r" in text:
        return None
    places = []
    for name in names:  # ``str.find``: a tenth of the cost of one pattern of every name
        at = text.find(name)
        while at >= 0:
            places.append(at)
            at = text.find(name, at + 1)
    if not text.isascii():
        places += [match.start() for match in _NOT_ASCII.finditer(text)]
    places.sort()
    found: list[int] = []
    line, counted = 1, 0
    for at in places:
        line += text.count("\n", counted, at)
        counted = at
        if not found or found[-1] != line:
            found.append(line)
    return found


_NOT_ASCII = re.compile("[^\x00-\x7f]")


def _spans_one_of(node: ast.AST, lines: list[int]) -> bool:
    """Do the lines of ``node`` (a statement or an expression; its decorators included)
    hold one of ``lines`` (ascending)?"""
    if not isinstance(node, (ast.stmt, ast.expr)):
        return True  # no place known
    first = min([node.lineno, *(decorator.lineno for decorator in getattr(node, "decorator_list", ()))])
    at = bisect_left(lines, first)
    return at < len(lines) and lines[at] <= (node.end_lineno or node.lineno)


def _module_imports(tree: ast.Module) -> list["ast.Import | ast.ImportFrom"]:
    """Every import of the module (function-level ones too: a name they bind is used there),
    in source order (as ``ModuleIndex.imports`` gives them)."""
    return [node for node in statements(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def _top_nodes(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(group, node) of the module: each module-level function or class (also in module-level
    ``if``/``with``/``try`` blocks) is its own group, every other statement the module's ``""``."""
    found: list[tuple[str, ast.AST]] = []
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFINITIONS):
            found.append((node.name, node))
        elif isinstance(node, _BLOCKS):
            children = list(ast.iter_child_nodes(node))
            stack.extend(reversed([child for child in children if isinstance(child, (ast.stmt, ast.excepthandler))]))
            found.extend(("", child) for child in children if isinstance(child, ast.expr))
        else:
            found.append(("", node))
    return found


def _used(node: ast.AST, bound: Mapping[str, list[str]], lines: Optional[list[int]] = None) -> set[str]:
    """The identifiers ``node`` uses through the imported names ``bound`` (name -> the parts of
    its target after the package, each as ``<package>.<part>``; ``<package>.`` for none): the
    target's parts and the attributes read on it, each after its package's name. ``lines``
    (:func:`_lines_naming`; None: every line may): a statement on none of them is not walked
    (it uses none), as :func:`_uses` spares a module's."""
    used: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Attribute):
            chain = []
            value: ast.expr = item
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                parts = bound[value.id]
                root = parts[0].partition(".")[0]
                used.update(part for part in parts if not part.endswith("."))
                used.update(f"{root}.{attr}" for attr in chain)
                continue
        elif isinstance(item, ast.Name) and item.id in bound:
            used.update(part for part in bound[item.id] if not part.endswith("."))
            continue
        for name in child_fields(type(item)):
            child = getattr(item, name, None)
            if type(child) is list:
                if lines is not None and child and isinstance(child[0], ast.stmt):  # a block
                    stack.extend(value for value in child if _spans_one_of(value, lines))
                else:
                    stack.extend(value for value in child if isinstance(value, ast.AST))
            elif isinstance(child, ast.AST):
                stack.append(child)
    return used
