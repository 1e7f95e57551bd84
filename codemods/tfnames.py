"""Which names in a file are bound to TensorFlow, and what a dotted expression resolves to.

Rules match *canonical* names (``tensorflow.nn.dropout``) whatever the file's spelling:
``tf.nn.dropout``, ``tf.compat.v1.nn.dropout`` or ``from tensorflow import nn``. Code a rule
writes uses the file's own alias (:attr:`TfNames.alias`).
"""

from __future__ import annotations

import re
from typing import Optional

from fissix import pytree
from fissix.pygram import python_symbols as syms
from fissix.pgen2 import token

from .walk import small_statements

TF = "tensorflow"
_COMPAT = ("tensorflow.compat.v1", "tensorflow.compat.v2")

#: Cheap test on raw text: could the file import TensorFlow? It may over-match (the tree
#: decides), never under-match: the import can follow ``;`` or a one-line ``try:``/``if x:``.
IMPORTS_TF = re.compile(
    r"(?:^|[;:])[ \t]*(?:from[ \t]+tensorflow\b|import[ \t][^\n#]*\btensorflow\b)",
    re.MULTILINE,
)


def canonical(dotted: str) -> str:
    """Fold ``tensorflow.compat.v1.X`` onto ``tensorflow.X``."""
    for prefix in _COMPAT:
        if dotted == prefix:
            return TF
        if dotted.startswith(prefix + "."):
            return TF + dotted[len(prefix):]
    return dotted


def dotted_name(node: pytree.Base) -> Optional[str]:
    """``a.b.c`` for a NAME or a power node made only of ``.attr`` trailers, else None."""
    if node.type == token.NAME:
        return node.value
    if node.type == syms.dotted_name:
        return "".join(leaf.value for leaf in node.leaves())
    if node.type != syms.power or node.children[0].type != token.NAME:
        return None
    if not is_attribute_trailer(node.children[-1]):
        return None  # a call ``f(x)`` or ``a.f(x)``, most power nodes: no need to go through
    parts = [node.children[0].value]
    for trailer in node.children[1:]:
        if not is_attribute_trailer(trailer):
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)


def is_attribute_trailer(node: pytree.Base) -> bool:
    return node.type == syms.trailer and node.children[0].type == token.DOT


def is_call_trailer(node: Optional[pytree.Base]) -> bool:
    return node is not None and node.type == syms.trailer and node.children[0].type == token.LPAR


def prefix_name(power: pytree.Node, end: int) -> Optional[str]:
    """Dotted name spelled by ``power.children[:end]`` (a NAME and attribute trailers only)."""
    first = power.children[0]
    if first.type != token.NAME:
        return None
    parts = [first.value]
    for trailer in power.children[1:end]:
        if not is_attribute_trailer(trailer):
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)


class TfNames:
    """The TensorFlow bindings of one module, computed once from its tree.

    ``root`` names another module whose bindings to follow the same way (``contextlib``):
    :meth:`resolve` then gives its full names.
    """

    def __init__(self, tree: pytree.Node, root: str = TF) -> None:
        self.root = root
        self.bindings: dict[str, str] = {}
        for node in small_statements(tree):
            if node.type == syms.import_name:
                self._import_name(node.children[1])
            elif node.type == syms.import_from:
                self._import_from(node)
            elif node.type == syms.expr_stmt and len(node.children) == 3:
                self._alias_assignment(node)

    @property
    def imports_tf(self) -> bool:
        return bool(self.bindings)

    @property
    def alias(self) -> str:
        """The name to spell TensorFlow with in generated code (``tf``, ``tf.compat.v1``...)."""
        ranked = sorted(self.bindings.items(), key=lambda item: _alias_rank(item[1]))
        for name, target in ranked:
            if target in (TF, *_COMPAT[:1]):
                return name
            if target == "tensorflow.compat":
                return name + ".v1"
        return "tf"

    def qualify(self, dotted: Optional[str]) -> Optional[str]:
        """Canonical TensorFlow name of ``dotted`` (``tf.nn.dropout``), or None if not TF."""
        resolved = self.resolve(dotted)
        return canonical(resolved) if resolved else None

    def resolve(self, dotted: Optional[str]) -> Optional[str]:
        """Full TensorFlow name of ``dotted`` as bound, ``compat.vN`` kept; None if not TF.

        Rules need it where the API versions differ (``compat.v2.nn.dropout`` takes ``rate``).
        """
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return None
        return target + ("." + rest if rest else "")

    def _bind(self, name: str, target: str) -> None:
        if target == self.root or target.startswith(self.root + "."):
            self.bindings[name] = target

    def _import_name(self, node: pytree.Base) -> None:
        items = node.children[::2] if node.type == syms.dotted_as_names else [node]
        for item in items:
            if item.type == syms.dotted_as_name:
                self._bind(item.children[2].value, dotted_name(item.children[0]) or "")
            else:
                module = dotted_name(item) or ""
                self._bind(module.split(".")[0], module.split(".")[0])

    def _import_from(self, node: pytree.Node) -> None:
        module = dotted_name(node.children[1]) if node.children[1].type != token.DOT else None
        if not module:
            return
        names = node.children[3:]
        for child in names:
            if child.type == token.LPAR or child.type == token.RPAR:
                continue
            items = child.children[::2] if child.type == syms.import_as_names else [child]
            for item in items:
                if item.type == syms.import_as_name:
                    self._bind(item.children[2].value, f"{module}.{item.children[0].value}")
                elif item.type == token.NAME:
                    self._bind(item.value, f"{module}.{item.value}")

    def _alias_assignment(self, node: pytree.Node) -> None:
        target, op, value = node.children
        if target.type == token.NAME and op.type == token.EQUAL:
            resolved = self.qualify(dotted_name(value))
            if resolved:
                self.bindings.setdefault(target.value, resolved)


def _alias_rank(target: str) -> int:
    return {"tensorflow.compat.v1": 0, TF: 1}.get(target, 2)
