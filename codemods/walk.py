"""Walking a module's statements without entering expressions.

Most nodes of a tree are parts of expressions; a helper looking for imports or assignments
needs none of them, and fissix's recursive ``pre_order`` generator costs more per node than
the check it feeds (a whole-tree walk was 2-3% of a file's parse time, per helper).
"""

from __future__ import annotations

from typing import FrozenSet, Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

#: Nodes that hold statements; nothing else can contain one.
_HOLDS_STATEMENTS = frozenset({
    syms.file_input, syms.suite, syms.simple_stmt, syms.if_stmt, syms.while_stmt,
    syms.for_stmt, syms.try_stmt, syms.with_stmt, syms.funcdef, syms.classdef,
    syms.decorated, syms.async_stmt, syms.async_funcdef,
})
_SEPARATORS = frozenset({token.SEMI, token.NEWLINE})
_SCOPES = frozenset({syms.funcdef, syms.classdef})


def small_statements(tree: pytree.Node) -> Iterator[pytree.Base]:
    """Every small statement (import, assignment, call, ``return``...) of a module, in source
    order. Do not edit the tree while iterating.

    One iterator per level of blocks (a module is mostly lines, each taken where it is met):
    a third less than a stack of the nodes that may hold statements, filtered per node."""
    simple, separators, holds = syms.simple_stmt, _SEPARATORS, _HOLDS_STATEMENTS
    if tree.type == simple:
        yield from (child for child in tree.children if child.type not in separators)
        return
    stack = [iter(tree.children)]
    while stack:
        for node in stack[-1]:
            kind = node.type
            if kind == simple:  # a line: its statements, never a block
                for child in node.children:
                    if child.type not in separators:
                        yield child
            elif kind in holds:
                stack.append(iter(node.children))
                break
        else:
            stack.pop()


def scope_statements(scope: pytree.Node, nested: bool = False) -> Iterator[pytree.Base]:
    """``statements.scope_nodes`` without what is inside expressions: ``scope``, its blocks,
    statements, and the small statements of each line, in the same order. Nested functions
    and classes are entered only when ``nested``. For who looks for assignments, returns or
    a given statement: a scope is mostly expressions. Do not edit the tree while iterating.
    (One iterator per level of blocks, as :func:`small_statements`.)"""
    simple, separators, holds = syms.simple_stmt, _SEPARATORS, _HOLDS_STATEMENTS
    yield scope
    if scope.type == simple:
        yield from (child for child in scope.children if child.type not in separators)
        return
    stack = [iter(scope.children)]
    while stack:
        for node in stack[-1]:
            kind = node.type
            if kind not in holds:
                continue
            yield node
            if kind == simple:
                for child in node.children:
                    if child.type not in separators:
                        yield child
            elif nested or kind not in _SCOPES:
                stack.append(iter(node.children))
                break
        else:
            stack.pop()


def scoped_statements(tree: pytree.Node) -> Iterator[tuple[pytree.Node, pytree.Base]]:
    """(scope, small statement) for every small statement of a module, ``scope`` being the
    function, class or module it runs in: for who tracks names per scope. Scopes come one
    after another (not in source order). Do not edit the tree while iterating."""
    scopes = [tree]
    while scopes:
        scope = scopes.pop()
        for node in scope_statements(scope):
            if node is not scope and node.type in _SCOPES:
                scopes.append(node)
            elif node.parent is not None and node.parent.type == syms.simple_stmt:
                yield scope, node


def pre_order(tree: pytree.Base) -> Iterator[pytree.Base]:
    """The nodes of ``tree`` in ``tree.pre_order()`` order, iteratively: several times faster.

    fissix's version nests one generator per tree level, so each node costs its depth. Do not
    edit the tree while iterating (collect first), as with any snapshot of it.
    """
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if node.children:
            stack.extend(reversed(node.children))


def node_pre_order(tree: pytree.Base) -> Iterator[pytree.Node]:
    """Like :func:`pre_order` without the leaves (most of a tree), for who wants nodes only."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(node.children):
            if child.type >= 256:
                stack.append(child)


def tree_text(tree: pytree.Base) -> str:
    """``str(tree)`` without a ``str()`` and a ``join`` per node: half the cost, and every
    changed file is turned into text at least twice (NPU001's check, the outcome). A leaf's
    prefix is read from ``_prefix``, where fissix's ``prefix`` property reads it: a tenth of
    the walk was that property's call."""
    if tree.type < 256:
        return str(tree)
    pieces: list[str] = []
    add = pieces.append
    stack = [iter(tree.children)]
    while stack:
        for child in stack[-1]:
            if child.type < 256:
                add(child._prefix)
                add(child.value)
            else:
                stack.append(iter(child.children))
                break
        else:
            stack.pop()
    try:
        return "".join(pieces)
    except TypeError:  # a leaf value that is not a str (str() would convert it)
        return str(tree)


def post_order(
    tree: pytree.Base,
    leaves: Optional[dict[int, Optional[FrozenSet[str]]]] = None,
    nodes: Optional[FrozenSet[int]] = None,
) -> Iterator[pytree.Base]:
    """``tree.post_order()`` without a generator per level, edits included: like fissix, each
    node's children list is taken when the walk enters the node (``replace`` swaps the list).

    With ``leaves``, only the leaves of those types are yielded, and of those with a set of
    values, only the ones with such a value: most of a tree is leaves nobody asked for. With
    ``nodes``, only the (non-leaf) nodes of those types are.
    """
    stack = [(tree, iter(tree.children))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child.type >= 256:
                stack.append((child, iter(child.children)))
                break
            if leaves is None:
                yield child
            elif child.type in leaves:
                values = leaves[child.type]
                if values is None or child.value in values:
                    yield child
        else:
            stack.pop()
            if nodes is None or node.type in nodes:
                yield node


def position(node: pytree.Base) -> tuple[int, int]:
    """(line, column) of the first original leaf of ``node`` (new leaves have no position)."""
    for leaf in node.leaves():
        if leaf.lineno:
            return leaf.lineno, leaf.column
    return 1, 0


def scope_nodes(scope: pytree.Node, nested: bool = False) -> Iterator[pytree.Base]:
    """Nodes of ``scope`` in source order; nested functions/classes only when ``nested``."""
    stack = [scope]
    while stack:
        node = stack.pop()
        yield node
        if node is not scope and not nested and node.type in (syms.funcdef, syms.classdef):
            continue
        stack.extend(reversed(node.children))
