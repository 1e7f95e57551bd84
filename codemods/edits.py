"""Edits a rule makes at a :class:`~npu_codemod.codemods.qualified.Reference` or a statement.

Each keeps everything it does not replace byte-identical (prefixes, comments, trailing commas)
and writes new code in the file's style only through the snippets it is given. Statement-level
edits (insert, remove) must run after the traversal: call them from ``finish`` or through
``ctx.defer``.
"""

from __future__ import annotations

import re
from typing import Optional

from fissix import pytree
from fissix.fixer_util import Name
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .calls import Argument, add_keyword, find_argument
from .nodes import child_index, indentation, last_leaf
from .qualified import Reference
from .snippets import parse_expression, parse_statements


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
    argument's code goes where ``{}`` is. Returns False when the call does not pass it.

    The argument's own nodes move into the new code (its comments and layout with them), so
    an edit another rule makes inside it later still lands in the file."""
    argument = find_argument(call, keyword, position)
    if argument is None or argument.star:
        return False
    wrap_expression(argument.value, template)
    return True


#: The name that stands for the wrapped expression while a template is parsed.
_HOLE = "__npu_codemod_wrapped__"


def wrap_expression(value: pytree.Base, template: str) -> pytree.Base:
    """Put the expression ``value`` where the ``{}`` of ``template`` is (``X`` ->
    ``npu_run_config_init(run_config=X)``), in place: ``value``'s nodes move into the new code,
    which takes ``value``'s prefix. Returns the new expression."""
    new = parse_expression(template.replace("{}", _HOLE))
    hole = next(leaf for leaf in new.leaves() if leaf.type == token.NAME and leaf.value == _HOLE)
    new.prefix = value.prefix
    value.replace(new)
    value.prefix = ""
    if hole is new:  # the template is "{}"
        new.replace(value)
        return value
    hole.replace(value)
    return new


def rename_argument(argument: Argument, keyword: str) -> None:
    """Pass ``argument`` as ``keyword=``: a keyword argument is renamed (``loss_scale=s`` ->
    ``loss_scale_manager=s``), a positional one gets the keyword (``s`` -> ``loss_scale=s``).
    Its value's nodes stay (others' edits inside it too); keep the arguments' order valid:
    no positional may follow the ones given a keyword."""
    if argument.star:
        raise ValueError(f"cannot name an unpacked argument {argument.star}{argument.value}")
    if argument.keyword is not None:
        argument.node.children[0].value = keyword
        return
    value = argument.value
    named = pytree.Node(syms.argument, [Name(keyword), pytree.Leaf(token.EQUAL, "=")])
    named.prefix = value.prefix
    value.replace(named)
    value.prefix = ""
    named.append_child(value)


def remove_small_statement(statement: pytree.Base, newline: str = "\n") -> None:
    """Remove one small statement (``hvd.init()``, ``x = 1``: a child of a line) from its line.

    Alone on its line, the line goes as :func:`remove_statement` removes it; the body of a
    one-line ``if x: hvd.init()`` becomes ``pass``; between ``;`` it goes with one ``;``.
    """
    line = statement.parent
    index = child_index(statement)
    small = [child for child in line.children if child.type not in (token.SEMI, token.NEWLINE)]
    if len(small) == 1:
        remove_statement(line, newline)
        return
    following = line.children[index + 1]
    if index == 0:  # ``hvd.init(); x = 1``: the next statement starts the line
        line.children[index + 2].prefix = statement.prefix
        following.remove()
    else:
        line.children[index - 1].remove()  # the ';' in front of it
    statement.remove()


def remove_statement(statement: pytree.Base, newline: str = "\n") -> None:
    """Remove a statement line (a child of a block); a block left empty gets ``pass``, and so
    does a one-line body (``if gpus: set_memory_growth(gpu, True)``).

    Comment lines in front of the removed line stay, in front of what follows it; so do the
    blank lines and comments after a removed compound statement's block.
    """
    block = statement.parent
    if block.type not in (syms.suite, syms.file_input):  # the body after ``if x:``
        (replacement,) = parse_statements("pass", newline)
        replacement.prefix = statement.prefix
        replacement.children[-1].replace(statement.children[-1].clone())  # its comment, newline
        statement.replace(replacement)
        return
    index = child_index(statement)
    body = [child for child in block.children if child.type not in _NOT_STATEMENTS]
    if block.type == syms.suite and len(body) == 1:
        (replacement,) = parse_statements("pass", newline)
        replacement.prefix = statement.prefix
        statement.replace(replacement)
        return
    first_in_suite = index > 0 and block.children[index - 1].type == token.INDENT
    following = block.children[index + 1] if index + 1 < len(block.children) else None
    # After a compound statement, the removed line's indentation (and comments) sit in front
    # of the DEDENT tokens that end the compound: they go with the line.
    dedents = _trailing_dedents(block.children[index - 1]) if index > 0 else []
    prefix = "".join(leaf.prefix for leaf in dedents) + statement.prefix
    for leaf in dedents:
        leaf.prefix = ""
    comments = prefix[: prefix.rfind("\n") + 1]
    # A compound statement's own DEDENT tokens hold the blank lines and comments after its
    # block: they belong to what follows it.
    after = "".join(leaf.prefix for leaf in _trailing_dedents(statement))
    statement.remove()
    if following is None:
        return
    rest = after + following.prefix
    indent = indentation(following) if first_in_suite else ""
    if indent:  # the block's indentation comes first: no blank line may follow it
        rest = re.sub(r"^(?:[ \t]*\r?\n)+", "", rest)
    if indent and rest.startswith(indent):
        rest = rest[len(indent):]
    following.prefix = _fewer_blank_lines(comments, rest) + rest


