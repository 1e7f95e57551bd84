"""Module variables of the repository that hold the Horovod module, for their importers.

NVIDIA's DeepLearningExamples wrap Horovod in a module of their own (``utils/hvd_wrapper.py``):
a module variable ``hvd_global_object = None`` that ``init(use_horovod)`` sets, after a
``global`` statement, to the Horovod module it imports there (or to a stand-in without
Horovod); the scripts import the wrapper (``from utils import hvd_wrapper as hvd``) and reach
Horovod through it: ``hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)``,
``hvd.hvd_global_object.allreduce(...)``. No import of the script binds Horovod, so no rule
saw those uses. Each file's analysis gives, for each of its module variables set to a Horovod
module (by an import, or by an assignment at module level or after ``global``)::

    horovod-held:<module>.<name>
    horovod-held:<module>.*          the module star-imports Horovod: its names are Horovod's
    horovod-name:<module>.<local>=<name>
                                     ``from horovod.tensorflow import <name> [as <local>]``
    horovod-all:<module>=<name>,...  its ``__all__`` (``horovod_stars``: what a star import of
                                     it passes on)

and :func:`held_names` (:func:`horovod_names`) gives them back to a rule, which reports their
uses in an importer (``horovod_params``): never rewritten, as the variable may hold something
else.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import AbstractSet, FrozenSet, Iterator, Union

from .horovod_stars import all_fact
from .modules import module_level
from .names import STAR, ast_import_bindings

PREFIX = "horovod-held:"
NAME_PREFIX = "horovod-name:"
#: The modules of Horovod for TensorFlow (``horovod.keras``: for Keras on TensorFlow).
HOROVOD_MODULES = ("horovod.tensorflow", "horovod.tensorflow.keras", "horovod.keras")
#: Horovod's module of Keras callbacks, as a member of its modules, and its full names.
CALLBACKS = "callbacks"
CALLBACK_MODULES = frozenset(f"{module}.{CALLBACKS}" for module in HOROVOD_MODULES)
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def held_facts(tree: ast.Module, module: str) -> set[str]:
    """The ``horovod-held:`` and ``horovod-name:`` facts of the module ``module`` (dotted)
    whose tree is ``tree``."""
    held = _module_holders(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            held.update(_set_after_global(node, held))
    return {f"{PREFIX}{module}.{name}" for name in held} | _named_facts(tree, module) | all_fact(tree, module)


def _named_facts(tree: ast.Module, module: str) -> set[str]:
    """A ``horovod-name:`` fact for each name a module-level import binds to a member of a
    Horovod module (``from horovod.tensorflow import BroadcastGlobalVariablesHook``), Horovod's
    Keras callbacks module under a name of its own too (``import horovod.keras.callbacks as
    hcb``: ``callbacks``)."""
    found = set()
    for node in module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            for local, target in ast_import_bindings(node):
                horovod, _, name = target.rpartition(".")
                if local != STAR and horovod in HOROVOD_MODULES and target not in HOROVOD_MODULES:
                    found.add(f"{NAME_PREFIX}{module}.{local}={name}")
        elif isinstance(node, ast.Import):  # ``import horovod.keras.callbacks as hcb``
            found.update(f"{NAME_PREFIX}{module}.{alias.asname}={CALLBACKS}" for alias in node.names
                         if alias.asname and alias.name in CALLBACK_MODULES)
    return found


@lru_cache(maxsize=4)
def held_names(facts: FrozenSet[str]) -> frozenset[str]:
    """The module-qualified variables the repository's ``facts`` say hold Horovod."""
    return frozenset(fact[len(PREFIX):] for fact in facts if fact.startswith(PREFIX))


@lru_cache(maxsize=4)
def horovod_names(facts: FrozenSet[str]) -> dict[str, str]:
    """``<module>.<local>`` -> the Horovod member it is bound to, from the ``horovod-name:``
    facts (worked out once per repository's facts: not to be edited)."""
    return dict(fact[len(NAME_PREFIX):].partition("=")[::2] for fact in facts if fact.startswith(NAME_PREFIX))


def _module_holders(tree: ast.Module) -> set[str]:
    """The module-level names an import binds to a Horovod module, or an assignment to such a
    name (``hvd_global_object = hvd``)."""
    held: set[str] = set()
    for node in module_level(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            held.update(_horovod_imports(node))
        elif isinstance(node, ast.Assign):
            held.update(_assigned(node, held))
    return held


def _set_after_global(function: _Function, module_names: AbstractSet[str]) -> Iterator[str]:
    """The names ``function`` declares ``global`` and sets to a Horovod module: one it imports
    itself, or one of ``module_names``."""
    declared: set[str] = set()
    local: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update(_horovod_imports(node))
    if declared:
        horovod = local | set(module_names)
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                yield from (name for name in _assigned(node, horovod) if name in declared)


def _horovod_imports(node: Union[ast.Import, ast.ImportFrom]) -> Iterator[str]:
    return (local for local, target in ast_import_bindings(node) if target in HOROVOD_MODULES)


def _assigned(node: ast.Assign, horovod: AbstractSet[str]) -> Iterator[str]:
    """The names ``node`` assigns when its value is one of the names ``horovod``."""
    if isinstance(node.value, ast.Name) and node.value.id in horovod:
        yield from (target.id for target in node.targets if isinstance(target, ast.Name))
