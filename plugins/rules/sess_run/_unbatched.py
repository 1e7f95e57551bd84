"""Batches that a pipeline splits back into examples (NPU002).

Packing code batches sequences only to concatenate them, then splits each batch into examples
again (``padded_batch(length)`` then ``flat_map`` of a function returning
``Dataset.from_tensor_slices(...)``); vectorised preprocessing batches, maps the batch, then
``unbatch()``es. The model's batch comes later: ``drop_remainder=True`` on such a batch fixes no
shape and only loses examples. Followed: the batch's own chain, then straight-line statements
of its block that reassign the same name (``ds = ds.map(f)``, ``ds = ds.flat_map(split)``), as
long as only per-batch transformations (``map``, ``prefetch``) come before the split.
"""

from __future__ import annotations

from typing import Optional, Sequence

from npu_codemod.api import Base, Node, symbols, tokens
from npu_codemod.api._toolkit import attribute_name, child_index, function_returns, is_call_trailer

#: Transformations that keep each batch a batch (what comes after them is still split per row).
_PER_BATCH = frozenset({"map", "prefetch", "cache", "with_options"})
_SLICES = "from_tensor_slices"


def unbatched(method: Base) -> Optional[str]:
    """How the batch made by the call of ``method`` (the ``batch`` name of ``x.batch(...)``) is
    split back into examples (``unbatch() on line 6``), or None when it is not shown to be."""
    trailer = method.parent
    if trailer is None or trailer.type != symbols.trailer or trailer.parent is None \
            or trailer.parent.type != symbols.power:
        return None
    power = trailer.parent
    index = child_index(trailer)
    open_chain, how = _split_in(power.children[index + 2:], method)
    return how or (_split_later(power, method) if open_chain else None)


def _split_in(trailers: Sequence[Base], site: Base) -> tuple[bool, Optional[str]]:
    """(True, how) when the chain ``trailers`` splits the batch; (True, None) when it ends
    after per-batch transformations only, still open (later statements may split it);
    (False, None) when it does something else with it."""
    for position in range(0, len(trailers) - 1, 2):
        name = attribute_name(trailers[position])
        call = trailers[position + 1]
        if name is None or not is_call_trailer(call):
            return False, None
        how = _splits(name, call, site)
        if how:
            return True, how.format(where=f"on line {trailers[position].get_lineno()}")
        if name not in _PER_BATCH:
            return False, None
    return len(trailers) % 2 == 0, None


def _splits(name: str, call: Node, site: Base) -> Optional[str]:
    """How the call ``name(...)`` (``call``: its ``(...)``) splits a batch into examples, with
    ``{where}`` for where it is."""
    if name == "unbatch":
        return "unbatch() {where}"
    if name == "apply" and any(leaf.value == "unbatch" and _called(leaf) for leaf in call.leaves()):
        return f"apply{_braced(call)} {{where}}"
    if name == "flat_map" and len(call.children) == 3 and _makes_rows(call.children[1], site):
        return f"flat_map({_braced(call.children[1])}) {{where}} makes one example of each row"
    return None


def _braced(node: Base) -> str:
    """The code of ``node``, its braces doubled for ``str.format``."""
    return str(node).strip().replace("{", "{{").replace("}", "}}")


def _called(leaf: Base) -> bool:
    node = leaf.parent if leaf.parent is not None and leaf.parent.type == symbols.trailer else leaf
    return is_call_trailer(node.next_sibling)


def _makes_rows(function: Base, site: Base) -> bool:
    """Does ``function`` (a lambda, or the name of a ``def`` around ``site``) return
    ``....from_tensor_slices(...)`` of what it is given, one dataset element per row?"""
    if function.type == symbols.lambdef:
        return _slices(function.children[-1])
    if function.type != tokens.NAME:
        return False
    definition = _local_def(function.value, site)
    returns = function_returns(definition) if definition is not None else []
    return bool(returns) and all(r.type == symbols.return_stmt and _slices(r.children[1]) for r in returns)


def _slices(value: Base) -> bool:
    children = value.children if value.type == symbols.power else []
    return len(children) >= 3 and is_call_trailer(children[-1]) and attribute_name(children[-2]) == _SLICES


def _local_def(name: str, site: Base) -> Optional[Node]:
    """The ``def name`` among the statements of a block around ``site``, or None."""
    node = site
    while node.parent is not None:
        node = node.parent
        if node.type not in (symbols.suite, symbols.file_input):
            continue
        for statement in node.children:
            definition = statement.children[-1] if statement.type == symbols.decorated else statement
            if definition.type == symbols.funcdef and definition.children[1].value == name:
                return definition
    return None


def _split_later(power: Node, site: Base) -> Optional[str]:
    """How statements after ``name = <power>`` that reassign ``name`` split its batch."""
    statement = power.parent
    if statement is None or statement.type != symbols.expr_stmt or len(statement.children) != 3 \
            or statement.children[0].type != tokens.NAME or statement.children[2] is not power:
        return None
    name = statement.children[0].value
    line = statement.parent
    block = line.parent if line is not None and line.type == symbols.simple_stmt else None
    if block is None:
        return None
    for later in block.children[child_index(line) + 1:]:
        if later.type in (symbols.funcdef, symbols.decorated) or not _mentions(later, name):
            continue
        value = _reassigned(later, name)
        if value is None:
            return None
        open_chain, how = _split_in(value.children[1:], site)
        if how or not open_chain:
            return how
    return None


def _mentions(statement: Base, name: str) -> bool:
    return any(leaf.type == tokens.NAME and leaf.value == name for leaf in statement.leaves())


def _reassigned(statement: Base, name: str) -> Optional[Node]:
    """The value of ``statement`` when it is ``name = name.<calls>``, else None."""
    small = statement.children[0] if statement.type == symbols.simple_stmt and len(statement.children) == 2 else None
    if small is None or small.type != symbols.expr_stmt or len(small.children) != 3:
        return None
    target, value = small.children[0], small.children[2]
    if target.type != tokens.NAME or target.value != name or value.type != symbols.power:
        return None
    head = value.children[0]
    return value if head.type == tokens.NAME and head.value == name else None
