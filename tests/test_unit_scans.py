"""The unit layout reads each group of a file's statements from the file's ``ModuleIndex``
(``units._Scan._take``) instead of walking it (``_Scan._walk``): both give the same scan, on
every source the suite has, on generated modules and on the shapes where the two could part
(leaves a mark never tests, parameters with no line of their own, a name imported twice)."""

from __future__ import annotations

import ast
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import units
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.units import _group_nodes, _groups, _Scan, _split_lines, module_layout
from npu_codemod.plugins.manager import load_plugins

from support.generated_modules import top_level
from support.sources import python_sources

MARKS = tuple(dict.fromkeys(mark for rule in load_plugins().rules() for mark in rule._ast_sites))
#: Marks on every kind a test could name, the leaves the walk never marks among them.
#: Words with no ``@``: an ``@name`` word's test accepts only nodes that spell ``name``
#: (``Rule._ast_sites``), as the last two's do.
EVERY_KIND = ((ast.Name, "name", lambda node: True), (ast.Constant, "constant", lambda node: True),
              (ast.Call, "call", lambda node: True), (ast.keyword, "keyword", lambda node: node.arg),
              (ast.Attribute, "bound", lambda node: getattr(node.value, "id", False)),
              (ast.Subscript, "raises", lambda node: node.value.id),  # raises on ``a.b[0]``
              (ast.Attribute, "@relu", lambda node: node.attr == "relu"),
              (ast.Call, "@f", lambda node: getattr(node.func, "id", None) == "f"))
FIELDS = ("first", "last", "definition", "name", "words", "uses", "names", "assigned", "globals",
          "calls", "beyond_fissix", "main_block")


def by_type(marks: tuple) -> dict:
    found: dict = {}
    for kind, word, test in dict.fromkeys(marks):
        found.setdefault(kind, []).append((word, test))
    return found


def scan_values(scan: _Scan) -> dict:
    values = {name: getattr(scan, name) for name in FIELDS}
    values.update(imports=sorted(scan.imports), assignments=sorted(scan.assignments),
                  bound_words=sorted(set(scan.bound_words)))
    return values


def assert_scans_alike(text: str, marks: tuple) -> int:
    """Each group's scan taken from the index is its walked one; how many groups were taken."""
    module = module_ast(text)
    if module is None:
        return 0
    groups, lines, marked = list(_groups(module.body)), _split_lines(text), by_type(marks)
    sliced = _group_nodes(module, groups, {*units._TAKEN, *marked})
    if sliced is None:
        return 0
    for group, nodes in zip(groups, sliced):
        walked, taken = _Scan(group, marked, lines), _Scan(group, marked, lines, nodes)
        assert scan_values(taken) == scan_values(walked), ast.unparse(group[0])[:80]
    return len(groups)


def walked_layout(text: str, marks: tuple, monkeypatch: pytest.MonkeyPatch) -> "units.Layout | None":
    with monkeypatch.context() as patch:
        patch.setattr(units, "_group_nodes", lambda *args: None)
        return module_layout(text, marks)


def test_every_source_the_suite_has_scans_alike_from_the_index() -> None:
    taken = 0
    for where, text in python_sources().items():
        for marks in (MARKS, EVERY_KIND):
            try:
                taken += assert_scans_alike(text, marks)
            except AssertionError as error:
                raise AssertionError(f"{where}: {error}") from None
    assert taken > 1000  # the comparison ran on the suite's sources


