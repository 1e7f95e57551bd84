"""``npu_device.compat.v1``: the TF 1.x adapter's names, for ``tf.compat.v1`` code."""
