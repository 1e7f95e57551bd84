"""``npu_ops``: the NPU's own ops, as CPU TensorFlow computes them."""

import numbers

import tensorflow as tf


def dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Keep each element with probability ``keep_prob`` and scale it by ``1 / keep_prob``:
    ``tf.nn.dropout``'s keep_prob form, through the same ops (a seeded run draws the same
    mask as the original)."""
    if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
        raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob}")
    return tf.nn.dropout(x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed, name=name)


def initialize_system(name=None, job=None):
    return tf.no_op(name=name or "npu_initialize_system")


def shutdown_system(name=None):
    return tf.no_op(name=name or "npu_shutdown_system")
