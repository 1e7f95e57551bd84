"""``NPULossScaleOptimizer``: gradients of the scaled loss, unscaled before they are applied."""

import tensorflow as tf


class NPULossScaleOptimizer(tf.train.Optimizer):
    def __init__(self, opt, loss_scale_manager, is_distributed=False):
        super().__init__(use_locking=False, name="NPULossScaleOptimizer")
        self._opt, self._manager = opt, loss_scale_manager

    def compute_gradients(self, loss, var_list=None, **kwargs):
        scale = self._manager.get_loss_scale()
        pairs = self._opt.compute_gradients(loss * scale, var_list=var_list, **kwargs)
        return [(None if g is None else g / scale, v) for g, v in pairs]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
