"""The watch over TensorFlow 2.x code (a TF 2.x repository: eager, ``tf.function``, Keras 2).

Keras ``fit``/``evaluate``/``predict`` are watched as in TF 1.x code (:mod:`.keras_watch`). A
custom training loop applies its gradients through a Keras optimizer's ``apply_gradients``
(directly, through ``minimize`` or a ``LossScaleOptimizer``): each call outside Keras' own
``fit`` is a training step, recorded with the global norm of the gradients it applies (in a
``tf.function`` by a ``numpy_function`` next to the update, so each executed step counts, not
the trace). The variables those optimizers updated are recorded when the process ends (unless
a ``fit`` recorded its weights). Past the step limit steps are no longer recorded, but the loop
runs on: a TF 2.x loop has no ``Session.run`` to end its input at.

Random seeds: TensorFlow's global seed (``tf.random.set_seed``) on top of the TF 1.x watch's.
"""

import functools

from . import evidence, imports

#: The modules of the Keras optimizers' base classes (tf-keras, and keras 2 inside TensorFlow).
OPTIMIZERS = ("tf_keras.src.optimizers.optimizer", "tf_keras.src.optimizers.legacy.optimizer_v2",
              "keras.src.optimizers.optimizer", "keras.src.optimizers.legacy.optimizer_v2",
              "keras.src.optimizers.optimizer_v2.optimizer_v2")
BASES = ("_BaseOptimizer", "Optimizer", "OptimizerV2")


def install(tf, recorder, seed: int) -> None:
    tf.random.set_seed(seed)
    tracked: dict = {}  # id(variable) -> variable, in the order first updated
    state = {"depth": 0}
    for name in OPTIMIZERS:
        imports.when_imported(name, lambda module: _watch(module, tf, recorder, tracked, state))
    recorder.at_exit.append(lambda: _variables(recorder, tracked))


def _watch(module, tf, recorder, tracked: dict, state: dict) -> None:
    for name in BASES:
        cls = module.__dict__.get(name)
        original = cls.__dict__.get("apply_gradients") if isinstance(cls, type) else None
        if original is not None and not getattr(original, "_npu_codemod_watched", False):
            cls.apply_gradients = _apply_gradients(original, tf, recorder, tracked, state)


def _apply_gradients(original, tf, recorder, tracked: dict, state: dict):
    @functools.wraps(original)
    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        if state["depth"] or recorder.in_keras:  # inside another watched call, or Keras' fit
            return original(self, grads_and_vars, *args, **kwargs)
        pairs = list(grads_and_vars)
        state["depth"] += 1
        try:
            result = original(self, pairs, *args, **kwargs)
        finally:
            state["depth"] -= 1
        for _, variable in pairs:
            tracked.setdefault(id(variable), variable)
        _record_step(tf, recorder, [gradient for gradient, _ in pairs if gradient is not None], result)
        return result

    apply_gradients._npu_codemod_watched = True
    return apply_gradients


def _record_step(tf, recorder, gradients: list, update) -> None:
    norm = tf.linalg.global_norm(gradients) if gradients else tf.constant(0.0)

    def step(value):
        if not recorder.input_ended:
            recorder.call(recorder.training_step(), ["gradient norm"], [float(value)], [], [], kind="train")
            recorder.input_ended = recorder.limit_reached()
        return value

    if tf.executing_eagerly():
        step(norm.numpy())
        return
    with tf.control_dependencies([update] if update is not None and hasattr(update, "op") else []):
        tf.numpy_function(step, [norm], norm.dtype, stateful=True)


def _variables(recorder, tracked: dict) -> None:
    """The variables the custom loop updated, unless a Keras ``fit`` recorded its weights."""
    if recorder.variables or not tracked:
        return
    recorder.variables = [evidence.describe(variable.name, variable.numpy()) for variable in tracked.values()]
