"""Configs that a caller configures and passes on to a function, maybe of another file.

``config = tf.ConfigProto()``, ``sess = tf.Session(config=config)``, then
``eval_sess = session_utils.create_session(config)``: NPU007 configures ``config`` for the
caller's session, and lines for the parameter in ``create_session`` would give that object a
second NpuOptimizer entry (the spec: "a config object gets the NpuOptimizer exactly once,
whatever path it takes"). Each file is read with ``ast`` before any rewrite, and every call
that passes a config its caller configures becomes a repository fact:

``npu007-passes:<caller's path>|<callee>|<parameter>|<why>``

- ``<callee>``: the callee dotted through the caller's imports
  (``utils.session_utils.create_session``), or ``<module>.<name>`` for a function or class
  of the caller's own module (``train.create_session``);
- ``<parameter>``: the keyword, or ``#<position>``;
- ``<why>``: ``session`` (a session of the caller takes it: NPU007 configures it there),
  ``lines`` (it has the NpuOptimizer lines), or ``=<function>`` (it is bound to what that
  function returns, dotted as the caller imports it: configured when the repository's
  ``npu007-config:`` facts say so).

A name is looked at in its scope (the function, or the module's own code), an attribute
(``self.config``) in the whole file: NPU007 configures it once, where it is built. Calls of
methods through an object (``helper.create_session(config)``) name no function the analysis
can find, and give no fact.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, FrozenSet, Iterable, Iterator, Optional, Union, cast

from npu_codemod.api._toolkit import ModuleIndex, module_package, module_parts, own_nodes
from npu_codemod.api._toolkit import ast_dotted_name as dotted

PASSES = "npu007-passes:"
SESSION, LINES, FROM = "session", "lines", "="
POSITION = "#"
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: What follows the config in the NpuOptimizer line ``<config>.graph_options...add()``.
_ADD = ("graph_options", "rewrite_options", "custom_optimizers", "add")


def passed_config_facts(path: str, text: str, index: ModuleIndex, imports: dict[str, str],
                        session_values: Iterable[ast.expr]) -> set[str]:
    """The ``npu007-passes:`` facts of one file (see the module docstring): ``session_values``
    are the configs its sessions take (``_config_functions.session_config_arguments``)."""
    tree = cast(ast.Module, index.tree)
    own = _own_definitions(tree)
    module = ".".join(module_parts(path))
    evidence = _Evidence(index)
    taken = set()  # a session's own config argument: no call passes it on there
    for value in session_values:
        evidence.add(value, SESSION)
        taken.add(value)
    if "custom_optimizers" in text:
        for configured in _configured_by_lines(index):
            evidence.add(configured, LINES)
    for target, function in _bound_to_config_functions(index, imports, own, module):
        evidence.add(target, FROM + function)
    if not evidence.names and not evidence.attributes:
        return set()
    facts = set()
    for call, names in evidence.calls():
        callee = _qualified(call.func, imports, own, module)
        if callee is None or callee.split(".")[0] == "tensorflow":
            continue
        for parameter, argument in _given(call):
            for why in () if argument in taken else evidence.why(argument, names):
                facts.add(f"{PASSES}{path}|{callee}|{parameter}|{why}")
    return facts


class _Evidence:
    """What makes a name of a scope, or an attribute of the file, a configured config."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.names: list[tuple[ast.Name, str]] = []  # a name where it is configured, and why
        self.attributes: dict[str, set[str]] = {}  # dotted attribute -> why
        self._module_nodes: Optional[list[ast.AST]] = None

    def add(self, value: ast.expr, why: str) -> None:
        if type(value) is ast.Name:
            self.names.append((value, why))
        elif type(value) is ast.Attribute:
            name = dotted(value)
            if name is not None:
                self.attributes.setdefault(name, set()).add(why)

    def why(self, argument: ast.expr, names: dict[str, set[str]]) -> set[str]:
        """Why ``argument`` (given in the scope whose configured ``names`` these are) is
        configured; empty: it is not known to be."""
        if type(argument) is ast.Name:
            return names.get(argument.id, set())
        name = dotted(argument) if type(argument) is ast.Attribute else None
        return self.attributes.get(name, set()) if name is not None else set()

    def calls(self) -> Iterator[tuple[ast.Call, dict[str, set[str]]]]:
        """Each call that may pass one of the configs, with the names configured in its scope."""
        by_scope: dict[ast.AST, dict[str, set[str]]] = {}
        for node, why in self.names:
            scope = self.scope_of(node)
            if scope is not None:
                by_scope.setdefault(scope, {}).setdefault(node.id, set()).add(why)
        seen: set[ast.AST] = set()
        for scope, names in by_scope.items():
            for inner in self.own_nodes(scope):
                if type(inner) is ast.Call:
                    seen.add(inner)
                    yield inner, names
        if self.attributes:
            for call in self.index.nodes(ast.Call):
                if call not in seen:
                    yield call, {}

    def scope_of(self, node: ast.AST) -> Optional[ast.AST]:
        """The function whose own code ``node`` is part of, the module for its own code, or
        None (a class body, a lambda)."""
        line = getattr(node, "lineno", 0)
        functions = cast(list[_Function], self.index.nodes(ast.FunctionDef, ast.AsyncFunctionDef))
        holders = [function for function in functions
                   if function.lineno <= line <= (function.end_lineno or line)]
        for function in sorted(holders, key=lambda holder: holder.lineno, reverse=True):
            if node in self.own_nodes(function):
                return function
        return self.index.tree if node in self.own_nodes(self.index.tree) else None

    def own_nodes(self, scope: ast.AST) -> list[ast.AST]:
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self.index.own_nodes(scope)
        if self._module_nodes is None:  # the module has a body, as a function has
            self._module_nodes = list(own_nodes(cast(Any, scope)))
        return self._module_nodes


