"""Is this receiver a ``tf.data`` dataset? A file-local, conservative answer.

Only receivers *shown* to be datasets are rewritten by NPU002: results of ``tf.data``
constructors or dataset methods (also through chains and assignments within the file), and
names or attributes named like a dataset. Anything else is only reported.

A name follows Python's scoping: a dataset assigned to ``data`` in one function says nothing
of the ``data`` another function binds (``data = MyLoader()``), while a function that does not
bind ``data`` reads the enclosing one's. Attributes (``self.data``) are tracked for the whole
file. Within one scope, a name assigned a dataset anywhere is one throughout.

Method names that other libraries share (``map``, ``batch``, ``repeat``...) only prove a
dataset when called on one: ``memory.batch(32)`` or ``df.apply(f)`` prove nothing. Names only
``tf.data`` uses (``prefetch``, ``padded_batch``...) prove it on any receiver.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .rule import FileContext
from .scopes import bound_names
from .statements import enclosing_scope
from .tfnames import dotted_name, is_attribute_trailer, is_call_trailer
from .walk import scoped_statements

#: Dataset methods whose names other libraries use too: evidence only on a dataset receiver.
SHARED_METHODS = frozenset(
    "map shuffle repeat apply filter zip batch cache take skip shard concatenate window "
    "range".split()
)
#: Names only ``tf.data`` uses: a call of one of them makes a dataset whatever the receiver.
TF_DATA_METHODS = frozenset(
    "prefetch interleave parallel_interleave padded_batch flat_map unbatch with_options "
    "map_with_legacy_function filter_with_legacy_function from_tensor_slices from_tensors "
    "from_generator list_files TFRecordDataset TextLineDataset FixedLengthRecordDataset "
    "shuffle_and_repeat".split()
)
DATASET_PACKAGES = ("tensorflow.data", "tensorflow.contrib.data")
_DATASET_NAME = re.compile(r"^(?:dataset|ds|\w+_dataset|\w+_ds)$", re.IGNORECASE)
_NAMES = "datasets.names"
_BOUND = "datasets.bound"
#: A key of :func:`dataset_names`: (id of the scope owning the name, name), or for an
#: attribute (None, dotted name).
Key = tuple[Optional[int], str]


def is_dataset(parts: Sequence[pytree.Base], ctx: FileContext,
               scope: Optional[pytree.Node] = None) -> bool:
    """True when the expression spelled by power children ``parts`` is a dataset; ``scope``
    is where it is evaluated (found from ``parts`` when not given)."""
    if not parts:
        return False
    if is_call_trailer(parts[-1]) and len(parts) >= 2:
        return _call_makes_dataset(parts[:-1], ctx, scope)
    name = _dotted(parts)
    if name is None:
        return False
    if _DATASET_NAME.match(name.rsplit(".", 1)[-1]):
        return True
    names = dataset_names(ctx)
    return _key(name, scope or enclosing_scope(parts[0]), ctx) in names


def _call_makes_dataset(callee: Sequence[pytree.Base], ctx: FileContext,
                        scope: Optional[pytree.Node]) -> bool:
    """Does calling the expression spelled by ``callee`` return a dataset?"""
    qualified = ctx.tf.qualify(_dotted(callee))
    if qualified:
        return any(qualified.startswith(package + ".") for package in DATASET_PACKAGES)
    method = callee[-1]
    if not is_attribute_trailer(method):
        return False
    name = method.children[1].value
    return name in TF_DATA_METHODS or (
        name in SHARED_METHODS and is_dataset(callee[:-1], ctx, scope))


def dataset_names(ctx: FileContext) -> frozenset[Key]:
    """:data:`Key` of every name (in its scope) and dotted attribute assigned a dataset
    anywhere in the file (to a fixpoint)."""
    if _NAMES in ctx.memo:
        return ctx.memo[_NAMES]
    ctx.memo[_NAMES] = names = set()
    assignments = [
        (_key(target, scope, ctx), value, scope)
        for scope, node in scoped_statements(ctx.tree)
        if node.type == syms.expr_stmt
        for target, value in _assignment(node)
    ]
    while True:
        found = {key for key, value, scope in assignments
                 if key not in names and _value_is_dataset(value, scope, ctx)}
        if not found:
            break
        names.update(found)
    ctx.memo[_NAMES] = frozenset(names)
    return ctx.memo[_NAMES]


def _key(name: str, scope: pytree.Node, ctx: FileContext) -> Key:
    """Which variable ``name`` used in ``scope`` is: the innermost scope binding it (class
    bodies are not seen from their methods), else the module's."""
    if "." in name:
        return None, name
    seen_from = scope
    while scope.type != syms.file_input:
        if scope is seen_from or scope.type != syms.classdef:
            if name in ctx.per_node(_BOUND, scope, bound_names):
                break
        scope = enclosing_scope(scope)
    return id(scope), name


def _value_is_dataset(value: pytree.Base, scope: pytree.Node, ctx: FileContext) -> bool:
    if value.type == syms.power:
        return is_dataset(value.children, ctx, scope)
    return value.type == token.NAME and is_dataset([value], ctx, scope)


def _assignment(node: pytree.Node):
    """(target name, value) pairs of a simple ``a = b = value`` assignment."""
    children = node.children
    if len(children) < 3 or any(c.type != token.EQUAL for c in children[1::2]):
        return []
    value = children[-1]
    targets = [dotted_name(target) for target in children[:-1:2]]
    return [(target, value) for target in targets if target]


def _dotted(parts: Sequence[pytree.Base]) -> str | None:
    first = parts[0]
    if first.type != token.NAME or not all(map(is_attribute_trailer, parts[1:])):
        return None
    return ".".join([first.value, *(trailer.children[1].value for trailer in parts[1:])])
