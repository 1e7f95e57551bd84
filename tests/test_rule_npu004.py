"""NPU004 nn-dropout: golden before/after per bullet of the spec."""

from __future__ import annotations

import pytest

from support.rules import Golden, assert_migrates, assert_unchanged, run_rules, sites

RULES = {"NPU004"}
TF = "import tensorflow as tf\n"
ACCURACY = "check the model's accuracy: the guide notes the NPU dropout may affect it"
GUIDE = (" (guide: Model building, loss computation and gradient update: tf.nn.dropout, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu004-nn-dropout)")


#: npu_ops comes from this import: the engine adds it whatever rules run (NPU001 or not).
INIT = "from npu_bridge.npu_init import *\n"
NPU004 = Golden("NPU004", header=TF, added=INIT)


@pytest.mark.parametrize("header, callee", [
    ("import tensorflow as tf\n", "tf.nn.dropout"),
    ("import tensorflow as tf\n", "tf.compat.v1.nn.dropout"),
    ("import tensorflow.compat.v1 as tf\n", "tf.nn.dropout"),
    ("import tensorflow as tensorflow_lib\n", "tensorflow_lib.nn.dropout"),
    ("import tensorflow\n", "tensorflow.nn.dropout"),
    ("from tensorflow import nn\n", "nn.dropout"),
    ("from tensorflow.compat import v1\n", "v1.nn.dropout"),
    ("from tensorflow.compat.v1 import nn as tfnn\n", "tfnn.dropout"),
    ("from tensorflow.nn import dropout\n", "dropout"),
    ("from tensorflow.nn import dropout as drop\n", "drop"),
    ("import tensorflow as tf\nnn = tf.nn\n", "nn.dropout"),
])
def test_every_alias(header: str, callee: str) -> None:
    Golden("NPU004", header, INIT).migrated(f"h = {callee}(x, keep_prob)\n",
                                            "h = npu_ops.dropout(x, keep_prob)\n",
                                            (1 + header.count("\n"), 4))


def test_message_mentions_accuracy() -> None:
    _, findings = run_rules(TF + "h = tf.nn.dropout(x, 0.5)\n", RULES)
    assert [f.message for f in findings] == [
        f"replaced tf.nn.dropout with npu_ops.dropout; {ACCURACY}"
    ]


@pytest.mark.parametrize("arguments", [
    "x, 0.5",
    "x, keep_prob=0.5",
    "x, 0.5, None, 42, 'drop'",
    "x, keep_prob=kp, seed=1, name='d'",
    "name='d', x=x, keep_prob=kp",
    "x,\n    keep_prob,  # from FLAGS\n    name=\"dropout\",\n",
    "*(x, kp), **{'seed': 1, 'name': 'd'}",
])
def test_arguments_keep_order_and_spelling(arguments: str) -> None:
    NPU004.migrated(f"h = tf.nn.dropout({arguments})\n", f"h = npu_ops.dropout({arguments})\n", (2, 4))


@pytest.mark.parametrize("rate, keep_prob", [
    ("0.1", "1 - 0.1"),
    ("r", "1 - r"),
    ("self.rate", "1 - self.rate"),
    ("rates[0]", "1 - rates[0]"),
    ("get_rate()", "1 - get_rate()"),
    ("(r)", "1 - (r)"),
    ("a + b", "1 - (a + b)"),
    ("1 - keep", "1 - (1 - keep)"),
    ("a * b", "1 - (a * b)"),
    ("-r", "1 - (-r)"),
    ("r if training else 0.0", "1 - (r if training else 0.0)"),
])
def test_rate_becomes_keep_prob(rate: str, keep_prob: str) -> None:
    NPU004.migrated(f"h = tf.nn.dropout(x, rate={rate})\n", f"h = npu_ops.dropout(x, keep_prob={keep_prob})\n", (2, 4))


def test_rate_keeps_its_place_among_keywords() -> None:
    NPU004.migrated("h = tf.nn.dropout(x, seed=1, rate=FLAGS.rate, name='d')\n",
                    "h = npu_ops.dropout(x, seed=1, keep_prob=1 - FLAGS.rate, name='d')\n", (2, 4))


@pytest.mark.parametrize("before, after", [
    # TF 1.15's dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    # a keep_prob left None next to rate takes its value, rate goes (two keep_prob= would
    # not compile: the file was restored and reported as an error)
    ("h = tf.nn.dropout(x, keep_prob=None, rate=r)\n", "h = npu_ops.dropout(x, keep_prob=1 - r)\n"),
    ("h = tf.nn.dropout(x, None, None, 7, rate=a + b)\n", "h = npu_ops.dropout(x, 1 - (a + b), None, 7)\n"),
])
def test_a_keep_prob_left_none_takes_the_rate(before: str, after: str) -> None:
    NPU004.migrated(before, after, (2, 4))


