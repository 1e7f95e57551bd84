"""What the distributed pack needs to know of the repository's other files, gathered with
``ast`` before any rewrite (``npu_codemod_analyze_file``):

- ``horovod-kept:<module>|<apis>|<imports>``: the file uses Horovod names that need
  ``hvd.init()`` (``<apis>``, as Ascend's list spells them; ``hvd.rank~NPU022`` for one a
  rule of the pack migrates, which stays only when that rule is not enabled), and imports
  ``<imports>`` (dotted, as written): NPU021 keeps the ``hvd.init()`` of a module such a file
  imports from, or that imports from it;
- ``horovod-graph:<path>|<flags>|<imports>`` (``horovod_graph``): every file's imports that
  may be modules of the repository, for the programs NPU021 follows through any number of
  imports;
- ``horovod-passed:<package>|<callee>|<parameter>`` (``horovod_params``): a call passes the
  Horovod module on, to code that uses it through a parameter;
- ``imports-from:<package>|<module>.<name>``: a file of ``<package>`` imports ``<name>`` from
  ``<module>`` (not from TensorFlow, Horovod, NumPy or the standard library): NPU025 never
  removes an import whose name another module imports from its file (that import is the
  module's public API).

The Horovod uses the pack migrates (the topology calls; the optimizer, hook and callback given
only the optimizer or the root rank) are marked with their rule, except in a file that does
not import TensorFlow, which keeps them all (npu-codemod rewrites TensorFlow files only).
"""

from __future__ import annotations

import ast
import sys
from typing import AbstractSet, Iterator, Optional

from npu_codemod.api import (
    FileContext,
)
from npu_codemod.api._toolkit import (
    HOROVOD_MODULES,
    STAR,
    ModuleIndex,
    ast_dotted_name,
    ast_import_bindings,
    list_name,
    module_ast,
    module_index,
    module_package,
    module_parts,
)

from .horovod import MPI_OPS, member, needs_init
from .horovod_graph import Graph, graph_fact, link, unknown_link
from .horovod_params import passed_facts

KEPT = "horovod-kept:"
IMPORTED = "imports-from:"
#: The Horovod names the pack rewrites whatever their arguments.
TOPOLOGY = frozenset({"rank", "local_rank", "size", "local_size"})
TOPOLOGY_RULE = "NPU022"
#: The ones it rewrites when given one argument (the optimizer, the root rank), and the rule.
ONE_ARGUMENT = {"DistributedOptimizer": "NPU023", "BroadcastGlobalVariablesHook": "NPU024",
                "callbacks.BroadcastGlobalVariablesCallback": "NPU024"}
#: Between a use and the rule that migrates it, in a ``horovod-kept:`` fact.
MIGRATED_BY = "~"
#: Packages no module of the repository imports its own names from (a repository does not
#: define them): their imports are not recorded.
NOT_RECORDED = frozenset({"tensorflow", "tensorflow_estimator", "horovod", "numpy",
                          *getattr(sys, "stdlib_module_names", ())})


def horovod_facts(path: str, text: str) -> frozenset[str]:
    """The ``horovod-kept:`` and ``imports-from:`` facts of one file (see the module docstring)."""
    tree = module_ast(text) if "import" in text else None
    if tree is None:
        return frozenset()
    index = module_index(tree)
    imports = index.imported_names(path)
    package = ".".join(module_package(path))
    facts = {f"{IMPORTED}{package}|{target}" for target in _from_imports(index, path)}
    kept = sorted(set(_kept(index, imports))) if "horovod" in text else []
    inits = "horovod" in text and any(member(qualified) == "init"
                                      for _, qualified in _horovod_uses(index, imports))
    facts.add(graph_fact(path, index, (target for target in imports.values()
                                       if target.split(".")[0] not in NOT_RECORDED), inits))
    if "horovod" in text:
        facts.update(passed_facts(path, index, imports))
    if kept:
        module = ".".join(module_parts(path))
        facts.add(f"{KEPT}{module}|{','.join(kept)}|{','.join(sorted(set(imports.values())))}")
    return frozenset(facts)


def linked_keeping(ctx: FileContext) -> list[tuple[str, str, str]]:
    """(module, apis, how it is linked) of each other file of the repository that keeps
    Horovod uses that need ``hvd.init()`` and runs in a program with this one (it imports
    from this file or this file from it, through any number of imports, or a third file
    imports from both: ``horovod_graph``), or may (what runs it is not known)."""
    own = ".".join(module_parts(ctx.path))
    graph = Graph(ctx.facts)
    found = []
    for fact in sorted(ctx.facts):
        if not fact.startswith(KEPT):
            continue
        module, apis, imported = fact[len(KEPT):].split("|")
        kept = kept_by(apis, ctx.enabled_rules)
        if module == own or not kept:
            continue
        how = _one_hop(ctx, own, module, imported) or link(graph, own, module) \
            or unknown_link(graph, own, module)
        if how:
            found.append((module, ", ".join(kept), how))
    return found


