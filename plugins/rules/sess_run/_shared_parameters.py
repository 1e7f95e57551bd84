"""A config that comes into a function as a parameter may come configured already.

``def create_session(config): return tf.Session(config=config)`` called as
``create_session(config)`` by a function that also gives ``config`` to its own session:
NPU007 configures that object in the caller, and lines for the parameter in
``create_session`` would add a second NpuOptimizer entry to the same object (the spec:
"a config object gets the NpuOptimizer exactly once, whatever path it takes"). Calls of the
function in its own file are looked at: a caller that passes a name its own scope gives to a
session (``Session(..., config=<name>)``, ``managed_session(config=<name>)``...) or the NPU
lines (``<name>.graph_options.rewrite_options.custom_optimizers.add()``). Calls in other
files (and those of the file the text search misses: ``config = make_config()`` of a
configured function) are known from the repository analysis, the ``npu007-passes:`` facts of
:mod:`._passed_configs`, for a function of the module or the ``__init__`` of one of its classes.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from npu_codemod.api import Base, FileContext, Node, find_argument, symbols, tokens
from npu_codemod.api._toolkit import enclosing_scope, is_call_trailer, module_parts, position, tree_text

from ._config_functions import configured_functions
from ._functions import parameters
from ._passed_configs import FROM, POSITION, Passed, passed_configs

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


def configured_elsewhere(function: Node, name: str, ctx: FileContext) -> Optional[Passed]:
    """A call of the repository (:mod:`._passed_configs`) of ``function`` (a function of the
    module, or the ``__init__`` of one of its classes) that passes, as its parameter ``name``,
    a config its caller configures; None when the facts know of none."""
    callee, keys = _callee_keys(function, name)
    if callee is None:
        return None
    own = ".".join(module_parts(ctx.path))
    for passed in passed_configs(ctx.facts).get(callee, ()):
        if passed.parameter in keys and passed.reaches(own) and _configured(passed, ctx):
            return passed
    return None


def _callee_keys(function: Node, name: str) -> tuple[Optional[str], set[str]]:
    """The name a caller of another module calls ``function`` by (a class's for its
    ``__init__``; None for other methods and nested functions), and how it passes ``name``
    (the keyword, ``#<position>``)."""
    declared = parameters(function)
    kinds = {leaf.value: kind for kind, leaf in declared}
    if kinds.get(name) not in ("positional", "keyword"):
        return None, set()
    positional = [leaf.value for kind, leaf in declared if kind == "positional"]
    holder = _holder(function)
    if holder.type == symbols.file_input:
        callee, skipped = function.children[1].value, 0
    elif function.children[1].value == "__init__" and holder.type == symbols.classdef \
            and _holder(holder).type == symbols.file_input and positional[:1] == ["self"]:
        callee, skipped = holder.children[1].value, 1
    else:
        return None, set()
    keys = {name}
    if name in positional and positional.index(name) >= skipped:
        keys.add(f"{POSITION}{positional.index(name) - skipped}")
    return callee, keys


def _holder(definition: Node) -> Base:
    """The module or class whose body holds ``definition`` (a ``def`` or ``class``, maybe
    decorated); another node for one nested in a function or a block."""
    node = definition.parent
    if node is not None and node.type == symbols.decorated:
        node = node.parent
    if node is not None and node.type == symbols.suite:
        node = node.parent
    return node if node is not None else definition


def _configured(passed: Passed, ctx: FileContext) -> bool:
    """Is the config of ``passed`` configured by its caller: a session there takes it, it has
    the lines, or it comes from a function the repository's facts say returns it configured?"""
    if not passed.why.startswith(FROM):
        return True
    return configured_functions(ctx.facts).find(passed.why[len(FROM):], passed.path) is not None
