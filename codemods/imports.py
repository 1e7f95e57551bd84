"""Header imports: finding, and inserting at the one place the NPU guide allows.

``from npu_bridge.npu_init import *`` also binds ``tf`` and ``os``, so it must come before the
file's own imports (after shebang/encoding comments, the module docstring and ``__future__``
imports), or it would rebind the file's alias.
"""

from __future__ import annotations

from typing import Iterable, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .snippets import parse_statements


def normalized(statement: pytree.Base) -> str:
    """A statement's code without prefix or whitespace, for comparisons."""
    return "".join(str(statement).split())


def find_import(tree: pytree.Node, statement: str) -> Optional[pytree.Node]:
    """The top-level simple statement equal to ``statement`` (whitespace ignored), if any."""
    wanted = "".join(statement.split())
    for child in tree.children:
        if child.type == syms.simple_stmt and normalized(child) == wanted:
            return child
    return None


def header_index(tree: pytree.Node) -> int:
    """Index in ``tree.children`` after the module docstring and ``__future__`` imports."""
    index = 0
    children = tree.children
    if children and _is_docstring(children[0]):
        index = 1
    while index < len(children) and _is_future_import(children[index]):
        index += 1
    return index


def insert_header_imports(
    tree: pytree.Node, statements: Iterable[str], newline: str, after: Optional[str] = None
) -> list[str]:
    """Insert each missing statement once; after ``after`` if present, else at the header.

    Returns the statements that were inserted.
    """
    missing = [s for s in dict.fromkeys(statements) if find_import(tree, s) is None]
    if not missing:
        return []
    anchor = find_import(tree, after) if after else None
    index = tree.children.index(anchor) + 1 if anchor else header_index(tree)
    nodes = parse_statements("\n".join(missing), newline)
    following = tree.children[index] if index < len(tree.children) else None
    if anchor is None and index == 0 and following is not None:
        # Comments and blank lines above the first statement (shebang, coding, licence)
        # stay at the top of the file.
        nodes[0].prefix, following.prefix = following.prefix, ""
    if index > 0 and not str(tree.children[index - 1]).endswith(("\n", "\r")):
        nodes[0].prefix = newline + nodes[0].prefix
    for offset, node in enumerate(nodes):
        tree.insert_child(index + offset, node)
    return missing


def _is_docstring(node: pytree.Base) -> bool:
    return (
        node.type == syms.simple_stmt
        and node.children[0].type == token.STRING
    )


def _is_future_import(node: pytree.Base) -> bool:
    if node.type != syms.simple_stmt or node.children[0].type != syms.import_from:
        return False
    module = node.children[0].children[1]
    return module.type == token.NAME and module.value == "__future__"
