"""A session stored on the object and entered with ``with`` at once (NPU010).

``self.session = tf.Session()`` followed by ``with self.session as sess:`` closes the session
when the block ends, as ``with tf.Session() as sess:`` does (the spec: "``with`` closes it").
The ``with`` is the session's lifetime only if nothing reaches the attribute outside it: a
use after the block, in that method or another, would run a closed session, so then the
session is reported as one stored in an attribute.
"""

from __future__ import annotations

from typing import Iterator, Optional

from npu_codemod.api import Base, Node, symbols, tokens
from npu_codemod.api._toolkit import node_pre_order


def entering_with(statement: Base, attribute: str) -> Optional[Node]:
    """The ``with self.<attribute> [as name]:`` statement that follows the assignment
    ``statement`` (``self.<attribute> = tf.Session()``) in its block and holds every other use
    of ``.<attribute>`` in the file, or None."""
    line = statement.parent
    if line.type != symbols.simple_stmt or line.parent is None:
        return None
    found = next((node for node in _later_siblings(line) if _enters(node, attribute)), None)
    if found is None or not _all_uses_within(_root(statement), attribute, statement, found):
        return None
    return found


def _later_siblings(line: Base) -> Iterator[Base]:
    node = line.next_sibling
    while node is not None:
        yield node
        node = node.next_sibling


def _enters(node: Base, attribute: str) -> bool:
    """Is ``node`` a ``with`` statement one of whose context managers is ``self.<attribute>``?"""
    if node.type != symbols.with_stmt:
        return False
    managers = [child.children[0] if child.type == symbols.with_item else child
                for child in node.children[1:-2] if child.type != tokens.COMMA]
    return any(_spelled(manager) == f"self.{attribute}" for manager in managers)


def _spelled(node: Base) -> str:
    return "".join(leaf.value for leaf in node.leaves())


def _all_uses_within(root: Node, attribute: str, statement: Base, block: Node) -> bool:
    """Is every ``.<attribute>`` of the file in ``statement`` (the assignment) or ``block``?"""
    for node in node_pre_order(root):
        if node.type == symbols.trailer and len(node.children) == 2 \
                and node.children[0].type == tokens.DOT and node.children[1].value == attribute \
                and not _inside(node, statement) and not _inside(node, block):
            return False
    return True


def _inside(node: Base, ancestor: Base) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _root(node: Base) -> Node:
    while node.parent is not None:
        node = node.parent
    assert isinstance(node, Node), "a statement's root is the module"
    return node
