"""NPU071 in a TF 2.x file: a ``tf.compat.v1`` API in code that runs only in graph mode (the
``else`` of ``if tf.executing_eagerly():``, the code after its early ``return``) is no site
left: the eager program never runs it (``mode_checks``). Regression: tensorflow/examples Model
Maker ``data_util.py``'s ``with tf.compat.v1.Session()`` was an NPU071 miss."""

from __future__ import annotations

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
