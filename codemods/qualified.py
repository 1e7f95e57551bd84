"""Matching code by qualified name: which calls and references of a file mean a given API.

A rule names what it looks for as full dotted names of any module (``tensorflow.estimator.
RunConfig``, ``horovod.tensorflow.rank``); the file's imports decide how it is spelled there
(``tf.estimator.RunConfig``, ``tf.compat.v1.estimator.RunConfig``, ``from tensorflow.estimator
import RunConfig as RC``, ``import horovod.tensorflow as hvd``). :func:`name_reference` answers
"what does this expression name?" for one node; the engine uses it to offer each rule exactly
the references it declared (:attr:`Rule.calls`, :attr:`Rule.uses`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Iterable, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .tfnames import ImportNames, canonical, is_attribute_trailer, is_call_trailer
from .walk import position

#: Parents under which a NAME leaf is not a reference to what it is bound to.
_NOT_REFERENCES = frozenset({
    syms.import_name, syms.import_from, syms.import_as_name, syms.import_as_names,
    syms.dotted_as_name, syms.dotted_as_names, syms.dotted_name, syms.funcdef, syms.classdef,
    syms.parameters, syms.typedargslist, syms.tname, syms.varargslist, syms.trailer,
    syms.global_stmt,
})


@dataclass(frozen=True)
class Reference:
    """One place where code names an API: ``tf.estimator.RunConfig`` in ``tf.estimator.RunConfig(x)``.

    ``node`` is the expression holding the name: a ``power`` node (``tf.a.b(...)...``) or a bare
    NAME leaf. ``end`` is how many of its children spell the name (1 for a bare name), ``name``
    the qualified name it resolves to (``compat.v1`` folded, internal modules resolved), and
    ``call`` the ``(...)`` trailer right after the name when it is called, else None.
    ``ctx.report(reference, ...)`` reports at its original place even after an edit.
    """

    node: pytree.Base
    end: int
    name: str
    call: Optional[pytree.Node]
    #: Where the reference was before any edit (1-based line, 0-based column).
    line: int = 0
    column: int = 0


def module_names(tree: pytree.Node, modules: Iterable[str]) -> dict[str, ImportNames]:
    """The bindings of each of ``modules`` (a root package each) in ``tree``."""
    return {module: ImportNames(tree, root=module) for module in modules}


def name_reference(node: pytree.Base, resolvers: Iterable[ImportNames],
                   wanted: AbstractSet[str]) -> Optional[Reference]:
    """The reference to one of ``wanted`` (qualified names) that ``node`` starts with, if any.

    ``node`` is a ``power`` node or a NAME leaf; the longest dotted prefix that resolves to a
    wanted name wins (``tf.train.Saver(...).save`` names ``tensorflow.train.Saver``).
    """
    if node.type == syms.power:
        head = node.children[0]
        if head.type != token.NAME:
            return None
        return _in_power(node, head.value, resolvers, wanted)
    if node.type != token.NAME or not _is_plain_reference(node):
        return None
    for resolver in resolvers:
        qualified = resolver.qualify(node.value)
        if qualified is not None and qualified in wanted:
            return Reference(node, 1, qualified, None, *position(node))
    return None


def _in_power(power: pytree.Node, head: str, resolvers: Iterable[ImportNames],
              wanted: AbstractSet[str]) -> Optional[Reference]:
    for resolver in resolvers:
        if head not in resolver.bindings:
            continue
        parts = [head]
        found = None
        children = power.children
        for end in range(1, len(children) + 1):
            qualified = resolver.qualify(".".join(parts))
            if qualified is not None and qualified in wanted:
                call = children[end] if end < len(children) else None
                found = Reference(power, end, qualified, call if is_call_trailer(call) else None,
                                  *position(power))
            if end == len(children) or not is_attribute_trailer(children[end]):
                break
            parts.append(children[end].children[1].value)
        if found is not None:
            return found
    return None


def _is_plain_reference(leaf: pytree.Leaf) -> bool:
    """A NAME that reads what it is bound to: not the head of a ``power`` (that node is asked),
    not an attribute, keyword, parameter, import or definition name."""
    parent = leaf.parent
    if parent is None or parent.type in _NOT_REFERENCES:
        return False
    if parent.type == syms.power:
        return False
    if parent.type == syms.argument and leaf is parent.children[0] and len(parent.children) == 3:
        return False  # f(name=...)
    if parent.type == syms.expr_stmt and leaf is parent.children[0]:
        return False  # assigned
    return True


def qualified_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as :func:`name_reference` compares them (``compat.v1`` folded)."""
    return frozenset(canonical(name) for name in names)


def name_roots(names: Iterable[str]) -> tuple[str, ...]:
    """The root packages of ``names``, in first-seen order: whose imports to follow."""
    return tuple(dict.fromkeys(name.split(".")[0] for name in names))
