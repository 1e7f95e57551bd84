"""Imported for its effect on the NPU (``tf.layers.dropout`` and Keras ``Dropout`` run the
NPU's dropout); on the CPU they already compute the same thing."""