def _configured_by_lines(index: ModuleIndex) -> Iterator[ast.expr]:
    """The config of each ``<config>.graph_options.rewrite_options.custom_optimizers.add()``."""
    for call in index.nodes(ast.Call):
        node: ast.expr = call.func
        for attribute in reversed(_ADD):
            if type(node) is not ast.Attribute or node.attr != attribute:
                break
            node = node.value
        else:
            yield node


def _bound_to_config_functions(index: ModuleIndex, imports: dict[str, str], own: FrozenSet[str],
                               module: str) -> Iterator[tuple[ast.expr, str]]:
    """(target, function) for each ``<target> = <function>(...)`` of a repository function
    named like a config maker (``make_config``, ``get_session_config``; not a class such as
    ``ConfigProto`` or a model's ``BertConfig``): what it returns may be configured (the
    ``npu007-config:`` facts tell)."""
    for node in index.nodes(ast.Assign):
        value = node.value
        if len(node.targets) != 1 or type(value) is not ast.Call:
            continue
        callee = value.func
        name = callee.attr if type(callee) is ast.Attribute else getattr(callee, "id", "")
        if "config" not in name.lower() or name[:1].isupper():
            continue
        function = _qualified(value.func, imports, own, module)
        if function is not None and function.split(".")[0] != "tensorflow":
            yield node.targets[0], function


def _own_definitions(tree: ast.Module) -> FrozenSet[str]:
    """The functions and classes the module defines at its top level."""
    return frozenset(node.name for node in tree.body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def _qualified(callee: ast.expr, imports: dict[str, str], own: FrozenSet[str], module: str) -> Optional[str]:
    """``callee`` dotted through the file's imports, or ``<module>.<name>`` for a function or
    class of the module itself; None for anything else (a method of an object)."""
    name = dotted(callee)
    head, _, rest = (name or "").partition(".")
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    return f"{module}.{head}" if head in own and not rest else None


def _given(call: ast.Call) -> Iterator[tuple[str, ast.expr]]:
    """(parameter, argument): ``#<position>`` or the keyword; none after a ``*`` argument."""
    for position, argument in enumerate(call.args):
        if type(argument) is ast.Starred:
            break
        yield f"{POSITION}{position}", argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            yield keyword.arg, keyword.value


@dataclass(frozen=True)
class Passed:
    """A call of some file that passes a configured config to a function, from the facts."""

    path: str  # the caller's file
    module: str  # the callee's module, as the caller spells it
    parameter: str  # keyword or ``#<position>``
    why: str  # SESSION, LINES or ``=<function>``

    def reaches(self, own: str) -> bool:
        """Is the callee's module the module ``own`` (dotted), as the caller's import finds it:
        the nearest folder first, or by its ending?"""
        parts = module_package(self.path)
        candidates = {".".join((*parts[:depth], self.module)) for depth in range(len(parts) + 1)}
        return own in candidates or own.endswith("." + self.module)


@lru_cache(maxsize=4)
def passed_configs(facts: FrozenSet[str]) -> dict[str, list[Passed]]:
    """Callee's name -> the calls that pass it a configured config, read once per repository."""
    found: dict[str, list[Passed]] = {}
    for fact in facts:
        if fact.startswith(PASSES):
            path, callee, parameter, why = fact[len(PASSES):].rsplit("|", 3)
            module, _, name = callee.rpartition(".")
            found.setdefault(name, []).append(Passed(path, module, parameter, why))
    for calls in found.values():
        calls.sort(key=lambda passed: (passed.path, passed.parameter, passed.why))
    return found
