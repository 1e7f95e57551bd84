"""fissix's parser, faster: the same tree as ``fissix.pgen2.driver.Driver.parse_string``.

fissix parses with pgen's LL(1) engine in pure Python: for every token it walks the arcs of
the current DFA state, looks up each arc's label and, for a nonterminal arc, tests the
token against that symbol's first set; each step is a method call (``addtoken``, ``shift``,
``push``, ``pop``, ``convert``) and each tree node goes through constructors that copy and
check. That loop is most of a parse, and a parse is most of a rewrite.

:class:`Parser` makes the same decisions from tables built once per grammar (per DFA state:
token label -> shift or push, the first matching arc winning exactly as in fissix's arc
order; whether the state accepts; whether it accepts only), in one loop with the driver's
prefix bookkeeping, and builds ``pytree.Node``/``pytree.Leaf`` objects with the attributes
their constructors give. The result is the same tree: node types and classes, leaf values,
prefixes, line and column numbers, parent links, ``fixers_applied``, the root's
``used_names``; and the same ``ParseError``/``TokenError``/``IndentationError`` on bad
input. ``tests/test_parser.py`` compares both on every source of the suite's corpora;
``bench/run_bench.py`` reports both parse rates and checks identity on the bench corpora.
"""

from __future__ import annotations

import io
from typing import Any, Iterable, Iterator

from fissix import pytree
from fissix.pgen2 import grammar as pgen_grammar
from fissix.pgen2 import token, tokenize
from fissix.pgen2.parse import ParseError

#: A token as ``fissix.pgen2.tokenize.generate_tokens`` yields it: type, text, start, end, line.
_Token = tuple[int, str, tuple[int, int], tuple[int, int], str]
_Table = tuple[list[dict[int, tuple[int, int]]], list[bool], list[bool]]

_NAME, _OP, _COMMENT, _NL = token.NAME, token.OP, tokenize.COMMENT, tokenize.NL
_OPMAP = pgen_grammar.opmap
_Leaf, _Node = pytree.Leaf, pytree.Node
_new = object.__new__


def _tables(grammar: pgen_grammar.Grammar) -> dict[int, _Table]:
    """Per symbol, per DFA state: {token label: (next state, symbol to push or 0 to shift)},
    whether the state accepts, whether it only accepts."""
    tables: dict[int, _Table] = {}
    for symbol, (states, _first) in grammar.dfas.items():
        moves: list[dict[int, tuple[int, int]]] = []
        for arcs in states:
            move: dict[int, tuple[int, int]] = {}
            for label, next_state in arcs:
                kind = grammar.labels[label][0]
                if label == 0:
                    continue  # the accepting arc: no token has label 0
                action = (next_state, 0 if kind < 256 else kind)  # one per arc: shared
                for first in ((label,) if kind < 256 else grammar.dfas[kind][1]):
                    move.setdefault(first, action)
            moves.append(move)
        accepts = [(0, index) in arcs for index, arcs in enumerate(states)]
        only = [arcs == [(0, index)] for index, arcs in enumerate(states)]
        tables[symbol] = (moves, accepts, only)
    return tables


class Parser:
    """Parses text with one fissix grammar into a ``pytree`` tree (see the module)."""

    def __init__(self, grammar: pgen_grammar.Grammar) -> None:
        self.grammar = grammar
        self._tables = _tables(grammar)

    def parse_string(self, text: str) -> pytree.Node:
        """What ``Driver(grammar, convert=pytree.convert).parse_string(text)`` returns."""
        return self.parse_tokens(tokenize.generate_tokens(io.StringIO(text).readline))

    def parse_tokens(self, tokens: Iterable[_Token]) -> pytree.Node:
        """The tree of ``tokens`` (``fissix.pgen2.tokenize`` 5-tuples), as fissix's driver."""
        keywords, token_labels, tables = self.grammar.keywords, self.grammar.tokens, self._tables
        used_names: set[str] = set()
        stack: list[tuple[Any, ...]] = []
        symbol = self.grammar.start
        moves, accepts, only = tables[symbol]
        state, children = 0, list[pytree.Base]()
        kind = value = context = None
        for kind, value, context in _significant(tokens):
            label = keywords.get(value) if kind == _NAME else None
            if kind == _NAME:
                used_names.add(value)
            if label is None:
                label = token_labels.get(kind)
                if label is None:
                    raise ParseError("bad token", kind, value, context)
            while True:
                move = moves[state].get(label)
                if move is None:  # no arc for the token: pop an accepting state, or fail
                    if not accepts[state]:
                        raise ParseError("bad input", kind, value, context)
                    node = children[0] if len(children) == 1 else _node(symbol, children)
                    if not stack:
                        raise ParseError("too much input", kind, value, context)
                    moves, accepts, only, state, symbol, children = stack.pop()
                    children.append(node)
                    continue
                next_state, push = move
                if push:
                    stack.append((moves, accepts, only, next_state, symbol, children))
                    symbol, state, children = push, 0, []
                    moves, accepts, only = tables[push]
                    continue
                children.append(_leaf(kind, value, context))
                state = next_state
                while only[state]:  # pop while in an accept-only state
                    node = children[0] if len(children) == 1 else _node(symbol, children)
                    if not stack:
                        node.used_names = used_names
                        return node
                    moves, accepts, only, state, symbol, children = stack.pop()
                    children.append(node)
                break
        raise ParseError("incomplete input", kind, value, context)


def _significant(tokens: Iterable[_Token]) -> Iterator[tuple[int, str, tuple[str, tuple[int, int]]]]:
    """(type, value, (prefix, start)) of each token the grammar sees, as fissix's driver
    computes them: comments, blank lines and the whitespace between tokens go to the prefix
    of the next one; an operator's type is its own (``grammar.opmap``)."""
    lineno, column, prefix = 1, 0, ""
    for kind, value, start, end, line_text in tokens:
        if start != (lineno, column):
            assert (lineno, column) <= start, ((lineno, column), start)
            s_lineno, s_column = start
            if lineno < s_lineno:
                prefix += "\n" * (s_lineno - lineno)
                lineno, column = s_lineno, 0
            if column < s_column:
                prefix += line_text[column:s_column]
                column = s_column
        if kind == _COMMENT or kind == _NL:
            prefix += value
            lineno, column = end
            if value.endswith("\n"):
                lineno, column = lineno + 1, 0
            continue
        yield (_OPMAP[value] if kind == _OP else kind), value, (prefix, start)
        prefix = ""
        lineno, column = end
        if value.endswith("\n"):
            lineno, column = lineno + 1, 0


def _leaf(kind: int, value: str, context: tuple[str, tuple[int, int]]) -> pytree.Leaf:
    """``pytree.Leaf(kind, value, context)``, without the constructor's checks and copies."""
    leaf = _new(_Leaf)
    leaf._prefix, (leaf.lineno, leaf.column) = context
    leaf.type = kind
    leaf.value = value
    leaf.fixers_applied = []
    return leaf


def _node(symbol: int, children: list[pytree.Base]) -> pytree.Node:
    """``pytree.Node(symbol, children)``, taking ``children`` as it is (the parser's own list)."""
    node = _new(_Node)
    node.type = symbol
    node.children = children
    for child in children:
        child.parent = node
    node.fixers_applied = None
    return node
