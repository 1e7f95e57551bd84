"""A TPUEstimator repository with a multi-device session script, shaped as real ones are:
the model function in its own module with its TPU-only optimizer under ``if params["use_tpu"]:``,
the launcher switching on a flag, towers placed with ``tf.device``, an input pipeline that is
already in NPU form."""

from __future__ import annotations

MODEL = '''\
"""The model function: a classifier trained with Adam, sharded across TPU cores when asked."""
import tensorflow as tf


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.train.AdamOptimizer(params["learning_rate"])
    if params["use_tpu"]:
        optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
'''

TRAIN = '''\
"""Trains the classifier with a TPUEstimator."""
import tensorflow as tf

from model import model_fn


def main(flags):
    estimator = tf.contrib.tpu.TPUEstimator(
        model_fn=model_fn, use_tpu=flags.use_tpu, train_batch_size=32,
        params={"learning_rate": 1e-4})
    estimator.train(input_fn=flags.input_fn, max_steps=flags.train_steps)
    if flags.use_tpu:
        resolver = tf.contrib.cluster_resolver.TPUClusterResolver(flags.tpu)
'''

TOWERS = '''\
"""Trains the towers of a multi-device model, one device each, in one session."""
import tensorflow as tf


def tower_losses(batches, devices, build_loss):
    losses = []
    for device, batch in zip(devices, batches):
        with tf.device(device):
            losses.append(build_loss(batch))
    return tf.add_n(losses)


def train(batches, devices, build_loss, steps):
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(tower_losses(batches, devices, build_loss))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
'''

INPUTS = '''\
"""Input pipeline: fixed-size batches of parsed records."""
import tensorflow as tf


def batches(files, batch_size):
    dataset = tf.data.TFRecordDataset(files)
    return dataset.batch(batch_size, drop_remainder=True)
'''

FILES = {"model.py": MODEL, "train.py": TRAIN, "towers.py": TOWERS, "inputs.py": INPUTS}

#: BERT's optimization module: the TPU-only optimizer, under a flag, in a helper.
OPTIMIZATION = '''\
"""Functions and classes related to optimization (weight updates)."""
import tensorflow as tf


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
  global_step = tf.train.get_or_create_global_step()
  optimizer = AdamWeightDecayOptimizer(learning_rate=init_lr, weight_decay_rate=0.01)
  if use_tpu:
    optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
  tvars = tf.trainable_variables()
  grads = tf.gradients(loss, tvars)
  return optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
'''
