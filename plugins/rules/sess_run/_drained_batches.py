"""Are a dataset's batches read back into Python until the data ends? (NPU002)

minigo's ``bigtable_input.make_single_array`` batches a dataset, then collects every batch:
``while True: try: batches.append(sess.run(get_next)) except tf.errors.OutOfRangeError:``;
``count_elements_in_dataset`` counts the elements so, and ``batch_exporter`` writes them to a
TFRecord file. Nothing trains on those batches: with drop_remainder=True the function returns,
counts or writes up to ``batch_size - 1`` elements fewer, whatever its names say of training.

A drain is a ``try`` that catches ``OutOfRangeError`` and whose body only runs (``<x>.run(...)``)
fetches that name an output of the dataset's iterator (``get_next = it.get_next()``), with no
feed, and calls no training method (``train*``, ``fit*``, ``*_on_batch``): a loop that fetches
the batch to feed it into a training step (``x, y = sess.run(next_batch)`` then
``sess.run(train_op, {X: x, Y: y})``) is none.
"""

from __future__ import annotations

from typing import Optional, Sequence

from npu_codemod.api import Base, FileContext, Node, arguments, dotted_name, symbols, tokens
from npu_codemod.api._toolkit import (
    attribute_name,
    enclosing_scope,
    is_call_trailer,
    node_pre_order,
)

from ._datasets import repeats
from ._fed_outputs import _outputs
from ._shared_iterators import _dataset_names

_END = "OutOfRangeError"


def drained_batches(site: Base, parts: Sequence[Base], ctx: FileContext) -> Optional[str]:
    """Why batching at ``site`` (the dataset spelled by power children ``parts``) with
    drop_remainder=True would lose elements that the code reads back until the data ends, or
    None."""
    outputs = {name: bound for name, bound in _outputs(_dataset_names(site, parts), enclosing_scope(site), ctx)}
    if not outputs or repeats(parts, site):
        return None
    scopes = {id(enclosing_scope(bound)) for bound in outputs.values()}
    for node in node_pre_order(ctx.tree):
        if node.type == symbols.try_stmt and id(enclosing_scope(node)) in scopes and _catches_end(node):
            runs = _runs(node.children[2])
            if runs and not _trains(node.children[2]) and all(_fetches_only(run, outputs) for run in runs):
                line = runs[0].get_lineno()
                return (f"its batches are read back until the data ends ({str(runs[0]).strip()} on "
                        f"line {line}, until {_END}), not trained on: drop_remainder=True would lose "
                        "the last elements")
    return None


def _catches_end(statement: Node) -> bool:
    """Does the ``try`` statement have an ``except`` naming ``OutOfRangeError``?"""
    return any(child.type == symbols.except_clause and _END in str(child) for child in statement.children)


def _runs(body: Base) -> list[Node]:
    """The ``<x>.run(...)`` calls (power nodes) in ``body``."""
    return [node.parent for node in node_pre_order(body)
            if node.type == symbols.trailer and attribute_name(node) == "run"
            and is_call_trailer(node.next_sibling)]


def _fetches_only(power: Node, outputs: dict[str, Base]) -> bool:
    """Does the run call ``power`` fetch an iterator output, and nothing fed?"""
    trailer = next(child for child in power.children if is_call_trailer(child) and attribute_name(
        child.prev_sibling) == "run")
    given = arguments(trailer)
    if not given or given[0].keyword is not None or len(given) > 1:
        return False
    value = given[0].value
    fetched = {leaf.value for leaf in value.leaves() if leaf.type == tokens.NAME} \
        | {dotted_name(node) for node in node_pre_order(value) if node.type == symbols.power}
    return bool(fetched.intersection(outputs))


def _trains(body: Base) -> bool:
    """Does ``body`` call a training method (``model.train_on_batch(x, y)``, ``fit(...)``)?"""
    for node in node_pre_order(body):
        if is_call_trailer(node) and node.prev_sibling is not None:
            before = node.prev_sibling
            name = attribute_name(before) if before.type == symbols.trailer else getattr(before, "value", "")
            if name and (name.startswith(("train", "fit")) or name.endswith("_on_batch")):
                return True
    return False
