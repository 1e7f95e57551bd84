"""What the ``*args`` and ``**kwargs`` of a call may hold, as far as the file shows it.

NPU004 rewrites ``tf.nn.dropout(x, keep_prob, **kwargs)`` only when ``kwargs`` provably holds
nothing but arguments ``npu_ops.dropout`` takes the same way (no ``noise_shape``, no
``rate``): a dict display with string keys (``{"seed": 1}``) or ``dict(seed=1)``, written in
the call or bound once to a name of the enclosing function that is otherwise only read there
(``kwargs["name"] = "drop"`` with a literal key is allowed, other uses are not). ``*args`` is
known when it is a tuple or list display (or a name bound once to one) without starred items.
A parameter (``def layer(x, **kwargs)``), a name bound twice, mutated, passed elsewhere, used
in a nested function, or bound at module level (read only through the unit of the call) may hold
anything.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import Argument, Base, Node, arguments, symbols, tokens
from npu_codemod.api._toolkit import (
    assigned_values,
    bound_names,
    enclosing_scope,
    is_call_trailer,
    string_value,
    uses,
)

#: Dict methods that read a dict without adding keys to it.
_READING = frozenset({"get", "items", "keys", "values", "copy", "pop"})


def keywords_of(argument: Argument) -> Optional[set[str]]:
    """The keywords a ``**`` argument surely consists of, or None when they are not known."""
    value = argument.value
    if value.type == tokens.NAME:
        values = _only_value(value)
        extra = _subscript_keys(value)
        if values is None or extra is None:
            return None
        keys = _dict_keys(values)
        return None if keys is None else keys | extra
    return _dict_keys(value)


def length_of(argument: Argument) -> Optional[int]:
    """How many positional arguments a ``*`` argument surely holds, or None when unknown."""
    value = argument.value
    if value.type == tokens.NAME:
        values = _only_value(value)
        if values is None or _subscript_keys(value) != set():
            return None
        value = values
    return _display_length(value)


def spreads(call: Node) -> list[Argument]:
    """The ``*``/``**`` arguments of the call trailer ``call``."""
    return [argument for argument in arguments(call) if argument.star]


def _only_value(name: Base) -> Optional[Base]:
    """The one value the variable ``name`` is assigned in its function, or None (a parameter,
    bound twice, bound another way, a module-level name: its unit may not be parsed)."""
    if _binding_scope(name) is None:
        return None
    values = assigned_values(name, name.value)
    return values[0] if values is not None and len(values) == 1 else None


def _binding_scope(name: Base) -> Optional[Node]:
    """The function that binds the variable ``name``, or None when only the module does."""
    scope = enclosing_scope(name)
    while scope.type != symbols.file_input and name.value not in bound_names(scope):
        scope = enclosing_scope(scope)
    return scope if scope.type == symbols.funcdef else None


def _subscript_keys(name: Base) -> Optional[set[str]]:
    """The literal keys the scope stores into ``name`` (``name["seed"] = 1``) when every other
    use only reads it (the one binding, ``**name``, ``*name``, reading methods); else None."""
    scope = _binding_scope(name)
    if scope is None:
        return None
    keys: set[str] = set()
    for use in uses(scope, name.value):
        if use.kind == "bind" and use.detail == "assigned" and use.leaf.parent.type == symbols.expr_stmt:
            continue
        parent = use.leaf.parent
        if parent.type == symbols.argument and parent.children[0].type in (tokens.STAR, tokens.DOUBLESTAR):
            continue
        if use.kind != "attribute":
            return None
        key = _stored_key(use.leaf)
        if key is None:
            return None
        if key:
            keys.add(key)
    return keys


def _stored_key(leaf: Base) -> Optional[str]:
    """For ``leaf`` followed by a trailer: the literal key of ``leaf["k"] = v``, '' for a
    reading method call (``leaf.get(...)``), None for anything else."""
    power = leaf.parent
    trailer = leaf.next_sibling
    if trailer.children[0].type == tokens.DOT:
        called = len(power.children) > 2 and is_call_trailer(power.children[2])
        return "" if trailer.children[1].value in _READING and called else None
    statement = power.parent
    if trailer.children[0].type != tokens.LSQB or len(power.children) != 2 \
            or statement.type != symbols.expr_stmt or statement.children[0] is not power:
        return None
    key = string_value(trailer.children[1])
    return key or None


def _dict_keys(value: Base) -> Optional[set[str]]:
    """String keys of ``{"k": v, ...}`` or ``dict(k=v, ...)``; None for anything else."""
    if value.type == symbols.atom and value.children[0].type == tokens.LBRACE:
        if len(value.children) == 2:
            return set()
        inner = value.children[1]
        items = inner.children if inner.type == symbols.dictsetmaker else [inner]
        if any(item.type in (tokens.DOUBLESTAR, symbols.comp_for)
               for item in items) or len(items) < 3 \
                or any(colon.type != tokens.COLON for colon in items[1::4]):
            return None
        keys = [string_value(key) for key in items[0::4]]
        return None if not all(keys) else {key for key in keys if key}
    if value.type == symbols.power and len(value.children) == 2 and value.children[0].type == tokens.NAME \
            and value.children[0].value == "dict" and is_call_trailer(value.children[1]):
        given = arguments(value.children[1])
        if any(argument.keyword is None for argument in given):
            return None
        return {argument.keyword for argument in given if argument.keyword}
    return None


def _display_length(value: Base) -> Optional[int]:
    """Items of a tuple or list display without starred items, else None."""
    if value.type != symbols.atom or value.children[0].type not in (tokens.LPAR, tokens.LSQB):
        return None
    if len(value.children) == 2:
        return 0
    inner = value.children[1]
    if inner.type not in (symbols.testlist_gexp, symbols.listmaker):
        return 1 if value.children[0].type == tokens.LSQB and inner.type != symbols.star_expr else None
    items = [item for item in inner.children if item.type != tokens.COMMA]
    if any(item.type in (symbols.star_expr, symbols.comp_for) for item in items):
        return None
    return len(items)

