"""How a name is used in its scope, and inserting a statement after another one.

NPU010 must know whether a session object stays inside its block (then closing it after the
last statement that uses it is safe) or escapes it. :func:`uses` classifies every occurrence
of a name; :func:`insert_after` adds a statement with the block's indentation and the file's
line ending, keeping comments that belong to the next statement in front of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .snippets import parse_statements
from .statements import child_index, indentation
from .walk import scope_statements

NESTED_SCOPES = (syms.funcdef, syms.classdef, syms.lambdef)
#: Nodes through which a value flows unchanged: ``(x)``, ``x or y``, ``a if c else x``.
_TRANSPARENT = (syms.or_test, syms.and_test, syms.test)
_CONTAINERS = (syms.testlist_gexp, syms.listmaker, syms.dictsetmaker, syms.testlist,
               syms.exprlist, syms.testlist_star_expr, syms.subscriptlist)
_HARMLESS = (syms.comparison, syms.not_test, syms.if_stmt, syms.while_stmt, syms.assert_stmt,
             syms.simple_stmt, syms.expr_stmt)
_TARGET_PARTS = (syms.atom, syms.testlist_gexp, syms.exprlist, syms.testlist_star_expr,
                 syms.listmaker, syms.star_expr)
_AUGMENTED = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "^=",
                        "|=", "@="})


@dataclass(frozen=True)
class Use:
    """One occurrence of a name in a scope.

    ``kind`` is one of: ``bind`` (assigned, deleted, a loop/with/import target, a parameter,
    declared global/nonlocal), ``attribute`` (``name.x``, ``name(...)``, ``name[...]``),
    ``argument`` (passed to a call), ``with`` (a context manager: ``with name:``), ``harmless``
    (tested, compared, an expression statement) or ``escape`` (``detail`` says how).
    """

    leaf: pytree.Leaf
    kind: str
    detail: str = ""


def uses(scope: pytree.Node, name: str) -> list[Use]:
    """Every occurrence of ``name`` in ``scope``, nested functions included, in source order.

    A nested function, class or lambda that binds ``name`` itself is skipped; one that only
    reads it makes that occurrence an ``escape`` ("used in a nested function").
    """
    result = []
    for leaf, nested in _occurrences(scope, name):
        use = classify(leaf)
        if nested and use.kind != "bind":
            use = Use(leaf, "escape", "used in a nested function")
        result.append(use)
    return result


def _occurrences(node: pytree.Base, name: str, nested: bool = False) -> Iterator[tuple[pytree.Leaf, bool]]:
    for child in node.children:
        if child.type == token.NAME:
            if child.value == name and _is_variable(child):
                yield child, nested
        elif child.type in NESTED_SCOPES:
            if child.type == syms.funcdef and child.children[1].value == name:
                yield child.children[1], nested
            if not _binds_locally(child, name):
                yield from _occurrences(child, name, nested=True)
        elif child.children:
            yield from _occurrences(child, name, nested)


def _is_variable(leaf: pytree.Leaf) -> bool:
    """False for ``obj.name`` and the keyword of ``f(name=...)``."""
    previous = leaf.prev_sibling
    if previous is not None and previous.type == token.DOT:
        return False
    parent = leaf.parent
    if parent is not None and parent.type == syms.argument and parent.children[0] is leaf:
        return not (len(parent.children) == 3 and parent.children[1].type == token.EQUAL)
    if parent is not None and parent.type in (syms.funcdef, syms.classdef):
        return False  # the def/class name binds in the outer scope, handled by the caller
    return True


def _binds_locally(scope: pytree.Node, name: str) -> bool:
    """True when ``name`` is local to the nested ``scope`` (a parameter or assigned there)."""
    declared = bound = False
    for leaf, nested in _occurrences(scope, name):
        if nested:
            continue
        use = classify(leaf)
        if use.kind == "bind":
            if use.detail == "declared":
                declared = True
            else:
                bound = True
    return bound and not declared


def classify(leaf: pytree.Leaf) -> Use:
    """What one occurrence of a name does with the object it names."""
    binding = _binding(leaf)
    if binding:
        return Use(leaf, "bind", binding)
    following = leaf.next_sibling
    if following is not None and following.type == syms.trailer:
        return Use(leaf, "attribute")
    node = leaf
    while True:
        parent = node.parent
        if parent is None:
            return Use(leaf, "harmless")
        if parent.type == syms.atom and parent.children[0].type == token.LPAR \
                and len(parent.children) == 3:
            node = parent
            continue
        if parent.type in _TRANSPARENT and not (parent.type == syms.test and
                                                 child_index(node) == 2):
            node = parent
            continue
        break
    kind, detail = _value_flow(node, parent)
    return Use(leaf, kind, detail)


def _value_flow(node: pytree.Base, parent: pytree.Node) -> tuple[str, str]:
    if parent.type == syms.argument or parent.type == syms.arglist or (
        parent.type == syms.trailer and parent.children[0].type == token.LPAR
    ):
        return "argument", ""
    if parent.type == syms.trailer:  # x[name]
        return "harmless", ""
    if parent.type in (syms.with_item, syms.with_stmt):
        return "with", ""
    if parent.type == syms.return_stmt:
        return "escape", "returned"
    if parent.type in (syms.yield_expr, syms.yield_arg):
        return "escape", "yielded"
    if parent.type in _CONTAINERS or parent.type == syms.atom:
        return "escape", "stored in a container"
    if parent.type == syms.expr_stmt:
        if parent.children[-1] is node and len(parent.children) > 1:
            return "escape", "assigned to another name"
        return "harmless", ""
    if parent.type in _HARMLESS:
        return "harmless", ""
    return "escape", "used as a value"


def bound_names(scope: pytree.Node) -> set[str]:
    """Names a function, class or module binds itself (assigned, a loop/with/except target,
    imported, a parameter, a nested def/class, deleted), less those it declares global or
    nonlocal: any other name it reads comes from an enclosing scope. Statements only (no
    walk of expressions): ``:=`` targets are not seen."""
    bound, declared = set(), set()
    for node in scope_statements(scope):
        for leaf in _binding_leaves(node, scope):
            kind = _binding(leaf)
            if kind == "declared":
                declared.add(leaf.value)
            elif kind:
                bound.add(leaf.value)
    return bound - declared


def _binding_leaves(node: pytree.Base, scope: pytree.Node) -> Iterator[pytree.Leaf]:
    """The NAME leaves of statement ``node`` that may bind a name of ``scope``."""
    kind = node.type
    if kind == syms.expr_stmt:
        parts = node.children[:-1]
    elif kind == syms.for_stmt:
        parts = node.children[1:2]
    elif kind == syms.with_stmt:
        parts = [item.children[2] for item in node.children if item.type == syms.with_item]
    elif kind == syms.try_stmt:
        parts = [clause for clause in node.children if clause.type == syms.except_clause]
    elif kind in (syms.import_name, syms.import_from, syms.global_stmt, syms.del_stmt):
        parts = [node]
    elif kind == syms.funcdef:
        parts = [node.children[2]] if node is scope else [node.children[1]]  # parameters / name
    elif kind == syms.classdef:
        parts = [] if node is scope else [node.children[1]]
    else:
        return
    for part in parts:
        for leaf in part.leaves():
            if leaf.type == token.NAME and not (
                part.type == syms.parameters and _is_default_or_annotation(leaf)
            ):
                yield leaf


def _is_default_or_annotation(leaf: pytree.Leaf) -> bool:
    """``b`` or ``T`` in ``def f(a=b, c: T)``: read in the enclosing scope, not parameters."""
    node = leaf
    while node.parent.type not in (syms.parameters, syms.typedargslist, syms.tname):
        node = node.parent
    previous = node.prev_sibling
    return previous is not None and previous.type in (token.EQUAL, token.COLON)


def _binding(leaf: pytree.Leaf) -> str:
    """How ``leaf`` is bound (``assigned``, ``deleted``, ``declared``...), or ''."""
    node = leaf
    while node.parent is not None and node.parent.type in _TARGET_PARTS:
        if node.parent.type == syms.atom and node.parent.children[0].type not in (token.LPAR, token.LSQB):
            break
        node = node.parent
    parent = node.parent
    if parent is None:
        return ""
    following = node.next_sibling
    if parent.type in (syms.expr_stmt, syms.annassign) and following is not None and (
        following.type == token.EQUAL or str(following).strip() in _AUGMENTED
        or following.type == syms.annassign
    ):
        return "assigned"
    if parent.type in (syms.for_stmt, syms.comp_for) and child_index(node) == 1:
        return "assigned"
    if parent.type == syms.with_item and child_index(node) == 2:
        return "assigned"
    if parent.type == syms.del_stmt:
        return "deleted"
    if parent.type == syms.global_stmt:  # also ``nonlocal``
        return "declared"
    if parent.type in (syms.import_as_name, syms.dotted_as_name, syms.import_as_names,
                       syms.import_from, syms.import_name):
        return "imported"
    if parent.type in (syms.parameters, syms.typedargslist, syms.varargslist, syms.tname) or (
        parent.type == syms.lambdef and child_index(node) == 1
    ):
        return "parameter"
    if parent.type in (syms.funcdef, syms.classdef):
        return "defined"
    if parent.type == syms.except_clause and node.prev_sibling is not None \
            and node.prev_sibling.type == token.NAME and node.prev_sibling.value == "as":
        return "assigned"
    return ""


def is_terminal(statement: pytree.Base) -> bool:
    """True for a ``return``/``raise``/``break``/``continue`` line: nothing after it runs.

    A bare ``return`` or ``raise`` is a NAME leaf, like ``break``: fissix collapses a node of
    one child into that child.
    """
    if statement.type != syms.simple_stmt:
        return False
    terminals = (syms.return_stmt, syms.raise_stmt, syms.break_stmt, syms.continue_stmt)
    return any(child.type in terminals or (child.type == token.NAME and child.value in
               ("return", "raise", "break", "continue")) for child in statement.children)


def insert_after(statement: pytree.Base, code: str, newline: str) -> list[pytree.Base]:
    """Insert the statements of ``code`` right after ``statement`` (a child of a block).

    Blank lines and comments that follow a compound statement at the block's indentation
    belong to what comes next, so they move below the new code.
    """
    block = statement.parent
    indent = indentation(statement)
    nodes = parse_statements(code, newline)
    for node in nodes:
        node.prefix = indent
    moved = _take_trailing_text(statement, indent)
    index = child_index(statement) + 1
    for offset, node in enumerate(nodes):
        block.insert_child(index + offset, node)
    following = block.children[index + len(nodes)] if index + len(nodes) < len(block.children) else None
    if following is not None:
        following.prefix = moved + following.prefix
    elif moved:  # cannot happen in a parsed tree (blocks end in DEDENT/ENDMARKER), keep the text
        nodes[-1].prefix = moved + nodes[-1].prefix
    return nodes


def _take_trailing_text(statement: pytree.Base, indent: str) -> str:
    """Cut the prefixes of the DEDENTs ending ``statement``, except lines indented deeper."""
    dedents = []
    leaf = last_leaf(statement)
    while leaf is not None and leaf.type == token.DEDENT:
        dedents.append(leaf)
        leaf = leaf.prev_sibling
        if leaf is not None and leaf.type != token.DEDENT:
            leaf = last_leaf(leaf)
    text = "".join(dedent.prefix for dedent in reversed(dedents))
    if not text:
        return ""
    lines = text.splitlines(keepends=True)
    keep = 0
    while keep < len(lines) and lines[keep].strip() and _deeper(lines[keep], indent):
        keep += 1
    kept, moved = "".join(lines[:keep]), "".join(lines[keep:])
    for dedent in dedents:
        dedent.prefix = ""
    dedents[-1].prefix = kept
    return moved


def _deeper(line: str, indent: str) -> bool:
    whitespace = line[: len(line) - len(line.lstrip(" \t"))]
    return len(whitespace) > len(indent)


def last_leaf(node: pytree.Base) -> Optional[pytree.Leaf]:
    """The last leaf of ``node`` (``node`` itself for a leaf); None for an empty node."""
    while node.children:
        node = node.children[-1]
    return node if isinstance(node, pytree.Leaf) else None
