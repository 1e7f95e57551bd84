"""Navigation around a node: its statement and block, whether a statement can go in front of
it, its index among its siblings (by identity), whether it is inside another, its
indentation, its scope, a free name there; the shapes rules read (a compound statement's
bodies, a plain assignment, a definition's name, a line's first small statement) and the
``if __name__ == "__main__":`` block.

Names (imports, dotted names) live in :mod:`names`; edits that insert statements in
:mod:`edits`; walks in :mod:`walk`.
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .walk import node_pre_order

BLOCKS = (syms.suite, syms.file_input)
_SCOPES = (syms.funcdef, syms.classdef, syms.file_input)
#: Ancestors that make inserting a statement in front impossible or wrong.
_NO_STATEMENT = {
    syms.lambdef: "inside a lambda",
    syms.funcdef: "in a def line (default argument or one-line body)",
    syms.classdef: "in a class line",
}


def enclosing_statement(node: pytree.Base) -> Optional[pytree.Base]:
    """The statement of a block (module or suite) holding ``node``, or None (see :func:`why_not`)."""
    return None if why_not(node) else statement_of(node)


def why_not(node: pytree.Base) -> Optional[str]:
    """Why no statement can be inserted before ``node``'s statement, or None when one can."""
    child = node
    while child.parent is not None and child.parent.type not in BLOCKS:
        parent = child.parent
        if parent.type in _NO_STATEMENT:
            return _NO_STATEMENT[parent.type]
        if any(sibling.type == syms.comp_for for sibling in parent.children):
            return "inside a comprehension"
        if parent.type == syms.simple_stmt and parent.children[0] is not child:
            return "after a ';' on the same line"
        child = parent
    return None if child.parent is not None else "outside any statement"


def statement_of(node: pytree.Base) -> pytree.Base:
    """The statement of a block (module or suite) that holds ``node`` (``node`` itself when it
    is one, or the outermost node when it is in no block)."""
    while node.parent is not None and node.parent.type not in BLOCKS:
        node = node.parent
    return node


def is_docstring(statement: pytree.Base) -> bool:
    """A statement line that starts with a string: a module, class or function docstring."""
    return bool(statement.type == syms.simple_stmt and statement.children[0].type == token.STRING)


def block_child(node: pytree.Base, block: pytree.Node) -> Optional[pytree.Base]:
    """The child of ``block`` (a suite or the module) that holds ``node``, or None."""
    while node.parent is not None:
        if node.parent is block:
            return node
        node = node.parent
    return None


def is_inside(node: pytree.Base, ancestor: pytree.Base) -> bool:
    """Is ``node`` ``ancestor`` or inside it (by identity)?"""
    current: Optional[pytree.Base] = node
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False


def definition_name(definition: pytree.Base) -> str:
    """The name a ``def`` or ``class`` statement defines."""
    return str(definition.children[1].value)


def assignment(statement: pytree.Base) -> Optional[tuple[pytree.Base, pytree.Base]]:
    """``(target, value)`` of a plain ``target = value`` statement (an ``expr_stmt``), else
    None (a chained ``a = b = value``, an augmented or annotated assignment, an expression)."""
    children = statement.children
    if statement.type != syms.expr_stmt or len(children) != 3 or children[1].type != token.EQUAL:
        return None
    return children[0], children[2]


def small_statement(line: pytree.Base) -> pytree.Base:
    """The first small statement of a statement line (``x = 1`` of ``x = 1; y = 2``), or
    ``line`` itself when it is no ``simple_stmt`` (a compound statement)."""
    return line.children[0] if line.type == syms.simple_stmt else line


def child_index(node: pytree.Base) -> int:
    """``node``'s index among its parent's children. Not ``children.index(node)``: fissix
    compares nodes by structure, so that finds an equal earlier sibling (a second
    ``sess.run(op)`` line of the block) instead."""
    return next(index for index, child in enumerate(node.parent.children) if child is node)


def indentation(statement: pytree.Base) -> str:
    """The whitespace in front of ``statement`` (spaces or tabs, as the file has them)."""
    block = statement.parent
    if block is None or block.type != syms.suite:
        return ""
    indent = next(child for child in block.children if child.type == token.INDENT)
    value: str = indent.value
    return value


