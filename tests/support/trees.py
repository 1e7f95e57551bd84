"""fissix trees for tests that work on nodes directly, and how two parsers' answers compare."""

from __future__ import annotations

from fissix import pygram, pytree
from fissix.pgen2 import driver

from npu_codemod.codemods.parser_canary import parse_outcome, shape

__all__ = ["parse", "parse_outcome", "shape"]


def parse(source: str) -> pytree.Node:
    """``source`` parsed with the Python 3 grammar (``print``/``exec`` are names); raises when
    it does not parse."""
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    return parser.parse_string(source)
