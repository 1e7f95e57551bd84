""""Does this file spell ...?" asked of a whole file's text, at the speed of a substring test.

CPython's ``re`` looks for a pattern that opens with a literal by scanning for that literal in
C; a pattern that opens with ``\\b``, ``\\s*`` or a set of alternatives is tried at every
position of the text instead, 30-100 times slower over a file of code (issue 32: such looks
were a fifth of the repository analysis). :class:`AnyOf` answers ``re.search("|".join(
alternatives), text) is not None`` one alternative at a time, each opening with its literal:
an alternative that opens with ``\\b`` is looked for without it, and the boundary is tested at
each place it matches; one that opens with a line's start (``^`` under ``re.MULTILINE``) is
matched at the text's start and looked for after each ``\\n``, the literal it then opens with
(``tests/test_text_search.py`` compares both ways on every source the suite has and on
generated text). :class:`LineStarts` gives the matches of a line-start pattern the same way.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator

_WORD_START = "\\b"
_LINE_START = "^"


class AnyOf:
    """A regular expression ``"|".join(alternatives)`` (``flags``) asked only whether it occurs
    in a text (:meth:`found`). Each alternative must be a whole branch (no ``|`` outside its
    own parentheses) that refers to no group of another."""

    def __init__(self, *alternatives: str, flags: int = 0) -> None:
        self.alternatives = alternatives
        self.pattern = re.compile("|".join(alternatives), flags)
        self._parts = [_searcher(alternative, flags) for alternative in alternatives]

    def found(self, text: str) -> bool:
        """``self.pattern.search(text) is not None``."""
        return any(part(text) for part in self._parts)


def _searcher(alternative: str, flags: int) -> Callable[[str], bool]:
    if alternative.startswith(_LINE_START) and flags & re.MULTILINE:
        return _line_start_searcher(alternative[len(_LINE_START):], flags)
    if not alternative.startswith(_WORD_START):
        found = re.compile(alternative, flags).search
        return lambda text: found(text) is not None
    loose = re.compile(alternative[len(_WORD_START):], flags)
    exact = re.compile(alternative, flags)
    return lambda text: _at_a_word_start(loose, exact, text)


def _at_a_word_start(loose: re.Pattern[str], exact: re.Pattern[str], text: str) -> bool:
    """Does ``exact`` (``\\b`` then ``loose``) match somewhere in ``text``? It matches at a
    position exactly where ``loose`` does and a word starts; every such position is tried in
    order (``match`` at a position sees the characters before it, as ``\\b`` needs)."""
    position = 0
    while True:
        found = loose.search(text, position)
        if found is None:
            return False
        if exact.match(text, found.start()) is not None:
            return True
        position = found.start() + 1


def _line_start_searcher(rest: str, flags: int) -> Callable[[str], bool]:
    """``re.search("^" + rest, text, flags)`` (``flags`` with ``re.MULTILINE``) as a yes or no:
    ``^`` holds at the text's start and after each ``\\n``, nowhere else, so ``rest`` matches
    there or right after a ``\\n`` (found by its literal, not tried at every position). The
    ``\\n`` is spelled as an escape: ``re.VERBOSE`` would drop a newline character."""
    at_start = re.compile(rest, flags).match
    after_newline = re.compile(r"\n(?:%s)" % rest, flags).search
    return lambda text: at_start(text) is not None or after_newline(text) is not None


class LineStarts:
    """The matches of ``^rest`` under ``re.MULTILINE`` (``finditer``), each looked for after a
    ``\\n`` (a literal: found in C) instead of tried at every position of the text.

    A match after a ``\\n`` holds it: its groups and ``end()`` are the pattern's, its group 0
    and ``start()`` begin one character early. ``rest`` must match no empty string and no string
    that ends with a ``\\n``: then the next match of ``^rest`` begins after the ``\\n`` that
    ends its line, at or past where the last one ended, as the search resumes there."""

    def __init__(self, rest: str, flags: int = 0) -> None:
        self.pattern = re.compile("^" + rest, flags | re.MULTILINE)
        self._at_start = re.compile(rest, flags).match
        self._after_newline = re.compile(r"\n(?:%s)" % rest, flags).finditer

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        first = self._at_start(text)
        if first is not None:
            yield first
        yield from self._after_newline(text, first.end() if first is not None else 0)
