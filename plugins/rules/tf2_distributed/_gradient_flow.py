"""Where a custom loop's gradients go in the block that computes them: NPU068 all-reduces them
right after the gradient statement when they reach ``apply_gradients`` there.

The gradients often reach ``apply_gradients`` under another name: unscaled by a loss-scale
optimizer (``grads = opt.get_unscaled_gradients(scaled_grads)``, the TF mixed-precision
guide's loop) or clipped into a new name (``grads, _ = tf.clip_by_global_norm(raw, 5.0)``,
``grads = [tf.clip_by_norm(g, 1.0) for g in raw]``). Those steps are followed: all-reducing
before them is what the spec asks (``spec/rules-tf2.md``, NPU068: "right after the gradient
statement (before clipping)"; the mean of scaled gradients unscales to the mean of the
gradients). Any other statement that makes a new value from them is not followed: when its
result is what is applied, the finding names it instead of saying the gradients go elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from npu_codemod.api import Base, find_argument, symbols, tokens
from npu_codemod.api._toolkit import attribute_name, is_call_trailer, tree_text

#: Calls whose first argument is the gradients and whose result (the first element of the
#: result for ``clip_by_global_norm``) is the gradients unscaled or clipped.
_UNSCALE = "get_unscaled_gradients"
_GLOBAL_CLIP = "clip_by_global_norm"
#: Sonnet's ``optimizer.apply(updates, parameters)`` (the gradients first, a name).
_SONNET_APPLY = re.compile(r"\.apply\(\s*[A-Za-z_]")
#: Per-gradient clipping, followed in a comprehension over the gradients.
_CLIPS = frozenset({"clip_by_norm", "clip_by_value", "clip_by_average_norm"})


@dataclass(frozen=True)
class GradientFlow:
    """What the statements after the gradient statement, in its block, do with the gradients.

    ``reduced``: an ``all_reduce`` of them (under a followed name) already; ``applied``: an
    ``apply_gradients`` uses them (under a followed name; a name rebound to a new value made
    from itself stays followed); ``through``: otherwise the statement whose new value under a
    new name, not followed, is what ``apply_gradients`` uses (None: nothing applies them in the
    block).
    """

    reduced: bool
    applied: bool
    through: Optional[Base] = None


def gradient_flow(line: Base, name: str, sonnet: bool = False) -> GradientFlow:
    """Follow the gradients bound to ``name`` by the statement ``line`` through its later
    siblings. ``sonnet``: the file imports Sonnet, whose optimizers apply gradients with
    ``<optimizer>.apply(gradients, variables)`` (``snt.optimizers``): that applies them too."""
    followed = {name}
    derived: dict[str, Base] = {}  # a name made from them by a step not followed -> its statement
    reduced = applied = False
    through: Optional[Base] = None
    for statement in _later_statements(line):
        names = _names(statement)
        if not names & (followed | set(derived)):
            continue
        text = tree_text(statement)
        reduces = "all_reduce(" in text and bool(names & followed)
        reduced = reduced or reduces
        if ".apply_gradients(" in text or (sonnet and _SONNET_APPLY.search(text) is not None):
            if names & followed:
                applied = True
            elif through is None:
                through = derived[sorted(names & set(derived))[0]]
            continue
        target, value = _assignment(statement)
        if target is None or value is None or target in followed:
            continue  # ``grads = f(grads)``: still the gradients, as the name says
        if reduces or _follows(value, followed):
            followed.add(target)
            derived.pop(target, None)
        else:
            derived[target] = next((derived[n] for n in sorted(names & set(derived))), statement)
    return GradientFlow(reduced, applied, None if applied else through)


def _later_statements(line: Base) -> list[Base]:
    found: list[Base] = []
    sibling = line.next_sibling
    while sibling is not None:
        found.append(sibling)
        sibling = sibling.next_sibling
    return found


def _names(node: Base) -> set[str]:
    return {leaf.value for leaf in node.leaves() if leaf.type == tokens.NAME}


def _assignment(line: Base) -> tuple[Optional[str], Optional[Base]]:
    """(the name bound, the value) of a one-statement line ``name = value`` or ``name, _ =
    value`` (the first name of a tuple target); (None, None) for any other line."""
    if line.type != symbols.simple_stmt or len(line.children) != 2:
        return None, None
    statement = line.children[0]
    if statement.type != symbols.expr_stmt or len(statement.children) != 3 \
            or statement.children[1].type != tokens.EQUAL:
        return None, None
    target, _, value = statement.children
    if target.type == tokens.NAME:
        return target.value, value
    if target.type in (symbols.testlist_star_expr, symbols.exprlist) \
            and target.children[0].type == tokens.NAME:
        return target.children[0].value, value
    return None, None


def _follows(value: Base, followed: set[str]) -> bool:
    """Is ``value`` the followed gradients unscaled or clipped?"""
    method, argument = _call(value)
    if method in (_UNSCALE, _GLOBAL_CLIP):
        return argument is not None and _is_name(argument, followed)
    return _clipped_each(value, followed)


def _call(value: Base) -> tuple[Optional[str], Optional[Base]]:
    """(the method or function name, its first argument) when ``value`` is a call
    ``<...>.name(first, ...)`` or ``name(first, ...)``."""
    if value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return None, None
    callee = value.children[-2]
    name = callee.value if callee.type == tokens.NAME else attribute_name(callee)
    first = find_argument(value.children[-1], "", 0)
    return name, first.value if first is not None and first.keyword is None else None


def _is_name(node: Base, names: set[str]) -> bool:
    return node.type == tokens.NAME and node.value in names


def _clipped_each(value: Base, followed: set[str]) -> bool:
    """``[tf.clip_by_norm(g, c) for g in grads]`` (or ``for g, v in zip(grads, ...)``, the
    element a tuple that starts with the clipped gradient)."""
    if value.type != symbols.atom or len(value.children) != 3 \
            or value.children[1].type != symbols.listmaker:
        return False
    element, *rest = value.children[1].children
    if len(rest) != 1 or rest[0].type != symbols.comp_for or len(rest[0].children) != 4:
        return False
    _, variables, _, iterable = rest[0].children
    variable = variables.children[0] if variables.type == symbols.exprlist else variables
    if not _is_name(iterable, followed):
        method, argument = _call(iterable)
        if method != "zip" or argument is None or not _is_name(argument, followed):
            return False
    if element.type == symbols.atom and len(element.children) == 3 \
            and element.children[1].type == symbols.testlist_gexp:
        element = element.children[1].children[0]
    method, argument = _call(element)
    return method in _CLIPS and argument is not None and variable.type == tokens.NAME \
        and _is_name(argument, {variable.value})
