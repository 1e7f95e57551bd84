"""``npu_device.compat``: the TF 1.x compat mode."""

import tensorflow as tf

from npu_device.compat import v1  # noqa: F401


def enable_v1():
    """Graph mode for the process, as the adapter's ``enable_v1`` (``npu_device.py:127-132``)."""
    tf.compat.v1.disable_v2_behavior()
