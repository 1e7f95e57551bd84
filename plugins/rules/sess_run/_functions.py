"""What a ``def`` declares: the question NPU006, NPU007 and NPU010 ask of the functions they
rewrite or follow (where it returns: ``function_returns`` of ``npu_codemod.api``)."""

from __future__ import annotations

from npu_codemod.api import Base, Leaf, Node, symbols, tokens
from npu_codemod.api._toolkit import function_returns, is_return

__all__ = ["parameters", "defaults_to_none", "function_returns", "is_return"]


def parameters(function: Node) -> list[tuple[str, Leaf]]:
    """(kind, NAME leaf) of each parameter: kind ``positional``, ``keyword`` (after ``*``),
    ``star`` (``*args``) or ``double`` (``**kwargs``)."""
    declared = function.children[2]
    inner = declared.children[1] if len(declared.children) == 3 else None
    if inner is None:
        items: list[Base] = []
    else:
        items = inner.children if inner.type in (symbols.typedargslist, symbols.varargslist) else [inner]
    result, kind, default = [], "positional", False
    for item in items:
        if default:
            default = False
        elif item.type == tokens.EQUAL:
            default = True
        elif item.type == tokens.STAR:
            kind = "star"
        elif item.type == tokens.COMMA and kind == "star":
            kind = "keyword"  # def f(a, *, b)
        elif item.type == tokens.DOUBLESTAR:
            kind = "double"
        elif item.type in (tokens.NAME, symbols.tname):
            leaf = item if item.type == tokens.NAME else item.children[0]
            result.append((kind, leaf))
            kind = "keyword" if kind == "star" else kind
    return result


def defaults_to_none(function: Node, name: str) -> bool:
    """Is ``name`` a parameter of ``function`` whose default is ``None`` (``def f(config=None)``)?
    A caller that leaves it out passes None, which code written for an object must not reach."""
    for _, leaf in parameters(function):
        if leaf.value == name:
            item = leaf.parent if leaf.parent is not None and leaf.parent.type == symbols.tname else leaf
            equal = item.next_sibling
            value = equal.next_sibling if equal is not None and equal.type == tokens.EQUAL else None
            return value is not None and value.type == tokens.NAME and value.value == "None"
    return False
