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
    ends: list[Optional[Check]] = []
    exact = False
    if isinstance(pattern, NodePattern) and pattern.content is not None and depth > 1:
        slots, exact = _slots(pattern.content, depth - 1)
        if not exact:
            ends = [quick_check(item, depth - 1) for item in _trailing(pattern.content)]
    if kind is None and value is None and not any(slots) and not any(ends) and not exact:
        return None

    # A trailing item is at a negative index: the leading ones never reach it, as a node's
    # children are matched by the whole sequence (fissix requires it to consume them all).
    pinned = [(index, slot) for index, slot in enumerate(slots) if slot is not None] + \
        [(index - len(ends), end) for index, end in enumerate(ends) if end is not None]
    count = len(slots) + len(ends)

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
    maybe_checks = [quick_check(alternative, depth) for alternative in alternatives]
    checks = [one for one in maybe_checks if one is not None]
    if len(checks) != len(maybe_checks):
        return None

    def check(node: pytree.Base) -> bool:
        for one in checks:
            if one(node):
                return True
        return False

    return check


def _slots(content: Sequence[pytree.BasePattern], depth: int) -> tuple[list[Optional[Check]], bool]:
    """Checks for the leading children a sequence pins down, and whether it pins down all."""
    leading, exact = _leading(content)
    return [quick_check(item, depth) for item in leading], exact


def _leading(content: Sequence[pytree.BasePattern]) -> tuple[list[pytree.BasePattern], bool]:
    """The patterns of the leading children a sequence pins down one by one, and whether
    they are all of its children."""
    leading: list[pytree.BasePattern] = []
    for item in content:
        if isinstance(item, WildcardPattern) and item.min == item.max == 1 and item.content \
                and len(item.content) == 1:  # a parenthesised sub-sequence
            inner, exact = _leading(item.content[0])
            leading += inner
            if not exact:
                return leading, False
        elif isinstance(item, WildcardPattern) and not (
                item.min == item.max == 1
                and (item.content is None or all(len(alt) == 1 for alt in item.content))):
            return leading, False  # a repetition or optional part: the count is open from here
        else:
            leading.append(item)
    return leading, True


def _trailing(content: Sequence[pytree.BasePattern]) -> list[pytree.BasePattern]:
    """The patterns of the trailing children a sequence pins down one by one, after its last
    open part (``any*``, ``[...]``): ``trailer< '.' 'x' >`` of ``power< any* trailer< '.' 'x' > >``."""
    return _trailing_items(content)[0]


def _trailing_items(content: Sequence[pytree.BasePattern]) -> tuple[list[pytree.BasePattern], bool]:
    """:func:`_trailing`, and whether the items are all of the sequence. Only an item that
    surely matches one node counts: a node or leaf pattern, or alternatives of such."""
    trailing: list[pytree.BasePattern] = []
    for item in reversed(content):
        if isinstance(item, WildcardPattern) and item.min == item.max == 1 and item.content \
                and len(item.content) == 1:  # a parenthesised sub-sequence
            inner, whole = _trailing_items(item.content[0])
            trailing = inner + trailing
            if not whole:
                return trailing, False
        elif _single(item):
            trailing.insert(0, item)
        else:
            return trailing, False
    return trailing, True


def _single(item: pytree.BasePattern) -> bool:
    """Does ``item`` match exactly one node: a node or leaf pattern, or alternatives of them?"""
    if isinstance(item, (LeafPattern, NodePattern)):
        return True
    return isinstance(item, WildcardPattern) and item.min == item.max == 1 and bool(item.content) \
        and all(len(alternative) == 1 and _single(alternative[0]) for alternative in item.content)


#: A leaf a pattern requires: at child ``index`` of the node (``SELF``: the node itself), with
#: one of ``values``. The engine looks candidates up by that value instead of trying each.
SELF = -1
Key = tuple[int, frozenset[str]]


def leaf_key(pattern: pytree.BasePattern, node_type: int) -> Optional[Key]:
    """Where a node of ``node_type`` must hold a name for ``pattern`` to match it, or None.

    Like :func:`quick_check`, conservative: a node without such a leaf cannot match. Only
    names count (``'dropout'``, not ``'.'``): punctuation would select nearly every node.
    """
    if isinstance(pattern, WildcardPattern):
        if pattern.content is None or not pattern.min == pattern.max == 1 \
                or any(len(alternative) != 1 for alternative in pattern.content):
            return None
        found = [leaf_key(alternative[0], node_type) for alternative in pattern.content
                 if _may_head(alternative[0], node_type)]
        keys = [key for key in found if key is not None]
        if not keys or len(keys) != len(found) or len({index for index, _ in keys}) != 1:
            return None
        return keys[0][0], frozenset[str]().union(*(values for _, values in keys))
    if isinstance(pattern, LeafPattern):
        values = _names(pattern)
        return (SELF, values) if values and pattern.type in (None, node_type) else None
    if isinstance(pattern, NodePattern) and pattern.type == node_type and pattern.content:
        for index, item in enumerate(_leading(pattern.content)[0]):
            values = _names(item)
            if values:
                return index, values
    return None


def _names(pattern: pytree.BasePattern) -> Optional[frozenset[str]]:
    """The names one leaf must be for ``pattern`` (a name, or alternatives of names), or None."""
    if isinstance(pattern, LeafPattern):
        value = pattern.content
        return frozenset((value,)) if isinstance(value, str) and value.isidentifier() else None
    if isinstance(pattern, WildcardPattern) and pattern.content and pattern.min == pattern.max == 1 \
            and all(len(alternative) == 1 for alternative in pattern.content):
        found = [_names(alternative[0]) for alternative in pattern.content]
        parts = [part for part in found if part is not None]
        return None if len(parts) != len(found) else frozenset[str]().union(*parts)
    return None


def _may_head(pattern: pytree.BasePattern, node_type: int) -> bool:
    """Whether ``pattern`` could match a node of ``node_type`` at all."""
    if isinstance(pattern, (LeafPattern, NodePattern)):
        return pattern.type in (None, node_type)
    if isinstance(pattern, WildcardPattern) and pattern.content:
        return any(_may_head(part, node_type) for alternative in pattern.content for part in alternative[:1])
    return True
