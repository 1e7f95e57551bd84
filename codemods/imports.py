"""Header imports: finding, and inserting at the one place the NPU guide allows.

``from npu_bridge.npu_init import *`` also binds ``tf`` and ``os``, so it must come before the
file's own imports (after shebang/encoding comments, the module docstring and ``__future__``
imports), or it would rebind the file's alias.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .nodes import child_index, is_docstring, last_leaf
from .snippets import parse_statements

#: The import NPU001 adds; code that uses ``npu_ops``, ``npu_unary_ops``... asks for it.
NPU_INIT_IMPORT = "from npu_bridge.npu_init import *"
#: The star import of the TF 2.x adapter's compat header (NPU062), which the header follows
#: with ``npu_device.compat.enable_v1()``: the imports rules ask for go after both.
COMPAT_INIT_IMPORT = "from npu_device.compat.v1.npu_init import *"

#: ``<name>.compat.enable_v1()``, as :func:`normalized` spells a statement.
_SWITCH = re.compile(r"\w+\.compat\.enable_v1\(\)\Z")
_IMPORTS = (syms.import_name, syms.import_from)
#: Nodes an import can sit in at module level (not functions or classes: their imports bind
#: no module name). Expressions hold no statements, so the search does not enter them.
_HOLDERS = frozenset({
    syms.file_input, syms.suite, syms.simple_stmt, syms.if_stmt, syms.while_stmt,
    syms.for_stmt, syms.try_stmt, syms.with_stmt, syms.async_stmt,
})


def normalized(statement: pytree.Base) -> str:
    """A statement's code without comments or whitespace, for comparisons."""
    return "".join("".join(leaf.value for leaf in statement.leaves()).split())


def find_import(tree: pytree.Node, statement: str) -> Optional[pytree.Node]:
    """The top-level statement that holds an import equal to ``statement``, if any.

    Comments and whitespace are ignored, and the import may sit in a module-level block
    (``try: from npu_bridge.npu_init import *``): the file has it either way. Imports inside
    functions and classes do not count, they do not bind module names.
    """
    wanted = "".join(statement.split())
    for child in tree.children:
        if any(_ends_like(node, wanted) and normalized(node) == wanted
               for node in _module_level_imports(child)):
            return child
    return None


def _ends_like(node: pytree.Base, wanted: str) -> bool:
    """Could ``node`` normalize to ``wanted``? Its last token says, cheaper than all of them."""
    leaf = last_leaf(node)
    return leaf is None or wanted.endswith("".join(leaf.value.split()))


def _module_level_imports(node: pytree.Base) -> Iterator[pytree.Base]:
    if node.type in _IMPORTS:
        yield node
    elif node.type in _HOLDERS:
        for child in node.children:
            yield from _module_level_imports(child)


def header_index(tree: pytree.Node) -> int:
    """Index in ``tree.children`` after the module docstring and ``__future__`` imports."""
    index = 0
    children = tree.children
    if children and is_docstring(children[0]):
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
    anchor = _past_switch(find_import(tree, after)) if after else None
    index = child_index(anchor) + 1 if anchor else header_index(tree)
    following = tree.children[index] if index < len(tree.children) else None
    if anchor is None and following is not None and _starts_with_future(following):
        _insert_after_future(following, missing)
        return missing
    nodes = parse_statements("\n".join(missing), newline)
    if anchor is None and index == 0 and following is not None:
        # Shebang, coding and licence comments stay at the top of the file; only a comment
        # block directly above the first statement (no blank line between) stays with it.
        nodes[0].prefix, following.prefix = _split_header_comments(following.prefix)
    if index > 0 and not str(tree.children[index - 1]).endswith(("\n", "\r")):
        nodes[0].prefix = newline + nodes[0].prefix
    for offset, node in enumerate(nodes):
        tree.insert_child(index + offset, node)
    return missing


def _past_switch(anchor: Optional[pytree.Node]) -> Optional[pytree.Node]:
    """``anchor``, or the ``<name>.compat.enable_v1()`` statement right after it: the compat
    header's star import and its switch stay together (imports after the switch)."""
    following = anchor.next_sibling if anchor is not None else None
    if following is not None and _SWITCH.match(normalized(following)):
        return following
    return anchor


def _split_header_comments(prefix: str) -> tuple[str, str]:
    """Split the prefix of a file's first statement into (file header, statement's comments).

    The header ends at the last blank line; without a blank line it is all header (the first
    lines of a file are shebang/coding lines, which must stay first).
    """
    lines = prefix.splitlines(keepends=True)
    blank = [i for i, line in enumerate(lines) if not line.strip()]
    if not blank or blank[-1] == len(lines) - 1:
        return prefix, ""
    cut = len("".join(lines[: blank[-1] + 1]))
    return prefix[:cut], prefix[cut:]


def _insert_after_future(statement: pytree.Node, missing: list[str]) -> None:
    """``from __future__ import x; import tensorflow as tf``: insert between the two imports.

    A line can hold both; the star import must still precede the file's own imports.
    """
    index = next(i for i, small in enumerate(_small_statements(statement)) if not _is_future(small))
    for code in reversed(missing):
        small = parse_statements(code)[0].children[0]
        small.remove()
        small.prefix = " "
        statement.insert_child(2 * index, pytree.Leaf(token.SEMI, ";"))
        statement.insert_child(2 * index, small)


def _small_statements(statement: pytree.Node) -> list[pytree.Base]:
    """The ``;``-separated statements of a simple statement line."""
    return [child for child in statement.children[:-1] if child.type != token.SEMI]


def _starts_with_future(node: pytree.Base) -> bool:
    return node.type == syms.simple_stmt and _is_future(node.children[0])


def _is_future_import(node: pytree.Base) -> bool:
    """A line made only of ``from __future__`` imports."""
    return node.type == syms.simple_stmt and all(map(_is_future, _small_statements(node)))


def _is_future(small: pytree.Base) -> bool:
    if small.type != syms.import_from:
        return False
    module = small.children[1]
    return bool(module.type == token.NAME and module.value == "__future__")


def place_imports(tree: pytree.Node, statements: Iterable[str], newline: str) -> list[str]:
    """Insert the imports rules asked for, each once: star imports first, at the header (or
    after one already in the file), the others right after them. Returns those inserted."""
    wanted = list(dict.fromkeys(statements))
    if not wanted:
        return []
    stars = [s for s in wanted if s.rstrip().endswith("*")]
    others = [s for s in wanted if s not in stars]
    # Imports go after the NPU001 import (or NPU062's header) when the file has it, asked for or not.
    present = [s for s in (*stars, NPU_INIT_IMPORT, COMPAT_INIT_IMPORT) if find_import(tree, s) is not None]
    ordered = [s for s in stars if s not in present] + others
    return insert_header_imports(tree, ordered, newline, after=present[0] if present else None)