def _fewer_blank_lines(comments: str, rest: str) -> str:
    """``comments`` (the lines in front of a removed statement) without as many blank lines as
    ``rest`` (what follows it) starts with, when they are blank lines only: the longer run of
    the two stays, not their sum (a function's last statement removed: two blank lines before
    the next ``def``, not three)."""
    lines = comments.splitlines(keepends=True)
    if any(line.strip() for line in lines):
        return comments  # a comment stays with its blank lines
    following = 0
    for line in rest.splitlines(keepends=True):
        if line.strip() or not line.endswith("\n"):
            break
        following += 1
    return "".join(lines[following:])


def _trailing_dedents(statement: pytree.Base) -> list[pytree.Leaf]:
    """The DEDENT leaves that end ``statement`` (a compound one's blocks), in text order."""
    found = []
    node = statement
    while node.children:
        last = node.children[-1]
        if last.type == token.DEDENT and len(node.children) > 1:
            found.append(last)
            node = node.children[-2]
        else:
            node = last
    return found[::-1]


_NOT_STATEMENTS = frozenset({token.INDENT, token.DEDENT, token.NEWLINE, token.ENDMARKER})


def _keyword(call: pytree.Node, keyword: str) -> Optional[Argument]:
    found = find_argument(call, keyword)
    return found if found is not None and found.keyword == keyword else None


def _replace_value(value: pytree.Base, value_code: str) -> None:
    new = parse_expression(value_code)
    new.prefix = value.prefix
    value.replace(new)


def insert_before(statement: pytree.Base, code: str, newline: str) -> list[pytree.Base]:
    """Insert the statements of ``code`` before ``statement``; return the new nodes.

    Comments and blank lines above ``statement`` stay above the inserted code.
    """
    indent = indentation(statement)
    nodes = parse_statements(code, newline)
    block = statement.parent
    index = child_index(statement)
    first_in_suite = block.children[index - 1].type == token.INDENT
    nodes[0].prefix = "" if first_in_suite else statement.prefix
    for node in nodes[1:]:
        node.prefix = indent
    statement.prefix = indent
    for offset, node in enumerate(nodes):
        block.insert_child(index + offset, node)
    return nodes


def insert_above_comments(statement: pytree.Base, code: str, newline: str) -> list[pytree.Base]:
    """:func:`insert_before`, but the comment lines right above ``statement`` (no blank line
    between them and it) stay attached to it: the new code goes above them, after the blank
    lines (``# Restore the trained weights.`` still introduces the session it was written for,
    not the config lines written for that session)."""
    block = statement.parent
    index = child_index(statement)
    holder = block.children[index - 1] if block.children[index - 1].type == token.INDENT else statement
    head, attached = _attached_comments(holder.prefix)
    nodes = insert_before(statement, code, newline)
    if attached:
        indent = indentation(statement)
        if holder is statement:
            nodes[0].prefix = head + indent
        else:
            holder.prefix = head
        statement.prefix = attached + indent
    return nodes


def _attached_comments(prefix: str) -> tuple[str, str]:
    """``prefix`` (of a statement: whole lines, then the indentation) split before the comment
    lines that end it with no blank line after them: (what comes before, those lines)."""
    lines = prefix.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()  # the statement's own indentation
    start = len(lines)
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return "".join(lines[:start]), "".join(lines[start:])


def insert_after(statement: pytree.Base, code: str, newline: str) -> list[pytree.Base]:
    """Insert the statements of ``code`` right after ``statement`` (a child of a block).

    Blank lines and comments that follow a compound statement at the block's indentation
    belong to what comes next, so they move below the new code.
    """
    block = statement.parent
    indent = indentation(statement)
    nodes = parse_statements(code, newline)
    for node in nodes:
        node.prefix = indent
    moved = _take_trailing_text(statement, indent)
    index = child_index(statement) + 1
    for offset, node in enumerate(nodes):
        block.insert_child(index + offset, node)
    following = block.children[index + len(nodes)] if index + len(nodes) < len(block.children) else None
    if following is not None:
        following.prefix = moved + following.prefix
    elif moved:  # cannot happen in a parsed tree (blocks end in DEDENT/ENDMARKER), keep the text
        nodes[-1].prefix = moved + nodes[-1].prefix
    return nodes


def _take_trailing_text(statement: pytree.Base, indent: str) -> str:
    """Cut the prefixes of the DEDENTs ending ``statement``, except lines indented deeper."""
    dedents = []
    leaf = last_leaf(statement)
    while leaf is not None and leaf.type == token.DEDENT:
        dedents.append(leaf)
        leaf = leaf.prev_sibling
        if leaf is not None and leaf.type != token.DEDENT:
            leaf = last_leaf(leaf)
    text = "".join(dedent.prefix for dedent in reversed(dedents))
    if not text:
        return ""
    lines = text.splitlines(keepends=True)
    keep = 0
    while keep < len(lines) and lines[keep].strip() and _deeper(lines[keep], indent):
        keep += 1
    kept, moved = "".join(lines[:keep]), "".join(lines[keep:])
    for dedent in dedents:
        dedent.prefix = ""
    dedents[-1].prefix = kept
    return moved


def _deeper(line: str, indent: str) -> bool:
    whitespace = line[: len(line) - len(line.lstrip(" \t"))]
    return len(whitespace) > len(indent)
