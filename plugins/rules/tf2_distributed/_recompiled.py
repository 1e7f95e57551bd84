"""Optimizers compiled more than once: which ``compile(optimizer=<name>)`` arguments name an
object that another compile of the same scope, or the same compile in a loop, passes again.

``npu.distribute.npu_distributed_keras_optimizer_wrapper`` returns the optimizer it is given
after patching it in place (``hccl.py``: ``optimizer.apply_gradients = ...``). Wrapping the same
object at two compiles that both run nests the patch, and from the second compile on every step
all-reduces its gradients twice: the freeze-then-unfreeze recipe of many Keras detectors
(``model.compile(optimizer=optimizer)`` for the frozen stage, again after unfreezing). Two
compiles in different branches of one ``if`` never both run; a name bound anew between them (or
inside the loop) is a new object.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Optional

from npu_codemod.api import Base, find_argument, symbols, tokens
from npu_codemod.api._toolkit import called_method, enclosing_scope, pre_order

_LOOPS = (symbols.for_stmt, symbols.while_stmt)
_SCOPES = (symbols.funcdef, symbols.classdef, symbols.file_input)


def recompiled(tree: Base) -> dict[int, str]:
    """``id`` of each ``compile`` optimizer argument (a name) whose object is compiled again ->
    where ("lines 15, 21" or "in a loop")."""
    groups: dict[tuple[int, str], list[Base]] = defaultdict(list)
    for node in pre_order(tree):
        value = _optimizer_name(node)
        if value is not None:
            groups[(id(enclosing_scope(value)), value.value)].append(value)
    found: dict[int, str] = {}
    for values in groups.values():
        lines = "lines " + ", ".join(str(value.get_lineno()) for value in values)
        order = {id(node): index for index, node in enumerate(pre_order(enclosing_scope(values[0])))} \
            if len(values) > 1 else {}
        for value in values:
            if _in_loop_of_one_object(value):
                found[id(value)] = "in a loop"
        for first in values:
            for second in values:
                if first is not second and _both_run(first, second, order):
                    found[id(first)] = found[id(second)] = lines
    return found


def _optimizer_name(node: Base) -> Optional[Base]:
    """The optimizer argument of ``<x>.compile(...)`` at the ``.compile`` trailer ``node``,
    when it is a name."""
    if node.type != symbols.trailer or len(node.children) != 2 or node.children[0].type != tokens.DOT \
            or node.children[1].value != "compile":
        return None
    index = called_method(node)
    power = node.parent
    if index is None or power is None:
        return None
    argument = find_argument(power.children[index + 1], "optimizer", 0)
    if argument is None or argument.star or argument.value.type != tokens.NAME:
        return None
    return argument.value


def _both_run(first: Base, second: Base, order: dict[int, int]) -> bool:
    """Can the compile of ``first`` run, and that of ``second`` after it, on one object?"""
    if order[id(first)] > order[id(second)] or _exclusive(first, second):
        return False
    return not _bound_between(first, second, order)


def _exclusive(one: Base, other: Base) -> bool:
    """Are ``one`` and ``other`` in different branches of one ``if``?"""
    ancestors = {}
    child, node = one, one.parent
    while node is not None:
        ancestors[id(node)] = child
        child, node = node, node.parent
    child, node = other, other.parent
    while node is not None and id(node) not in ancestors:
        child, node = node, node.parent
    return node is not None and node.type == symbols.if_stmt and ancestors[id(node)] is not child


def _bound_between(first: Base, second: Base, order: dict[int, int]) -> bool:
    """Is the name bound anew after ``first`` by a statement that always runs before
    ``second`` (a statement of a block that holds ``second``, not one nested in a branch)?"""
    child, block = second, second.parent
    while block is not None:
        for statement in block.children:
            if statement is child:
                break
            if order.get(id(statement), -1) > order[id(first)] and _binds(statement, second.value):
                return True
        if block.type in _SCOPES:
            return False
        child, block = block, block.parent
    return False


def _in_loop_of_one_object(value: Base) -> bool:
    """Is the compile in a loop of its scope whose body does not bind the name anew?"""
    node = value.parent
    while node is not None and node.type not in _SCOPES:
        if node.type in _LOOPS and not _loop_binds(node, value.value):
            return True
        node = node.parent
    return False


def _loop_binds(loop: Base, name: str) -> bool:
    """``for name in ...``, or a statement of the loop's body that binds ``name``."""
    if loop.type == symbols.for_stmt and _names(loop.children[1], name):
        return True
    body = next((child for child in loop.children if child.type == symbols.suite), None)
    statements = body.children if body is not None else loop.children
    return any(_binds(statement, name) for statement in statements)


def _binds(statement: Base, name: str) -> bool:
    """Is ``statement`` (a line of a block) ``name = ...``?"""
    parts = statement.children if statement.type == symbols.simple_stmt else [statement]
    return any(part.type == symbols.expr_stmt and len(part.children) >= 3
               and part.children[1].type == tokens.EQUAL and _names(part.children[0], name)
               for part in parts)


def _names(target: Base, name: str) -> bool:
    return target.type == tokens.NAME and target.value == name
