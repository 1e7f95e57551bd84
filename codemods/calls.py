"""Reading and editing call arguments: lookup by keyword or position, adding a keyword."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from fissix import pytree
from fissix.fixer_util import Comma, Name
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .snippets import parse_expression


@dataclass
class Argument:
    """One argument of a call: its keyword (None when positional) and value node."""

    node: pytree.Base
    keyword: Optional[str]
    value: pytree.Base
    star: str = ""  # "*" or "**" for unpacked arguments


def arguments(call_trailer: pytree.Node) -> list[Argument]:
    """The arguments of a ``(...)`` trailer, in source order."""
    if len(call_trailer.children) < 3:
        return []
    inner = call_trailer.children[1]
    items = inner.children if inner.type == syms.arglist else [inner]
    result = []
    for item in items:
        if item.type == token.COMMA:
            continue
        if item.type == syms.argument and item.children[1].type == token.EQUAL:
            result.append(Argument(item, item.children[0].value, item.children[2]))
        elif item.type == syms.argument and item.children[0].type in (token.STAR, token.DOUBLESTAR):
            result.append(Argument(item, None, item.children[1], item.children[0].value))
        else:
            result.append(Argument(item, None, item))
    return result


def find_argument(
    call_trailer: pytree.Node, keyword: str, position: Optional[int] = None
) -> Optional[Argument]:
    """The argument given as ``keyword=`` or as the ``position``-th positional (0-based)."""
    positional = 0
    for argument in arguments(call_trailer):
        if argument.keyword == keyword:
            return argument
        if argument.keyword is None and not argument.star:
            if positional == position:
                return argument
            positional += 1
    return None


def called_method(trailer: pytree.Base) -> Optional[int]:
    """For the ``.name`` trailer of a method call (``.fit`` in ``model.fit(x)``), its index in
    the power node (``trailer.parent``): ``children[:index]`` is the receiver, ``children[index
    + 1]`` the call. None when the trailer is not called or has no receiver before it."""
    power = trailer.parent
    if power is None or power.type != syms.power or trailer.type != syms.trailer \
            or trailer.children[0].type != token.DOT:
        return None
    children = power.children
    index = next(index for index, child in enumerate(children) if child is trailer)
    following = children[index + 1] if index + 1 < len(children) else None
    if index == 0 or following is None or following.type != syms.trailer \
            or following.children[0].type != token.LPAR:
        return None
    return index


def has_unpacking(call_trailer: pytree.Node) -> bool:
    """True for ``f(*args)`` / ``f(**kwargs)``: which parameters are given is unknowable."""
    return any(argument.star for argument in arguments(call_trailer))


def is_true(node: pytree.Base) -> bool:
    return bool(node.type == token.NAME and node.value == "True")


def is_false(node: pytree.Base) -> bool:
    return bool(node.type == token.NAME and node.value == "False")


def is_none(node: pytree.Base) -> bool:
    return bool(node.type == token.NAME and node.value == "None")


def add_keyword(call_trailer: pytree.Node, keyword: str, value_code: str) -> None:
    """Append ``keyword=value`` after the last argument, keeping a trailing comma and layout."""
    value = parse_expression(value_code)
    _append(call_trailer, pytree.Node(syms.argument, [Name(keyword), pytree.Leaf(token.EQUAL, "="), value]))


def add_argument(call_trailer: pytree.Node, value_code: str) -> None:
    """Append the positional argument ``value_code`` after the last argument (which must not
    be a keyword or an unpacking), keeping a trailing comma and layout."""
    _append(call_trailer, parse_expression(value_code))


def _append(call_trailer: pytree.Node, new_argument: pytree.Base) -> None:
    if len(call_trailer.children) == 2:  # f()
        call_trailer.insert_child(1, new_argument)
        return
    inner = call_trailer.children[1]
    if inner.type != syms.arglist:  # the one argument moves into an arglist: others' edits stay
        arglist = pytree.Node(syms.arglist, [])
        inner.replace(arglist)
        arglist.append_child(inner)
        inner = arglist
    last = len(inner.children) - 1
    new_argument.prefix = " "
    if _trailing_comment(call_trailer):  # the comment stays with the argument it was written for
        _append_on_new_line(call_trailer, inner, new_argument)
        return
    if inner.children[last].type == token.COMMA:  # f(a, b,) -> f(a, b, k=v,)
        inner.insert_child(last + 1, new_argument)
        inner.insert_child(last + 2, Comma())
        return
    inner.append_child(Comma())
    inner.append_child(new_argument)


def _trailing_comment(call_trailer: pytree.Node) -> bool:
    """Does a comment follow the last argument on its line (in the prefix of the ``)``)?"""
    prefix = call_trailer.children[-1].prefix
    return prefix.partition("\n")[0].lstrip().startswith("#") and "\n" in prefix


def _append_on_new_line(call_trailer: pytree.Node, inner: pytree.Node, new_argument: pytree.Base) -> None:
    """``f(a,  # why\n)`` -> ``f(a,  # why\n  k=v,\n)``: the new argument on a line of its own
    after the comment, indented as the last argument's line; a trailing comma stays one."""
    closing = call_trailer.children[-1]
    comment, _, rest = closing.prefix.partition("\n")
    new_argument.prefix = f"{comment}\n{_argument_indent(inner)}"
    closing.prefix = "\n" + rest
    trailing = inner.children[-1].type == token.COMMA
    if not trailing:
        inner.append_child(Comma())
    inner.append_child(new_argument)
    if trailing:
        inner.append_child(Comma())


def _argument_indent(inner: pytree.Node) -> str:
    """The indentation of the line that holds the last argument: that of the last argument
    that starts a line, else the column of the first argument (``f(a,`` then ``b)`` under it)."""
    indent: Optional[str] = None
    for item in inner.children:
        prefix: str = item.prefix
        if "\n" in prefix:
            indent = prefix.rpartition("\n")[2]
    if indent is not None:
        return indent
    column: int = next(inner.leaves()).column
    return " " * column


def remove_argument(call_trailer: pytree.Node, argument: Argument) -> None:
    """Remove one argument (from :func:`arguments`) of a call with the comma after it (before
    it, for the last one: a trailing comma stays); the next argument takes its spacing."""
    node = argument.node
    inner = call_trailer.children[1]
    if inner is node:  # the only argument
        node.remove()
        return
    items = inner.children
    index = next(index for index, child in enumerate(items) if child is node)
    following = items[index + 1] if index + 1 < len(items) else None
    if following is not None and index + 2 < len(items):
        items[index + 2].prefix = node.prefix
        following.remove()
    elif index > 0:
        items[index - 1].remove()  # the comma in front of the last argument (a trailing one stays)
    elif following is not None:
        following.remove()  # ``f(a,)``: the only argument and its trailing comma
    node.remove()


def needs_parentheses(node: pytree.Base) -> bool:
    """True when ``node`` must be parenthesised as the right operand of ``-``."""
    return node.type not in (token.NAME, token.NUMBER, token.STRING, syms.atom, syms.power)


def unparenthesised(node: pytree.Base) -> pytree.Base:
    """The expression inside any parentheses around ``node``: ``x`` for ``((x))``, the node
    itself otherwise (a tuple ``(a, b)`` and a generator stay what they are)."""
    while node.type == syms.atom and node.children[0].type == token.LPAR and len(node.children) == 3 \
            and node.children[1].type not in (syms.testlist_gexp, token.RPAR):
        node = node.children[1]
    return node
