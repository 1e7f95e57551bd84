"""The loss of a TF 2.x custom training step: the value its gradients were taken of.

Each ``GradientTape.gradient(target, ...)`` outside Keras' ``fit`` leaves its target as the
loss of the next ``apply_gradients`` (:mod:`.tf2`) that runs in the same graph (the same
``tf.function``, one it is nested in, or eagerly). A loss-scale optimizer's scaled loss
(``get_scaled_loss(loss)``, the target of a mixed-precision loop) is taken back to the loss
it scaled: the migration replaces that optimizer, the loss must stay the same. A target that
is not a float tensor (a list of losses) leaves no loss; a tensor of several losses counts
as their sum (what its gradients are the gradients of).
"""

import functools

from . import imports

#: Where Keras 2's loss-scale optimizers live (tf-keras, and keras 2 inside TensorFlow).
LOSS_SCALE_MODULES = ("tf_keras.src.mixed_precision.loss_scale_optimizer",
                      "keras.src.mixed_precision.loss_scale_optimizer")
LOSS_SCALE_CLASSES = ("BaseLossScaleOptimizer", "LossScaleOptimizer", "LossScaleOptimizerV3")
_KEPT = 64  # scaled losses remembered (one per traced or eager step is enough)


class Losses:
    """The targets of ``GradientTape.gradient``, the latest first taken by a training step."""

    def __init__(self, recorder) -> None:
        self.recorder = recorder
        self.latest = None
        self.scaled: dict = {}  # id(scaled loss) -> (scaled loss, the loss it scales)

    def install(self) -> None:
        from tensorflow.python.eager import backprop

        backprop.GradientTape.gradient = self._gradient(backprop.GradientTape.gradient)
        for name in LOSS_SCALE_MODULES:
            imports.when_imported(name, self._watch_scaling)

    def take(self, tf):
        """The loss of the step about to apply its gradients (a float64 scalar tensor of the
        current graph, or eager), or None; a loss is taken once."""
        loss, self.latest = self.latest, None
        if loss is None or not _reachable(tf, loss):
            return None
        return tf.cast(tf.reduce_sum(loss), tf.float64)

    def _gradient(self, original):
        @functools.wraps(original)
        def gradient(tape, target, *args, **kwargs):
            if not self.recorder.in_keras:
                self.latest = self._unscaled(target) if _is_float_tensor(target) else None
            return original(tape, target, *args, **kwargs)
        return gradient

    def _unscaled(self, target):
        held = self.scaled.get(id(target))
        return held[1] if held is not None and held[0] is target else target

    def _watch_scaling(self, module) -> None:
        for name in LOSS_SCALE_CLASSES:
            cls = module.__dict__.get(name)
            original = cls.__dict__.get("get_scaled_loss") if isinstance(cls, type) else None
            if original is not None:
                cls.get_scaled_loss = self._scaling(original)

    def _scaling(self, original):
        @functools.wraps(original)
        def get_scaled_loss(optimizer, loss):
            scaled = original(optimizer, loss)
            if len(self.scaled) >= _KEPT:
                self.scaled.clear()
            self.scaled[id(scaled)] = (scaled, loss)
            return scaled
        return get_scaled_loss


def _is_float_tensor(value) -> bool:
    dtype = getattr(value, "dtype", None)
    return getattr(dtype, "is_floating", False) and hasattr(value, "shape")


def _reachable(tf, loss) -> bool:
    """Whether ``loss`` can be read where the step runs: both eager, or ``loss`` of the
    current graph or of one the current graph is nested in (a ``tf.cond`` branch)."""
    from tensorflow.python.framework import ops

    if tf.executing_eagerly():
        return isinstance(loss, ops.EagerTensor)
    graph = ops.get_default_graph()
    while graph is not None:
        if getattr(loss, "graph", None) is graph:
            return True
        graph = getattr(graph, "outer_graph", None)
    return False
