"""Which files of the repository run in one program with a file that calls ``hvd.init()``:
NPU021 keeps that init while a Horovod use that needs it is left anywhere such a program
reaches, whatever the number of imports in between (``main -> utils.setup -> utils.model_fn``).

Built from one ``horovod-graph:<module>|<flags>|<imports>`` fact per TensorFlow file
(:func:`graph_fact`; flags: ``m`` a ``__main__`` block, ``i`` a call of ``hvd.init``, ``d`` a
module loaded at run time: ``importlib.import_module``, ``runpy.run_path``, ``__import__``...,
which imports what the analysis cannot name, as an import of no analysed file does). A
program is what a file that imports the init's file (transitively, or the file itself)
reaches: a use in it is linked. The analysis reads TensorFlow files only, so a link through
a file without TensorFlow (``main -> runner -> model``, ``runner`` importing no TensorFlow)
is not seen. When what runs a file that keeps uses is not known (nothing the analysis read
imports it or a module that imports it, and it is no script that starts Horovod itself) and
the init's programs are not known in full either (one of their files imports a module that
is none of the analysed files, or what runs the init's file is not known), the init stays:
it is never removed when unsure. A file that keeps uses but that nothing imports, beside a
script whose imports are all known, is another program's (or dead code): it keeps nothing.
"""

from __future__ import annotations

import ast
from typing import Iterable, Mapping, Optional

from npu_codemod.api._toolkit import (
    KnownNames,
    ModuleIndex,
    imported_module,
    module_package,
    module_parts,
    reached_from,
)

GRAPH = "horovod-graph:"
#: The functions that load a module at run time (by their last name: ``importlib.import_module``,
#: ``runpy.run_path``, ``imp.load_source``, ``spec.loader.exec_module``...), and the built-ins.
LOADERS = frozenset({"import_module", "run_path", "run_module", "load_source", "load_module",
                     "exec_module", "spec_from_file_location"})
BUILTIN_LOADERS = frozenset({"__import__", "exec", "execfile"})


def graph_fact(path: str, index: ModuleIndex, targets: Iterable[str], inits: bool) -> str:
    """The :data:`GRAPH` fact of the file ``path`` (its ``index``): the repository modules it
    may import (``targets``, dotted as imported) and its flags."""
    main = any(_is_main(node.test) for node in index.nodes(ast.If))
    loads = any(_loads_module(node.func) for node in index.nodes(ast.Call))
    flags = ("m" if main else "") + ("i" if inits else "") + ("d" if loads else "")
    return f"{GRAPH}{path}|{flags}|{','.join(sorted(set(targets)))}"


def _loads_module(function: ast.expr) -> bool:
    """Is ``function`` (what a call calls) one that loads a module at run time?"""
    if isinstance(function, ast.Name):
        return function.id in BUILTIN_LOADERS
    return isinstance(function, ast.Attribute) and function.attr in LOADERS


def _is_main(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides) \
        and any(isinstance(side, ast.Constant) and side.value == "__main__" for side in sides)


class Graph:
    """The modules of the graph facts, their imports resolved to one another (an import of
    ``a.b.c`` also runs the packages ``a`` and ``a.b`` when they are files of their own)."""

    def __init__(self, facts: Iterable[str]) -> None:
        self.flags: dict[str, str] = {}
        raw: dict[str, tuple[tuple[str, ...], list[str]]] = {}
        for fact in facts:
            if fact.startswith(GRAPH):
                path, flags, imports = fact[len(GRAPH):].rsplit("|", 2)
                module = ".".join(module_parts(path))
                self.flags[module] = flags
                raw[module] = (module_package(path), list(filter(None, imports.split(","))))
        known = set(self.flags)
        names = KnownNames(known)  # once: every import of every module is looked up in it
        self.edges: dict[str, list[str]] = {}
        #: Module -> whether it imports a name that is none of the analysed modules (or loads
        #: modules at run time).
        self.unresolved: dict[str, bool] = {}
        self.importers: dict[str, list[str]] = {module: [] for module in known}
        for module, (package, targets) in raw.items():
            resolved = [_resolved(target, package, known, names) for target in targets]
            self.unresolved[module] = not all(resolved) or "d" in self.flags[module]
            found = [name for names in resolved for name in names]
            self.edges[module] = [name for name in dict.fromkeys(found) if name != module]
            for name in self.edges[module]:
                self.importers[name].append(module)

    def __contains__(self, module: str) -> bool:
        return module in self.flags

    def reached(self, start: str) -> dict[str, Optional[str]]:
        """What ``start`` imports, transitively: module -> the module it was reached from
        (as NPU061's programs are followed: ``reached_from``)."""
        return reached_from(start, lambda module: self.edges.get(module, ()))

    def importing(self, start: str) -> dict[str, Optional[str]]:
        """What imports ``start``, transitively (``start`` included), as :meth:`reached`."""
        return reached_from(start, lambda module: self.importers.get(module, ()))

    def unknown_runner(self, module: str) -> bool:
        """Is what runs ``module`` unknown: it, or a module importing it, is imported by no
        file the analysis read and is no script (no ``__main__`` block, no ``hvd.init()``)?"""
        return any(not self.importers.get(name) and not set("mi") & set(self.flags.get(name, ""))
                   for name in self.importing(module))


def link(graph: Graph, own: str, other: str) -> str:
    """How the file ``own`` and the module ``other`` run in one program ('' when they do not
    or it is not known whether; see :func:`unknown_link`)."""
    if own not in graph or other not in graph:
        return ""
    forward = graph.reached(own)
    if other in forward:
        return _through("this file imports from it", forward, other, own)
    backward = graph.reached(other)
    if own in backward:
        return _through("it imports from this file", backward, own, other)
    for importer in sorted(graph.importing(own)):
        if other in graph.reached(importer):
            return f"{importer} imports from both"
    return ""


def unknown_link(graph: Graph, own: str, other: str) -> str:
    """Why it is not known whether ``own`` and ``other`` run in one program (:func:`link`
    found no link), or ''."""
    if not graph.unknown_runner(other):
        return ""
    program = {module for importer in graph.importing(own) for module in graph.reached(importer)}
    if any("d" in graph.flags.get(module, "") for module in program):
        return ("what imports it is not known, and this file's program loads modules at run "
                "time (importlib, runpy...): it may run with this file")
    if graph.unknown_runner(own) or any(graph.unresolved.get(module) for module in program):
        return ("what imports it is not known (a file without TensorFlow?): it may run with "
                "this file")
    return ""


def _through(how: str, parents: Mapping[str, Optional[str]], end: str, start: str) -> str:
    """``how``, and the modules between ``start`` and ``end`` when there are any."""
    between = []
    step = parents[end]
    while step is not None and step != start:
        between.append(step)
        step = parents[step]
    return f"{how} through {' -> '.join(reversed(between))}" if between else how


def _resolved(target: str, package: tuple[str, ...], known: set[str], names: KnownNames) -> list[str]:
    """The modules of ``known`` (``names``: the same, for lookups) that importing ``target``
    from ``package`` runs: the module (``imported_module``, as NPU061's graph resolves an
    import) and the packages above it that are files of their own (``import a.b.c`` runs ``a``
    and ``a.b`` too)."""
    found = imported_module(target, package, names)
    if found is None:
        return []
    parts = found.split(".")
    return [*(name for name in (".".join(parts[:end]) for end in range(1, len(parts))) if name in known), found]
