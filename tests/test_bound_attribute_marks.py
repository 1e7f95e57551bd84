"""The ``ast`` marks of sites that are attributes of a module (``_bound_attributes``, issue 32):
NPU004 and NPU005 act on ``x.dropout`` (``x.Dropout``...) only where the file binds ``x``, so
the unit layout gives their word (``@dropout``) only to units holding such an attribute, and
the names the file binds to the API itself are site names of the file. Checked against the
rules themselves on fissix's tree (the whole file parsed) for generated statements under
generated imports, and the engine's selective outcome against the full one."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import units
from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules

RULES = default_rules(load_plugins().rules())
DROPOUTS = [rule for rule in RULES if rule.id in ("NPU004", "NPU005")]
ONLY = Engine(DROPOUTS, FULL)

#: What a file may import or alias: TF modules and names, NPU's output, other modules.
IMPORTS = [
    "import tensorflow.compat.v1 as tf", "from tensorflow import nn", "from tensorflow import keras",
    "from tensorflow.python.ops import nn_ops", "from tensorflow.keras import layers",
    "from tensorflow.keras import layers as kl", "from tensorflow.nn import dropout as d",
    "from tensorflow.nn import dropout", "from tensorflow.keras.layers import Dropout",
    "from npu_bridge.npu_init import *", "from npu_bridge.estimator import npu_ops",
    "import numpy as np", "from t2t.layers import common_layers", "nn = tf.nn", "keras = tf.keras",
    "drop = tf.layers.dropout", "layers = contrib.layers()",
]
ROOTS = ["tf", "nn", "keras", "nn_ops", "layers", "kl", "d", "dropout", "Dropout", "npu_ops", "np",
         "common_layers", "hparams", "self", "drop", "x"]
ATTRIBUTES = ["nn", "layers", "keras", "compat", "v1", "v2", "dropout", "dropout_v2", "Dropout",
              "SpatialDropout2D", "rate", "python", "ops", "nn_ops"]
DOTTED = st.tuples(st.sampled_from(ROOTS), st.lists(st.sampled_from(ATTRIBUTES), max_size=3)).map(
    lambda t: ".".join([t[0], *t[1]]))
STATEMENTS = st.one_of(
    DOTTED.map(lambda name: f"y = {name}(x, 0.5)"),
    DOTTED.map(lambda name: f"y = {name}(x, rate=rate, noise_shape=None)"),
    DOTTED.map(lambda name: f"y = {name}"),
    DOTTED.map(lambda name: f"y = {name}(rate)(x, training=True)"),
    DOTTED.map(lambda name: f"y = {name}().dropout(x)"),
    st.tuples(st.sampled_from(ATTRIBUTES), DOTTED).map(lambda t: f"y = f({t[0]}={t[1]})"),
    st.tuples(DOTTED, st.sampled_from(ATTRIBUTES)).map(lambda t: f"y = {t[0]}[0].{t[1]}(x)"),
)


def _file(imports: list[str], statement: str) -> str:
    header = "".join(f"{line}\n" for line in ["import tensorflow as tf", *imports])
    return (f"{header}\n\ndef conv(x):\n    return tf.nn.relu(x)\n\n\n"
            f"def block(x, hparams, rate, dropout=0.1):\n    {statement}\n    return y\n")


def _reported(text: str) -> set[str]:
    """The rules of NPU004/NPU005 that report a site in ``block`` (the whole file parsed)."""
    line = text.splitlines().index("def block(x, hparams, rate, dropout=0.1):") + 2
    outcome = ONLY.process(text.encode(), "model.py")
    return {finding.rule_id for finding in outcome.findings if finding.line == line}


def _marked(text: str) -> set[str]:
    """The rules of NPU004/NPU005 whose site names the layout gives ``block``'s unit."""
    layout = units.module_layout(text, [mark for rule in DROPOUTS for mark in rule._ast_sites])
    assert layout is not None
    (block,) = [unit for unit in layout.units if unit.definition and "block" in unit.defines]
    return {rule.id for rule in DROPOUTS
            if block.words & units.spelled_names(layout, frozenset(rule._site_names_for(frozenset())))}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(IMPORTS), max_size=4, unique=True), STATEMENTS)
def test_every_site_the_rules_report_is_marked(imports: list[str], statement: str) -> None:
    text = _file(imports, statement)
    assert _reported(text) <= _marked(text)


