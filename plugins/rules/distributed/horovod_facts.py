"""What the distributed pack needs to know of the repository's other files, gathered with
``ast`` before any rewrite (``npu_codemod_analyze_file``):

- ``horovod-kept:<module>|<apis>|<imports>``: the file uses Horovod names that need
  ``hvd.init()`` (``<apis>``, as Ascend's list spells them; ``hvd.rank~NPU022`` for one a
  rule of the pack migrates, which stays only when that rule is not enabled), and imports
  ``<imports>`` (dotted, as written): NPU021 keeps the ``hvd.init()`` of a module such a file
  imports from, or that imports from it. Uses through a name a repository module binds to
  Horovod count too (``from common import hvd``, ``common.hvd.allreduce``: ``tf_aliases``):
  the file's facts are gathered before the repository's names are known, so any
  ``hvd``/``horovod`` name imported from a module of the repository is taken for Horovod
  (keeping an init when unsure is right); its migrated uses read
  ``hvd.rank~NPU022@common.hvd``: migrated only when the repository binds ``common.hvd`` to
  Horovod for TensorFlow (else the importer's rules do not read them); a use through a module
  (``common.hvd.rank()``) is read by no rule: it stays, as do the uses through an attribute
  named ``hvd`` and the names of a star import of Horovod (``unfollowed_uses``);
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
import re
import sys
from typing import AbstractSet, Callable, Iterator, Optional

from npu_codemod.api import (
    FileContext,
)
from npu_codemod.api._toolkit import (
    HOROVOD_LIKE,
    HOROVOD_PARAMETER_API,
    STAR,
    ModuleIndex,
    ast_dotted_name,
    ast_import_bindings,
    horovod_alias,
    list_name,
    may_bind_horovod,
    module_ast,
    module_index,
    module_package,
    module_parts,
    passed_facts,
    unfollowed_uses,
)

from .horovod import for_tensorflow, member, needs_init
from .horovod_graph import Graph, graph_fact, link, unknown_link

KEPT = "horovod-kept:"
#: The API reported through a holder of Horovod that needs ``hvd.init()``.
_NEEDING_INIT = HOROVOD_PARAMETER_API - {"init"}
IMPORTED = "imports-from:"
#: The Horovod names the pack rewrites whatever their arguments.
TOPOLOGY = frozenset({"rank", "local_rank", "size", "local_size"})
TOPOLOGY_RULE = "NPU022"
#: The ones it rewrites when given one argument (the optimizer, the root rank), and the rule.
ONE_ARGUMENT = {"DistributedOptimizer": "NPU023", "BroadcastGlobalVariablesHook": "NPU024",
                "callbacks.BroadcastGlobalVariablesCallback": "NPU024"}
#: Between a use and the rule that migrates it, in a ``horovod-kept:`` fact.
MIGRATED_BY = "~"
#: Between that rule and the repository name the use goes through (``@common.hvd``).
THROUGH = "@"
#: The Horovod module a use through a repository name is taken for.
ASSUMED = "horovod.tensorflow"
#: Horovod's Keras callbacks, whose names no other library uses: one read through a name a
#: repository module binds (``cbs.MetricAverageCallback()`` after ``from utils import cbs``,
#: ``utils`` importing Horovod's ``callbacks`` module under a name of its own) is taken for
#: Horovod's (with the module it is assumed in).
CALLBACK_CLASSES = frozenset({"BroadcastGlobalVariablesCallback", "MetricAverageCallback",
                              "LearningRateWarmupCallback", "LearningRateScheduleCallback"})
ASSUMED_KERAS = "horovod.tensorflow.keras"
#: A star import (``from common import *``), as a line of the file spells it.
STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t(]*\*", re.MULTILINE)
#: Horovod's API by the names a star import binds (``allreduce``; not ``init``: it needs none).
STAR_API = frozenset(name for name in HOROVOD_PARAMETER_API if "." not in name) - {"init"}
#: Packages no module of the repository imports its own names from (a repository does not
#: define them): their imports are not recorded.
NOT_RECORDED = frozenset({"tensorflow", "tensorflow_estimator", "horovod", "numpy",
                          *getattr(sys, "stdlib_module_names", ())})
#: Nor star-imported from: those and the NPU's names (``from npu_bridge.npu_init import *``,
#: which a run adds: a rerun reads the file as the first run did).
NOT_STARRED = NOT_RECORDED | {"npu_bridge"}


def horovod_facts(path: str, text: str) -> frozenset[str]:
    """The ``horovod-kept:`` and ``imports-from:`` facts of one file (see the module docstring)."""
    tree = module_ast(text) if "import" in text else None
    if tree is None:
        return frozenset()
    index = module_index(tree)
    imports = index.imported_names(path)
    package = ".".join(module_package(path))
    facts = {f"{IMPORTED}{package}|{target}" for target in _from_imports(index, path)}
    starred = "*" in text and STAR_IMPORT.search(text) is not None
    horovod = may_bind_horovod(text) or any(name in text for name in CALLBACK_CLASSES) \
        or starred  # ``hvd``, ``cbs.X``, a star import's ``allreduce``
    free = _free_api(index, imports) if starred else frozenset()
    stars = _star_sources(index, path, imports, free) if horovod else []
    uses = list(_horovod_uses(index, imports, bool(stars), free)) if horovod else []
    kept = sorted(set(_kept(index, imports, uses)) | _unfollowed_kept(index, path) if horovod else set())
    inits = any(member(qualified) == "init" for _, qualified, _ in uses)
    facts.add(graph_fact(path, index, (target for target in (*imports.values(), *stars)
                                       if target.split(".")[0] not in NOT_RECORDED), inits))
    if "horovod" in text:
        facts.update(passed_facts(path, index, imports))
    if kept:
        module = ".".join(module_parts(path))
        imported = sorted({*imports.values(), *stars})
        facts.add(f"{KEPT}{module}|{','.join(kept)}|{','.join(imported)}")
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
        kept = kept_by(apis, ctx.enabled_rules, _read_as_horovod(ctx, module))
        if module == own or not kept:
            continue
        how = _one_hop(ctx, own, module, imported) or link(graph, own, module) \
            or unknown_link(graph, own, module)
        if how:
            found.append((module, ", ".join(kept), how))
    return found


def _read_as_horovod(ctx: FileContext, module: str) -> Callable[[str], bool]:
    """Whether the rules of the file ``module`` read a name it imports from the repository
    (``common.hvd``) as Horovod for TensorFlow (and so migrate its uses)."""
    package = tuple(module.split("."))[:-1]
    return lambda name: for_tensorflow(horovod_alias(ctx.facts, package, name) or "")


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


def _free_api(index: ModuleIndex, imports: dict[str, str]) -> frozenset[str]:
    """The names of Horovod's API (:data:`STAR_API`) the file reads and binds nowhere itself
    (no import, assignment, ``def``, parameter): a star import of a repository module may pass
    them on from Horovod (``horovod_stars``)."""
    read = {node.id for node in index.nodes(ast.Name) if node.id in STAR_API and isinstance(node.ctx, ast.Load)}
    if not read:
        return frozenset()
    bound = {node.id for node in index.nodes(ast.Name) if not isinstance(node.ctx, ast.Load)}
    bound.update(node.name for node in index.nodes(ast.FunctionDef))
    bound.update(node.name for node in index.nodes(ast.AsyncFunctionDef))
    bound.update(node.name for node in index.nodes(ast.ClassDef))
    bound.update(node.arg for node in index.nodes(ast.arg))
    return frozenset(read - bound - set(imports))


def _star_sources(index: ModuleIndex, path: str, imports: dict[str, str], free: frozenset[str]) -> list[str]:
    """The repository modules the file star-imports, when a Horovod-like name it reads
    (``hvd``), or a name of Horovod's API it binds nowhere (``free``: ``allreduce``), may come
    from one of them (no import of the file binds it): such a use is Horovod's too (an init is
    kept for it when unsure), and the module is linked to the file as its other imports are."""
    if not free and not any(HOROVOD_LIKE.match(node.id) and node.id not in imports
                            for node in index.nodes(ast.Name)):
        return []
    return sorted({target for node in index.nodes(ast.ImportFrom)
                   for name, target in ast_import_bindings(node, path)
                   if name == STAR and target.split(".")[0] not in NOT_STARRED})


def _kept(index: ModuleIndex, imports: dict[str, str],
          uses: list[tuple[ast.AST, str, Optional[str]]]) -> Iterator[str]:
    """The Horovod uses of the file that need ``hvd.init()``, as Ascend's list names them; one
    the pack migrates is followed by ``~<rule id>`` (it stays when that rule is not enabled)."""
    tensorflow = any(target.split(".")[0] == "tensorflow" for target in imports.values())
    calls = {id(node.func): node for node in index.nodes(ast.Call)}
    for node, qualified, through in uses:
        if not needs_init(qualified):
            continue
        api, rule = list_name(qualified) or qualified, _migrated_by(member(qualified))
        if tensorflow and rule and through is not None \
                and (rule == TOPOLOGY_RULE or _one_argument(calls.get(id(node)))):
            yield f"{api}{MIGRATED_BY}{rule}" + (f"{THROUGH}{through}" if through else "")
        else:
            yield api


def _unfollowed_kept(index: ModuleIndex, path: str) -> set[str]:
    """The Horovod uses no rule follows (``model.hvd.allreduce``, a star import's
    ``allreduce``) that need ``hvd.init()``, as Ascend's list names them: never migrated."""
    return {f"hvd.{use.member}" for use in unfollowed_uses(index, path) if use.member in _NEEDING_INIT}


