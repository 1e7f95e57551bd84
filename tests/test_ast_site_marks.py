"""A rule's ``_ast_sites`` (issue 32): the unit layout gives a site name only to the units
holding a node the rule's test accepts, so the test must accept every node the rule acts on.
NPU003's (``may_count``) is checked against the rule itself on fissix's tree, for every shape
of assert the strategies below make, and the engine's selective outcome against the full one."""

from __future__ import annotations

import ast
import keyword

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import units
from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules
from npu_codemod.plugins.rules.sess_run import npu003_predict_last_batch as npu003

from support.sources import python_sources

RULES = default_rules(load_plugins().rules())
(NPU003,) = [rule for rule in RULES if rule.id == "NPU003"]
ONLY = Engine([NPU003], FULL)
HEADER = "import tensorflow as tf\n\n\ndef check(self, x):\n"

#: Pieces of names: the rule's words of each kind, words it does not know, and keywords.
PIECES = ["num", "written", "lines", "examples", "len", "pred", "x", "n", "count", "results",
          "sample", "total", "predict", "output", "instances", "size", "eval", "not", "none"]
NAMES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).flatmap(
    lambda parts: st.sampled_from(["_".join(parts), parts[0] + "".join(p.title() for p in parts[1:])]))
IDENTIFIERS = NAMES.filter(lambda name: name.isidentifier() and not keyword.iskeyword(name))


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(IDENTIFIERS, st.sampled_from(["None", "True", "0", "'examples'", "self"]),
                       IDENTIFIERS.map(lambda name: f'f"{{{name}}}"'))  # an f-string's name
    return st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(inner, IDENTIFIERS).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(IDENTIFIERS, inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(IDENTIFIERS, IDENTIFIERS, inner).map(lambda t: f"{t[0]}({t[1]}={t[2]})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(IDENTIFIERS, inner).map(lambda t: f"(lambda {t[0]}: {t[1]})"),
        inner.map(lambda e: f"(not {e})"),
        st.tuples(inner, IDENTIFIERS, inner).map(lambda t: f"[{t[0]} for {t[1]} in {t[2]}]"),
    ), max_leaves=4)


def _reported(condition: str) -> bool:
    """Does NPU003 itself (on fissix's tree, the whole file parsed) report ``assert condition``?"""
    outcome = ONLY.process(f"{HEADER}    assert {condition}\n".encode(), "predict.py")
    return any(finding.rule_id == "NPU003" for finding in outcome.findings)


def _may_count(condition: str) -> bool:
    statement = ast.parse(f"assert {condition}\n").body[0]
    assert isinstance(statement, ast.Assert)
    return npu003.may_count(statement)


REPORTED = ["num_written_lines == num_actual_predict_examples", "len(all_results) == len(eval_examples)",
            "numPredictions == numExamples", "self.num_written == len(predict_examples)",
            "num_outputs == total_samples", "len(results) == len(examples)"]


@pytest.mark.parametrize("condition", REPORTED)
def test_every_assert_the_rule_reports_is_marked(condition: str) -> None:
    assert _reported(condition) and _may_count(condition)


@pytest.mark.parametrize("condition", [
    "x.shape.ndims > n", "x == y", "len(predict_examples) == len(eval_examples) or True",
    "num_written_lines != num_actual_predict_examples", "a == b == c", "predictions == examples",
])
def test_asserts_it_cannot_report_are_not_marked(condition: str) -> None:
    assert not _reported(condition) and not _may_count(condition)


@settings(max_examples=300, deadline=None)
@given(_expressions(), _expressions())
def test_the_mark_accepts_every_assert_the_rule_reports(left: str, right: str) -> None:
    condition = f"{left} == {right}"
    if _reported(condition):
        assert _may_count(condition)


def test_no_keyword_says_a_word_the_rule_looks_for() -> None:
    """fissix's leaves hold keywords (``not``, ``lambda``...) as names; ``ast`` holds none:
    ``may_count`` is a superset only while no keyword is a word of the rule's."""
    words = npu003.RESULT_WORDS | npu003.EXAMPLE_WORDS | npu003.COUNT_WORDS
    spelled = {*keyword.kwlist, *getattr(keyword, "softkwlist", ()), "print", "exec"}
    assert not words & {word for name in spelled for word in npu003.words(name)}


