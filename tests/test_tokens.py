"""The parser's own tokenizer gives fissix's tokens, or nothing and fissix's tokenizer decides.

``codemods/tokens.py`` reads a file's tokens the way fissix's tokenizer and driver do between
them (the prefix of each token, its position, its grammar label). Where it reads a file, every
token must be fissix's; where fissix raises, it must not read the file at all (the parser then
takes fissix's tokens, and raises fissix's error). Compared on every source the parser's tests
read, the hand-written corners and damaged copies of the corpus, with both grammars.
"""

from __future__ import annotations

import io
import re
from itertools import chain
from typing import Any, Optional

import pytest
from fissix import pygram
from fissix.pgen2 import tokenize

from npu_codemod.codemods.parser import _labelled, _significant
from npu_codemod.codemods.tokens import Tables, Token, Unread, token_lines, uncaptured

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


def _shape(parsed: Any) -> tuple[Any, ...]:
    """A parsed regular expression (``re._parser``) as nested tuples, every group without
    flags spliced into its sequence (what ``re`` compiles it to, captured or not): two
    expressions that differ only in which groups capture give the same shape."""
    from re import _constants as constants

    items: list[Any] = []
    for op, value in parsed:
        if op is constants.SUBPATTERN:
            _group, add, drop, inner = value
            items.extend(_shape(inner) if not add and not drop else [(op, add, drop, _shape(inner))])
        elif op is constants.BRANCH:
            items.append((op, tuple(_shape(branch) for branch in value[1])))
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT, constants.POSSESSIVE_REPEAT):
            items.append((op, value[0], value[1], _shape(value[2])))
        elif op in (constants.ASSERT, constants.ASSERT_NOT):
            items.append((op, value[0], _shape(value[1])))
        elif op is constants.ATOMIC_GROUP:
            items.append((op, _shape(value)))
        else:
            assert op not in (constants.GROUPREF, constants.GROUPREF_EXISTS), "a group is referred to"
            items.append((op, repr(value)))
    return tuple(items)


@pytest.mark.parametrize("name", ["Comment", "Triple", "Number", "Operator", "Bracket", "ContStr", "Name",
                                  "PseudoToken", "Funny", "String"])
def test_a_token_pattern_uncaptured_is_the_same_expression_without_groups(name: str) -> None:
    from re import _parser

    pattern = getattr(tokenize, name)
    plain = uncaptured(pattern)
    assert re.compile(plain).groups == 0
    assert _shape(_parser.parse(plain)) == _shape(_parser.parse(pattern))
    assert re.compile(pattern).groups > 0 or name in ("Bracket", "Name", "Comment")


@pytest.mark.parametrize("pattern, plain", [
    (r"(a|b)+", r"(?:a|b)+"),
    (r"\(x\)", r"\(x\)"),
    (r"[(]", r"[(]"),
    (r"[^(]", r"[^(]"),
    (r"[]()]", r"[]()]"),
    (r"[^](]", r"[^](]"),
    (r"[\](](y)", r"[\](](?:y)"),
    (r"(?P<n>(z))", r"(?P<n>(?:z))"),
    (r"(?:(w))", r"(?:(?:w))"),
])
def test_uncaptured_leaves_escaped_and_set_parentheses_alone(pattern: str, plain: str) -> None:
    assert uncaptured(pattern) == plain


@pytest.mark.parametrize("group", sorted(SOURCE_GROUPS))
def test_every_token_of_the_sources_is_matched_alike_with_fissixs_groups(group: str) -> None:
    """The tokenizer's expression against the same one with fissix's own capturing groups, in
    every line of the sources the parser's tests read, from each place a match of either ends
    (a token's start) and each place past one that fails: the same named group and span (what
    the reading takes from a match). The corners and damaged copies at every place."""
    from npu_codemod.codemods import tokens

    old = re.compile(tokenize.Whitespace + "(?:" + "|".join(
        f"(?P<{name}>{pattern})" for name, pattern in _FISSIX_ALTERNATIVES) + ")")
    assert old.groups > tokens._PSEUDO.groups == len(_FISSIX_ALTERNATIVES)
    every = [*CORNERS.values(), *damaged_corpus().values()] if group == min(SOURCE_GROUPS) else []
    compared = 0
    for text, each_place in chain(((text, False) for text in source_texts(group).values()),
                                  ((text, True) for text in every)):
        for line in text.splitlines(keepends=True):
            position = 0
            while position < len(line):
                ours, theirs = tokens._PSEUDO.match(line, position), old.match(line, position)
                assert (ours is None) == (theirs is None), (line, position)
                if ours is None or theirs is None:
                    position += 1
                    continue
                assert (ours.lastgroup, ours.span(ours.lastgroup), ours.end()) == \
                    (theirs.lastgroup, theirs.span(theirs.lastgroup), theirs.end()), (line, position)
                compared += 1
                position = position + 1 if each_place or ours.end() == position else ours.end()
    assert compared > 1_000


_FISSIX_ALTERNATIVES = (
    ("continuation", r"\\\r?\n"), ("comment", tokenize.Comment), ("triple", tokenize.Triple),
    ("number", tokenize.Number), ("operator", tokenize.Operator), ("bracket", tokenize.Bracket),
    ("newline", r"\r?\n"), ("special", r":=|[:;.,`@]"), ("string", tokenize.ContStr),
    ("name", tokenize.Name))
