"""Turning code text into fissix nodes that fit into an existing file.

Generated code must use the file's line ending and indentation, so snippets are parsed with
the file's newline and re-indented by setting the prefix of each new statement.
"""

from __future__ import annotations

from functools import lru_cache

from fissix import pygram, pytree
from fissix.pygram import python_symbols as syms

from .parser import Parser


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(pygram.python_grammar_no_print_statement)


def parse_statements(code: str, newline: str = "\n") -> list[pytree.Base]:
    """Top-level statements of ``code`` (each ending in ``newline``), detached and ready to insert."""
    return [statement.clone() for statement in _parsed(code.rstrip("\n").replace("\n", newline) + newline)]


@lru_cache(maxsize=1024)
def _parsed(text: str) -> tuple[pytree.Base, ...]:
    """Rules write the same few snippets into every file: parse each once, hand out copies."""
    tree = _parser().parse_string(text)
    statements = [child for child in tree.children if child.type != pygram.token.ENDMARKER]
    for statement in statements:
        statement.remove()
    return tuple(statements)


def parse_expression(code: str) -> pytree.Base:
    """One expression node for ``code`` (no trailing newline, no prefix)."""
    (statement,) = parse_statements(code)
    expression = statement.children[0]
    if expression.type == syms.expr_stmt:  # an assignment is a statement, not an expression
        raise ValueError(f"not an expression: {code!r}")
    expression.remove()
    expression.prefix = ""
    return expression