def enclosing_scope(node: pytree.Base) -> pytree.Node:
    """The function, class or module whose names ``node`` sees first."""
    scope = node.parent
    while scope.type not in _SCOPES:
        scope = scope.parent
    return scope


#: The attribute of a module's tree that holds the names of the code a selective parse left
#: out (``units.ParsePlan.mark``): :func:`used_names` of the module counts them.
HIDDEN_NAMES = "npu_codemod_hidden_names"


def used_names(scope: pytree.Node) -> set[str]:
    """Variable names spelled anywhere in ``scope`` (nested code included; not attributes/keywords)."""
    names = set(getattr(scope, HIDDEN_NAMES, ()))
    for node in node_pre_order(scope):  # each leaf seen from its parent: no sibling maps
        children = node.children
        for index, leaf in enumerate(children):
            if leaf.type != token.NAME or (index and children[index - 1].type == token.DOT):
                continue
            if index == 0 and node.type == syms.argument and len(children) == 3 \
                    and children[1].type == token.EQUAL:
                continue
            names.add(leaf.value)
    return names


def free_name(scope: pytree.Node, preferred: str, fallback: str,
              taken: Optional[AbstractSet[str]] = None) -> str:
    """``preferred`` when unused in ``scope``, else ``fallback``, ``fallback_1``, ``fallback_2``...

    ``taken``: the names to avoid, when the caller keeps them (default: :func:`used_names`).
    """
    taken = used_names(scope) if taken is None else taken
    candidates = [preferred, fallback] + [f"{fallback}_{n}" for n in range(1, len(taken) + 2)]
    return next(name for name in candidates if name not in taken)


def last_leaf(node: pytree.Base) -> Optional[pytree.Leaf]:
    """The last leaf of ``node`` (``node`` itself for a leaf); None for an empty node."""
    while node.children:
        node = node.children[-1]
    return node if isinstance(node, pytree.Leaf) else None


def main_block(tree: pytree.Node) -> Optional[pytree.Node]:
    """The module-level ``if __name__ == "__main__":`` statement, or None: the test compares
    the name ``__name__`` with the string ``"__main__"`` (either order, any quotes), as
    :func:`is_ast_main_block` reads it; its body is :func:`compound_body` (a suite, or the
    line of a one-line body)."""
    for statement in tree.children:
        if statement.type == syms.if_stmt and _is_main_test(statement.children[1]):
            return statement
    return None


def _is_main_test(test: pytree.Base) -> bool:
    if test.type != syms.comparison or len(test.children) != 3 or test.children[1].type != token.EQEQUAL:
        return False
    operands = {_main_operand(test.children[0]), _main_operand(test.children[2])}
    return operands == {("name", "__name__"), ("string", "__main__")}


def _main_operand(node: pytree.Base) -> tuple[str, object]:
    if node.type == token.NAME:
        return "name", node.value
    if node.type != token.STRING:
        return "", None
    try:
        return "string", ast.literal_eval(node.value)
    except (SyntaxError, ValueError):  # an f-string
        return "", None


def is_ast_main_block(statement: ast.stmt) -> bool:
    """:func:`main_block`'s test on an ``ast`` statement (the selective parse reads ``ast``)."""
    test = statement.test if isinstance(statement, ast.If) else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    operands = {_ast_main_operand(test.left), _ast_main_operand(test.comparators[0])}
    return operands == {("name", "__name__"), ("string", "__main__")}


def _ast_main_operand(node: ast.expr) -> tuple[str, object]:
    if isinstance(node, ast.Name):
        return "name", node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "string", node.value
    return "", None


def compound_body(statement: pytree.Node, clause: int = 0) -> pytree.Base:
    """The body of clause ``clause`` of a compound statement (``if``/``elif``/``else``,
    ``for``, ``while``, ``with``, ``try``, ``def``, ``class``): the suite, or the line of a
    one-line body, after that clause's ``:``."""
    colons = [index for index, child in enumerate(statement.children) if child.type == token.COLON]
    return statement.children[colons[clause] + 1]


def block_statements(body: pytree.Base) -> list[pytree.Base]:
    """The statements of a body (:func:`compound_body`): a suite's, or the one-line body itself."""
    if body.type != syms.suite:
        return [body]
    return [child for child in body.children if child.type not in (token.INDENT, token.DEDENT, token.NEWLINE)]
