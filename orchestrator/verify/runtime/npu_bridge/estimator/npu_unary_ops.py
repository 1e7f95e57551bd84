"""``npu_unary_ops``: the NPU's fused unary ops."""

import math

import tensorflow as tf


def gelu(x, name=None):
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``."""
    with tf.name_scope(name or "Gelu"):
        x = tf.convert_to_tensor(x)
        cdf = 0.5 * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))
        return x * cdf
