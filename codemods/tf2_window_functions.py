"""Functions that batch one window or group of a ``tf.data`` pipeline (NPU064, NPU069).

``ds.group_by_window(key_func, reduce_func=lambda key, window: window.batch(n), ...)`` and
``ds.window(n).flat_map(lambda window: window.batch(n))`` batch the elements of one window or
one group (bucketing, one batch per class): that ``batch`` is no training batch. Given
``drop_remainder=True`` it drops every window or group shorter than its size (a group batched
whole loses everything), and sharding it shards one window. A batch written in such a function
(a lambda passed there, or a ``def`` passed by name) is told apart here.
"""

from __future__ import annotations

import ast
from typing import Optional

from .tf2_datasets import FileDatasets

#: Callables whose function argument (by keyword or position) reduces one group to a dataset.
GROUP_REDUCERS = {"group_by_window": ("reduce_func", 1)}
#: Dataset methods whose function maps each element to a dataset: on windows, one window.
WINDOW_MAPPERS = {"flat_map": ("map_func", 0), "interleave": ("map_func", 0)}


def window_function(datasets: FileDatasets, node: ast.AST) -> str:
    """Where ``node`` batches one window or group ("reduce_func of group_by_window",
    "flat_map over window(...)"): the role of the function or lambda around it, at any depth;
    "" when it is in none."""
    scope = datasets.scope_of(node)
    while scope is not datasets.tree:
        if isinstance(scope, ast.Lambda):
            role = _role(datasets, scope)
        elif isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            role = next(filter(None, (_role(datasets, name) for name in _passed_by_name(datasets, scope.name))), "")
        else:
            role = ""
        if role:
            return role
        scope = datasets.scope_of(scope)
    return ""


def _passed_by_name(datasets: FileDatasets, name: str) -> list[ast.Name]:
    """The loads of ``name`` that are arguments of a call in the file."""
    return [argument for call, _ in datasets.calls_in_scopes
            for argument in [*call.args, *(keyword.value for keyword in call.keywords)]
            if isinstance(argument, ast.Name) and argument.id == name]


def _role(datasets: FileDatasets, function: ast.AST) -> str:
    """What the call ``function`` is passed to does with it, when it gets one window or group."""
    call = datasets.parents.get(id(function))
    keyword: Optional[str] = None
    if isinstance(call, ast.keyword):
        keyword = call.arg
        call = datasets.parents.get(id(call))
    if not isinstance(call, ast.Call):
        return ""
    callee = call.func
    name = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
    if name in GROUP_REDUCERS and _is_argument(call, function, keyword, GROUP_REDUCERS[name]):
        return f"reduce_func of {name}"
    if name in WINDOW_MAPPERS and isinstance(callee, ast.Attribute) \
            and _is_argument(call, function, keyword, WINDOW_MAPPERS[name]) and _windowed(datasets, callee.value):
        return f"{name} over window(...)"
    return ""


def _is_argument(call: ast.Call, function: ast.AST, keyword: Optional[str], parameter: tuple[str, int]) -> bool:
    name, index = parameter
    if keyword is not None:
        return keyword == name
    return index < len(call.args) and call.args[index] is function


def _windowed(datasets: FileDatasets, receiver: ast.AST) -> bool:
    """Is ``receiver`` a ``.window(...)`` call, or a name its scope assigns one?"""
    if _is_window_call(receiver):
        return True
    if not isinstance(receiver, ast.Name):
        return False
    return any(isinstance(node, ast.Assign) and _is_window_call(node.value)
               and any(isinstance(target, ast.Name) and target.id == receiver.id for target in node.targets)
               for node in datasets.statements(datasets.scope_of(receiver)))


def _is_window_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "window"