def _file(asserts: str) -> bytes:
    """A short TF file with no other site of a rule that reads the tree."""
    return (f"import tensorflow as tf\n\n\ndef conv(x):\n    return tf.nn.relu(x)\n\n\n"
            f"def check(x, n, results, examples):\n{asserts}").encode()


@pytest.mark.parametrize("asserts, unparsed", [
    ("    assert x.shape.ndims == n, 'rank'\n", True),
    ("    assert len(x) == n\n    assert x is not None\n", True),
    ("    assert len(results) == len(examples)\n", False),
])
def test_an_assert_that_cannot_count_is_no_site(asserts: str, unparsed: bool) -> None:
    selective, full = Engine(RULES, SELECTIVE), Engine(RULES, FULL)
    outcome = selective.process(_file(asserts), "predict.py")
    assert outcome == full.process(_file(asserts), "predict.py")
    assert (selective.counts["unparsed"] == 1) is unparsed
    assert any(finding.rule_id == "NPU003" for finding in outcome.findings) is not unparsed


@settings(max_examples=100, deadline=None)
@given(_expressions(), _expressions())
def test_a_selective_run_reports_what_a_full_one_does(left: str, right: str) -> None:
    data = _file(f"    assert {left} == {right}\n")
    selective = Engine(RULES, SELECTIVE, plan_every_file=True)
    assert selective.process(data, "predict.py") == Engine(RULES, FULL).process(data, "predict.py")


def test_a_mark_gives_its_word_only_where_its_test_accepts() -> None:
    text = "def a(n):\n    assert n == 1\n\n\ndef b(n):\n    assert n > 1\n"
    equality = (ast.Assert, "assert", lambda node: isinstance(node.test.ops[0], ast.Eq))
    layout = units.module_layout(text, [equality])
    assert layout is not None
    assert ["assert" in unit.words for unit in layout.units] == [True, False]
    raising = (ast.Assert, "assert", lambda node: 1 / 0)  # a broken test marks: the rule reads it
    assert all("assert" in unit.words for unit in units.module_layout(text, [raising]).units)
    assert not any("assert" in unit.words for unit in units.module_layout(text).units)


def _spelled(node: ast.AST) -> set[str]:
    """The identifiers ``node``'s code spells: its names, attributes, parameters, keywords."""
    return {name for inner in ast.walk(node) for name in (
        getattr(inner, "id", None), getattr(inner, "attr", None), getattr(inner, "arg", None))
        if isinstance(name, str)}


def test_an_at_word_is_given_only_for_nodes_that_spell_its_name() -> None:
    """``Rule._ast_sites``: the test of an ``@name`` word accepts only nodes that spell ``name``
    (the layout leaves it untested in a unit that spells none), for every built-in rule's mark
    on every source the suite has."""
    marks = {mark for rule in load_plugins().rules() for mark in rule._ast_sites if mark[1].startswith("@")}
    accepted = 0
    for where, text in python_sources().items():
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(module):
            for kind, word, test in marks:
                if isinstance(node, kind) and test(node):
                    assert word[1:] in _spelled(node), f"{where}:{node.lineno} {word}"
                    accepted += 1
    assert accepted > 50  # the comparison saw the marks' nodes


def test_an_at_word_is_not_tested_where_its_name_is_not_spelled() -> None:
    """A unit that spells no ``relu`` is not asked about ``@relu`` (nor its calls tested)."""
    text = "def a(x):\n    return f(g(x))\n\n\ndef b(x):\n    return tf.nn.relu(x)\n"
    tested: list[str] = []
    relu = (ast.Call, "@relu", lambda node: tested.append(ast.unparse(node)) or True)
    layout = units.module_layout(text, [relu])
    assert layout is not None
    assert ["@relu" in unit.words for unit in layout.units] == [False, True]
    assert tested == ["tf.nn.relu(x)"]
