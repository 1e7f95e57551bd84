"""Does a session's close run on every path after the session is made? (NPU010)

``if len(sys.argv) > 1: sess.close()`` closes the session on one path only: on the other the
NPU graph executor is never released, so such a close is no close. A close is conditional when
a clause between it and the block that makes the session may not run: an ``if``/``elif``/
``else`` body (unless every clause of an ``if`` with an ``else`` closes, or it is the
``if __name__ == "__main__":`` block, the program's own path), a loop's body or ``else``, an
``except`` clause. A ``try`` body, its ``else`` and ``finally``, and a ``with`` body run on
the ordinary path (a failure path, like a ``raise``, is not followed). A close in a nested
function (``def cleanup(): sess.close()``, registered somewhere) is taken as it is.
"""

from __future__ import annotations

from typing import Optional, Sequence

from npu_codemod.api import Base, Node, symbols, tokens
from npu_codemod.api._toolkit import child_index, is_inside, main_block

_BRANCHES = (symbols.if_stmt, symbols.for_stmt, symbols.while_stmt, symbols.try_stmt)
_SCOPES = (symbols.funcdef, symbols.classdef, symbols.lambdef)
#: What the part before a clause's header ends with: the previous body (or its colon).
_BODY_ENDS = (tokens.COLON, symbols.suite, symbols.simple_stmt)


def skipping_clause(close: Base, made: Base, closes: Sequence[Base]) -> Optional[Node]:
    """The ``if``/loop/``try`` statement one of whose clauses holds ``close`` (a leaf of a
    close of the session) and may not run after ``made`` (the statement making the session),
    or None when the close runs on every path. ``closes``: the leaves of all its closes."""
    node = close
    while node.parent is not None and not is_inside(made, node):
        parent = node.parent
        if parent.type in _SCOPES:
            return None
        index = child_index(node)
        if parent.type in _BRANCHES and index > 0 and parent.children[index - 1].type == tokens.COLON \
                and _may_skip(parent, index, closes):
            return parent
        node = parent
    return None


def _may_skip(statement: Node, index: int, closes: Sequence[Base]) -> bool:
    """May the clause body at ``statement.children[index]`` not run when the statement does?"""
    if statement.type == symbols.try_stmt:
        opener = statement.children[index - 2]
        return opener.type == symbols.except_clause or (opener.type == tokens.NAME and opener.value == "except")
    if statement.type != symbols.if_stmt:
        return True  # a loop's body or else
    module = statement.parent
    if module is not None and module.type == symbols.file_input and main_block(module) is statement \
            and index == 3:
        return False
    return not _every_clause_closes(statement, closes)


def _every_clause_closes(statement: Node, closes: Sequence[Base]) -> bool:
    """Does an ``if`` with an ``else`` close the session in each of its bodies?"""
    children = statement.children
    if not any(child.type == tokens.NAME and child.value == "else" for child in children):
        return False
    bodies = [child for position, child in enumerate(children)
              if position > 0 and children[position - 1].type == tokens.COLON]
    return all(any(is_inside(close, body) for close in closes) for body in bodies)


def clause_header(statement: Node, close: Base) -> str:
    """``if len(sys.argv) > 1:``, ``for x in y:`` or ``except E:``: the header of the clause of
    ``statement`` that holds ``close``."""
    children = statement.children
    for position, child in enumerate(children):
        if position > 0 and children[position - 1].type == tokens.COLON and is_inside(close, child):
            start = position - 1
            while start > 0 and children[start - 1].type not in _BODY_ENDS:
                start -= 1
            return " ".join(str(part).strip() for part in children[start:position - 1]) + ":"
    return str(children[0]).strip()
