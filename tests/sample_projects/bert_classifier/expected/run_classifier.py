# coding=utf-8
"""BERT finetuning runner (abridged): prediction writes one line per example."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os

import modeling
import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS


def file_based_input_fn_builder(input_file, seq_length, is_training, drop_remainder):
  """Creates an `input_fn` closure to be passed to TPUEstimator."""

  def input_fn(params):
    batch_size = params["batch_size"]
    d = tf.data.TFRecordDataset(input_file)
    if is_training:
      d = d.repeat()
      d = d.shuffle(buffer_size=100)
    d = d.apply(
        tf.contrib.data.map_and_batch(
            lambda record: record,
            batch_size=batch_size,
            drop_remainder=drop_remainder))
    return d

  return input_fn


def write_predictions(estimator, predict_input_fn, predict_examples, num_actual_predict_examples):
  result = estimator.predict(input_fn=predict_input_fn)
  output_predict_file = os.path.join(FLAGS.output_dir, "test_results.tsv")
  with tf.gfile.GFile(output_predict_file, "w") as writer:
    num_written_lines = 0
    tf.logging.info("***** Predict results *****")
    for (i, prediction) in enumerate(result):
      probabilities = prediction["probabilities"]
      if i >= num_actual_predict_examples:
        break
      output_line = "\t".join(str(p) for p in probabilities) + "\n"
      writer.write(output_line)
      num_written_lines += 1
  assert num_written_lines == num_actual_predict_examples
