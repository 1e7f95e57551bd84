"""Edits a rule makes at a :class:`~npu_codemod.codemods.qualified.Reference` or a statement.

Each keeps everything it does not replace byte-identical (prefixes, comments, trailing commas)
and writes new code in the file's style only through the snippets it is given. Statement-level
edits (insert, remove) must run after the traversal: call them from ``finish`` or through
``ctx.defer``.
"""

from __future__ import annotations

from typing import Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .calls import Argument, add_keyword, find_argument
from .qualified import Reference
from .snippets import parse_expression, parse_statements
from .statements import child_index, indentation
from .walk import tree_text


def replace_callee(reference: Reference, dotted: str) -> None:
    """Spell the referenced name as ``dotted`` (``tf.estimator.RunConfig(...)`` ->
    ``NPURunConfig(...)``); the arguments and what follows them are kept."""
    new = parse_expression(dotted)
    pieces = list(new.children) if new.type == syms.power else [new]
    node = reference.node
    if node.type != syms.power:
        replacement = new if len(pieces) > 1 else pieces[0]
        replacement.prefix = node.prefix
        node.replace(replacement)
        return
    prefix = node.children[0].prefix
    for child in node.children[: reference.end]:
        child.remove()
    for offset, piece in enumerate(pieces):
        piece.remove()
        node.insert_child(offset, piece)
    node.children[0].prefix = prefix


def set_keyword(call: pytree.Node, keyword: str, value_code: str) -> None:
    """Give the call ``keyword=value_code``: replace the value if the keyword is there, else
    append it after the last argument."""
    existing = _keyword(call, keyword)
    if existing is None:
        add_keyword(call, keyword, value_code)
        return
    _replace_value(existing.value, value_code)


def set_positional(call: pytree.Node, index: int, value_code: str,
                   keyword: Optional[str] = None) -> bool:
    """Replace the ``index``-th positional argument (0-based) with ``value_code``. When the call
    has fewer positionals and ``keyword`` names the parameter, give it as ``keyword=``
    instead. Returns False when neither was possible (nothing changed)."""
    argument = find_argument(call, keyword or "", index)
    if argument is not None:
        _replace_value(argument.value, value_code)
        return True
    if keyword is None:
        return False
    add_keyword(call, keyword, value_code)
    return True


def wrap_argument(call: pytree.Node, keyword: str, template: str,
                  position: Optional[int] = None) -> bool:
    """``config=X`` -> ``config=f(run_config=X)`` with ``template="f(run_config={})"``: the
    argument's code goes where ``{}`` is. Returns False when the call does not pass it."""
    argument = find_argument(call, keyword, position)
    if argument is None or argument.star:
        return False
    value = argument.value
    _replace_value(value, template.replace("{}", tree_text(value).strip()))
    return True


def remove_statement(statement: pytree.Base, newline: str = "\n") -> None:
    """Remove a statement line (a child of a block); a block left empty gets ``pass``.

    Comment lines in front of the removed line stay, in front of what follows it.
    """
    block = statement.parent
    index = child_index(statement)
    body = [child for child in block.children if child.type not in _NOT_STATEMENTS]
    if block.type == syms.suite and len(body) == 1:
        (replacement,) = parse_statements("pass", newline)
        replacement.prefix = statement.prefix
        statement.replace(replacement)
        return
    first_in_suite = index > 0 and block.children[index - 1].type == token.INDENT
    following = block.children[index + 1] if index + 1 < len(block.children) else None
    comments = statement.prefix[: statement.prefix.rfind("\n") + 1]
    statement.remove()
    if following is None:
        return
    rest = following.prefix
    indent = indentation(following) if first_in_suite else ""
    if indent and rest.startswith(indent):
        rest = rest[len(indent):]
    following.prefix = comments + rest


_NOT_STATEMENTS = frozenset({token.INDENT, token.DEDENT, token.NEWLINE, token.ENDMARKER})


def _keyword(call: pytree.Node, keyword: str) -> Optional[Argument]:
    found = find_argument(call, keyword)
    return found if found is not None and found.keyword == keyword else None


def _replace_value(value: pytree.Base, value_code: str) -> None:
    new = parse_expression(value_code)
    new.prefix = value.prefix
    value.replace(new)
