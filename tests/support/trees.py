"""fissix trees for tests that work on nodes directly, and how two parsers' answers compare."""

from __future__ import annotations

from typing import Any, Callable

from fissix import pygram, pytree
from fissix.pgen2 import driver


def parse(source: str) -> pytree.Node:
    """``source`` parsed with the Python 3 grammar (``print``/``exec`` are names); raises when
    it does not parse."""
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    return parser.parse_string(source)


def parse_outcome(parse: Callable[[str], pytree.Node], text: str) -> tuple[str, Any]:
    """What ``parse`` makes of ``text``, comparable with another parser's: ("tree", its
    :func:`shape` and the root's ``used_names``) or ("error", the exception's type and
    arguments)."""
    try:
        tree = parse(text)
    except Exception as error:  # fissix raises ParseError, TokenError, IndentationError
        return "error", (type(error), error.args)
    return "tree", (shape(tree), sorted(tree.used_names))


def shape(node: pytree.Base, parent: pytree.Base | None = None) -> tuple[Any, ...]:
    """Everything a node holds that the engine or Bowler could read (its class and every
    attribute), children included; its parent link is checked on the way."""
    assert node.parent is parent, f"parent link of {node!r}"
    attributes = dict(vars(node))
    attributes.pop("parent", None)
    children = attributes.pop("children", [])
    attributes.pop("used_names", None)  # compared on the root by parse_outcome()
    return (type(node).__name__, sorted(attributes.items(), key=lambda item: item[0]),
            tuple(shape(child, node) for child in children))
