"""Cheap necessary conditions for lib2to3 patterns, so the full matcher only sees likely nodes.

fissix matches a pattern through towers of generators (about 15 µs a node); rules whose
patterns head on common node types (``power``, ``trailer``, ``NAME``) were offered thousands of
nodes per file, and matching cost as much as parsing. A check built here compares only node
types, leaf values and child counts, down a few levels. It is conservative: it may accept a
node the pattern rejects, never reject one the pattern matches.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from fissix import pytree
from fissix.pytree import LeafPattern, NodePattern, WildcardPattern

Check = Callable[[pytree.Base], bool]


def quick_check(pattern: pytree.BasePattern, depth: int = 3) -> Optional[Check]:
    """A test that is False only for nodes ``pattern`` cannot match; None if it has none."""
    if isinstance(pattern, WildcardPattern):
        return _one_of(pattern, depth)
    if not isinstance(pattern, (LeafPattern, NodePattern)):
        return None  # NegatedPattern: no cheap condition
    kind = pattern.type
    value = pattern.content if isinstance(pattern, LeafPattern) else None
    slots: list[Optional[Check]] = []
    exact = False
    if isinstance(pattern, NodePattern) and pattern.content is not None and depth > 1:
        slots, exact = _slots(pattern.content, depth - 1)
    if kind is None and value is None and not any(slots) and not exact:
        return None

    pinned = [(index, slot) for index, slot in enumerate(slots) if slot is not None]
    count = len(slots)

    def check(node: pytree.Base) -> bool:
        if kind is not None and node.type != kind:
            return False
        if value is not None and getattr(node, "value", None) != value:
            return False
        children = node.children
        if len(children) < count or (exact and len(children) != count):
            return False
        for index, slot in pinned:
            if not slot(children[index]):
                return False
        return True

    return check


def _one_of(pattern: WildcardPattern, depth: int) -> Optional[Check]:
    """Alternatives that each match exactly one node: the node must pass one of their checks."""
    if pattern.content is None or not pattern.min == pattern.max == 1:
        return None
    if any(len(alternative) != 1 for alternative in pattern.content):
        return None
    alternatives = [alternative[0] for alternative in pattern.content]
    if all(isinstance(alt, LeafPattern) and alt.content is not None for alt in alternatives):
        pairs = frozenset((alt.type, alt.content) for alt in alternatives)  # ('A' | 'B' | ...)
        return lambda node: (node.type, getattr(node, "value", None)) in pairs
    checks = [quick_check(alternative, depth) for alternative in alternatives]
    if any(check is None for check in checks):
        return None

    def check(node: pytree.Base) -> bool:
        for one in checks:
            if one(node):
                return True
        return False

    return check


def _slots(content: Sequence[pytree.BasePattern], depth: int) -> tuple[list[Optional[Check]], bool]:
    """Checks for the leading children a sequence pins down, and whether it pins down all."""
    slots: list[Optional[Check]] = []
    for item in content:
        if isinstance(item, WildcardPattern) and item.min == item.max == 1 and item.content \
                and len(item.content) == 1:  # a parenthesised sub-sequence
            inner, exact = _slots(item.content[0], depth)
            slots += inner
            if not exact:
                return slots, False
        elif isinstance(item, WildcardPattern) and not (
                item.min == item.max == 1
                and (item.content is None or all(len(alt) == 1 for alt in item.content))):
            return slots, False  # a repetition or optional part: the count is open from here
        else:
            slots.append(quick_check(item, depth))
    return slots, True
