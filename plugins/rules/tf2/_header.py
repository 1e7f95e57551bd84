"""The ``tf2`` pack's header code: which name a file binds ``npu_device`` to, and code placed
at NPU001's position (after shebang/encoding lines, the module docstring and ``from
__future__`` imports, before the first other statement)."""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    FileContext,
    ImportNames,
    Node,
    header_index,
    insert_before,
    parse_statements,
    tokens,
)

DEVICE = "npu_device"


def device_binding(ctx: FileContext) -> Optional[str]:
    """The file's name for the ``npu_device`` module itself (``npu``, ``npu_device``), or None."""
    names: ImportNames = ctx.names(DEVICE)
    return next((name for name, target in sorted(names.bindings.items()) if target == DEVICE), None)


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
