"""Keras' ``fit``, ``evaluate`` and ``predict``, watched (graph-mode Keras trains through
callables, not ``Session.run``).

Each training batch is a training step: its logs (loss, metrics; in TF 2.x code the gradient
norm too, :mod:`.tf2`) are recorded, and once the run's ``steps`` ran the model stops training
(``stop_training``: ``fit`` ends its epoch and returns, so the script's evaluation and save
run). A ``fit`` that starts once the limit is reached (a second phase of training) stops the
process: it could not end before its first batch trains. Each epoch's logs (the history), the
trainable weights when ``fit`` ends, what ``evaluate`` returns and a description of what
``predict`` returns are recorded too.
"""

import functools
import inspect
import sys

from . import evidence, imports

#: The modules of ``Model`` in Keras 2 (tf-keras, and keras 2 inside TensorFlow <= 2.15).
MODELS = ("tf_keras.src.engine.training", "tf_keras.src.engine.training_v1",
          "keras.src.engine.training", "keras.src.engine.training_v1")
#: Why a run ends at a ``fit`` that starts once the step limit is reached.
LATER_FIT = "a Keras fit starts after the step limit: it and what follows it did not run"


def install(recorder) -> None:
    for name in MODELS:
        imports.when_imported(name, lambda module: _watch(module, recorder))


def _watch(module, recorder) -> None:
    model = getattr(module, "Model", None)
    package = module.__name__.split(".src.")[0]
    if model is None:
        return
    for method, wrap in (("fit", _fit), ("evaluate", _evaluate), ("predict", _predict)):
        original = model.__dict__.get(method)
        if original is not None:
            setattr(model, method, wrap(original, recorder, package))


def _outermost(function):
    """Run ``function``'s watch only in the outermost watched call (``fit`` of one Model
    class may call another's)."""
    @functools.wraps(function)
    def call(original, recorder, package):
        watched = function(original, recorder, package)

        @functools.wraps(original)
        def method(self, *args, **kwargs):
            if getattr(recorder, "in_keras", False):
                return original(self, *args, **kwargs)
            recorder.in_keras = True
            try:
                return watched(self, *args, **kwargs)
            finally:
                recorder.in_keras = False
        return method
    return call


@_outermost
def _fit(original, recorder, package):
    signature = inspect.signature(original)

    def fit(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        callbacks = list(bound.arguments.get("callbacks") or [])
        bound.arguments["callbacks"] = callbacks + [_callback(package, recorder)]
        return original(*bound.args, **bound.kwargs)
    return fit


@_outermost
def _evaluate(original, recorder, package):
    def evaluate(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        _record_result(recorder, "evaluate", result, getattr(self, "metrics_names", None))
        return result
    return evaluate


@_outermost
def _predict(original, recorder, package):
    def predict(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        from tensorflow.python.util import nest

        arrays = [evidence.describe(f"predict[{i}]", value) for i, value in enumerate(nest.flatten(result))]
        recorder.call(None, [], [], [], arrays, kind="predict")
        return result
    return predict


def _record_result(recorder, kind: str, result, names) -> None:
    values = result if isinstance(result, (list, tuple)) else [result]
    names = list(names) if names and len(names) == len(values) else [kind] * len(values)
    recorder.call(None, [f"{kind} {name}" for name in names], [float(v) for v in values], [], [],
                  kind=kind)


def _callback(package: str, recorder):
    base = sys.modules[package + ".src.callbacks"].Callback
    backend = sys.modules[package + ".src.backend"]

    class Watch(base):
        def on_train_begin(self, logs=None):
            if recorder.input_ended:  # a later fit: it would train past the limit
                recorder.stop(LATER_FIT)

        def on_train_batch_end(self, batch, logs=None):
            names, values = _logs(logs)
            names, values = names + list(recorder.batch_values), values + list(recorder.batch_values.values())
            recorder.batch_values.clear()
            recorder.call(recorder.training_step(), names, values, [], [], kind="fit")
            if recorder.limit_reached():
                recorder.input_ended = True
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            names, values = _logs(logs)
            recorder.call(None, [f"epoch {epoch} {name}" for name in names], values, [], [], kind="history")

        def on_train_end(self, logs=None):
            weights = self.model.trainable_weights
            recorder.internal = True
            try:
                values = backend.batch_get_value(weights)
            finally:
                recorder.internal = False
            recorder.variables = [evidence.describe(w.name, v) for w, v in zip(weights, values)]

    return Watch()


def _logs(logs) -> tuple:
    """(names, values) of a batch's or an epoch's logs: the loss first, then by name."""
    found = sorted(((name, float(value)) for name, value in (logs or {}).items()
                    if isinstance(value, (int, float)) or getattr(value, "shape", None) == ()),
                   key=lambda item: (item[0] != "loss", item[0]))
    return [name for name, _ in found], [value for _, value in found]
