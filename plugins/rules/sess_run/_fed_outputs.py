"""Are a dataset's iterator outputs fed other data through a feed_dict? (NPU002)

A TF 1.x script often trains from an iterator and evaluates by feeding the iterator's outputs
directly: ``bx, by = it.get_next()``, then ``sess.run(loss, {bx: x_test, by: y_test})``.
Feeding a tensor checks the array against the tensor's static shape, so once the dataset is
batched with ``drop_remainder=True`` (static ``(32, 1)``) the 200 test rows are refused
("Cannot feed value of shape (200, 1) for Tensor 'IteratorGetNext:0', which has shape
'(32, 1)'"). The batch is shared with other data: it is reported, never rewritten.

An iterator of the dataset is ``ds.make_one_shot_iterator()``,
``ds.make_initializable_iterator()``, ``tf.data.make_one_shot_iterator(ds)`` (any alias, the
``compat.v1`` spellings included) or ``Iterator.from_structure(ds.output_types, ...)``; its
outputs are the names its ``get_next()`` is assigned to (``x, y = it.get_next()``,
``self.x = ds.make_one_shot_iterator().get_next()``). A key of any ``{...}`` display of the file
that is the same variable as an output counts as a feed.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from npu_codemod.api import Base, FileContext, Node, arguments, dotted_name, symbols, tokens
from npu_codemod.api._toolkit import (
    attribute_name,
    child_index,
    enclosing_scope,
    is_call_trailer,
    memo,
    node_pre_order,
    spelled_name,
)

from ._shared_iterators import _bound_to, _dataset_names, _iterators, _same_variable

#: Methods of a dataset, and ``tf.data`` functions taking it, that make an iterator.
MAKERS = frozenset({"make_one_shot_iterator", "make_initializable_iterator"})
WHY = ("shared with other data through a feed_dict ({how}): with drop_remainder=True the "
       "iterator's batch dimension becomes static and TensorFlow rejects a fed array of any "
       "other number of rows; evaluate through a separate placeholder or dataset, or feed "
       "exactly batch_size rows, before adding drop_remainder=True")
_KEYS = "npu002.feed_keys"


def fed_outputs(site: Base, parts: Sequence[Base], ctx: FileContext) -> Optional[str]:
    """Why batching at ``site`` (the dataset spelled by power children ``parts``) with
    drop_remainder=True would make a feed of its iterator's outputs fail, or None."""
    keys = _feed_keys(ctx)
    if not keys:
        return None
    names = _dataset_names(site, parts)
    scope = enclosing_scope(site)
    for output, bound in _outputs(names, scope, ctx):
        for key in keys.get(output, ()):
            if _same_variable(output, enclosing_scope(bound), key, ctx):
                return WHY.format(how=f"{output}, from its iterator's get_next() on line "
                                  f"{bound.get_lineno()}, is fed on line {key.get_lineno()}")
    return None


def _feed_keys(ctx: FileContext) -> dict[str, list[Base]]:
    """Dotted name -> each key of a ``{...}`` display of the file spelling it."""
    if _KEYS not in memo(ctx):
        found: dict[str, list[Base]] = {}
        for node in node_pre_order(ctx.tree):
            if node.type == symbols.atom and node.children[0].type == tokens.LBRACE \
                    and len(node.children) == 3:
                for key in _keys(node.children[1]):
                    name = dotted_name(key)
                    if name:
                        found.setdefault(name, []).append(key)
        memo(ctx)[_KEYS] = found
    return memo(ctx)[_KEYS]


def _keys(inner: Base) -> list[Base]:
    items = inner.children if inner.type == symbols.dictsetmaker else []
    if len(items) < 3 or items[1].type != tokens.COLON:
        return []
    return [items[index] for index in range(0, len(items) - 1, 4)
            if index + 1 < len(items) and items[index + 1].type == tokens.COLON]


def _outputs(names: set[str], scope: Node, ctx: FileContext) -> Iterator[tuple[str, Base]]:
    """(output name, the statement binding it) of each ``get_next()`` of an iterator of the
    dataset that goes by one of ``names`` in ``scope``."""
    iterators = list(_made_iterators(names, scope, ctx))
    for node in node_pre_order(ctx.tree):
        if node.type != symbols.trailer or attribute_name(node) != "get_next" \
                or not is_call_trailer(node.next_sibling):
            continue
        power = node.parent
        before = power.children[:child_index(node)]
        if _made_here(before, names, scope, ctx) or any(
                spelled_name(before) == name and _same_variable(name, where, node, ctx)
                for name, where in iterators):
            yield from _assigned(power)


def _made_iterators(names: set[str], scope: Node, ctx: FileContext) -> Iterator[tuple[str, Node]]:
    """(iterator name, the scope it is made in) of each iterator of the dataset kept in a name."""
    for node in node_pre_order(ctx.tree):
        if node.type == symbols.trailer and attribute_name(node) in MAKERS \
                and is_call_trailer(node.next_sibling):
            power = node.parent
            call = node.next_sibling
            if power.children.index(call) == len(power.children) - 1 \
                    and _made_here(power.children, names, scope, ctx):
                iterator = _bound_to(call)
                if iterator:
                    yield iterator, enclosing_scope(node)
    for builder, structure in _iterators(ctx):
        if any(name in structure and _same_variable(name, scope, builder, ctx) for name in names):
            iterator = _bound_to(builder)
            if iterator:
                yield iterator, enclosing_scope(builder)


def _made_here(parts: Sequence[Base], names: set[str], scope: Node, ctx: FileContext) -> bool:
    """Do power children ``parts`` make an iterator of the dataset (``ds.make_one_shot_iterator()``,
    ``tf.data.make_one_shot_iterator(ds)``)?"""
    if len(parts) < 3 or not is_call_trailer(parts[-1]) or attribute_name(parts[-2]) not in MAKERS:
        return False
    receiver = spelled_name(parts[:-2])
    if receiver in names and _same_variable(receiver, scope, parts[-1], ctx):
        return True
    given = arguments(parts[-1])
    read = dotted_name(given[0].value) if given else None
    return read is not None and read in names and _same_variable(read, scope, parts[-1], ctx)


def _assigned(power: Base) -> Iterator[tuple[str, Base]]:
    """(name, statement) of each name a plain ``a, b = <power>`` statement binds."""
    statement = power.parent
    if statement is None or statement.type != symbols.expr_stmt or statement.children[-1] is not power \
            or any(child.type != tokens.EQUAL for child in statement.children[1::2]):
        return
    for target in statement.children[:-1:2]:
        for item in _items(target):
            name = dotted_name(item)
            if name:
                yield name, statement


def _items(target: Base) -> list[Base]:
    """The targets of ``a``, ``a, b``, ``(a, b)`` and ``[a, b]``."""
    if target.type == symbols.atom and len(target.children) == 3:
        return _items(target.children[1])
    if target.type in (symbols.testlist_star_expr, symbols.exprlist, symbols.testlist_gexp,
                       symbols.listmaker):
        return [item for item in target.children[0::2]]
    return [target]
