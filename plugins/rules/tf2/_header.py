"""The ``tf2`` pack's header code: which name a file binds ``npu_device`` to, and code placed
at NPU001's position (after shebang/encoding lines, the module docstring and ``from
__future__`` imports, before the first other statement)."""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import FileContext, ImportNames, Node, insert_before, parse_statements, tokens
from npu_codemod.api._toolkit import header_index

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


_BINDS_NPU = re.compile(r"^[ \t]*(?:import[ \t]+\S+[ \t]+as[ \t]+npu\b|from[ \t]+\S+[ \t]+import[ \t]+"
                        r"[^\n]*\bnpu\b|npu[ \t]*=|def[ \t]+npu\b|class[ \t]+npu\b)", re.MULTILINE)


def device_name(ctx: FileContext) -> str:
    """The name generated code spells ``npu_device`` with: the file's own binding, else
    ``npu`` (``import npu_device as npu``), else ``npu_device`` when the file binds ``npu`` to
    something else."""
    bound = device_binding(ctx)
    if bound is not None:
        return bound
    return DEVICE if _BINDS_NPU.search(ctx.original) else "npu"


def device_import(name: str) -> str:
    """The import that binds ``name`` (from :func:`device_name`) to ``npu_device``."""
    return f"import {DEVICE}" if name == DEVICE else f"import {DEVICE} as {name}"
