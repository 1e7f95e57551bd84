"""The engine's parser gives fissix's tree, node for node, and fissix's error on bad input.

``codemods/parser.py`` replaces fissix's driver for speed; everything downstream (Bowler's
patterns, the rules, the lossless write) reads its trees, so they must be fissix's exactly.
Compared: every source of this repository (its code, tests, corpora, examples, bench), the
sources of the installed fissix, Bowler, pluggy and GitPython and of a few standard library
packages, with the Python 3 grammar; Python 2 files and hand-written corners with both
grammars; and the exception, type and arguments, wherever fissix raises one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver
from fissix.pgen2.parse import ParseError

from npu_codemod.codemods.engine import module_parses, parse_module
from npu_codemod.codemods.parser import Parser

from support.parser_sources import CORNERS, SOURCE_GROUPS, damaged_corpus, source_texts, sources
from support.trees import parse_outcome, shape

ROOT = Path(__file__).resolve().parents[1]
PY3 = pygram.python_grammar_no_print_and_exec_statement
PY2 = pygram.python_grammar


def differences(grammar: Any, texts: dict[str, str]) -> list[str]:
    fissix, ours = driver.Driver(grammar, convert=pytree.convert), Parser(grammar)
    return [name for name, text in texts.items()
            if parse_outcome(fissix.parse_string, text) != parse_outcome(ours.parse_string, text)]


@pytest.mark.parametrize("group", sorted(SOURCE_GROUPS))
def test_every_source_parses_to_fissixs_tree(group: str) -> None:
    texts = source_texts(group)
    assert len(texts) >= 10, group
    assert differences(PY3, texts) == []


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_corners_parse_or_fail_as_fissix_does(grammar: Any) -> None:
    assert differences(grammar, CORNERS) == []


def test_the_corners_cover_trees_and_every_kind_of_error() -> None:
    kinds = set()
    for text in CORNERS.values():
        result, detail = parse_outcome(Parser(PY3).parse_string, text)
        kinds.add("tree" if result == "tree" else detail[0].__name__)
    assert {"tree", "ParseError", "TokenError", "IndentationError"} <= kinds


def test_python_2_files_of_the_suite_parse_alike_with_the_python_2_grammar() -> None:
    texts = {str(path): path.read_text(encoding="utf-8", errors="surrogateescape")
             for path in sources("tests") if "print " in path.read_text(encoding="utf-8", errors="replace")}
    assert differences(PY2, texts) == []


def test_the_comparison_can_fail() -> None:
    tree = Parser(PY3).parse_string("x = 1  # one\n")
    other = Parser(PY3).parse_string("x = 1  # two\n")
    assert shape(tree) != shape(other)
    leaf = next(tree.leaves())
    leaf.lineno = 2
    assert shape(tree) != shape(Parser(PY3).parse_string("x = 1  # one\n"))


def test_a_reused_parser_keeps_no_state_between_files() -> None:
    parser = Parser(PY3)
    with pytest.raises(ParseError):
        parser.parse_string("x = = 1\n")
    first = parser.parse_string("import a\n")
    again = parser.parse_string("import a\n")
    assert shape(first) == shape(again) and first.used_names == {"import", "a"}  # as fissix: every NAME token


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_damaged_sources_fail_or_parse_exactly_as_with_fissix(grammar: Any) -> None:
    texts = damaged_corpus()
    results = {parse_outcome(Parser(grammar).parse_string, text)[0] for text in texts.values()}
    assert results == {"tree", "error"}  # both paths were taken
    assert differences(grammar, texts) == []


def check_outcome(parser: Parser, text: str) -> tuple[str, Any]:
    """What :meth:`Parser.check_string` makes of ``text``, as :func:`parse_outcome` puts a
    parse: "tree" (no tree to show) or the error's type and arguments."""
    try:
        parser.check_string(text)
    except Exception as error:
        return "error", (type(error), error.args)
    return "tree", None


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_the_check_without_a_tree_fails_exactly_where_the_parse_does(grammar: Any) -> None:
    parser = Parser(grammar)
    texts = {**CORNERS, **damaged_corpus(), **{str(path): path.read_text(encoding="utf-8")
                                                for path in sorted((ROOT / "tests" / "corpus").rglob("*.py"))}}
    outcomes = {name: check_outcome(parser, text) for name, text in texts.items()}
    assert {result for result, _ in outcomes.values()} == {"tree", "error"}
    parsed = {name: parse_outcome(parser.parse_string, text) for name, text in texts.items()}
    assert {name: (result, None if result == "tree" else detail) for name, (result, detail) in parsed.items()} \
        == outcomes


def test_module_parses_answers_as_parse_module_without_a_tree() -> None:
    texts = [*CORNERS.values(), *list(damaged_corpus().values())[:60]]
    answers = [module_parses(text) for text in texts]
    assert answers == [parse_module(text) is not None for text in texts]
    assert True in answers and False in answers
