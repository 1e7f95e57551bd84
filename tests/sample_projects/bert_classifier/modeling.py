# coding=utf-8
# Copyright 2018 The Google AI Language Team Authors.
"""The main BERT model and related functions (abridged)."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import math

import numpy as np
import six
import tensorflow as tf


def gelu(x):
  """Gaussian Error Linear Unit.

  This is a smoother version of the RELU.
  Original paper: https://arxiv.org/abs/1606.08415
  Args:
    x: float Tensor to perform activation.

  Returns:
    `x` with the GELU activation applied.
  """
  cdf = 0.5 * (1.0 + tf.tanh(
      (np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3)))))
  return x * cdf


def get_activation(activation_string):
  """Maps a string to a Python function, e.g., "relu" => `tf.nn.relu`."""
  if not isinstance(activation_string, six.string_types):
    return activation_string
  act = activation_string.lower()
  if act == "relu":
    return tf.nn.relu
  elif act == "gelu":
    return gelu
  raise ValueError("Unsupported activation: %s" % act)


def dropout(input_tensor, dropout_prob):
  """Perform dropout.

  Args:
    input_tensor: float Tensor.
    dropout_prob: Python float. The probability of dropping out a value (NOT of
      *keeping* a dimension as in `tf.nn.dropout`).
  """
  if dropout_prob is None or dropout_prob == 0.0:
    return input_tensor

  output = tf.nn.dropout(input_tensor, 1.0 - dropout_prob)
  return output


def dense_layer(input_tensor, hidden_size, activation=gelu, dropout_prob=0.1):
  """A feed-forward block used by the transformer layers."""
  output = tf.layers.dense(input_tensor, hidden_size, activation=activation)
  output = tf.layers.dropout(output, rate=dropout_prob)
  return output
