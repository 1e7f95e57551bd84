"""NPU002 leaves a dataset alone whose iterator's outputs a feed_dict gives other data (review
rvn N1).

A script trains from ``bx, by = it.get_next()`` and evaluates by feeding those tensors the test
set, ``sess.run(loss, {bx: x_test, by: y_test})``. With ``drop_remainder=True`` their batch
dimension is static, and TensorFlow refuses the 200 test rows at the first evaluation ("Cannot
feed value of shape (200, 1) for Tensor 'IteratorGetNext:0', which has shape '(32, 1)'"). The
spec: a pipeline shared by training and evaluation is reported, not rewritten.
"""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

RULES = {"NPU002"}
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
FED = ("shared with other data through a feed_dict ({}): with drop_remainder=True the "
       "iterator's batch dimension becomes static and TensorFlow rejects a fed array of any "
       "other number of rows; evaluate through a separate placeholder or dataset, or feed "
       "exactly batch_size rows, before adding drop_remainder=True")

SCRIPT = '''import tensorflow as tf

px = tf.placeholder(tf.float32, [None, 1])
py = tf.placeholder(tf.float32, [None, 1])
ds = tf.data.Dataset.from_tensor_slices((px, py))
ds = ds.shuffle(1000)
ds = ds.batch(32)
ds = ds.repeat(3)
{make}
loss = tf.losses.mean_squared_error(by, tf.layers.dense(bx, 1))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run([it.initializer, tf.global_variables_initializer()], {{px: x_train, py: y_train}})
    for step in range(100):
        sess.run(train)
        if step % 10 == 0:
            print(sess.run(loss, {feed}))
'''
MADE = "it = ds.make_initializable_iterator()\nbx, by = it.get_next()"


def _messages(findings):
    return [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings]


@pytest.mark.parametrize("make, line", [
    (MADE, 10),
    ("it = tf.compat.v1.data.make_initializable_iterator(ds)\nbx, by = it.get_next()", 10),
    ("(bx, by) = ds.make_one_shot_iterator().get_next()\nit = None", 9),
])
def test_a_dataset_whose_iterator_outputs_are_fed_the_test_set_is_reported(make, line) -> None:
    source = SCRIPT.format(make=make, feed="{bx: x_test, by: y_test}")
    findings = assert_reports(RULES, source)
    assert _messages(findings) == [(7, "unmigrated", FED.format(
        f"bx, from its iterator's get_next() on line {line}, is fed on line 19"))]


def test_an_attribute_output_fed_in_another_method_is_reported() -> None:
    source = '''import tensorflow as tf


class Model(object):
    def build(self, xs):
        ds = tf.data.Dataset.from_tensor_slices(xs).shuffle(100).repeat().batch(32)
        self.x = ds.make_one_shot_iterator().get_next()
        self.loss = tf.reduce_mean(tf.layers.dense(self.x, 1))

    def evaluate(self, sess, test):
        return sess.run(self.loss, feed_dict={self.x: test})
'''
    findings = assert_reports(RULES, source)
    assert _messages(findings) == [(6, "unmigrated", FED.format(
        "self.x, from its iterator's get_next() on line 7, is fed on line 11"))]


def test_iterator_outputs_fed_nothing_or_other_names_are_rewritten() -> None:
    before = SCRIPT.format(make=MADE, feed="{px: x_test, py: y_test}")
    after = before.replace("ds.batch(32)", "ds.batch(32, drop_remainder=True)")
    findings = assert_migrates(RULES, before, after)
    assert _messages(findings) == [(7, "migrated", ADDED)]


def test_a_fed_name_of_another_function_is_another_variable() -> None:
    source = '''import tensorflow as tf


def train(xs):
    ds = tf.data.Dataset.from_tensor_slices(xs).repeat().batch(32)
    x = ds.make_one_shot_iterator().get_next()
    return x


def evaluate(sess, test):
    x = tf.placeholder(tf.float32, [None, 1])
    return sess.run(tf.reduce_sum(x), {x: test})
'''
    after = source.replace(".batch(32)", ".batch(32, drop_remainder=True)")
    findings = assert_migrates(RULES, source, after)
    assert _messages(findings) == [(5, "migrated", ADDED)]
