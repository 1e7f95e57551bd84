"""The ``tf2`` rule pack: TensorFlow 2.x code to Ascend's TF 2.x adapter (``npu_device``),
and TF 1.x code that runs on TensorFlow 2.x through ``tf.compat.v1`` (``spec/rules-tf2.md``).

- ``npu062_compat_header``: NPU062, the ``npu_device.compat.v1`` header in ``tf2-compat``
  files another rule rewrote (NPU001's counterpart);
- ``_header``: where the header goes and which name binds ``npu_device``.
"""
