"""Whether a repository trains distributed: with Horovod, or with a ``tf.distribute`` strategy.

Rules outside the distributed pack need the answer too (the NPU loss-scale optimizer takes
``is_distributed=True`` in a distributed job), and the code that makes a job distributed is
rarely in the file they rewrite. Each TensorFlow file is read on its own with ``ast`` before any
rewrite (:func:`distribution_facts`, for a plugin's ``npu_codemod_analyze_file``):

- :data:`HOROVOD`: the file imports ``horovod.tensorflow`` or ``horovod.tensorflow.keras``
  (``import horovod.tensorflow as hvd``, ``from horovod import tensorflow as hvd``, ...);
- :data:`STRATEGY`: it calls ``tf.distribute.MirroredStrategy`` or
  ``MultiWorkerMirroredStrategy`` (``experimental``, ``compat.v1`` and ``tf.contrib.distribute``
  spellings too).
"""

from __future__ import annotations

import ast
from typing import AbstractSet

from .config_functions import dotted, imported_names, parse
from .tfnames import canonical

HOROVOD = "distributed:horovod"
STRATEGY = "distributed:strategy"
_HOROVOD_MODULES = ("horovod.tensorflow", "horovod.tensorflow.keras")
_STRATEGIES = frozenset({
    "tensorflow.distribute.MirroredStrategy",
    "tensorflow.distribute.experimental.MultiWorkerMirroredStrategy",
    "tensorflow.distribute.MultiWorkerMirroredStrategy",
    "tensorflow.contrib.distribute.MirroredStrategy",
    "tensorflow.contrib.distribute.MultiWorkerMirroredStrategy",
    "tensorflow.contrib.distribute.CollectiveAllReduceStrategy",
})


def distribution_facts(path: str, text: str) -> set[str]:
    """:data:`HOROVOD` and/or :data:`STRATEGY` for one file (see the module docstring)."""
    if "horovod" not in text and "MirroredStrategy" not in text and "CollectiveAllReduce" not in text:
        return set()
    tree = parse(text)
    if tree is None:
        return set()
    imports = imported_names(tree, path)
    facts = set()
    if any(target in _HOROVOD_MODULES for target in imports.values()) or _imports_horovod(tree):
        facts.add(HOROVOD)
    for node in ast.walk(tree):
        callee = dotted(node.func) if isinstance(node, ast.Call) else None
        head, _, rest = (callee or "").partition(".")
        if head in imports and canonical(imports[head] + (f".{rest}" if rest else "")) in _STRATEGIES:
            facts.add(STRATEGY)
            break
    return facts


def _imports_horovod(tree: ast.Module) -> bool:
    """``import horovod.tensorflow`` without an alias (bound as ``horovod``)."""
    return any(isinstance(node, ast.Import) and any(alias.name in _HOROVOD_MODULES for alias in node.names)
               for node in ast.walk(tree))


def is_distributed(facts: AbstractSet[str]) -> bool:
    """Does the repository of these facts train distributed, either way?"""
    return HOROVOD in facts or STRATEGY in facts
