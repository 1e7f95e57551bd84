"""Opening a one-line body into a block, so that a statement can be inserted in front of it.

``if done: return x`` has no line of its own for ``sess.close()``; opened, it has one::

    if done:
        sess.close()
        return x

Only that body moves (its trailing comment with it); the rest of the file stays byte-identical.
"""

from __future__ import annotations

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .nodes import child_index, indentation, statement_of

#: The indentation step where the file shows none: a statement at module level.
_STEP = "    "


def open_block(line: pytree.Node, newline: str) -> None:
    """Move ``line``, the one-line body after a ``:``, to a block of its own, one indentation
    step deeper than the statement it belongs to."""
    owner = line.parent
    statement = statement_of(owner)
    outer = indentation(statement)
    index = child_index(line)
    line.remove()
    line.prefix = ""  # the space after ':'
    suite = pytree.Node(syms.suite, [
        pytree.Leaf(token.NEWLINE, newline),
        pytree.Leaf(token.INDENT, outer + _indentation_step(statement, outer)),
        line,
        pytree.Leaf(token.DEDENT, ""),
    ])
    owner.insert_child(index, suite)


def _indentation_step(statement: pytree.Base, outer: str) -> str:
    """What the block holding ``statement`` adds to the indentation of the def/if/for... whose
    body it is."""
    block = statement.parent
    if block.type != syms.suite:
        return _STEP
    base = indentation(statement_of(block.parent))
    return outer[len(base):] if outer.startswith(base) and len(outer) > len(base) else _STEP
