"""fissix's parser, faster: the same tree as ``fissix.pgen2.driver.Driver.parse_string``.

fissix parses with pgen's LL(1) engine in pure Python: for every token it walks the arcs of
the current DFA state, looks up each arc's label and, for a nonterminal arc, tests the
token against that symbol's first set; each step is a method call (``addtoken``, ``shift``,
``push``, ``pop``, ``convert``) and each tree node goes through constructors that copy and
check. That loop is most of a parse, and a parse is most of a rewrite.

:class:`Parser` makes the same decisions from tables built once per grammar (per DFA state:
token label -> shift or push, the first matching arc winning exactly as in fissix's arc
order; whether the state accepts; whether it accepts only), in one loop, and builds
``pytree.Node``/``pytree.Leaf`` objects with the attributes their constructors give. Its
tokens come from :mod:`.tokens` (fissix's tokenizer and the driver's prefix bookkeeping in
one pass; fissix's tokenizer for the files that reading leaves to it). A token that enters a
chain of symbols (``expr`` down to ``atom``: five on average) pushes them as one stack entry
(:class:`_Waiting`), and where they complete with one child each, they are popped together
by one table look-up. The result is the same tree: node types and classes, leaf values,
prefixes, line and column numbers, parent links, ``fixers_applied``, the root's
``used_names``; and the same ``ParseError``/``TokenError``/``IndentationError`` on bad
input. ``tests/test_parser.py`` compares both on every source of the suite's corpora;
``bench/run_bench.py`` reports both parse rates and checks identity on the bench corpora.
"""

from __future__ import annotations

import io
from itertools import chain
from typing import Any, Callable, Iterable, Iterator, TypeVar

from fissix import pytree
from fissix.pgen2 import grammar as pgen_grammar
from fissix.pgen2 import token, tokenize
from fissix.pgen2.parse import ParseError

from .tokens import Tables, Token, Unread, token_lines

#: A token as ``fissix.pgen2.tokenize.generate_tokens`` yields it: type, text, start, end, line.
_Token = tuple[int, str, tuple[int, int], tuple[int, int], str]
_Table = tuple[list[dict[int, tuple[int, int]]], list[bool], list[bool]]
_T = TypeVar("_T")

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


class _Waiting:
    """The symbols one token pushed one inside another, all but the innermost (outermost
    first): each waits for its first child, the node of the symbol it pushed. fissix pushes
    and pops them one at a time (five a token on real code); :class:`Parser` keeps them on its
    stack as one entry, ``(None, waiting, top)`` (levels ``0..top`` still wait), and makes a
    level a frame of its own only when a token goes on in it. ``levels``: each level's symbol,
    the state its first child takes it to, and that symbol's tables."""

    __slots__ = ("levels", "completed", "_takers")

    def __init__(self, levels: tuple[tuple[Any, ...], ...]) -> None:
        self.levels = levels
        #: Per top: the first level from it outward whose state does not only accept, or -1.
        self.completed = [next((level for level in range(top, -1, -1)
                                if not levels[level][4][levels[level][1]]), -1) for top in range(len(levels))]
        self._takers: dict[int, int] = {}  # top * 1024 + label -> :meth:`taker`

    def taker(self, top: int, label: int) -> int:
        """The level (from ``top`` outward) with an arc for ``label`` once it has its child:
        -1 when every level completes first, -2 when one cannot (fissix's "bad input")."""
        key = top * 1024 + label  # labels are under 1024 (fissix's grammars have about 200)
        found = self._takers.get(key)
        if found is None:
            found = self._takers[key] = self._taker(top, label)
        return found

    def _taker(self, top: int, label: int) -> int:
        for level in range(top, -1, -1):
            _symbol, state, moves, accepts, _only = self.levels[level]
            if label in moves[state]:
                return level
            if not accepts[state]:
                return -2
        return -1

    def resumed(self, level: int, node: pytree.Base, stack: list[tuple[Any, ...]]) -> tuple[Any, ...]:
        """The frame of ``level`` (its first child ``node``), or with -1 the frame below the
        levels (``node`` its last child); the levels outside ``level`` stay on ``stack``."""
        if level < 0:
            below = stack.pop()
            below[5].append(node)
            return below
        symbol, state, moves, accepts, only = self.levels[level]
        if level:
            stack.append((None, self, level - 1))
        children: list[pytree.Base] = []  # grown by appends, as fissix's (see :meth:`Parser._parse`)
        children.append(node)
        return moves, accepts, only, state, symbol, children