def test_keep_prob_and_rate_both_given_are_reported() -> None:
    findings = assert_unchanged(TF + "h = tf.nn.dropout(x, keep_prob=0.9, rate=0.1)\n", RULES)
    assert sites(findings) == [("NPU004", 2, 4, "unmigrated")]
    assert findings[0].message == (
        "keep_prob= and rate= are both given (TensorFlow accepts one of them): keep one, then "
        "replace tf.nn.dropout with npu_ops.dropout by hand" + GUIDE)


def test_rate_of_compat_v2_by_keyword() -> None:
    Golden("NPU004", "import tensorflow.compat.v2 as tf2\n", INIT).migrated(
        "h = tf2.nn.dropout(x, rate=0.2)\n", "h = npu_ops.dropout(x, keep_prob=1 - 0.2)\n", (2, 4))


def test_nested_and_multi_line_calls() -> None:
    NPU004.migrated("h = tf.layers.dense(tf.nn.dropout(tf.nn.dropout(x, 0.9), rate=r), 10)\n"
                    "out = tf.nn.dropout(\n    x,\n    rate=r,\n)\n",
                    "h = tf.layers.dense(npu_ops.dropout(npu_ops.dropout(x, 0.9), keep_prob=1 - r), 10)\n"
                    "out = npu_ops.dropout(\n    x,\n    keep_prob=1 - r,\n)\n",
                    (2, 20), (2, 34), (3, 6))


def test_positions_of_each_site() -> None:
    NPU004.migrated("def net(x):\n    h = tf.nn.dropout(x, 0.5)\n    return tf.nn.dropout(h, rate=r)\n",
                    "def net(x):\n    h = npu_ops.dropout(x, 0.5)\n    return npu_ops.dropout(h, keep_prob=1 - r)\n",
                    (3, 8), (4, 11))


@pytest.mark.parametrize("call", [
    "tf.nn.dropout(x, noise_shape=[batch, 1])",
    "tf.nn.dropout(x, 0.5, [batch, 1])",
    "tf.nn.dropout(x, rate=0.1, noise_shape=shape)",
])
def test_noise_shape_is_reported_and_left_unchanged(call: str) -> None:
    findings = assert_unchanged(TF + f"h = {call}\n", RULES)
    assert sites(findings) == [("NPU004", 2, 4, "unmigrated")]
    assert findings[0].message == (
        "noise_shape= is given: check that npu_ops.dropout supports it, then replace "
        "tf.nn.dropout with npu_ops.dropout by hand" + GUIDE
    )


def test_positional_rate_of_compat_v2_is_reported() -> None:
    findings = assert_unchanged("import tensorflow.compat.v2 as tf\nh = tf.nn.dropout(x, 0.2)\n", RULES)
    assert sites(findings) == [("NPU004", 2, 4, "unmigrated")]
    assert "takes rate as its 2nd argument" in findings[0].message


def test_reference_without_call_is_reported() -> None:
    findings = assert_unchanged(TF + "layer = functools.partial(tf.nn.dropout, rate=0.1)\n", RULES)
    assert sites(findings) == [("NPU004", 2, 26, "unmigrated")]
    assert findings[0].message.startswith("tf.nn.dropout is used as a value, not called")


@pytest.mark.parametrize("source", [
    "h = tf.layers.dropout(x, 0.5)\n",
    "h = tf.keras.layers.Dropout(0.5)(x)\n",
    "h = tf.contrib.nn.dropout(x, 0.5)\n",
    "h = F.dropout(x, 0.5)\n",
    "h = self.nn.dropout(x, 0.5)\n",
    "h = nn.dropout(x, 0.5)\n",
    "h = model.dropout\n",
    "h = dropout(x, 0.5)\n",
    "h = my_dropout(x, 0.5)\n",
])
def test_other_dropouts_are_not_touched(source: str) -> None:
    assert assert_unchanged(TF + source, RULES) == []


def test_second_run_reports_migrated() -> None:
    after = TF + "h = npu_ops.dropout(x, keep_prob=1 - r)\n"
    NPU004.migrated("h = tf.nn.dropout(x, rate=r)\n", "h = npu_ops.dropout(x, keep_prob=1 - r)\n", (2, 4))
    findings = assert_unchanged(after, RULES)
    assert sites(findings) == [("NPU004", 2, 4, "migrated")]
    assert findings[0].message == f"uses npu_ops.dropout; {ACCURACY}"


def test_with_npu001_the_import_that_binds_npu_ops_is_added() -> None:
    assert_migrates(TF + "h = tf.nn.dropout(x, 0.5)\n",
                    "from npu_bridge.npu_init import *\n" + TF + "h = npu_ops.dropout(x, 0.5)\n",
                    {"NPU001", "NPU004"})
