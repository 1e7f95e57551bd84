"""Where a module's code may spell some words, case-blind, found in its text (NPU008's soft
placement): which expressions need their nodes read, and which cannot spell any.

Each node of an expression lies in the expression's source span, and a name (identifier,
attribute, parameter, keyword) of an ASCII text is spelled there as it is; a string's value
is not always (escapes, ``"so" "ft"``), so each string that spells a word counts at its own
start. An expression whose span holds none of these places spells none of the words. The
positions of nodes inside f-strings were not reliable before Python 3.12: those, and every
node of a text that is not ASCII (``ast`` normalises names, NFKC) or that has carriage
returns (other line ends than ``ast``'s count), are always read.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Callable, Iterable

from npu_codemod.api._toolkit import ModuleIndex


class SpelledWords:
    """The places of ``text`` (a module, its index ``index``) where ``words`` (lower case) may
    be spelled; ``spells``: does one node (a string) spell one of them."""

    def __init__(self, text: str, index: ModuleIndex, words: Iterable[str],
                 spells: Callable[[ast.AST], bool]) -> None:
        self.everywhere = not text.isascii() or "\r" in text
        self._places: list[tuple[int, int]] = []
        self._in_fstrings: set[int] = set()
        if self.everywhere:
            return
        lowered = text.lower()
        offsets = sorted(at for word in words for at in _finds(lowered, word))
        places = _lines_and_columns(text, offsets)
        places += [(node.lineno, node.col_offset) for node in _spelling_strings(index, words)]
        fstrings: list[ast.JoinedStr] = index.nodes(ast.JoinedStr)
        for fstring in fstrings:
            inner = list(ast.walk(fstring))
            self._in_fstrings.update(map(id, inner))
            if any(map(spells, inner)):
                places.append((fstring.lineno, fstring.col_offset))
        self._places = sorted(places)

    def may_spell(self, node: ast.AST) -> bool:
        """May the code of the expression ``node`` spell one of the words? (False: it does not.)"""
        if self.everywhere or id(node) in self._in_fstrings:
            return True
        places = self._places
        at = bisect_left(places, (node.lineno, node.col_offset))  # type: ignore[attr-defined]
        return at < len(places) and places[at] < (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _spelling_strings(index: ModuleIndex, words: Iterable[str]) -> list[ast.Constant]:
    """The strings of the module whose value spells one of ``words`` (in lower case), looked
    for in all their values at once (each lowered on its own, joined by NUL, which no word has)."""
    constants: list[ast.Constant] = index.nodes(ast.Constant)
    strings = [node for node in constants if type(node.value) is str]
    lowered = [str(node.value).lower() for node in strings]
    ends = list(accumulate(len(value) + 1 for value in lowered))  # each value's end, NUL included
    joined = "\0".join(lowered)
    hits = sorted({bisect_right(ends, at) for word in words for at in _finds(joined, word)})
    return [strings[number] for number in hits]


def _finds(text: str, word: str) -> Iterable[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def _lines_and_columns(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    """``(line, column)`` as ``ast`` counts them (from 1, from 0) of each of the sorted
    ``offsets`` of an ASCII text (a column in bytes is one in characters)."""
    found = []
    line, counted = 1, 0
    for at in offsets:
        line += text.count("\n", counted, at)
        counted = at
        line_start = text.rfind("\n", 0, at) + 1
        found.append((line, at - line_start))
    return found
