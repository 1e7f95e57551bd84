"""``tf.contrib`` on TensorFlow 2: its common modules from the packages that keep them.

``layers``, ``slim``, ``framework`` are tf-slim (``tf_slim``: the layers, initializers,
regularizers, ``arg_scope``, variables helpers, ``optimize_loss``; ``framework.nest`` is
``tf.nest``); ``losses`` and ``metrics`` tf-slim's; ``rnn`` the cells of
``tf.compat.v1.nn.rnn_cell`` and the static RNNs; ``data`` ``tf.data.experimental`` (and
``batch_and_drop_remainder``); ``tpu`` tensorflow-estimator's ``TPUEstimator`` (on CPU
with ``use_tpu=False``, as an Estimator), ``tf.compat.v1.tpu`` and a one-shard
``CrossShardOptimizer``; ``training`` an
``HParams``; ``keras`` ``tf.keras``. Any other module is missing, by name.
"""

import importlib
import types
from typing import Optional

#: tf.contrib's module -> (the module it is, or a function that builds it).
ALIASES = {"layers": "tf_slim", "slim": "tf_slim", "losses": "tf_slim.losses",
           "metrics": "tf_slim.metrics"}
_BUILT: dict = {}


def module(name: str) -> Optional[types.ModuleType]:
    """``tf.contrib.<name>``, or None when it is not emulated."""
    if name in _BUILT:
        return _BUILT[name]
    if name in ALIASES:
        found = importlib.import_module(ALIASES[name])
    elif name in _BUILDERS:
        found = _BUILDERS[name]()
    else:
        return None
    _BUILT[name] = found
    return found


class Contrib(types.ModuleType):
    """``tensorflow.contrib``: its modules on first use; a missing one says so."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        found = module(name)
        if found is None:
            raise AttributeError(f"tf.contrib.{name} is not emulated by npu-codemod verify (its "
                                 "emulated modules: " + ", ".join(sorted({*ALIASES, *_BUILDERS})) + ")")
        return found


def contrib() -> types.ModuleType:
    if "" not in _BUILT:
        _BUILT[""] = Contrib("tensorflow.contrib", __doc__)
        _BUILT[""].__path__ = []
    return _BUILT[""]


def _namespace(name: str, *sources, **names) -> types.ModuleType:
    built = types.ModuleType(f"tensorflow.contrib.{name}")
    for source in sources:  # TensorFlow's API modules load their names lazily: not in vars()
        built.__dict__.update((key, getattr(source, key)) for key in dir(source) if not key.startswith("_"))
    built.__dict__.update(names)
    return built


def _rnn() -> types.ModuleType:
    import tensorflow as tf

    v1 = tf.compat.v1
    return _namespace("rnn", v1.nn.rnn_cell, static_rnn=v1.nn.static_rnn,
                      static_bidirectional_rnn=v1.nn.static_bidirectional_rnn,
                      static_state_saving_rnn=v1.nn.static_state_saving_rnn)


def _data() -> types.ModuleType:
    import tensorflow as tf

    def batch_and_drop_remainder(batch_size):
        return lambda dataset: dataset.batch(batch_size, drop_remainder=True)

    return _namespace("data", tf.compat.v1.data.experimental, Dataset=tf.compat.v1.data.Dataset,
                      batch_and_drop_remainder=batch_and_drop_remainder)


def _framework() -> types.ModuleType:
    import tensorflow as tf
    import tf_slim

    return _namespace("framework", tf_slim, nest=tf.nest)


def _tpu() -> types.ModuleType:
    import tensorflow as tf
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_estimator

    return _namespace("tpu", tf.compat.v1.tpu, CrossShardOptimizer=_one_shard, TPUEstimator=tpu_estimator.TPUEstimator,
                      TPUEstimatorSpec=tpu_estimator.TPUEstimatorSpec, RunConfig=tpu_config.RunConfig,
                      TPUConfig=tpu_config.TPUConfig, InputPipelineConfig=tpu_config.InputPipelineConfig)


def _one_shard(optimizer, reduction=None, name="CrossShardOptimizer", group_assignment=None):
    """``CrossShardOptimizer`` off a TPU (``use_tpu=False``): one shard, the optimizer as it is
    (TensorFlow's own needs a TPU's ``CrossReplicaSum``)."""
    return optimizer


def _training() -> types.ModuleType:
    return _namespace("training", HParams=HParams)


def _keras() -> types.ModuleType:
    import tensorflow as tf

    return tf.keras


_BUILDERS = {"rnn": _rnn, "data": _data, "framework": _framework, "tpu": _tpu, "training": _training,
             "keras": _keras}


class HParams:
    """``tf.contrib.training.HParams``: named values, ``add_hparam``, ``values``, ``parse``
    (``"a=1,b=x"``, each value of its hyperparameter's type), ``override_from_dict``."""

    def __init__(self, hparam_def=None, model_structure=None, **kwargs) -> None:
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value) -> None:
        if hasattr(self, name):
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        setattr(self, name, value)

    def set_hparam(self, name: str, value) -> None:
        setattr(self, name, value)

    def values(self) -> dict:
        return {name: value for name, value in vars(self).items() if not name.startswith("_")}

    def override_from_dict(self, values: dict) -> "HParams":
        for name, value in values.items():
            self.set_hparam(name, value)
        return self

    def parse(self, text: str) -> "HParams":
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, _, value = item.partition("=")
            current = getattr(self, name)
            kind = type(current) if current is not None else str
            self.set_hparam(name, value.lower() in ("true", "1") if kind is bool else kind(value))
        return self

    def __repr__(self) -> str:
        return f"HParams({self.values()!r})"
