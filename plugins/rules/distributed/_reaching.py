"""What a name read at one place may hold, in source order: the bindings that reach the read.

NPU027 leaves hooks alone when they already hold a broadcast; which values count for a name
``hooks`` read at ``estimator.train(..., hooks=hooks)`` is a question of order. A binding
after the read does not reach it (``hooks = [bcast_hook]`` after training), nor one an
unconditional binding in between replaces (``hooks = [timer]`` again before the call); a
binding in a branch may or may not (``if multi: hooks = [...]``); and what is added to the
list (``hooks.append(bcast_hook)``) counts only after the binding it adds to.

:func:`reaching` answers with one :class:`Reach` per binding that may reach the read, in
source order: the last binding before the read whose block holds the read (it always runs
before it: a ``with`` body counts as its block's), the ones after it in between (in a branch
or a loop), and those after the read in a loop around both (a second turn reads them). None
when the name comes from an enclosing function or the module seen from a function: the order
of the two is not known from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from npu_codemod.api import Base, symbols, tokens
from npu_codemod.api._toolkit import bound_names, enclosing_scope, is_inside, uses

#: Statements that hold blocks, a one-line body's parent among them.
COMPOUND = (symbols.if_stmt, symbols.for_stmt, symbols.while_stmt, symbols.try_stmt, symbols.with_stmt,
            symbols.funcdef, symbols.classdef, symbols.async_stmt, symbols.async_funcdef)
LOOPS = (symbols.for_stmt, symbols.while_stmt)


@dataclass
class Reach:
    """A binding that may reach the read: ``value`` of ``name = value`` (None for another
    binding, or for none: the name's value from outside the scope), and the leaves of the name
    used between it and the read (its list's additions among them)."""

    value: Optional[Base]
    after: list[Base] = field(default_factory=list)


def reaching(read: Base) -> Optional[list[Reach]]:
    """The bindings of the name ``read`` (a NAME leaf) that may reach it (see the module
    docstring), with ``Reach(None, ...)`` first when none before it does (the name comes from
    outside the scope, or is not bound yet)."""
    name, scope = str(read.value), enclosing_scope(read)
    if scope.type != symbols.file_input and name not in bound_names(scope):
        return None
    found: list[Reach] = [Reach(None)]  # the value from outside, until a binding dominates
    dominator: Optional[Base] = None
    after_read = False
    loop = _loop_around(read, scope)
    for use in uses(scope, name):
        leaf = use.leaf
        if leaf is read:
            after_read = True  # what follows reaches only through a loop around both
            continue
        if enclosing_scope(leaf) is not scope:
            continue
        is_bind = use.kind == "bind" and not _augmented(leaf)
        if not after_read and is_bind:
            if _dominates(leaf, read, scope):
                found, dominator = [], leaf
            found.append(Reach(_assigned(leaf)))
        elif not after_read:
            for reach in found:
                reach.after.append(leaf)
        elif is_bind and loop is not None and is_inside(leaf, loop) \
                and (dominator is None or not is_inside(dominator, loop)):
            found.append(Reach(_assigned(leaf)))
    return found


def _augmented(leaf: Base) -> bool:
    """Is ``leaf`` the target of an augmented assignment (``hooks += [...]``: an addition)?"""
    parent = leaf.parent
    return parent is not None and parent.type == symbols.expr_stmt and len(parent.children) == 3 \
        and parent.children[0] is leaf and parent.children[1].type != tokens.EQUAL


def _assigned(leaf: Base) -> Optional[Base]:
    """The value of ``leaf = value`` (also ``a = leaf = value``), or None."""
    parent = leaf.parent
    if parent is None or parent.type != symbols.expr_stmt or leaf not in parent.children[:-1:2]:
        return None
    if not all(sign.type == tokens.EQUAL for sign in parent.children[1::2]):
        return None
    return parent.children[-1]


def _block(leaf: Base, scope: Base) -> Base:
    """The block whose statements run in order around the statement of ``leaf``: the suite (or
    module) that holds it, the statement itself for a one-line body (``if x: y = 1``), the
    scope for a parameter; a ``with`` body's is its statement's block."""
    node = leaf
    while node.parent is not None and node.parent is not scope \
            and node.parent.type not in (symbols.suite, symbols.file_input) + COMPOUND:
        node = node.parent
    parent = node.parent
    if parent is scope:
        return scope  # a module's statement, a parameter
    if parent is None or parent.type in COMPOUND:
        return node
    block = parent
    while block.type == symbols.suite and block.parent is not None and block.parent.type == symbols.with_stmt \
            and block.parent.parent is not None:
        block = block.parent.parent
    return block


def _dominates(bind: Base, read: Base, scope: Base) -> bool:
    """Does the binding at ``bind`` (before ``read``) always run before ``read``?"""
    return is_inside(read, _block(bind, scope))


def _loop_around(read: Base, scope: Base) -> Optional[Base]:
    """The outermost loop of ``scope`` that holds ``read``, or None."""
    found, node = None, read.parent
    while node is not None and node is not scope:
        if node.type in LOOPS:
            found = node
        node = node.parent
    return found


