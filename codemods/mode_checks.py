"""Does a module ask which TensorFlow runs it: the version, or whether it executes eagerly.

The mixed-program check (``codemods/tf_programs``) refuses a program whose entry reaches eager
TF 2.x files and ``tf.compat.v1`` graph files, because ``npu_device.compat.enable_v1()`` switches
the whole process to graph mode and eager code breaks there. Library code of the repository
written for both modes asks first: Horovod's ``horovod/tensorflow/util.py`` branches on
``context.executing_eagerly()``, ``horovod/_keras`` compares ``tf.__version__``; its
``tf.function``/``GradientTape`` run in graph mode as well. Such a module does not make a program
mixed (``spec/rules-tf2.md``, "Mixed programs": the switch decides how ``tf.function`` runs).

A version that is only printed (``print(tf.__version__)``) is no check: the code does not adapt.
"""

from __future__ import annotations

import ast

from .modules import module_index
from .text_search import AnyOf

#: Text every check spells: a module without it asks nothing (the ``ast`` is not read).
_MAY_CHECK = AnyOf(r"executing_eagerly\(", r"__version__", r"\.VERSION\b")
_VERSION_NAMES = frozenset({"__version__", "VERSION"})


def adapts_to_mode(text: str, tree: ast.Module) -> bool:
    """Does the module branch on the running TensorFlow: call ``executing_eagerly()`` (any
    receiver: ``tf``, ``tf.compat.v1``, ``context``), compare a ``__version__``/``VERSION``
    (``version.parse(tf.__version__) >= ...``, ``LooseVersion(tf.__version__) < ...``) or test
    its prefix (``tf.__version__.startswith("2")``)?"""
    if not _MAY_CHECK.found(text):
        return False
    index = module_index(tree)
    for call in index.nodes(ast.Call):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "executing_eagerly":
            return True
        if name == "startswith" and isinstance(func, ast.Attribute) and _is_version(func.value):
            return True
    return any(_is_version(node) for compare in index.nodes(ast.Compare) for node in ast.walk(compare))


def _is_version(node: ast.AST) -> bool:
    """``<x>.__version__``, ``<x>.VERSION`` (``tf.version.VERSION``) or a bare ``__version__``."""
    return (isinstance(node, ast.Attribute) and node.attr in _VERSION_NAMES) \
        or (isinstance(node, ast.Name) and node.id == "__version__")
