"""The hooks (callbacks) a training call hands ``npu_hooks_append`` (``npu_callbacks_append``):
as the spec writes it, or as a copy, ``list(<hooks>)``.

npu_bridge's append functions append the NPU's broadcast hook to the list they are given, in
place, and put anything that is not a list aside for a new one. So a list the script reads
again after the call (``training_hooks[-1].total_time``), one that outlives it (an attribute),
or one a loop hands over again, would hold the NPU's hook (one more per call), and a tuple's
hooks would never run. Those go in as a copy; a new list (``[hook]``, ``hooks + [hook]``) and
what is not shown to be a list or tuple go in as they are.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import Base, dotted_name, symbols, tokens
from npu_codemod.api._toolkit import bound_values, enclosing_scope, uses

APPENDS = "it appends to the list it is given, and "
#: The loops a call may run in again.
LOOPS = (symbols.for_stmt, symbols.while_stmt)


def copy_reason(value: Base, keyword: str) -> Optional[str]:
    """Why ``value``, the ``keyword`` (hooks or callbacks) of a training call, goes to the append
    function as a copy, or None when it goes as it is."""
    if _display(value) == "tuple":
        return f"it drops {keyword} that are not in a list"
    name = dotted_name(value)
    values = bound_values(value, name) if name is not None else None
    kinds = {_display(bound) for bound in values or ()}
    if not kinds or None in kinds:
        return None  # not shown to be a list or a tuple (it may be None): as the spec writes it
    if "tuple" in kinds:
        return f"it drops {keyword} that are not in a list"
    if "." in str(name):
        return f"{APPENDS}{name} outlives this call"
    if _read_after(value, str(name)):
        return f"{APPENDS}{name} is used after this call"
    if _in_loop(value):
        return f"{APPENDS}this call runs in a loop"
    return None


def _display(value: Base) -> Optional[str]:
    """``"list"`` for a list display or comprehension, ``"tuple"`` for a tuple display or a
    generator expression (not a list either), else None."""
    if value.type != symbols.atom or value.children[0].type not in (tokens.LSQB, tokens.LPAR):
        return None
    if value.children[0].type == tokens.LSQB:
        return "list"
    inside = value.children[1] if len(value.children) == 3 else None
    if inside is None:
        return "tuple"  # ``()``
    if inside.type == symbols.testlist_gexp and any(
            child.type in (tokens.COMMA, symbols.comp_for) for child in inside.children):
        return "tuple"
    return _display(inside)  # ``([hook])``


def _read_after(value: Base, name: str) -> bool:
    """Is the local name ``value`` (spelled ``name``) read again after it, in its scope?"""
    seen = False
    for use in uses(enclosing_scope(value), name):
        if use.leaf is value:
            seen = True
        elif seen and use.kind != "bind":
            return True
    return False


def _in_loop(value: Base) -> bool:
    """Does ``value`` sit in a loop of its scope (the call may run again)?"""
    scope, node = enclosing_scope(value), value.parent
    while node is not None and node is not scope:
        if node.type in LOOPS:
            return True
        node = node.parent
    return False
