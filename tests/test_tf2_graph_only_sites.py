"""NPU071 in a TF 2.x file: a ``tf.compat.v1`` API in code that runs only in graph mode (the
``else`` of ``if tf.executing_eagerly():``, the code after its early ``return``) is no site
left: the eager program never runs it (``mode_checks``). Regression: tensorflow/examples Model
Maker ``data_util.py``'s ``with tf.compat.v1.Session()`` was an NPU071 miss."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_reports

EAGER = '''import tensorflow as tf


@tf.function
def step(x):
    return x * 2


def first_items(ds):
    if tf.executing_eagerly():
        return [x for x in ds.as_numpy_iterator()]
    else:
        it = tf.compat.v1.data.make_one_shot_iterator(ds)
        with tf.compat.v1.Session() as sess:
            return [sess.run(it.get_next())]


def first_items_early(ds):
    if tf.executing_eagerly():
        return [x for x in ds.as_numpy_iterator()]
    with tf.compat.v1.Session() as sess:
        return [sess.run(tf.compat.v1.data.make_one_shot_iterator(ds).get_next())]
'''


def test_graph_only_sessions_of_an_eager_file_are_not_reported() -> None:
    assert_reports(["NPU071"], EAGER, findings=[])


def test_a_session_that_always_runs_is_still_reported() -> None:
    unguarded = EAGER.replace("    if tf.executing_eagerly():\n        return [x for x in ds.as_numpy_iterator()]\n"
                              "    with", "    with")
    findings = assert_reports(["NPU071"], unguarded)
    assert [(f.line, f.status) for f in findings if "tf.compat.v1.Session" in f.message] == [(19, "unmigrated")]


#: A TF 2.x repository: its ``tf-neutral`` files are audited by NPU071 (as Model Maker's).
TF2_RUNTIME = {"tf-runtime:2"}
BEHAVIOR = '''import tensorflow.compat.v2 as tf
from mylib import compat


def generate_elements(ds):
    if compat.get_tf_behavior() == 2:
        for element in ds.as_numpy_iterator():
            yield element
    else:
        iterator = tf.compat.v1.data.make_one_shot_iterator(ds)
        with tf.compat.v1.Session() as sess:
            yield sess.run(iterator.get_next())
'''


@pytest.mark.parametrize("test", ["compat.get_tf_behavior() == 2", "is_tfv2()", "tf.__version__.startswith('2')",
                                  "not compat.get_tf_behavior() == 1", "tf.__version__ >= '2.0.0'",
                                  "LooseVersion(tf.__version__) >= LooseVersion('2')",
                                  "int(tf.__version__[0]) > 1"])
def test_the_tf1_branch_of_a_version_test_is_not_reported(test: str) -> None:
    """Model Maker ``data_util.py``: ``if compat.get_tf_behavior() == 2: ... else:`` graph code."""
    findings = assert_reports(["NPU071"], BEHAVIOR.replace("compat.get_tf_behavior() == 2", test),
                              facts=TF2_RUNTIME)
    assert [f for f in findings if f.rule_id == "NPU071"] == []


def test_the_tf2_branch_of_a_version_test_is_still_audited() -> None:
    swapped = BEHAVIOR.replace("compat.get_tf_behavior() == 2", "compat.get_tf_behavior() == 1")
    findings = assert_reports(["NPU071"], swapped, facts=TF2_RUNTIME)
    assert [f.line for f in findings if f.rule_id == "NPU071" and "tf.compat.v1.Session" in f.message] == [11]


def test_the_code_after_a_tf2_branch_that_returns_is_not_reported() -> None:
    """DeepCTR ``estimator/inputs.py``: ``if tf.__version__ >= "2.0.0": return ...`` then the
    TF 1.x call."""
    early = BEHAVIOR.replace("compat.get_tf_behavior() == 2", 'tf.__version__ >= "2.0.0"') \
        .replace("            yield element\n    else:\n", "            yield element\n        return\n    if True:\n")
    assert "return\n    if True:" in early
    findings = assert_reports(["NPU071"], early, facts=TF2_RUNTIME)
    assert [f for f in findings if f.rule_id == "NPU071"] == []
