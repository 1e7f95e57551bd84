"""A keyword a rule adds to a call keeps the last argument's trailing comment with it.

``eval_batch_size=2048, eval_on_tpu=False,  # Does not matter.`` is a comment about the
argument it follows: the new keyword goes on a line of its own after the comment, indented as
the arguments, and nothing else of the call changes (with or without a trailing comma).
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates

ESTIMATOR_RULES = {"NPU012"}
CLASSIFIER = '''\
"""Fine-tunes a pre-trained model on a sentence classification task."""
from __future__ import absolute_import
from __future__ import division

import os

import tensorflow as tf

import model_utils

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Where checkpoints go.")
flags.DEFINE_bool("use_tpu", False, "Whether to run on a TPU.")
flags.DEFINE_integer("train_batch_size", 32, "Global batch size for training.")
flags.DEFINE_integer("iterations", 1000, "Steps per loop on the TPU.")


def get_model_fn(n_class):
  def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["pooled"], n_class)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = model_utils.get_train_op(FLAGS, loss)
    return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)
  return model_fn


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  run_config = model_utils.configure_tpu(FLAGS)
  model_fn = get_model_fn(2)
  estimator = tf.contrib.tpu.TPUEstimator(
      use_tpu=FLAGS.use_tpu,
      model_fn=model_fn,
      config=run_config,
      train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=2048, eval_on_tpu=False,  # Does not matter.
  )
  estimator.train(input_fn=None, max_steps=FLAGS.iterations)
  tf.logging.info(os.path.join(FLAGS.model_dir, "done"))


if __name__ == "__main__":
  tf.app.run()
'''


def test_a_new_keyword_follows_the_comment_of_a_trailing_comma_argument():
    after = CLASSIFIER.replace(
        "      use_tpu=FLAGS.use_tpu,", "      use_tpu=False,").replace(
        "      eval_batch_size=2048, eval_on_tpu=False,  # Does not matter.\n",
        "      eval_batch_size=2048, eval_on_tpu=False,  # Does not matter.\n"
        "      export_to_tpu=False,\n")
    assert_migrates(ESTIMATOR_RULES, CLASSIFIER, after, path="run_classifier.py")


DATA = '''\
"""Input pipelines of the pre-training data."""
import functools

import tensorflow as tf


def parse_record(record, seq_len):
  features = {"input": tf.FixedLenFeature([seq_len], tf.int64)}
  return tf.parse_single_example(record, features)


def train_input_fn(params):
  files = tf.gfile.Glob(params["record_pattern"])
  dataset = tf.data.TFRecordDataset(files)
  dataset = dataset.map(functools.partial(parse_record, seq_len=params["seq_len"]))
  dataset = dataset.shuffle(2048).repeat()
  dataset = dataset.batch(
      params["batch_size"],  # Per host, not per core.
  )
  return dataset.prefetch(1)


def bucketed_input_fn(params):
  dataset = tf.data.TFRecordDataset(params["files"]).repeat()
  return dataset.padded_batch(params["batch_size"],
                              padded_shapes={"input": [None]}  # Pad to the longest.
                              )
'''
DATA_AFTER = DATA.replace(
    '      params["batch_size"],  # Per host, not per core.\n',
    '      params["batch_size"],  # Per host, not per core.\n      drop_remainder=True,\n').replace(
    '                              padded_shapes={"input": [None]}  # Pad to the longest.\n',
    '                              padded_shapes={"input": [None]},  # Pad to the longest.\n'
    '                              drop_remainder=True\n')


def test_a_new_keyword_after_a_commented_last_argument_takes_a_line_of_its_own():
    assert_migrates({"NPU002"}, DATA, DATA_AFTER, path="data_utils.py")
