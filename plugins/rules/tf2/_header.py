"""The ``tf2`` pack's header code: code placed at NPU001's position (after shebang/encoding
lines, the module docstring and ``from __future__`` imports, before the first other statement).
The name that code spells ``npu_device`` with is the toolkit's ``device_name``."""

from __future__ import annotations

from npu_codemod.api import Node, insert_before, parse_statements, tokens
from npu_codemod.api._toolkit import header_index


def insert_at_header(tree: Node, code: str, newline: str) -> None:
    """Insert the statements of ``code`` at NPU001's position of the module ``tree``."""
    index = header_index(tree)
    children = tree.children
    if index < len(children) and children[index].type != tokens.ENDMARKER:
        insert_before(children[index], code, newline)
        return
    for statement in parse_statements(code, newline):
        tree.insert_child(min(index, len(children) - 1) if children else 0, statement)
        index += 1
