"""Issue 25: contrib estimators are Estimators. NPU011 gives the NPU run config to those built
on ``tf.estimator`` (``tf.contrib.estimator``, the ``Core*`` boosted trees) and to any whose
config is shown to be a ``tf.estimator.RunConfig``; a ``tf.contrib.learn`` estimator with its
own ``tf.contrib.learn.RunConfig`` is reported. Every one is named deprecated, and NPU100 knows
``tf.contrib.boosted_trees`` as deprecated (Ascend's list leaves it out).

``trainer/model.py`` is a census-style trainer that picks its estimator by flag; the run
configs come from ``trainer/configs.py``, a helper module of the same package.
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import repository_facts
from support.rules import messages

RULES = {"NPU001", "NPU011", "NPU012", "NPU013", "NPU100"}
HEADER = "from npu_bridge.npu_init import *\n"
DEPRECATED = "; {} is deprecated in TF 1.15 (tf.contrib): port it to tf.estimator when you can"
LEARN = ("{} is a tf.contrib.learn Estimator (deprecated in TF 1.15): its config is a "
         "tf.contrib.learn.RunConfig, which npu_run_config_init() does not make; port it to its "
         "tf.estimator equivalent, which NPU011 then configures")
GUIDE = ("(guide: Estimator migration: the run configuration (npu_run_config_init), "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu011-estimator-run-config)")

CONFIGS = '''\
"""Run configurations of the trainer: checkpoints, summaries, the cluster."""
import tensorflow as tf


def learn_run_config(job_dir):
  """The tf.contrib.learn run config the legacy estimators need."""
  return tf.contrib.learn.RunConfig(model_dir=job_dir, save_checkpoints_secs=600)
'''
MODEL = '''\
"""Census income: wide, deep and boosted-trees models."""
from __future__ import absolute_import

import tensorflow as tf
from tensorflow.contrib.boosted_trees.estimator_batch import estimator as gbdt
from tensorflow.contrib.boosted_trees.proto import learner_pb2
from tensorflow.contrib.learn.python.learn.estimators import estimator as learn_estimator

from trainer import configs
from trainer import features


def boosted_trees_learner(flags):
  learner_config = learner_pb2.LearnerConfig()
  learner_config.learning_rate_tuning.fixed.learning_rate = flags.learning_rate
  learner_config.constraints.max_tree_depth = flags.depth
  return learner_config


def build_estimator(flags, head):
  """The estimator the --model flag names."""
  run_config = tf.estimator.RunConfig(model_dir=flags.job_dir, save_summary_steps=0)
  if flags.model == "rnn":
    return tf.contrib.estimator.RNNClassifier(
        sequence_feature_columns=features.sequence_columns(),
        num_units=[64, 32],
        config=run_config)
  if flags.model == "deep":
    return tf.contrib.estimator.DNNEstimator(
        head=head,
        hidden_units=[100, 75, 50, 25],
        feature_columns=features.deep_columns())
  if flags.model == "trees":
    return gbdt.CoreGradientBoostedDecisionTreeEstimator(
        learner_config=boosted_trees_learner(flags),
        examples_per_layer=flags.examples_per_layer,
        head=head,
        num_trees=flags.num_trees,
        config=run_config)
  if flags.model == "legacy_trees":
    return gbdt.GradientBoostedDecisionTreeClassifier(
        learner_config=boosted_trees_learner(flags),
        examples_per_layer=flags.examples_per_layer,
        config=configs.learn_run_config(flags.job_dir))
  if flags.model == "legacy_wide":
    return tf.contrib.learn.LinearClassifier(feature_columns=features.wide_columns(),
                                             config=run_config)
  return learn_estimator.Estimator(model_fn=features.model_fn, model_dir=flags.job_dir,
                                   config=configs.learn_run_config(flags.job_dir))
'''
FILES = {"trainer/__init__.py": "", "trainer/configs.py": CONFIGS, "trainer/model.py": MODEL}
FACTS = repository_facts(FILES)


def test_contrib_estimators_on_tf_estimator_run_on_the_npu_and_contrib_learn_ones_are_reported():
    after = MODEL.replace("from __future__ import absolute_import\n",
                          "from __future__ import absolute_import\n" + HEADER).replace(
        "        num_units=[64, 32],\n        config=run_config)",
        "        num_units=[64, 32],\n        config=npu_run_config_init(run_config=run_config))").replace(
        "feature_columns=features.deep_columns())",
        "feature_columns=features.deep_columns(), config=npu_run_config_init())").replace(
        "        num_trees=flags.num_trees,\n        config=run_config)",
        "        num_trees=flags.num_trees,\n        config=npu_run_config_init(run_config=run_config))").replace(
        "                                             config=run_config)",
        "                                             config=npu_run_config_init(run_config=run_config))")
    findings = assert_migrates(RULES, MODEL, after, facts=FACTS, path="trainer/model.py", findings=[
        ("NPU001", 4, 0, "migrated"),
        ("NPU100", 14, 19, "unmigrated"),  # learner_pb2.LearnerConfig()
        ("NPU013", 22, 15, "migrated"),
        ("NPU011", 24, 11, "migrated"),  # tf.contrib.estimator.RNNClassifier(config=run_config)
        ("NPU011", 29, 11, "migrated"),  # tf.contrib.estimator.DNNEstimator(): config added
        ("NPU011", 34, 11, "migrated"),  # gbdt.CoreGradientBoostedDecisionTreeEstimator
        ("NPU011", 41, 11, "unmigrated"),  # gbdt.GradientBoostedDecisionTreeClassifier
        ("NPU011", 46, 11, "migrated"),  # tf.contrib.learn.LinearClassifier(config=<a RunConfig>)
        ("NPU011", 48, 9, "unmigrated")])  # learn_estimator.Estimator(config=<a learn RunConfig>)
    assert messages(findings, "NPU011") == [
        "wrapped config in npu_run_config_init(run_config=...)"
        + DEPRECATED.format("tf.contrib.estimator.RNNClassifier"),
        "added config=npu_run_config_init()" + DEPRECATED.format("tf.contrib.estimator.DNNEstimator"),
        "wrapped config in npu_run_config_init(run_config=...)"
        + DEPRECATED.format("gbdt.CoreGradientBoostedDecisionTreeEstimator"),
        f"{LEARN.format('gbdt.GradientBoostedDecisionTreeClassifier')} {GUIDE}",
        "wrapped config in npu_run_config_init(run_config=...)"
        + DEPRECATED.format("tf.contrib.learn.LinearClassifier"),
        f"{LEARN.format('learn_estimator.Estimator')} {GUIDE}"]
    assert messages(findings, "NPU100")[0].startswith(
        "deprecated in TF 1.15: replace tf.contrib.boosted_trees.proto.learner_pb2.LearnerConfig")


def test_the_contrib_learn_run_config_is_reported_as_deprecated():
    findings = assert_reports(RULES, CONFIGS, facts=FACTS, path="trainer/configs.py",
                              findings=[("NPU100", 7, 9, "unmigrated")])
    assert messages(findings, "NPU100")[0].startswith(
        "deprecated in TF 1.15: replace tf.contrib.learn.RunConfig with its public TF 1.15 equivalent")


def test_without_the_estimator_pack_the_audit_names_every_contrib_estimator_deprecated():
    findings = assert_reports({"NPU100"}, MODEL, facts=FACTS, path="trainer/model.py")
    deprecated = sorted({m.split(" with its public")[0] for m in messages(findings, "NPU100")
                         if m.startswith("deprecated")})
    assert deprecated == [f"deprecated in TF 1.15: replace tf.contrib.{name}" for name in (
        "boosted_trees.estimator_batch.estimator.CoreGradientBoostedDecisionTreeEstimator",
        "boosted_trees.estimator_batch.estimator.GradientBoostedDecisionTreeClassifier",
        "boosted_trees.proto.learner_pb2.LearnerConfig",
        "estimator.DNNEstimator", "estimator.RNNClassifier",
        "learn.Estimator", "learn.LinearClassifier")]
