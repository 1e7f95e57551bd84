"""Does the repository train distributed, and how: Horovod, ``tf.distribute``, the NPU's own?

The distributed pack (NPU021-NPU027) and NPU031 change code only in a repository that trains
on several devices, and the pack rewrites nothing where it uses two modes at once. Each file
is read with ``ast`` before any rewrite (:func:`distribution_facts`) and says:

- ``distributed:horovod``: it imports ``horovod.tensorflow``, ``horovod.tensorflow.keras`` or
  ``horovod.keras``; a file that imports no TensorFlow too (:func:`import_facts`: a launcher,
  a helper module);
- ``distributed:strategy``: it builds a ``MirroredStrategy`` or ``MultiWorkerMirroredStrategy``
  (``tf.distribute``, ``tf.distribute.experimental``, ``tf.contrib.distribute``), or the
  ``npu_strategy.NPUStrategy()`` NPU026 writes for them;
- ``distributed:npu``: it calls the NPU's distributed forms the pack writes
  (:data:`NPU_COLLECTIVES`: the Horovod migration's collectives, optimizer wrapper and
  broadcast, and NPU027's ``npu_hooks_append``/``npu_callbacks_append``), so a migrated
  repository is still distributed on a second run. The NPU names count through the TF 1.x
  init import and through TF Adapter 2.x's ``npu_device.compat.v1.npu_init`` (NPU062's header
  in ``tf2-compat`` files), star or named;
- ``distributed:horovod-library``: it is a module of Horovod itself (``horovod/tensorflow/
  mpi_ops.py``, also vendored: ``third_party/horovod/...``) that provides Horovod's API: it
  binds ``init``, ``rank`` and ``size`` at module level. Such a repository is library code,
  which the distributed pack does not migrate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional

from .accessors import repository_accessors
from .horovod_holders import HOROVOD_MODULES
from .modules import ModuleIndex, module_ast, module_index
from .names import (
    STAR,
    STAR_SAME,
    ast_dotted_name,
    ast_import_bindings,
    canonical,
    module_parts,
    public_name,
)
from .reexports import reexports, star_imported
from .rule import FileContext

HOROVOD = "distributed:horovod"
STRATEGY = "distributed:strategy"
NPU = "distributed:npu"
LIBRARY = "distributed:horovod-library"
#: ``distributed:strategy-via:<module>.<function>.<Strategy>``: the file builds a strategy
#: through a repository accessor function (``contrib.distribute().MirroredStrategy()``); it is
#: a strategy when the ``accessor:`` facts resolve that function to TensorFlow's module (the
#: facts of one file cannot: the function is often defined in another).
STRATEGY_VIA = "distributed:strategy-via:"
#: What a module of Horovod binds that makes it provide Horovod's API.
HOROVOD_API = frozenset({"init", "rank", "size"})
#: The rules of the opt-in ``distributed`` pack that act on Horovod (TF 1.x and ``tf2-compat``
#: files): with none of them enabled, the audits report every Horovod site, naming the opt-in.
HOROVOD_RULES = ("NPU021", "NPU022", "NPU023", "NPU024", "NPU025")
#: The strategies that make the repository strategy-distributed (canonical names).
MIRRORED_STRATEGIES = frozenset({
    f"tensorflow.{package}.{name}"
    for package in ("distribute", "distribute.experimental", "contrib.distribute")
    for name in ("MirroredStrategy", "MultiWorkerMirroredStrategy")
})
#: ``npu_strategy.NPUStrategy`` as the NPU init import binds it.
NPU_STRATEGY = "npu_bridge.npu_init.npu_strategy.NPUStrategy"
#: The names of ``from npu_bridge.npu_init import *`` that the distributed pack writes (the
#: ones that replace Horovod's, and NPU027's hooks and callbacks): only a distributed
#: repository gets them, so they keep it distributed on a rerun over the migrated branch.
NPU_COLLECTIVES = frozenset({
    "get_npu_rank_id", "get_npu_local_rank_id", "get_npu_rank_size", "get_npu_local_rank_size",
    "npu_distributed_optimizer_wrapper", "NPUBroadcastGlobalVariablesHook",
    "NPUBroadcastGlobalVariablesCallback", "npu_hooks_append", "npu_callbacks_append",
})
#: The module of the NPU init import, and its TF Adapter 2.x spelling (``tf2-compat`` files).
NPU_INIT = "npu_bridge.npu_init"
NPU_INIT_SPELLINGS = (NPU_INIT, *(spelling for spelling, same in STAR_SAME.items() if same == NPU_INIT))


@lru_cache(maxsize=4)
def distribution_facts(path: str, text: str) -> frozenset[str]:
    """The ``distributed:`` facts of one file (see the module docstring). A file whose text
    names none of them is not parsed (most files, and the largest: the ``ast`` of a 50 MB
    generated file takes minutes)."""
    horovod = "horovod" in text
    library = "horovod" in module_parts(path)
    calls = "Strategy" in text or "get_npu_" in text or "npu_distributed" in text \
        or "NPUBroadcast" in text or "s_append" in text  # npu_hooks_append, npu_callbacks_append
    tree = module_ast(text) if horovod or calls or library else None
    if tree is None:
        return frozenset()
    index = module_index(tree)
    facts = {HOROVOD} if horovod and _imports_horovod(index) else set()
    if library and HOROVOD_API <= _module_bindings(tree):
        facts.add(LIBRARY)
    if not calls:
        return frozenset(facts)
    imports = index.imported_names(path)
    star = any(isinstance(node, ast.ImportFrom) and any(
        (STAR, module) in ast_import_bindings(node) for module in NPU_INIT_SPELLINGS) for node in tree.body)
    for node in index.nodes(ast.Call):
        callee = ast_dotted_name(node.func)
        if callee is None:
            continue
        qualified = _qualified(callee, imports, star)
        if qualified in (MIRRORED_STRATEGIES | {NPU_STRATEGY}):
            facts.add(STRATEGY)
        elif qualified is not None and qualified.startswith(NPU_INIT + ".") \
                and qualified[len(NPU_INIT) + 1:] in NPU_COLLECTIVES:
            facts.add(NPU)
    facts.update(_strategies_via_accessors(index, imports, path, star_imported(path, text)))
    return frozenset(facts)


def import_facts(path: str, text: str) -> frozenset[str]:
    """The ``distributed:horovod`` fact of a file that imports no TensorFlow: a launcher or a
    helper module that imports Horovod for TensorFlow (``from horovod.tensorflow import
    init``) makes the repository distributed as a TensorFlow file's import does (its other
    facts are those of files the rules read)."""
    return distribution_facts(path, text) & {HOROVOD} if "horovod" in text else frozenset()


def _strategies_via_accessors(index: ModuleIndex, imports: dict[str, str], path: str,
                              stars: list[str]) -> set[str]:
    """``STRATEGY_VIA`` facts of the file's ``<function>().MirroredStrategy(...)`` calls, the
    function as the repository names it (imported, or the file's own; a name the file does
    not import, as each module it star-imports may bind it too)."""
    names = {name.rpartition(".")[2] for name in MIRRORED_STRATEGIES}
    found: set[str] = set()
    for node in index.nodes(ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in names and isinstance(func.value, ast.Call)
                and not func.value.args and not func.value.keywords):
            continue
        accessor = ast_dotted_name(func.value.func)
        if accessor is None:
            continue
        head, _, rest = accessor.partition(".")
        qualified = [imports[head] + (f".{rest}" if rest else "")] if head in imports \
            else [".".join((*module_parts(path), accessor)), *(f"{star}.{accessor}" for star in stars)]
        found.update(f"{STRATEGY_VIA}{name}.{func.attr}" for name in qualified)
    return found


def _via_accessor(facts: frozenset[str]) -> bool:
    """Does a ``STRATEGY_VIA`` fact name a function the ``accessor:`` facts resolve to the
    module of a mirrored strategy (directly, or through a package's re-exports)?"""
    accessors = repository_accessors(facts)
    passed = reexports(facts) if accessors else None
    for fact in facts:
        if fact.startswith(STRATEGY_VIA):
            function, _, strategy = fact[len(STRATEGY_VIA):].rpartition(".")
            if passed is not None and function not in accessors:
                function = passed.resolve(function, (), lambda name, _: name if name in accessors else None) \
                    or function
            module = accessors.get(function)
            if module and canonical(public_name(f"{module}.{strategy}")) in MIRRORED_STRATEGIES:
                return True
    return False


def _imports_horovod(index: ModuleIndex) -> bool:
    """``import horovod.tensorflow[.keras] [as hvd]``, ``from horovod import tensorflow``,
    ``from horovod.tensorflow[.keras] import ...`` (``horovod.keras`` alike), anywhere in the
    module."""
    for node in index.nodes(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        if any(name == module or name.startswith(module + ".")
               for name in names for module in HOROVOD_MODULES):
            return True
    return False


def _module_bindings(tree: ast.Module) -> set[str]:
    """The names the module's own top-level statements bind: definitions, assignments
    (``init = _basics.init``) and imports (a package's ``from .mpi_ops import init``)."""
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(name for name, _ in ast_import_bindings(node))
        elif isinstance(node, ast.Assign):
            bound.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return bound


def _qualified(callee: str, imports: dict[str, str], star: bool) -> Optional[str]:
    """The full name the file's ``callee`` calls: TensorFlow's canonical one, or the NPU init
    module's (``npu_bridge.npu_init.<name>``, whichever spelling of it the file imports; a
    name the file does not import is one of the NPU init star import's)."""
    head, _, rest = callee.partition(".")
    if head not in imports:
        known = head == "npu_strategy" or (not rest and callee in NPU_COLLECTIVES)
        return f"{NPU_INIT}.{callee}" if star and known else None
    target = imports[head] + (f".{rest}" if rest else "")
    for spelling in NPU_INIT_SPELLINGS:
        if target.startswith(spelling + "."):
            return NPU_INIT + target[len(spelling):]
    return canonical(public_name(target))


@dataclass(frozen=True)
class Distribution:
    """How a repository trains distributed, as its facts say."""

    horovod: bool = False
    strategy: bool = False
    npu: bool = False
    #: The repository is Horovod itself, or provides the ``hvd`` API it uses (library code).
    library: bool = False

    @classmethod
    def of(cls, facts: Iterable[str]) -> "Distribution":
        facts = frozenset(facts)
        strategy = STRATEGY in facts or _via_accessor(facts)
        return cls(HOROVOD in facts, strategy, NPU in facts, LIBRARY in facts)

    @property
    def distributed(self) -> bool:
        """Trains on several devices, in any mode."""
        return self.horovod or self.strategy or self.npu

    @property
    def conflict(self) -> bool:
        """Uses Horovod and a ``tf.distribute`` strategy both: the pack rewrites nothing."""
        return self.horovod and self.strategy


def distribution(ctx: FileContext) -> Distribution:
    """The repository's :class:`Distribution` (its facts, and this file's own, so that a file
    processed without the repository's analysis still knows what it does itself)."""
    return ctx.analysis(_distribution)


def _distribution(ctx: FileContext) -> Distribution:
    return Distribution.of(ctx.facts | distribution_facts(ctx.path, ctx.original))
