"""NPU002 leaves a batch alone whose batches the code reads back until the data ends (review
round 26).

minigo's ``bigtable_input`` batches a dataset only to pull every element back into Python:
``make_single_array`` appends each ``sess.run(get_next)`` until ``OutOfRangeError`` and
concatenates them, ``count_elements_in_dataset`` counts the elements so, ``batch_exporter``
writes them to a TFRecord file. No model trains on those batches; ``drop_remainder=True``
silently returned, counted or wrote up to ``batch_size - 1`` elements fewer. A loop that
fetches the batch to feed a training step is no such drain and still gets the flag.
"""

from __future__ import annotations

import pytest

from npu_codemod.codemods.rule import guide_note
from npu_codemod.plugins.rules.sess_run.npu002_drop_remainder import DropRemainder
from npu_codemod.testing import assert_migrates, assert_reports

RULES = {"NPU002"}
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
GUIDE = guide_note(DropRemainder())
KEEP = ("keep the last batch: this is no training input, and if the NPU rejects its smaller "
        "shape, pad it to batch_size and drop the padding's results (NPU003)")

BIGTABLE = '''import collections

import numpy as np
import tensorflow as tf


def make_single_array(ds, batch_size=8*1024):
    """Create a single numpy array from a dataset."""
    batches = []
    with tf.Session() as sess:
        ds = ds.batch(batch_size)
        iterator = ds.make_initializable_iterator()
        sess.run(iterator.initializer)
        get_next = iterator.get_next()
        try:
            while True:
                batches.append(sess.run(get_next))
        except tf.errors.OutOfRangeError:
            pass
    return np.concatenate(batches)


def _histogram_move_keys_by_game(sess, ds, batch_size=8*1024):
    ds = ds.batch(batch_size)
    ds = ds.map(lambda x: tf.strings.substr(x, 0, 12))
    iterator = ds.make_initializable_iterator()
    sess.run(iterator.initializer)
    get_next = iterator.get_next()
    h = collections.Counter()
    try:
        while True:
            h.update(sess.run(get_next))
    except tf.errors.OutOfRangeError:
        pass
    return h


def count_elements_in_dataset(ds, batch_size=1*1024, parallel_batch=8):
    with tf.Session() as sess:
        dsc = ds.apply(tf.data.experimental.enumerate_dataset())
        dsc = dsc.apply(tf.data.experimental.map_and_batch(
            lambda c, v: c, batch_size, num_parallel_batches=parallel_batch))
        iterator = dsc.make_initializable_iterator()
        sess.run(iterator.initializer)
        get_next = iterator.get_next()
        counted = 0
        try:
            while True:
                counted = sess.run(tf.reduce_max(get_next)) + 1
        except tf.errors.OutOfRangeError:
            pass
        return counted


def _export_training_set(sess, ds, batch_size, output_url):
    ds = ds.batch(batch_size)
    get_next = ds.make_one_shot_iterator().get_next()
    with tf.io.TFRecordWriter(output_url) as wr:
        while True:
            try:
                batch = sess.run(get_next)
                for b in batch:
                    wr.write(b)
            except tf.errors.OutOfRangeError:
                break
'''


def drained(line: int, run: str) -> str:
    return (f"its batches are read back until the data ends ({run} on line {line}, until "
            f"OutOfRangeError), not trained on: drop_remainder=True would lose the last elements; {KEEP}"
            f"{GUIDE}")


def test_batches_read_back_until_the_data_ends_keep_their_last_batch() -> None:
    sites = [("NPU002", line, column, "unmigrated") for line, column in ((11, 16), (24, 12), (41, 45), (56, 12))]
    findings = assert_reports(RULES, BIGTABLE, findings=sites)
    assert [f.message for f in findings] == [
        drained(17, "sess.run(get_next)"), drained(32, "sess.run(get_next)"),
        drained(49, "sess.run(tf.reduce_max(get_next))"), drained(61, "sess.run(get_next)")]


TRAINING = '''import tensorflow as tf


def train(ds, batch_size, epochs):
    ds = ds.shuffle(1000).batch(batch_size)
    iterator = ds.make_initializable_iterator()
    x, y = iterator.get_next()
    with tf.Session() as sess:
        for epoch in range(epochs):
            sess.run(iterator.initializer)
            try:
                while True:
                    {step}
            except tf.errors.OutOfRangeError:
                pass
'''


@pytest.mark.parametrize("step", [
    "sess.run(train_op)",  # the model trains on the batch in the graph
    "bx, by = sess.run([x, y]); sess.run(train_op, {X: bx, Y: by})",  # fetched, then fed
    "bx, by = sess.run([x, y]); model.train_on_batch(bx, by)",  # Keras trains on it
    "sess.run([x, y], feed_dict={keep_prob: 0.5})",  # a feed: no plain read back
])
def test_a_training_loop_until_the_data_ends_still_drops_the_remainder(step: str) -> None:
    before = TRAINING.format(step=step)
    after = before.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(RULES, before, after, findings=[("NPU002", 5, 26, "migrated")])
    assert [f.message for f in findings] == [ADDED]
