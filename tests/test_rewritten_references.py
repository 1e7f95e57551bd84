"""``rewritten_references`` (the audits' uses of a rewritten file, read again only where the
rewrite changed it) answers what ``ast_references`` of the whole rewrite answers, None
included: on hand-written edits at every kind of boundary between kept statements and
changed lines, on generated modules and edits, and on edits of every corpus file."""

from __future__ import annotations

import random
from typing import Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.api import ImportNames
from npu_codemod.api._toolkit import ast_references, parse_module
from npu_codemod.codemods.ast_references import ast_reading
from npu_codemod.codemods.qualified import ReferenceSite
from npu_codemod.codemods.rewritten_references import _regions, rewritten_references

from support.sources import python_sources

HEAD = "import tensorflow as tf\nimport horovod.tensorflow as hvd\nfrom tensorflow import nn\n"
RESOLVERS = [ImportNames(parse_module(HEAD), root=root) for root in ("tensorflow", "horovod")]

#: An edit: (original lines as they were, the rewrite's lines, each the original's line
#: number it copies or None for a line the rewrite wrote).
Edit = list[tuple[str, Optional[int]]]


def both(original: str, rewrite: Edit) -> tuple[Optional[list[ReferenceSite]], Optional[list[ReferenceSite]]]:
    """(the long way's answer, the piecewise one) for the rewrite ``rewrite`` of ``original``."""
    text = "\n".join(line for line, _ in rewrite)
    origin = [None] + [number for _, number in rewrite]
    reading = ast_reading(original, RESOLVERS)
    assert reading is not None
    return ast_references(text, RESOLVERS), rewritten_references(
        original, reading, text, origin, RESOLVERS)


def edited(original: str, changes: dict[int, list[str]], removed: frozenset[int] = frozenset(),
           before: Optional[dict[int, list[str]]] = None) -> Edit:
    """The original's lines (``\\r\\n`` read as ``\\n``), line ``n`` replaced by
    ``changes[n]``, or removed, or kept with ``before[n]`` written before it."""
    rewrite: Edit = []
    for number, line in enumerate(original.replace("\r\n", "\n").split("\n"), start=1):
        rewrite += [(new, None) for new in (before or {}).get(number, [])]
        if number in changes:
            rewrite += [(new, None) for new in changes[number]]
        elif number not in removed:
            rewrite.append((line, number))
    return rewrite


BASE = HEAD + """
x = tf.nn.relu(1)


@tf.function
def f(y):
    return tf.add(y,
                  tf.ones(1))


class A(tf.keras.Model):
    v = hvd.size()


if tf.test.is_gpu_available():
    z = tf.a
else:
    z = tf.b
w = tf.c; v = tf.d
"""
LINES = BASE.split("\n")


def line_of(text: str) -> int:
    return LINES.index(text) + 1


#: Each edit of BASE: (what the test calls it, changes, removed lines, lines inserted before).
EDITS = [
    ("a call respelled", {line_of("x = tf.nn.relu(1)"): ["x = tf.nn.leaky_relu(1)"]}, (), {}),
    ("a statement added", {}, (), {line_of("@tf.function"): ["hvd.init()", ""]}),
    ("a statement removed", {}, (line_of("x = tf.nn.relu(1)"),), {}),
    ("a line inside a call", {line_of("                  tf.ones(1))"): ["                  tf.zeros(1))"]}, (), {}),
    ("an else opened after a kept if", {}, (), {line_of("w = tf.c; v = tf.d"): ["else:", "    q = tf.e"]}),
    ("a decorator before a kept function", {}, (), {line_of("@tf.function"): ["@tf.custom_gradient"]}),
    ("a decorator left alone", {line_of("def f(y):"): ["def g(y):"]}, (), {}),
    ("a string opened over kept code", {}, (), {line_of("class A(tf.keras.Model):"): ['s = """']}),
    ("a string opened and closed", {}, (), {line_of("class A(tf.keras.Model):"): ['s = """', '"""']}),
    ("a bracket opened over kept code", {}, (), {line_of("class A(tf.keras.Model):"): ["s = ("]}),
    ("a line continued into kept code", {line_of("x = tf.nn.relu(1)"): ["x = tf.nn.relu(1) + \\"]}, (), {}),
    ("a kept statement indented", {}, (), {line_of("class A(tf.keras.Model):"): ["def g():"]}),
    ("a base class changed", {line_of("class A(tf.keras.Model):"): ["class A(tf.keras.layers.Layer):"]},
     (), {}),
    ("statements on one line split", {line_of("w = tf.c; v = tf.d"): ["w = tf.c", "v = tf.d"]}, (), {}),
    ("a comment written", {}, (), {line_of("w = tf.c; v = tf.d"): ["# tf.e", "   # x \\"]}),
    ("a line that does not parse", {line_of("x = tf.nn.relu(1)"): ["x = tf.nn.relu(1"]}, (), {}),
    ("a carriage return", {line_of("x = tf.nn.relu(1)"): ["x = tf.a\ry = tf.b"]}, (), {}),
    ("nothing changed", {}, (), {}),
    ("everything removed", {}, tuple(range(1, len(LINES) + 1)), {}),
]


