"""The parser's own tokenizer gives fissix's tokens, or nothing and fissix's tokenizer decides.

``codemods/tokens.py`` reads a file's tokens the way fissix's tokenizer and driver do between
them (the prefix of each token, its position, its grammar label). Where it reads a file, every
token must be fissix's; where fissix raises, it must not read the file at all (the parser then
takes fissix's tokens, and raises fissix's error). Compared on every source the parser's tests
read, the hand-written corners and damaged copies of the corpus, with both grammars.
"""

from __future__ import annotations

import io
from itertools import chain
from typing import Any, Optional

import pytest
from fissix import pygram
from fissix.pgen2 import tokenize

from npu_codemod.codemods.parser import _labelled, _significant
from npu_codemod.codemods.tokens import Tables, Token, Unread, token_lines

from support.parser_sources import CORNERS, SOURCE_GROUPS, damaged_corpus, source_texts

PY3 = pygram.python_grammar_no_print_and_exec_statement
PY2 = pygram.python_grammar


def significant_tokens(text: str, tables: Tables) -> Optional[tuple[list[Token], set[str]]]:
    """All the tokens :func:`token_lines` gives for ``text``, and its names; None where its
    reading does not apply (before the first line, or from a later one)."""
    names: set[str] = set()
    lines = token_lines(text, tables, names)
    if lines is None:
        return None
    try:
        return list(chain.from_iterable(lines)), names
    except Unread:
        return None


def fissix_tokens(text: str, grammar: Any) -> Optional[tuple[list[Token], set[str]]]:
    """fissix's tokens of ``text`` as the parser takes them, or None where fissix raises."""
    names: set[str] = set()
    try:
        tokens = list(_labelled(_significant(tokenize.generate_tokens(io.StringIO(text).readline)), grammar, names))
    except Exception:  # TokenError, IndentationError, the parser's "bad token"
        return None
    return tokens, names


def differences(grammar: Any, texts: dict[str, str]) -> tuple[list[str], int]:
    """The texts whose tokens differ from fissix's (or that are read where fissix raises), and
    how many texts were read without fissix's tokenizer."""
    tables, differing, read = Tables(grammar), [], 0
    for name, text in texts.items():
        ours = significant_tokens(text, tables)
        if ours is None:
            continue
        read += 1
        if ours != fissix_tokens(text, grammar):
            differing.append(name)
    return differing, read


@pytest.mark.parametrize("group", sorted(SOURCE_GROUPS))
def test_every_source_gives_fissixs_tokens(group: str) -> None:
    texts = source_texts(group)
    differing, read = differences(PY3, texts)
    assert differing == []
    assert read >= len(texts) * 0.6, (read, len(texts))  # the reading applies to most code


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_corners_and_damaged_sources_give_fissixs_tokens_or_none(grammar: Any) -> None:
    texts = {**CORNERS, **damaged_corpus()}
    differing, read = differences(grammar, texts)
    assert differing == []
    assert 0 < read < len(texts)


@pytest.mark.parametrize("name", ["tabs", "dedent mismatch", "unterminated string", "eof in string",
                                  "unterminated bracket", "eof in statement", "continued string", "bad token",
                                  "closing bracket first", "closing bracket first, balanced later", "lone carriage return", "unicode names",
                                  "async as a name", "no final newline", "empty"])
def test_what_it_does_not_read_is_left_to_fissix(name: str) -> None:
    assert significant_tokens(CORNERS[name], Tables(PY3)) is None


@pytest.mark.parametrize("name", ["multi-line strings", "string openings", "dedents and comments",
                                  "brackets across lines", "crlf strings", "form feed inside", "operators",
                                  "continuation", "comments between", "decorators", "fstrings", "form feed", "backquotes"])
def test_the_shapes_of_real_code_are_read_without_fissix(name: str) -> None:
    ours = significant_tokens(CORNERS[name], Tables(PY3))
    assert ours is not None and ours == fissix_tokens(CORNERS[name], PY3)


def test_the_comparison_can_fail() -> None:
    text = CORNERS["multi-line strings"]
    tokens, names = significant_tokens(text, Tables(PY3)) or ([], set())
    label, kind, value, prefix, line, column = tokens[3]
    assert (tokens, names) == fissix_tokens(text, PY3)
    for changed in [(label, kind, value, prefix, line + 1, column), (label, kind, value, prefix + " ", line, column)]:
        assert (tokens[:3] + [changed] + tokens[4:], names) != fissix_tokens(text, PY3)
    assert differences(PY3, {"x": text}) == ([], 1)
