"""``ast_import_names`` (CPython's ``ast``) gives the bindings ``ImportNames`` gives on the
fissix tree, in the same order: over every Python source the suite has, and over generated
modules of import and assignment shapes, including those where the two trees differ
(parentheses, chained and annotated assignments, accessor calls). The engine reads a file's
bindings from it when it does not parse the file with fissix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.ast_names import ast_import_names, names_read_alike
from npu_codemod.codemods.ast_references import ast_references
from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine, parse_module
from npu_codemod.codemods.names import ImportNames
from npu_codemod.codemods.units import module_layout
from npu_codemod.plugins.manager import load_plugins

from support.sources import python_sources

ROOTS = ("tensorflow", "horovod", "contextlib")
#: Accessor functions as a repository's facts give them (``contrib.tpu()`` returns a module).
ACCESSORS = {"contrib.tpu": "tensorflow.contrib.tpu", "lib.pick": "?", "util.tf": "tensorflow"}


def bindings_of_both(text: str, root: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    tree = parse_module(text)
    assert tree is not None
    from_ast = ast_import_names(text, root, ACCESSORS)
    assert from_ast is not None
    return list(ImportNames(tree, root, ACCESSORS).bindings.items()), list(from_ast.bindings.items())


def test_both_trees_bind_alike_in_every_source_the_suite_has() -> None:
    compared, bound, differ = 0, 0, []
    for where, text in python_sources().items():
        body = text if text.endswith("\n") or not text else text + "\n"
        if parse_module(body) is None or ast_import_names(body) is None:
            continue  # one of the parsers cannot read it: the engine parses it whole
        compared += 1
        for root in ROOTS:
            on_tree, from_ast = bindings_of_both(body, root)
            bound += len(on_tree)
            if on_tree != from_ast:
                differ.append((where, root))
    assert differ == []
    assert compared > 450 and bound > 1000


@pytest.mark.parametrize("source, expected", [
    ("import tensorflow as tf\nx = (tf.nn)\ny = (tf).nn\nz = tf .nn\n", [("tf", "tensorflow"), ("z", "tensorflow.nn")]),
    ("import tensorflow as tf\n(x) = tf.nn\nx: T = tf.nn\nx = y = tf.nn\nx += tf\n", [("tf", "tensorflow")]),
    ("import tensorflow as tf\nx = tf.\\\n    nn\n", [("tf", "tensorflow"), ("x", "tensorflow.nn")]),
    ("import lib, contrib\nt = contrib.tpu()\nu = (contrib.tpu)()\nv = contrib.tpu(1)\nw = lib.pick()\n",
     [("t", "tensorflow.contrib.tpu")]),
    ("import tensorflow as tf\ndef f():\n    try:\n        import horovod as tf\n    except E:\n        v1 = tf.compat.v1\n",
     [("tf", "tensorflow"), ("v1", "tensorflow")]),  # compat.v1 folded
])
def test_where_the_trees_differ_fissix_s_reading_is_kept(source: str, expected: list) -> None:
    on_tree, from_ast = bindings_of_both(source, "tensorflow")
    assert from_ast == on_tree == expected


_MODULES = st.sampled_from(["tensorflow", "tensorflow.compat.v1", "tensorflow.contrib", "horovod.tensorflow",
                            "tensorflow.python.ops.nn_ops", "contextlib", "os", ".ops", "..lib"])
_NAMES = st.sampled_from(["tf", "hvd", "nn", "x", "contrib", "v1", "lib", "util"])
_ATTRS = st.sampled_from(["nn", "compat", "v1", "tpu", "pick", "tf", "contextmanager", "rank"])


@st.composite
def _import(draw: st.DrawFn) -> str:
    module, name, attr = draw(_MODULES), draw(_NAMES), draw(_ATTRS)
    if module.startswith("."):
        return f"from {module} import {attr} as {name}"
    return draw(st.sampled_from([f"import {module}", f"import {module} as {name}", f"from {module} import {attr}",
                                 f"from {module} import ({attr} as {name},)", f"from {module} import *"]))


@st.composite
def _assignment(draw: st.DrawFn) -> str:
    target, head, a, b = draw(_NAMES), draw(_NAMES), draw(_ATTRS), draw(_ATTRS)
    value = draw(st.sampled_from([
        f"{head}", f"{head}.{a}", f"{head}.{a}.{b}", f"({head}.{a})", f"({head}).{a}", f"{head} . {a}",
        f"{head}.\\\n    {a}", f"{head}.{a}()", f"({head}.{a})()", f"{head}.{a}(1)", f"{head}[0]",
        f"{head}.{a}().{b}", f"{head}.{a}( )", f"(\n    {head}.{a})"]))
    return draw(st.sampled_from([f"{target} = {value}", f"({target}) = {value}", f"{target} = {head} = {value}",
                                 f"{target}: int = {value}", f"{target} += {value}", f"{target}, y = {value}, 1"]))


@st.composite
def _statement(draw: st.DrawFn) -> str:
    core = draw(st.one_of(_import(), _assignment()))
    return draw(st.sampled_from([
        "{}\n", "if c:\n    {}\n", "def f():\n    {}\n", "class C:\n    {}\n",
        "try:\n    pass\nexcept E:\n    {}\nelse:\n    pass\n", "x = 1; {}\n", "for i in y:\n    pass\nelse:\n    {}\n",
    ])).format(core.replace("\n", "\n    ") if not core.startswith("(\n") else core)


#: Most of the names the statements use are bound before them.
_HEADER = ("import tensorflow as tf\nimport horovod.tensorflow as hvd\nfrom tensorflow import nn\n"
           "from tensorflow.compat import v1\nimport tensorflow.contrib as contrib\n")


@settings(max_examples=400, deadline=None)
@given(st.lists(_statement(), min_size=1, max_size=8).map(lambda statements: _HEADER + "".join(statements)))
def test_both_trees_bind_alike_in_generated_modules(source: str) -> None:
    if parse_module(source) is None or ast_import_names(source) is None:
        return  # a shape one parser does not read (the engine parses such a file whole)
    for root in ROOTS:
        on_tree, from_ast = bindings_of_both(source, root)
        assert from_ast == on_tree


@pytest.mark.parametrize("text, alike", [
    ("import tensorflow as tf\n", True),
    ("# 模型，训练：（全角标点）\n模型 = 1\n", True),  # CJK names and full-width punctuation
    ("import ｈorovod.tensorflow as hvd\n", False),  # ast reads ``horovod``
    ("x = tf.ｒeduce_sum(y)\n", False),
    ("e\u0301 = 1\n", False),  # ast composes the accent: ``é``
    ('s = "ｈ"\n', False),  # in a string too: a look at the text, not a parse
])
def test_names_spelled_otherwise_by_ast_are_seen(text: str, alike: bool) -> None:
    assert names_read_alike(text) is alike
    if not alike:
        assert ast_import_names(text) is None and module_layout(text) is None
        assert ast_references(text, []) is None  # the tree answers, as for Python 2


@pytest.mark.parametrize("text", [
    "import tensorflow as tf\nimport ｈorovod.tensorflow as hvd\n\nx = hvd.allreduce(tf.constant(1.0))\n",
    "import tensorflow as tf\n\nx = tf.ｒeduce_sum(tf.constant(1.0))\ny = tf.ｃontrib.layers.flatten(x)\n",
])
def test_a_file_with_such_names_gives_what_the_full_engine_gives(text: str) -> None:
    # Regression: read from ``ast`` (no fissix parse), these files bound or used other names.
    rules = load_plugins().rules()
    selective, full = Engine(rules, SELECTIVE, plan_every_file=True), Engine(rules, FULL)
    assert selective.process(text.encode(), "train.py", "repo") == full.process(text.encode(), "train.py", "repo")
