"""The watch over TensorFlow 2.x code (a TF 2.x repository: eager, ``tf.function``, Keras 2).

Keras ``fit``/``evaluate``/``predict`` are watched as in TF 1.x code (:mod:`.keras_watch`);
each ``fit`` batch also carries the global norm of the gradients it applied. A custom
training loop applies its gradients through a Keras optimizer's ``apply_gradients``
(directly, through ``minimize`` or a ``LossScaleOptimizer``): each call outside Keras' own
``fit`` is a training step, recorded with its loss (the target of the ``GradientTape``
whose gradients it applies, :mod:`.tf2_losses`) and the global norm of those gradients. In a
``tf.function`` a ``numpy_function`` placed before the update records them, so each executed
step counts, not the trace. The variables those optimizers updated are recorded when the
process ends (unless a ``fit`` trained after them and recorded its weights).

The step limit: a TF 2.x loop has no ``Session.run`` whose input the launcher could end, so
the step after the limit (in this process or a later one of the run) stops the process
before it updates anything: the variables after the last recorded step are recorded, then
the record is written as ``stopped`` (what follows the loop does not run). A script of
10,000 steps costs the limit's steps, not its own.

Random seeds: TensorFlow's global seed (``tf.random.set_seed``) on top of the TF 1.x watch's;
XLA off (``jit_compile``), as in TF 1.x sessions.
"""

import functools

from . import evidence, imports
from .tf2_losses import Losses

#: The modules of the Keras optimizers' base classes (tf-keras, and keras 2 inside TensorFlow).
OPTIMIZERS = ("tf_keras.src.optimizers.optimizer", "tf_keras.src.optimizers.legacy.optimizer_v2",
              "keras.src.optimizers.optimizer", "keras.src.optimizers.legacy.optimizer_v2",
              "keras.src.optimizers.optimizer_v2.optimizer_v2")
BASES = ("_BaseOptimizer", "Optimizer", "OptimizerV2")
#: Why a run ends at the step limit in a custom loop.
STOPPED = ("a TF 2.x training loop goes on past the step limit (it has no input the launcher "
           "can end): what follows it did not run")
GRADIENT_NORM = "gradient norm"


def install(tf, recorder, seed: int) -> None:
    tf.random.set_seed(seed)
    _without_xla()
    losses = Losses(recorder)
    losses.install()
    watch = _Watch(tf, recorder, losses)
    for name in OPTIMIZERS:
        imports.when_imported(name, watch.optimizers)
    recorder.at_exit.append(watch.variables_at_the_end)
    recorder.at_stop.append(watch.variables_at_the_end)


class _Watch:
    """The training steps of a process's Keras optimizers."""

    def __init__(self, tf, recorder, losses: Losses) -> None:
        self.tf, self.recorder, self.losses = tf, recorder, losses
        self.tracked: dict = {}  # id(variable) -> variable, in the order first updated
        self.depth = 0  # inside a watched apply_gradients (a loss-scale optimizer's inner one)

    def optimizers(self, module) -> None:
        for name in BASES:
            cls = module.__dict__.get(name)
            original = cls.__dict__.get("apply_gradients") if isinstance(cls, type) else None
            if original is not None and not getattr(original, "_npu_codemod_watched", False):
                cls.apply_gradients = self._apply_gradients(original)

    def _apply_gradients(self, original):
        @functools.wraps(original)
        def apply_gradients(optimizer, grads_and_vars, *args, **kwargs):
            if self.depth:
                return original(optimizer, grads_and_vars, *args, **kwargs)
            pairs = list(grads_and_vars)
            gate = self._gate(pairs)
            self.depth += 1
            try:
                with self.tf.control_dependencies(gate):
                    return original(optimizer, pairs, *args, **kwargs)
            finally:
                self.depth -= 1

        apply_gradients._npu_codemod_watched = True
        return apply_gradients

    def _gate(self, pairs: list) -> list:
        """What must run before the update: the step's record (a ``numpy_function`` in a
        graph; done at once, eagerly)."""
        gradients = [gradient for gradient, _ in pairs if gradient is not None]
        if self.recorder.in_keras:  # a fit batch: its logs are recorded by keras_watch
            return self._run_before([GRADIENT_NORM], [_norm(self.tf, gradients)], self._batch_norm)
        for _, variable in pairs:
            self.tracked.setdefault(id(variable), variable)
        loss = self.losses.take(self.tf)
        names, series = ([], []) if loss is None else (["loss"], [loss])
        return self._run_before(names + [GRADIENT_NORM], series + [_norm(self.tf, gradients)],
                                self._step)

    def _run_before(self, names: list, series: list, record) -> list:
        def run(*values):
            record(names, [float(value) for value in values])
            return values[-1]

        if self.tf.executing_eagerly():
            run(*(value.numpy() for value in series))
            return []
        return [self.tf.numpy_function(run, series, self.tf.float64, stateful=True)]

    def _batch_norm(self, names: list, values: list) -> None:
        self.recorder.batch_values.update(zip(names, values))

    def _step(self, names: list, values: list) -> None:
        recorder = self.recorder
        if recorder.limit_reached():  # this step would go past the limit: nothing of it runs
            recorder.stop(STOPPED)
        recorder.call(recorder.training_step(), names, values, [], [], kind="train")
        recorder.variables = []  # the loop's variables are the ones at the end now
        recorder.input_ended = recorder.limit_reached()

    def variables_at_the_end(self) -> None:
        """The variables the custom loop updated, unless a Keras ``fit`` trained after it or
        this process took no training step (an earlier one of the run took them all)."""
        if self.recorder.variables or not self.tracked or not self.recorder.training_steps:
            return
        self.recorder.variables = [evidence.describe(variable.name, variable.numpy())
                                   for variable in self.tracked.values()]


def _without_xla() -> None:
    """``tf.function(jit_compile=True)`` (a Keras ``compile`` option too) runs without XLA, on
    both sides alike as TF 1.x sessions do: a step's ``numpy_function`` cannot be compiled."""
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    original = polymorphic_function.Function.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._jit_compile = None

    polymorphic_function.Function.__init__ = init


def _norm(tf, gradients: list):
    """The global norm of ``gradients`` (dense or sliced), in float64."""
    if not gradients:
        return tf.constant(0.0, tf.float64)
    dense = [tf.cast(g.values if isinstance(g, tf.IndexedSlices) else g, tf.float64) for g in gradients]
    return tf.linalg.global_norm(dense)