def _migrated_by(name: str) -> str:
    """The rule that migrates the Horovod name ``name`` (under its module), or ''."""
    return TOPOLOGY_RULE if name in TOPOLOGY else ONE_ARGUMENT.get(name, "")


def kept_by(apis: str, enabled: AbstractSet[str],
            read: Callable[[str], bool] = lambda name: False) -> list[str]:
    """The uses of a ``horovod-kept:`` fact's ``apis`` that still need ``hvd.init()`` after a
    run with the rules ``enabled``; one through a repository name (``@common.hvd``) is
    migrated only when the file's rules ``read`` that name as Horovod."""
    kept = []
    for entry in apis.split(","):
        api, _, migrated = entry.partition(MIGRATED_BY)
        rule, _, through = migrated.partition(THROUGH)
        gone = rule in enabled and (not through or read(through))
        if api and not gone and api not in kept:
            kept.append(api)
    return kept


def _one_argument(call: Optional[ast.Call]) -> bool:
    if call is None:
        return False
    given = [*call.args, *call.keywords]
    return len(given) == 1 and not isinstance(given[0], ast.Starred) \
        and getattr(given[0], "arg", "") is not None


def _horovod_uses(index: ModuleIndex, imports: dict[str, str], starred: bool = False,
                  free: frozenset[str] = frozenset()) -> Iterator[tuple[ast.AST, str, Optional[str]]]:
    """(node, qualified name, through) of each read of a Horovod name for TensorFlow: the
    longest dotted name (``hvd.elastic.run``), not its parts. ``through``: '' for a name of
    the file's own Horovod import; the repository name a use goes through, taken for
    :data:`ASSUMED`, when the file's rules read it so if the repository binds that name to
    Horovod (``from common import hvd``: ``common.hvd``); None when no rule reads it
    (``common.hvd.allreduce``, through the module; ``hvd`` no import binds, or a name of
    Horovod's API the file binds nowhere, ``free``, when the file star-imports a repository
    module: ``starred``)."""
    inner = {id(node.value) for node in index.nodes(ast.Attribute)}
    for node in index.nodes(ast.Attribute, ast.Name):
        if id(node) in inner or not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        dotted = ast_dotted_name(node)
        head, _, rest = (dotted or "").partition(".")
        target = imports.get(head)
        if target is None:
            if starred and HOROVOD_LIKE.match(head):
                yield node, f"{ASSUMED}.{rest}" if rest else ASSUMED, None
            elif starred and head in free:  # ``allreduce(x)`` after ``from common import *``
                yield node, f"{ASSUMED}.{dotted}", None
            continue
        qualified = f"{target}.{rest}" if rest else target
        if for_tensorflow(qualified):
            yield node, qualified, ""
            continue
        found = _through_repository(head, target, rest)
        if found is not None:
            through, after = found
            yield node, f"{ASSUMED}.{after}" if after else ASSUMED, \
                through if through == target else None
        elif rest.rpartition(".")[2] in CALLBACK_CLASSES and target.split(".")[0] not in NOT_RECORDED:
            yield node, f"{ASSUMED_KERAS}.callbacks.{rest.rpartition('.')[2]}", None  # ``cbs.X``


def _through_repository(head: str, target: str, rest: str) -> Optional[tuple[str, str]]:
    """(the name of a repository module, what follows it) when the use ``head.rest``
    (``head`` imported as ``target``) may read Horovod through a name that module binds to it
    (:data:`HOROVOD_LIKE`): ``hvd`` of ``from common import hvd`` (or ``... as h``), or
    ``common.hvd.allreduce`` after ``import common``; None for other names."""
    if target.split(".")[0] in NOT_RECORDED:
        return None
    if HOROVOD_LIKE.match(head) or HOROVOD_LIKE.match(target.rpartition(".")[2]):
        return target, rest
    parts = rest.split(".") if rest else []
    for cut, part in enumerate(parts):
        if HOROVOD_LIKE.match(part):
            return ".".join((target, *parts[:cut + 1])), ".".join(parts[cut + 1:])
    return None
