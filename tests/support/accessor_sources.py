"""A library's module accessor functions (``lib/utils/contrib.py``, tensor2tensor's shape), and
two files that reach ``tf.contrib`` through them: by calls (``contrib.tpu().TPUEstimator``) and
by names bound to calls (``tpu_lib = contrib.tpu()``)."""

CONTRIB = '''\
"""Wrappers around tf.contrib: contrib packages are imported where they are used, so that the
library imports on TensorFlow builds without contrib."""
from __future__ import absolute_import

import importlib

import tensorflow.compat.v1 as tf

try:
  from tensorflow.contrib import slim as tf_slim  # pylint: disable=g-import-not-at-top
  is_tf2 = False
except ImportError:
  import tf_slim  # pylint: disable=g-import-not-at-top
  is_tf2 = True


class DummyModule(object):
  """Stands in for a contrib module that this TensorFlow does not have."""

  def __init__(self, **kw):
    for k, v in kw.items():
      setattr(self, k, v)


def err_if_tf2(msg="err"):
  if is_tf2:
    raise ImportError("contrib is unavailable in tf2: %s" % msg)


def slim():
  return tf_slim


def tpu():
  err_if_tf2(msg="tpu")
  from tensorflow.contrib import tpu as contrib_tpu  # pylint: disable=g-import-not-at-top
  return contrib_tpu


def distribute():
  return tf.contrib.distribute


def framework():
  if is_tf2:
    return DummyModule(nest=tf.nest, name_scope=tf.name_scope)
  from tensorflow.contrib import framework as contrib_framework  # pylint: disable=g-import-not-at-top
  return contrib_framework


def contrib_module(name="layers"):
  """Any other contrib package, by name."""
  return importlib.import_module("tensorflow.contrib." + name)


def is_available(name):
  return not is_tf2 and hasattr(tf.contrib, name)
'''
TRAINER = '''\
"""Trains a model of the library with TPUEstimator."""
from __future__ import absolute_import

import tensorflow.compat.v1 as tf

from lib.utils import contrib
from lib.utils.contrib import tpu as tpu_module
from lib import models


def model_fn(features, labels, mode, params):
  logits = models.build(features, params)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.AdamOptimizer(params["learning_rate"])
  if params["use_tpu"]:
    optimizer = contrib.tpu().CrossShardOptimizer(optimizer)
  with contrib.framework().arg_scope([models.dense], activation=tf.nn.relu):
    summary = contrib.contrib_module().summarize_tensor(logits)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tpu_module().TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                       host_call=(models.host_fn, [summary]))


def main(flags):
  tpu_config = contrib.tpu().TPUConfig(iterations_per_loop=flags.iterations)
  run_config = contrib.tpu().RunConfig(model_dir=flags.model_dir, tpu_config=tpu_config)
  estimator = contrib.tpu().TPUEstimator(
      model_fn=model_fn,
      config=run_config,
      use_tpu=flags.use_tpu,
      train_batch_size=flags.batch_size,
      params={"learning_rate": flags.learning_rate, "use_tpu": flags.use_tpu})
  estimator.train(input_fn=models.input_fn, max_steps=flags.train_steps)
'''

ALIASED = '''\
"""Trains a model of the library on TPUs, with the contrib modules bound to names once."""
from __future__ import absolute_import

import tensorflow.compat.v1 as tf

from lib.utils import contrib
from lib import models

layers_lib = contrib.contrib_module()


def model_fn(features, labels, mode, params):
  tpu_lib = contrib.tpu()
  logits = models.build(features, params)
  summary = layers_lib.summarize_tensor(logits)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tpu_lib.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                  host_call=(models.host_fn, [summary]))


def main(flags):
  tpu_lib = contrib.tpu()
  run_config = tpu_lib.RunConfig(model_dir=flags.model_dir)
  estimator = tpu_lib.TPUEstimator(
      model_fn=model_fn,
      config=run_config,
      use_tpu=flags.use_tpu,
      train_batch_size=flags.batch_size)
  estimator.train(input_fn=models.input_fn, max_steps=flags.train_steps)
'''