def _one_hop(ctx: FileContext, own: str, module: str, imported: str) -> str:
    """How this file and ``module`` (which imports ``imported``) are linked by one import."""
    package = tuple(module.split("."))[:-1]
    if any(_names_module(target, package, own) for target in imported.split(",") if target):
        return "it imports from this file"
    tree = module_ast(ctx.original)
    targets = set(module_index(tree).imported_names(ctx.path).values()) if tree else set()
    if any(_names_module(target, module_package(ctx.path), module) for target in targets):
        return "this file imports from it"
    return ""


def imported_elsewhere(ctx: FileContext, name: str) -> bool:
    """Does another file of the repository import ``name`` from this file's module?"""
    own = ".".join(module_parts(ctx.path))
    for fact in ctx.facts:
        if fact.startswith(IMPORTED):
            package, _, target = fact[len(IMPORTED):].partition("|")
            module, _, imported = target.rpartition(".")
            if imported == name and _names_module(module, tuple(package.split(".")) if package
                                                  else (), own, exact=True):
                return True
    return False


def _names_module(target: str, package: tuple[str, ...], module: str, exact: bool = False) -> bool:
    """Is ``target`` (imported from ``package``) the module ``module``, or (unless ``exact``)
    a name in it? Found as Python finds a script's neighbours: the nearest folder first; or
    by the module's ending (a repository run from another folder)."""
    if not module or not target:
        return False
    for depth in range(len(package), -1, -1):
        candidate = ".".join((*package[:depth], target))
        if candidate == module or not exact and candidate.startswith(module + "."):
            return True
    return module.endswith("." + target) or not exact and any(
        module.endswith("." + target[:cut]) for cut in _dots(target))


def _dots(target: str) -> Iterator[int]:
    return (index for index, char in enumerate(target) if char == ".")


def _from_imports(index: ModuleIndex, path: str) -> Iterator[str]:
    """``<module>.<name>`` of each ``from <module> import <name>`` of the file (relative ones
    resolved), not from the packages of :data:`NOT_RECORDED`."""
    for node in index.nodes(ast.ImportFrom):
        yield from (target for name, target in ast_import_bindings(node, path)
                    if name != STAR and target.split(".")[0] not in NOT_RECORDED)


def _kept(index: ModuleIndex, imports: dict[str, str]) -> Iterator[str]:
    """The Horovod uses of the file that need ``hvd.init()``, as Ascend's list names them; one
    the pack migrates is followed by ``~<rule id>`` (it stays when that rule is not enabled)."""
    tensorflow = any(target.split(".")[0] == "tensorflow" for target in imports.values())
    calls = {id(node.func): node for node in index.nodes(ast.Call)}
    for node, qualified in _horovod_uses(index, imports):
        if not needs_init(qualified):
            continue
        api, rule = list_name(qualified) or qualified, _migrated_by(member(qualified))
        if tensorflow and rule and (rule == TOPOLOGY_RULE or _one_argument(calls.get(id(node)))):
            yield f"{api}{MIGRATED_BY}{rule}"
        else:
            yield api


def _migrated_by(name: str) -> str:
    """The rule that migrates the Horovod name ``name`` (under its module), or ''."""
    return TOPOLOGY_RULE if name in TOPOLOGY else ONE_ARGUMENT.get(name, "")


def kept_by(apis: str, enabled: AbstractSet[str]) -> list[str]:
    """The uses of a ``horovod-kept:`` fact's ``apis`` that still need ``hvd.init()`` after a
    run with the rules ``enabled``."""
    kept = []
    for entry in apis.split(","):
        api, _, rule = entry.partition(MIGRATED_BY)
        if api and (not rule or rule not in enabled) and api not in kept:
            kept.append(api)
    return kept


def _one_argument(call: Optional[ast.Call]) -> bool:
    if call is None:
        return False
    given = [*call.args, *call.keywords]
    return len(given) == 1 and not isinstance(given[0], ast.Starred) \
        and getattr(given[0], "arg", "") is not None


def _horovod_uses(index: ModuleIndex, imports: dict[str, str]) -> Iterator[tuple[ast.AST, str]]:
    """(node, qualified name) of each read of a Horovod name for TensorFlow: the longest
    dotted name (``hvd.elastic.run``), not its parts."""
    inner = {id(node.value) for node in index.nodes(ast.Attribute)}
    for node in index.nodes(ast.Attribute, ast.Name):
        if id(node) in inner or not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        dotted = ast_dotted_name(node)
        head, _, rest = (dotted or "").partition(".")
        target = imports.get(head)
        if target is None:
            continue
        qualified = f"{target}.{rest}" if rest else target
        if any(qualified == module or qualified.startswith(module + ".")
               for module in (*HOROVOD_MODULES, MPI_OPS)):
            yield node, qualified