@pytest.mark.parametrize("name, changes, removed, before", EDITS, ids=[edit[0] for edit in EDITS])
def test_an_edit_at_every_kind_of_boundary(name: str, changes: dict[int, list[str]],
                                           removed: tuple[int, ...], before: dict[int, list[str]]) -> None:
    long_way, piecewise = both(BASE, edited(BASE, changes, frozenset(removed), before))
    assert piecewise == long_way


def test_a_continued_line_before_a_changed_one_is_read_the_long_way() -> None:
    """``x = 1 \\`` then a blank line parses; a statement written on that blank line joins
    ``x``'s line: the rewrite does not parse, though each piece does."""
    original = HEAD + "x = tf.a \\\n\ny = tf.b\n"
    rewrite = edited(original, {5: ["z = tf.c"]})
    assert both(original, rewrite) == (None, None)


def test_kept_statements_are_not_parsed_again() -> None:
    original = HEAD + "".join(f"x{number} = tf.a{number}(1)\n" for number in range(50))
    rewrite = edited(original, {10: ["x6 = tf.b(1)"]})
    text = "\n".join(line for line, _ in rewrite)
    reading = ast_reading(original, RESOLVERS)
    assert reading is not None
    regions = _regions(original, reading, text.split("\n"), [None] + [number for _, number in rewrite])
    assert regions is not None
    assert [count for _, count, was in regions if not was] == [1, 1]  # the written line, the end
    long_way, piecewise = both(original, rewrite)
    assert piecewise == long_way and piecewise is not None and len(piecewise) == 50


def test_a_crlf_original() -> None:
    original = BASE.replace("\n", "\r\n")
    rewrite = edited(original, {line_of("x = tf.nn.relu(1)"): ["x = tf.nn.elu(1)"]})
    long_way, piecewise = both(original, rewrite)
    assert piecewise == long_way


#: Top-level statements of every shape the boundaries care about.
_STATEMENTS = st.sampled_from([
    "x = tf.a(1)", "y = hvd.rank()", "z = tf.f(1,\n      tf.g(2))", "a = tf.x \\\n    + tf.y",
    "@tf.function\ndef f(v):\n    return tf.h(v)", "class C(tf.Module):\n    k = tf.k",
    "if tf.c:\n    p = tf.p\nelse:\n    p = nn.relu", "try:\n    import tf\nexcept E:\n    pass",
    "q = tf.q; r = tf.r", "s = '''\ntf.inside\n'''", "# tf.comment", "", "u = nn.relu(tf.z)",
    "for i in tf.range(3):\n    tf.print(i)", "t = (\n    tf.t\n)",
])
#: Lines a rewrite may write.
_WRITTEN = st.sampled_from([
    "x = tf.b(2)", "else:", "    pass", "\\", "@tf.function", '"""', "s = (", ")", "", "# tf",
    "if tf.a:", "  y = tf.b", "def g():", "z = tf.f(1, \\", "hvd.init()", "w = 1; v = tf.v",
    "except E:", "k = tf.k", "\tt = tf.t",
])


@st.composite
def _rewrites(draw: st.DrawFn, original: str) -> Edit:
    lines = original.replace("\r\n", "\n").split("\n")
    rewrite: Edit = []
    for number, line in enumerate(lines, start=1):
        rewrite += [(new, None) for new in draw(st.lists(_WRITTEN, max_size=2))]
        action = draw(st.sampled_from(["keep"] * 6 + ["replace", "remove"]))
        if action == "keep":
            rewrite.append((line, number))
        elif action == "replace":
            rewrite.append((draw(_WRITTEN), None))
    return rewrite


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_generated_modules_and_rewrites(data: st.DataObject) -> None:
    original = HEAD + "\n".join(data.draw(st.lists(_STATEMENTS, min_size=1, max_size=8))) + "\n"
    long_way, piecewise = both(original, data.draw(_rewrites(original)))
    assert piecewise == long_way


