"""Which calls build an Estimator: TensorFlow's Estimator classes, and the repository's own.

A rule that gives every Estimator the NPU run config, and one that hands hooks only to an
Estimator's ``train``, ask the same question; this module answers it. :data:`ESTIMATOR_CLASSES` holds
TensorFlow 1.15's classes (canonical names) with the position of ``config`` among their
parameters; :func:`estimator_subclass_calls` finds the constructions of the repository's
subclasses of them (the ``class:`` facts of :mod:`classes`, which a plugin gathers with
:func:`classes.class_facts`).
"""

from __future__ import annotations

from typing import FrozenSet

from .classes import SubclassCall, subclass_calls, subclass_names
from .names import ESTIMATOR_PACKAGE, TF
from .rule import FileContext

#: The :attr:`Rule.modules` of a rule about Estimators: a file that imports only
#: ``tensorflow_estimator`` (``from tensorflow_estimator.python.estimator import estimator``)
#: builds Estimators too.
ESTIMATOR_MODULES = (TF, ESTIMATOR_PACKAGE)

BASE_ESTIMATOR = "tensorflow.estimator.Estimator"
#: The NPU's own Estimator, which already runs on the NPU (its ``train`` takes hooks).
NPU_ESTIMATOR = "npu_bridge.estimator.npu.npu_estimator.NPUEstimator"
#: TPUEstimator: ``tf.contrib.tpu``, ``tf.compat.v1.estimator.tpu``, and the internal module of
#: ``tf.contrib.tpu`` that BERT-era code imports it from.
TPU_ESTIMATORS = ("tensorflow.contrib.tpu.TPUEstimator", "tensorflow.estimator.tpu.TPUEstimator",
                  "tensorflow.contrib.tpu.python.tpu.tpu_estimator.TPUEstimator")
#: Every Estimator class of TensorFlow 1.15 (canonical names, ``compat.v1`` folded) -> the
#: 0-based position of ``config`` among its ``__init__`` parameters (v1 signatures).
ESTIMATOR_CLASSES: dict[str, int] = {
    BASE_ESTIMATOR: 2,  # (model_fn, model_dir, config, params, warm_start_from)
    **dict.fromkeys(TPU_ESTIMATORS, 2),  # (model_fn, model_dir, config, params, use_tpu, ...)
    **{f"tensorflow.estimator.{name}": position for name, position in (
        ("DNNClassifier", 10), ("DNNRegressor", 9), ("DNNEstimator", 8),
        ("LinearClassifier", 6), ("LinearRegressor", 5), ("LinearEstimator", 4),
        ("DNNLinearCombinedClassifier", 12), ("DNNLinearCombinedRegressor", 11),
        ("DNNLinearCombinedEstimator", 10),
        ("BaselineClassifier", 5), ("BaselineRegressor", 4), ("BaselineEstimator", 3),
        ("BoostedTreesClassifier", 13), ("BoostedTreesRegressor", 12),
        ("BoostedTreesEstimator", 12))},
}
#: The functions that build an Estimator (canonical names) -> the 0-based position of their
#: ``config`` parameter: ``model_to_estimator(keras_model, keras_model_path, custom_objects,
#: model_dir, config, ...)``, the same in TF 1.15 and 2.x. Not classes: nothing subclasses them.
ESTIMATOR_MAKERS: dict[str, int] = {"tensorflow.keras.estimator.model_to_estimator": 4}
#: Every class whose instances are Estimators: :data:`ESTIMATOR_CLASSES` and the NPU's own
#: (what an Estimator's ``train`` is called on; NPU011 gives the run config to the former).
ESTIMATORS = frozenset(ESTIMATOR_CLASSES) | {NPU_ESTIMATOR}


def estimator_subclass_calls(ctx: FileContext) -> list[SubclassCall]:
    """The constructions, in the file of ``ctx``, of the repository's classes that derive
    from one of :data:`ESTIMATOR_CLASSES` (in this file or another one)."""
    return subclass_calls(ctx, frozenset(ESTIMATOR_CLASSES))


def estimator_subclass_names(facts: FrozenSet[str]) -> frozenset[str]:
    """The names of the repository's classes that derive from one of :data:`ESTIMATOR_CLASSES`
    (from the ``class:`` ``facts``): a construction of one spells its name."""
    return subclass_names(facts, frozenset(ESTIMATOR_CLASSES))
