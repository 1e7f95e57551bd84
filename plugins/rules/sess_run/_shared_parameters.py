"""A config that comes into a function as a parameter may come configured already.

``def create_session(config): return tf.Session(config=config)`` called as
``create_session(config)`` by a function that also gives ``config`` to its own session:
NPU007 configures that object in the caller, and lines for the parameter in
``create_session`` would add a second NpuOptimizer entry to the same object (the spec:
"a config object gets the NpuOptimizer exactly once, whatever path it takes"). Calls of the
function in its own file are looked at: a caller that passes a name its own scope gives to a
session (``Session(..., config=<name>)``, ``managed_session(config=<name>)``...) or the NPU
lines (``<name>.graph_options.rewrite_options.custom_optimizers.add()``).
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from npu_codemod.api import Base, Node, find_argument, symbols, tokens
from npu_codemod.api._toolkit import enclosing_scope, is_call_trailer, position, tree_text

from ._functions import parameters

#: A session (or its creator) given the config ``{name}`` in the caller's scope.
_SESSION = (r"(?:Session|managed_session|prepare_or_wait_for_session|SessionCreator)\s*\("
            r"(?:[^()]|\([^()]*\))*?\bconfig\s*=\s*{name}\b")
_NPU_LINES = r"\b{name}\s*\.\s*graph_options\s*\.\s*rewrite_options\s*\.\s*custom_optimizers\s*\.\s*add\s*\("


def configured_caller(function: Node, name: str) -> Optional[int]:
    """The line of a call of ``function`` in its file that passes, as its parameter ``name``,
    a config the caller's scope also configures or gives a session; None when there is none."""
    declared = [leaf.value for kind, leaf in parameters(function) if kind == "positional"]
    if name not in declared:
        return None
    method = _in_class(function)
    index = declared.index(name) - (1 if method and declared[0] in ("self", "cls") else 0)
    for call, trailer in _calls(function, method):
        argument = find_argument(trailer, name, index)
        if argument is None or argument.star or argument.value.type != tokens.NAME:
            continue
        passed = re.escape(str(argument.value.value))
        text = tree_text(enclosing_scope(call))
        if re.search(_SESSION.format(name=passed), text) or re.search(_NPU_LINES.format(name=passed), text):
            return position(call)[0]
    return None


def _calls(function: Node, method: bool) -> Iterator[tuple[Base, Node]]:
    """(call, its argument trailer) for each ``f(...)`` (``self.f(...)`` of a method) in the
    file of ``function`` named ``f``."""
    name = function.children[1].value
    root = function
    while root.parent is not None:
        root = root.parent
    for node in root.pre_order():
        if node.type != symbols.power or node.children[0].type != tokens.NAME:
            continue
        parts = node.children
        if not method and parts[0].value == name and len(parts) > 1 and is_call_trailer(parts[1]):
            yield node, parts[1]
        elif method and parts[0].value == "self" and len(parts) > 2 and _names(parts[1], name) \
                and is_call_trailer(parts[2]):
            yield node, parts[2]


def _in_class(function: Node) -> bool:
    """Is ``function`` a method (defined in a class's body)?"""
    body = function.parent
    return body is not None and body.parent is not None and body.parent.type == symbols.classdef


def _names(trailer: Base, name: str) -> bool:
    """Is ``trailer`` ``.name``?"""
    return trailer.type == symbols.trailer and len(trailer.children) == 2 \
        and trailer.children[0].type == tokens.DOT and trailer.children[1].value == name