SHAPES = {
    "positional-only parameters": "import tensorflow as tf\n\n\ndef f(a, /, b):\n    return tf.nn.relu(a)\n",
    "a lambda's positional-only parameter": "g = lambda a, /: a\n",
    "an unpacked variadic annotation": "def f(x, *args: *Ts):\n    return x\n",
    "a name imported twice": "import numpy as np\nimport jax.numpy as np\nx = np.ones(3)\n",
    "an alias assigned twice": "import tensorflow as tf\nnn = tf.nn\nnn = tf.compat.v1.nn\ny = nn.dropout\n",
    "in two branches": ("try:\n    import cPickle as pickle\nexcept ImportError:\n    import pickle\n"
                        "if x:\n    layers = tf.layers\nelse:\n    layers = tf.keras.layers\n"),
    "decorators": "import tensorflow as tf\n\n\n@tf.function\n@other.thing(tf.float32)\ndef step(x):\n    return x\n",
    "globals": "def f():\n    global counter, seen\n    nonlocal_ = 1\n    counter += 1\n",
    "nested scopes": "class A:\n    x = tf.nn\n    def m(self, *args, k=1, **kw):\n        def inner():\n            nonlocal k\n            return lambda: k\n        return inner\n",
    "with items": "with a, b:\n    pass\nwith (c):\n    pass\n",
    "starred": "x = a[*b]\nfor y in *c, *d:\n    pass\n",
    "one line": "def h(): return tf.nn.relu(1)\nx = 2\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_shapes_where_the_two_could_part_scan_alike(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = SHAPES[shape]
    assert assert_scans_alike(text, MARKS + EVERY_KIND) >= 1
    assert module_layout(text, MARKS + EVERY_KIND) == walked_layout(text, MARKS + EVERY_KIND, monkeypatch)


def test_a_name_bound_twice_in_a_group_keeps_the_walks_order() -> None:
    """The walk meets a group's statements last first: ``np`` stays numpy's, as before."""
    layout = module_layout(SHAPES["a name imported twice"])
    assert layout is not None and layout.aliases["np"] == "numpy"
    nn = module_layout(SHAPES["an alias assigned twice"])
    assert nn is not None and nn.aliases["nn"] == "tensorflow.compat.v1.nn"


NESTED_TWICE = """\
def main(x):
    nn = tf.nn
    try:
        import cPickle as pickle
        for k in x:
            layers = tf.layers
        else:
            nn = tf.compat.v1.nn
    except ImportError:
        import pickle
        while x:
            with x:
                layers = tf.keras.layers
    else:
        match x:
            case 1:
                nn = other.nn
    finally:
        def inner():
            import pickle5 as pickle
            return tf.x
    if x:
        from a import b as nn, c as layers
    elif y:
        layers = k.layers
    pickle = cloud.pickle
"""


def assert_walk_orders_alike(text: str) -> int:
    """Each group taken from the index that is not ``ordered``, given the walk's order of its
    imports and assignments (``walk_order``), has the walked scan's lists, in their order; how
    many such groups there were."""
    module = module_ast(text)
    if module is None:
        return 0
    groups, lines, marked = list(_groups(module.body)), _split_lines(text), by_type(MARKS)
    sliced = _group_nodes(module, groups, {*units._TAKEN, *marked})
    compared = 0
    for group, nodes in zip(groups, sliced or ()):
        taken = _Scan(group, marked, lines, nodes)
        if not taken.ordered():
            taken.walk_order(group)
            walked = _Scan(group, marked, lines)
            assert (taken.imports, taken.assignments) == (walked.imports, walked.assignments)
            assert scan_values(taken) == scan_values(walked)
            compared += 1
    return compared


def test_a_group_that_binds_a_name_twice_takes_the_walks_order() -> None:
    assert assert_walk_orders_alike(NESTED_TWICE) == 1
    assert sum(assert_walk_orders_alike(text) for text in [*SHAPES.values(), *python_sources().values()]) >= 3


def test_the_index_is_not_read_for_marks_on_nodes_without_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    marks = ((ast.arguments, "@args", lambda node: bool(node.kwonlyargs)),)
    text = "def f(*, a):\n    pass\n\n\ndef g(b):\n    pass\n"
    read: list = []
    monkeypatch.setattr(units, "_group_nodes", lambda *args: read.append(args))
    layout = module_layout(text, marks)
    assert layout is not None and not read
    assert ["@args" in unit.words for unit in layout.units] == [True, False]


_STATEMENT = st.sampled_from([
    "x = tf.nn.relu(y)", "import tensorflow as tf", "from a.b import c as d", "d = c.e",
    "m = contrib.tpu()", "global g", "for i in *a, *b: pass", "with a, b: pass",
    "z = [k for k in range(3) if k]", "f(a=1, *b, **c)", "del x.y", "try:\n    pass\nexcept E as e:\n    pass",
    "import numpy as np", "import jax.numpy as np", "layers = tf.layers", "layers = tf.keras.layers",
])


@st.composite
def _group(draw: st.DrawFn) -> str:
    body = draw(st.lists(_STATEMENT, min_size=1, max_size=4))
    shape = draw(st.sampled_from(["run", "def", "class", "lambda"]))
    if shape != "lambda":
        return top_level(shape, body, "@dec\ndef f(a, /, b=1, *c, d, **e):")
    return "h = lambda a, /, *b: a\n" + "".join(f"{line}\n" for line in body)


@settings(max_examples=200, deadline=None)
@given(st.lists(_group(), min_size=1, max_size=6).map("".join))
def test_generated_modules_scan_alike_from_the_index(text: str) -> None:
    assert_scans_alike(text, MARKS + EVERY_KIND)


def test_groups_that_share_a_line_are_walked() -> None:
    """No two groups ``ast`` reads share a line; were they to (a line number set otherwise),
    their nodes could not be told apart by line: None, and each group is walked."""
    module = ast.parse("x = tf.nn\ny = tf.layers\n")
    groups = [[module.body[0]], [module.body[1]]]
    assert _group_nodes(module, groups, units._TAKEN) is not None
    module.body[1].lineno = 1
    assert _group_nodes(module, groups, units._TAKEN) is None


def test_the_index_is_read_for_every_type_the_walk_sees() -> None:
    """A type added to what the walk looks at (``_SEEN``) must be taken from the index too."""
    assert units._TAKEN == (units._SEEN - {ast.arguments}) | {ast.Name, ast.Attribute, ast.Lambda}


@pytest.mark.parametrize("text", ["", "\n", "\n\n", "a", "a\n", "a\nb", "a\n\nb\n", "x = 1\r\ny = 2\r\n",
                                  "a\rb\n", "f\x0cg\n", "u\u2028v\n", "\n\nlast"])
def test_lines_end_at_newlines_only_as_a_split_after_each_newline(text: str) -> None:
    """``_split_lines`` is the split after every ``\\n`` (empty pieces dropped), and joins back."""
    assert _split_lines(text) == [line for line in re.split(r"(?<=\n)", text) if line]
    assert "".join(_split_lines(text)) == text
