"""The contrib estimators NPU011 knows, and whether their config can take the NPU run config.

``tf.contrib.estimator`` and the ``Core*`` estimators of ``tf.contrib.boosted_trees`` derive
from ``tf.estimator.Estimator``: their ``config`` is a ``tf.estimator.RunConfig``, which
``npu_run_config_init`` wraps as for the premade estimators. ``tf.contrib.learn``'s estimators
and the other boosted-trees ones derive from ``tf.contrib.learn``'s ``Estimator`` and take a
``tf.contrib.learn.RunConfig`` (with its cluster ``environment``), which the NPU run config is
not: only a ``config`` shown to be a ``tf.estimator.RunConfig`` is wrapped, any other is
reported. All of them are deprecated in TensorFlow 1.15, as ``tf.contrib`` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    tokens,
)
from npu_codemod.api._toolkit import (
    assigned_values,
    callee_name,
)

_BOOSTED_TREES = "tensorflow.contrib.boosted_trees.estimator_batch.estimator"
_LEARN = "tensorflow.contrib.learn"
#: ``RunConfig`` classes whose instances ``npu_run_config_init(run_config=...)`` takes.
CORE_RUN_CONFIGS = frozenset({"tensorflow.estimator.RunConfig", "tensorflow.contrib.tpu.RunConfig",
                              "tensorflow.estimator.tpu.RunConfig"})


@dataclass(frozen=True)
class ContribEstimator:
    """``position``: where ``config`` is among the ``__init__`` parameters (a call with that
    many positional arguments may pass it positionally); ``core``: built on tf.estimator."""

    position: Optional[int]
    core: bool


CONTRIB_ESTIMATORS: dict[str, ContribEstimator] = {
    **{f"tensorflow.contrib.estimator.{name}": ContribEstimator(position, True) for name, position in (
        ("DNNEstimator", 8), ("LinearEstimator", 4), ("DNNLinearCombinedEstimator", 10),
        ("DNNClassifierWithLayerAnnotations", 10), ("DNNRegressorWithLayerAnnotations", 9),
        ("RNNClassifier", 12), ("RNNEstimator", 9))},
    **{f"{_BOOSTED_TREES}.{name}": ContribEstimator(position, core) for name, position, core in (
        ("CoreGradientBoostedDecisionTreeEstimator", 7, True),
        ("CoreGradientBoostedDecisionTreeRanker", 8, True),
        ("GradientBoostedDecisionTreeClassifier", 7, False),
        ("GradientBoostedDecisionTreeRegressor", 8, False),
        ("GradientBoostedDecisionTreeEstimator", 7, False),
        ("GradientBoostedDecisionTreeRanker", 8, False))},
    f"{_LEARN}.Estimator": ContribEstimator(2, False),  # (model_fn, model_dir, config, ...)
    **{f"{_LEARN}.{name}": ContribEstimator(None, False) for name in (
        "DNNClassifier", "DNNRegressor", "DNNEstimator", "LinearClassifier", "LinearRegressor",
        "LinearEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
        "DNNLinearCombinedEstimator", "DynamicRnnEstimator", "KMeansClustering",
        "LogisticRegressor", "SVM")},
}
DEPRECATED = "; {spelled} is deprecated in TF 1.15 (tf.contrib): port it to tf.estimator when you can"
LEARN_CONFIG = ("{spelled} is a tf.contrib.learn Estimator (deprecated in TF 1.15): its config is "
                "a tf.contrib.learn.RunConfig, which npu_run_config_init() does not make; port it "
                "to its tf.estimator equivalent, which NPU011 then configures")


def core_run_config(value: Base, ctx: FileContext) -> bool:
    """Is ``value`` a ``tf.estimator.RunConfig(...)`` (or TPU RunConfig) call, or a name that
    its scope binds only to such calls?"""
    values = [value] if value.type != tokens.NAME else assigned_values(value, value.value) or []
    return bool(values) and all(_run_config_call(one, ctx) for one in values)


def _run_config_call(value: Base, ctx: FileContext) -> bool:
    return ctx.tf.qualify(callee_name(value)) in CORE_RUN_CONFIGS