def _readable_sources() -> list[str]:
    return [text for _, text in sorted(python_sources().items())
            if ast_reading(text, RESOLVERS) is not None and text.count("\n") > 5]


@pytest.mark.parametrize("seed", range(4))
def test_edits_of_every_corpus_file(seed: int) -> None:
    """Every corpus file, lines rewritten, written and removed at random (seeded)."""
    chance = random.Random(seed)
    written = ["x = tf.b(2)", "else:", "    pass", "\\", '"""', "s = (", ")", "", "hvd.init()",
               "    return tf.c"]
    for original in _readable_sources():
        lines = original.replace("\r\n", "\n").split("\n")
        changes = {chance.randrange(1, len(lines) + 1): [chance.choice(written)] for _ in range(2)}
        copied = {chance.randrange(1, len(lines) + 1): [chance.choice(lines)]}
        rewrite = edited(original, changes, frozenset({chance.randrange(1, len(lines) + 1)}), copied)
        long_way, piecewise = both(original, rewrite)
        assert piecewise == long_way


#: Statements of a block (indented by the test), of every shape nested runs care about.
_NESTED = st.sampled_from([
    "x = tf.a(1)", "y = hvd.rank()", "z = tf.f(1,\n      tf.g(2))", "a = tf.x \\\n    + tf.y",
    "@tf.function\ndef f(v):\n    return tf.h(v)", "class C(tf.Module):\n    k = tf.k",
    "if tf.c:\n    p = tf.p\nelse:\n    p = nn.relu", "try:\n    q = tf.q\nexcept E:\n    pass",
    "q = tf.q; r = tf.r", "s = '''\ntf.inside\n'''", "# tf.comment", "", "if tf.c: p = tf.p",
    "for i in tf.range(3):\n    tf.print(i)\nelse:\n    tf.e()", "with tf.w():\n    t = (\n        tf.t\n    )",
    "while tf.x:\n    if tf.y:\n        break", "\"\"\"A docstring, tf.doc.\"\"\"",
])
#: Lines a rewrite may write inside a block.
_NESTED_WRITTEN = st.sampled_from([
    "    x = tf.b(2)", "    else:", "        pass", "\\", '    """', "    s = (", "    )", "", "    # tf",
    "    if tf.a:", "      y = tf.b", "    def g():", "    z = tf.f(1, \\", "    hvd.init()",
    "    except E:", "        k = tf.k", "\tt = tf.t", "x = tf.top", "            deep = tf.deep",
])


@st.composite
def _nested_rewrites(draw: st.DrawFn, original: str) -> Edit:
    lines = original.split("\n")
    rewrite: Edit = []
    for number, line in enumerate(lines, start=1):
        action = draw(st.sampled_from(["keep"] * 12 + ["replace", "remove", "insert"]))
        if action == "insert":
            rewrite.append((draw(_NESTED_WRITTEN), None))
            action = "keep"
        if action == "keep":
            rewrite.append((line, number))
        elif action == "replace":
            rewrite.append((draw(_NESTED_WRITTEN), None))
    return rewrite


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_generated_blocks_and_rewrites(data: st.DataObject) -> None:
    """Functions of nested statements, rewritten inside: the runs kept as they were are read
    from the original (``_skeleton_sites``), the rest parsed again."""
    body = "\n".join(["x0 = tf.z(0)", *data.draw(st.lists(_NESTED, min_size=1, max_size=8))]).split("\n")
    header = data.draw(st.sampled_from(["def main():", "class M(tf.Module):", "if tf.flag:"]))
    original = HEAD + "\n".join([header, *("    " + line if line else line for line in body)]) + "\n"
    long_way, piecewise = both(original, data.draw(_nested_rewrites(original)))
    assert piecewise == long_way


def test_a_function_read_again_around_its_kept_statements() -> None:
    original = HEAD + "def main():\n" + "".join(
        f"    with tf.name_scope('s{number}'):\n        x{number} = tf.a{number}(1)\n" for number in range(20))
    rewrite = edited(original, {10: ["        x3 = tf.b(1)"]})
    long_way, piecewise = both(original, rewrite)
    assert piecewise == long_way and piecewise is not None and len(piecewise) == 40