@pytest.mark.parametrize("imports, statement, rules", [
    ([], "y = tf.nn.dropout(x, 0.5)", {"NPU004"}),
    ([], "y = tf.compat.v1.nn.dropout(x, rate=rate)", {"NPU004"}),
    (["from tensorflow.python.ops import nn_ops"], "y = nn_ops.dropout_v2(x, rate)", {"NPU004"}),
    ([], "y = npu_ops.dropout(x, 0.5)", {"NPU004"}),  # its own output, reported however bound
    (["from tensorflow.nn import dropout as d"], "y = d(x, 0.5)", {"NPU004"}),
    (["from tensorflow.nn import dropout"], "y = dropout(x, 0.5)", {"NPU004"}),
    (["drop = tf.nn.dropout"], "y = drop(x, 0.5)", {"NPU004"}),
    ([], "y = tf.layers.dropout(x, rate, training=True)", {"NPU005"}),
    (["from tensorflow.keras import layers"], "y = layers.Dropout(rate)(x)", {"NPU005"}),
    (["from tensorflow.keras.layers import Dropout"], "y = Dropout(rate)(x)", {"NPU005"}),
    (["keras = tf.keras"], "y = keras.layers.SpatialDropout2D(rate)(x)", {"NPU005"}),
])
def test_the_rules_sites_are_marked(imports: list[str], statement: str, rules: set[str]) -> None:
    text = _file(imports, statement)
    assert _reported(text) == rules and rules <= _marked(text)  # tf.nn.dropout: @dropout of both


@pytest.mark.parametrize("statement", [
    "y = tf.layers.dense(x, hparams.hidden_size) if hparams.dropout else x",  # a hyperparameter
    "y = common_layers.dropout_with_broadcast_dims(x, 1.0 - hparams.dropout)",
    "y = self.dropout(x)",  # a layer the model made
    "y = model_fn(x, dropout=rate)",  # a keyword
    "y = x if dropout is None else x * dropout",  # a parameter
    "y = x.dropout(rate)",
    "y = make_layers().dropout(x)",  # a call's attribute: no dotted name to resolve
    "y = cells[0].dropout(x)",
])
def test_what_only_spells_dropout_is_not_marked(statement: str) -> None:
    text = _file(["from t2t.layers import common_layers"], statement)
    assert _reported(text) == set() == _marked(text)


@pytest.mark.parametrize("binding, bound", [
    ("import hparams", True), ("from lib import hparams", True), ("hparams = lib.defaults", True),
    ("hparams = lib.defaults()", True),  # an accessor's call binds what it returns
    ("from lib import *", True),  # may bind any name
    ("hparams = make(1)", False), ("hparams: int = lib.x", False), ("", False),
])
def test_a_mark_that_names_a_name_counts_where_the_file_binds_it(binding: str, bound: bool) -> None:
    """A mark's test may give a name: its word is then the unit's only where the file binds
    that name, every way ``ImportNames`` binds one (an import, an alias assignment, an
    accessor's call), or by a star import (any name)."""
    text = f"{binding}\n\n\ndef block(x):\n    return hparams.dropout + x.dropout\n"
    root = (ast.Attribute, "@dropout", lambda node: node.attr == "dropout" and ast.unparse(node.value))
    layout = units.module_layout(text, [root])
    assert layout is not None
    assert ("@dropout" in layout.units[-1].words) is bound
    always = (ast.Attribute, "@x", lambda node: node.attr == "dropout" and ast.unparse(node.value) == "x")
    assert "@x" in units.module_layout(text, [always]).units[-1].words


def _selective_equals_full(text: str) -> dict[str, int]:
    selective = Engine(RULES, SELECTIVE, plan_every_file=True)
    outcome = selective.process(text.encode(), "model.py")
    assert outcome == Engine(RULES, FULL).process(text.encode(), "model.py")
    return selective.counts


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(IMPORTS), max_size=4, unique=True), STATEMENTS)
def test_a_selective_run_gives_what_a_full_one_does(imports: list[str], statement: str) -> None:
    _selective_equals_full(_file(imports, statement))


def test_a_unit_that_only_spells_dropout_is_not_parsed() -> None:
    counts = _selective_equals_full(_file([], "y = tf.layers.dense(x, 4) if hparams.dropout else x"))
    assert counts["unparsed"] == 1
    counts = _selective_equals_full(_file([], "y = tf.nn.dropout(x, hparams.dropout)"))
    assert counts["unparsed"] == 0


def test_rules_that_mark_the_same_attributes_share_the_marks() -> None:
    """NPU007 and NPU008 both mark ``x.train``: the engine's marks hold it once, so the layout
    tests each attribute of a file for it once, not once per rule."""
    marks = Engine(load_plugins().rules(), SELECTIVE)._marks
    assert ("@train" in [word for _, word, _ in marks]) and ("@dropout" in [word for _, word, _ in marks])
    tested = [(kind, word) for kind, word, _ in marks]
    assert len(tested) == len(set(tested))