class _Chains:
    """Per symbol, per token label it can start with, what entering the symbol with that token
    does: ``(stack entry of the waiting levels or None, innermost symbol, its state after the
    token, its tables)``; made when first needed (a few hundred of the grammar's 750 are)."""

    def __init__(self, tables: dict[int, _Table]) -> None:
        self._tables = tables
        self.chains: dict[int, dict[int, tuple[Any, ...]]] = {symbol: {} for symbol in tables}
        self._levels: dict[tuple[int, int], tuple[Any, ...]] = {}  # (symbol, state): shared

    def chain(self, symbol: int, label: int) -> tuple[Any, ...]:
        tables, levels, current = self._tables, [], symbol
        next_state, push = tables[symbol][0][0][label]
        while push:
            level = self._levels.setdefault((current, next_state), (current, next_state, *tables[current]))
            levels.append(level)
            current = push
            next_state, push = tables[current][0][0][label]
        entry = (None, _Waiting(tuple(levels)), len(levels) - 1) if levels else None
        found = self.chains[symbol][label] = (entry, current, next_state, *tables[current])
        return found


class Parser:
    """Parses text with one fissix grammar into a ``pytree`` tree (see the module)."""

    def __init__(self, grammar: pgen_grammar.Grammar) -> None:
        self.grammar = grammar
        self._tables = _tables(grammar)
        self._chains = _Chains(self._tables)
        self._labels = Tables(grammar)

    def parse_string(self, text: str) -> pytree.Node:
        """What ``Driver(grammar, convert=pytree.convert).parse_string(text)`` returns."""
        return self._read(text, self._parse)

    def check_string(self, text: str) -> None:
        """Raise what :meth:`parse_string` raises on ``text``, and build no tree (half the
        time and none of the memory: a caller that asks only whether fissix reads a file)."""
        self._read(text, lambda tokens, _names: self._check(tokens))

    def _read(self, text: str, take: Callable[[Iterable[Token], set[str]], _T]) -> _T:
        """``take(tokens, names)`` over the tokens of ``text`` read by :mod:`.tokens`, or, where
        that reading stops applying, again from the start with fissix's tokenizer."""
        names: set[str] = set()
        lines = token_lines(text, self._labels, names)
        if lines is not None:
            try:
                return take(chain.from_iterable(lines), names)
            except Unread:
                names = set()
        tokens = _significant(tokenize.generate_tokens(io.StringIO(text).readline))
        return take(_labelled(tokens, self.grammar, names), names)

    def _check(self, tokens: Iterable[Token]) -> None:
        """:meth:`_parse`'s decisions over ``tokens`` and its errors, with no tree: fissix's arcs
        one symbol at a time (each frame its tables and state)."""
        tables, stack = self._tables, list[tuple[Any, ...]]()
        moves, accepts, only = tables[self.grammar.start]
        state = 0
        kind, value, prefix, line, column = None, None, "", 0, 0
        for label, kind, value, prefix, line, column in tokens:
            while True:
                move = moves[state].get(label)
                if move is None:
                    if not accepts[state] or not stack:
                        raise ParseError("too much input" if accepts[state] else "bad input", kind, value,
                                         (prefix, (line, column)))
                    moves, accepts, only, state = stack.pop()
                    continue
                state, push = move
                if push:
                    stack.append((moves, accepts, only, state))
                    moves, accepts, only = tables[push]
                    state = 0
                    continue
                while only[state]:
                    if not stack:
                        return
                    moves, accepts, only, state = stack.pop()
                break
        raise ParseError("incomplete input", kind, value, (prefix, (line, column)))

    def parse_tokens(self, tokens: Iterable[_Token]) -> pytree.Node:
        """The tree of ``tokens`` (``fissix.pgen2.tokenize`` 5-tuples), as fissix's driver."""
        names: set[str] = set()
        return self._parse(_labelled(_significant(tokens), self.grammar, names), names)

    def _parse(self, tokens: Iterable[Token], used_names: set[str]) -> pytree.Node:
        """The tree of ``tokens`` (:data:`.tokens.Token`); ``used_names``: the names among them."""
        chains, stack, symbol = self._chains.chains, list[tuple[Any, ...]](), self.grammar.start
        moves, accepts, only = self._tables[symbol]
        state, children = 0, list[pytree.Base]()
        kind, value, prefix, line, column = None, None, "", 0, 0
        for label, kind, value, prefix, line, column in tokens:
            while True:
                move = moves[state].get(label)
                if move is None:  # no arc for the token: pop an accepting state, or fail
                    if not accepts[state] or not stack:
                        raise ParseError("too much input" if accepts[state] else "bad input", kind, value,
                                         (prefix, (line, column)))
                    node = children[0] if len(children) == 1 else _node(symbol, children)
                    frame = stack.pop()
                    if frame[0] is not None:
                        frame[5].append(node)
                    else:
                        level = frame[1].taker(frame[2], label)
                        if level == -2:
                            raise ParseError("bad input", kind, value, (prefix, (line, column)))
                        frame = frame[1].resumed(level, node, stack)
                    moves, accepts, only, state, symbol, children = frame
                    continue
                leaf = _new(_Leaf)
                leaf._prefix, leaf.lineno, leaf.column, leaf.type, leaf.value = prefix, line, column, kind, value
                leaf.fixers_applied = []
                state, push = move
                if push:  # the token enters ``push`` and the symbols inside it: one entry
                    stack.append((moves, accepts, only, state, symbol, children))
                    waiting, symbol, state, moves, accepts, only = \
                        chains[push].get(label) or self._chains.chain(push, label)
                    if waiting is not None:
                        stack.append(waiting)
                    children = []  # grown by appends, as fissix's: a list made whole is sized else
                children.append(leaf)
                while only[state]:  # pop while in an accept-only state
                    node = children[0] if len(children) == 1 else _node(symbol, children)
                    if not stack:
                        node.used_names = used_names
                        return node
                    frame = stack.pop()
                    if frame[0] is None:
                        frame = frame[1].resumed(frame[1].completed[frame[2]], node, stack)
                    else:
                        frame[5].append(node)
                    moves, accepts, only, state, symbol, children = frame
                break
        raise ParseError("incomplete input", kind, value, (prefix, (line, column)))


def _labelled(tokens: Iterable[tuple[int, str, tuple[str, tuple[int, int]]]], grammar: pgen_grammar.Grammar,
              names: set[str]) -> Iterator[Token]:
    """:func:`_significant`'s tokens with their grammar labels, as the parser's loop takes
    them (:data:`.tokens.Token`); ``names`` gets every name. fissix's error for a token the
    grammar has no label for."""
    keywords, token_labels = grammar.keywords, grammar.tokens
    for kind, value, context in tokens:
        label = keywords.get(value) if kind == _NAME else None
        if kind == _NAME:
            names.add(value)
        if label is None:
            label = token_labels.get(kind)
            if label is None:
                raise ParseError("bad token", kind, value, context)
        prefix, (line, column) = context
        yield label, kind, value, prefix, line, column


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


def _node(symbol: int, children: list[pytree.Base]) -> pytree.Node:
    """``pytree.Node(symbol, children)``, taking ``children`` as it is (the parser's own list)."""
    node = _new(_Node)
    node.type = symbol
    node.children = children
    for child in children:
        child.parent = node
    node.fixers_applied = None
    return node
