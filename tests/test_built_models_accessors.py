"""Built-model detection (``BuiltModels``, for the ``train`` hooks of NPU027) knows the
Estimators a library builds through a module accessor function (``contrib.tpu().TPUEstimator``,
a name bound to ``contrib.tpu()``) and the contrib estimators built on ``tf.estimator``
(``tf.contrib.estimator.*``, the ``Core*`` boosted trees); ``tf.contrib.learn``'s, which
``fit`` with monitors, stay unknown.
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates

from support.packs import HOROVOD_REPO, INIT, repository_facts

RULES = {"NPU027"}
CONTRIB = '''\
"""tf.contrib, reached through functions so that the library imports without it."""
from __future__ import absolute_import

import tensorflow.compat.v1 as tf


def tpu():
  from tensorflow.contrib import tpu as contrib_tpu  # pylint: disable=g-import-not-at-top
  return contrib_tpu


def estimator():
  return tf.contrib.estimator
'''
TRAINER = '''\
"""Trains the library's models with Estimators, on every worker of the job."""
from __future__ import absolute_import

import tensorflow.compat.v1 as tf

from lib.utils import contrib
from lib import models


def train_tpu(flags, run_config):
  estimator = contrib.tpu().TPUEstimator(
      model_fn=models.model_fn, config=run_config, use_tpu=False,
      train_batch_size=flags.batch_size)
  estimator.train(input_fn=models.input_fn, max_steps=flags.train_steps)


def train_wide(flags, feature_columns):
  estimator_lib = contrib.estimator()
  head = estimator_lib.multi_label_head(n_classes=flags.classes)
  wide = estimator_lib.DNNEstimator(head=head, feature_columns=feature_columns,
                                    hidden_units=[256, 64])
  wide.train(input_fn=models.input_fn, steps=flags.train_steps)


def train_trees(flags, feature_columns):
  trees = tf.contrib.boosted_trees.estimator_batch.estimator.CoreGradientBoostedDecisionTreeEstimator(
      head=models.regression_head(), learner_config=models.learner_config(flags),
      num_trees=flags.trees, examples_per_layer=flags.batch_size, feature_columns=feature_columns)
  trees.train(input_fn=models.input_fn, steps=flags.train_steps)
'''
FACTS = repository_facts({"lib/__init__.py": "", "lib/utils/__init__.py": "",
                          "lib/utils/contrib.py": CONTRIB, "lib/trainer.py": TRAINER}) | HOROVOD_REPO


def test_estimators_built_through_accessors_and_contrib_estimators_get_the_npu_hooks() -> None:
    after = TRAINER.replace("from __future__ import absolute_import\n",
                            "from __future__ import absolute_import\n" + INIT).replace(
        "max_steps=flags.train_steps)", "max_steps=flags.train_steps, hooks=npu_hooks_append())").replace(
        "steps=flags.train_steps)\n", "steps=flags.train_steps, hooks=npu_hooks_append())\n")
    assert_migrates(RULES, TRAINER, after, facts=FACTS, path="lib/trainer.py", findings=[
        ("NPU027", 14, 2, "migrated"), ("NPU027", 22, 2, "migrated"), ("NPU027", 29, 2, "migrated")])
