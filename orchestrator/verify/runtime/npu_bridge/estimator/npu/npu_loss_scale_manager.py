"""Loss-scale managers: the scale as a variable-free constant (no overflow on the CPU)."""

import tensorflow as tf


class FixedLossScaleManager:
    def __init__(self, loss_scale, enable_overflow_check=True):
        self._loss_scale = float(loss_scale)

    def get_loss_scale(self):
        return tf.constant(self._loss_scale, dtype=tf.float32)

    def update_loss_scale(self, finite_grads):
        return tf.no_op()


class ExponentialUpdateLossScaleManager(FixedLossScaleManager):
    def __init__(self, init_loss_scale, incr_every_n_steps=1000, decr_every_n_nan_or_inf=2,
                 incr_ratio=2, decr_ratio=0.8):
        super().__init__(init_loss_scale)
