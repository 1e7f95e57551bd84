"""The names a scope already uses, collected once per file, for naming generated code.

:func:`free_name` walks the whole scope, and the module's scope is the whole file:
a rule that names what it inserts at several sites of one scope (a config per session) would
walk it once per site. :func:`taken_names` walks each scope once per file and keeps the set
in ``memo(ctx)``; the rule :func:`claim`\\ s the names of the code it inserts, so the set stays
what a fresh walk would find.
"""

from __future__ import annotations

from typing import AbstractSet

from npu_codemod.api import Base, FileContext, Node
from npu_codemod.api._toolkit import memo, per_node, used_names

_KEY = "free_names.taken"


def taken_names(scope: Node, ctx: FileContext) -> set[str]:
    """:func:`used_names` of ``scope``, walked once per file (do not edit the set)."""
    return per_node(ctx, _KEY, scope, used_names)


def claim(nodes: list[Base], ctx: FileContext, unless: AbstractSet[str] = frozenset()) -> None:
    """Add the names spelled in the inserted ``nodes`` (but ``unless``) to the kept names of
    every scope around them."""
    kept = memo(ctx).get(_KEY)
    if not kept or not nodes:
        return
    names = set().union(*(used_names(node) for node in nodes)) - unless
    scope = nodes[0].parent
    while scope is not None:
        entry = kept.get(id(scope))
        if entry is not None and entry[0] is scope:
            entry[1].update(names)
        scope = scope.parent
