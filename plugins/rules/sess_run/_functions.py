"""What a ``def`` declares and where it returns: the questions NPU006, NPU007 and NPU010 ask
of the functions they rewrite or follow."""

from __future__ import annotations

from npu_codemod.api import Base, Leaf, Node, scope_statements, symbols, tokens


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


def function_returns(node: Base) -> list[Base]:
    """The ``return`` statements of ``node`` (a def: of its body), not those of the functions
    and classes nested in it; a bare ``return`` is a NAME leaf."""
    return [statement for statement in scope_statements(node) if is_return(statement)]


def is_return(node: Base) -> bool:
    """A ``return`` statement, with or without a value."""
    return node.type == symbols.return_stmt or (node.type == tokens.NAME and node.value == "return")
