"""A ``tf.compat.v1.get_default_graph()`` taken only to override gradients runs in eager TF 2.x.

``with tf.compat.v1.get_default_graph().gradient_override_map({"Sign": "Identity"}):`` is how
TF 2.x libraries (TensorLayer 2.x's quantized layers) give an op a straight-through gradient: a
``tf.function`` traces it into its own graph, whichever the default one is, and no session or
graph mode is needed. Such a use is no C2 signal (``codemods/tf_versions``: its module is no
compat.v1 graph file, and a program importing it no mixed one); a ``get_default_graph()`` whose
graph is read otherwise (``get_operations()``, ``get_tensor_by_name``) stays one.
"""

from __future__ import annotations

import ast
from typing import Union

from .modules import ModuleIndex

OVERRIDE = "gradient_override_map"


def override_only_graphs(index: ModuleIndex) -> frozenset[int]:
    """The ``id`` of the called function node of each call whose result is used only for its
    ``gradient_override_map``: ``X.get_default_graph().gradient_override_map(...)``, or
    ``G = X.get_default_graph()`` in a function (or the module) whose every read of ``G`` is
    ``G.gradient_override_map``. The caller checks the function is ``get_default_graph``."""
    found: set[int] = set()
    for node in index.nodes(ast.Attribute):
        if node.attr == OVERRIDE and isinstance(node.value, ast.Call):
            found.add(id(node.value.func))
    scopes: list[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = [
        *index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    for scope in scopes:
        found |= _assigned_graphs(index.own_nodes(scope))
    return frozenset(found)


def _assigned_graphs(nodes: list[ast.AST]) -> set[int]:
    """Of the calls assigned to one name among ``nodes`` (one function's own), those whose
    name is read only as the receiver of ``gradient_override_map``."""
    calls = {node.targets[0].id: node.value for node in nodes
             if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)}
    if not calls:
        return set()
    overriding = {id(node.value) for node in nodes if isinstance(node, ast.Attribute)
                  and node.attr == OVERRIDE and isinstance(node.value, ast.Name)}
    found = set()
    for name, call in calls.items():
        reads = [node for node in nodes if isinstance(node, ast.Name) and node.id == name
                 and isinstance(node.ctx, ast.Load)]
        assigned = sum(1 for node in nodes if isinstance(node, ast.Name) and node.id == name
                       and not isinstance(node.ctx, ast.Load))
        if reads and assigned == 1 and all(id(node) in overriding for node in reads):
            found.add(id(call.func))
    return found
