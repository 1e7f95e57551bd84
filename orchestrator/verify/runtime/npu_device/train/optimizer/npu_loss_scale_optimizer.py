"""The NPU loss-scale optimizers: Keras' own where no NPU context exists (as the adapter's
class falls back, ``npu_loss_scale_optimizer.py``)."""

import tensorflow as tf

NpuLossScaleOptimizer = tf.keras.mixed_precision.LossScaleOptimizer
NpuExperimentalLossScaleOptimizer = tf.keras.mixed_precision.LossScaleOptimizer
