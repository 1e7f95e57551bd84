"""The estimator pack on ``tensorflow_estimator`` spellings: the package ``tf.estimator`` comes
from, which BERT/XLNet-era and TF-models code imports directly. Its names are the tf.estimator
names (public API and internal modules alike), and a file that imports only it is a file the
estimator rules (and the repository analysis) see."""

from __future__ import annotations

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.testing import assert_migrates, assert_reports

PACK = {"NPU001", "NPU011", "NPU012", "NPU013"}
HEADER = "from npu_bridge.npu_init import *\n"

RUN_CLASSIFIER = '''\
"""BERT finetuning runner (TPUEstimator, imported from tensorflow_estimator)."""
import tensorflow as tf
from tensorflow_estimator.python.estimator.tpu import tpu_config
from tensorflow_estimator.python.estimator.tpu.tpu_estimator import TPUEstimator

flags = tf.flags
FLAGS = flags.FLAGS


def main(_):
    tpu_cluster_resolver = None
    run_config = tpu_config.RunConfig(
        cluster=tpu_cluster_resolver,
        model_dir=FLAGS.output_dir,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        tpu_config=tpu_config.TPUConfig(iterations_per_loop=FLAGS.iterations_per_loop))
    estimator = TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn,
        config=run_config,
        train_batch_size=FLAGS.train_batch_size)
    estimator.train(input_fn=train_input_fn, max_steps=num_train_steps)


if __name__ == "__main__":
    tf.app.run()
'''
RUN_CLASSIFIER_MIGRATED = RUN_CLASSIFIER.replace(
    '"""\nimport tensorflow', f'"""\n{HEADER}import tensorflow').replace(
    "iterations_per_loop=FLAGS.iterations_per_loop))",
    "iterations_per_loop=FLAGS.iterations_per_loop), save_summary_steps=0)").replace(
    "use_tpu=FLAGS.use_tpu", "use_tpu=False").replace(
    "config=run_config,", "config=npu_run_config_init(run_config=run_config),").replace(
    "train_batch_size=FLAGS.train_batch_size)",
    "train_batch_size=FLAGS.train_batch_size, eval_on_tpu=False, export_to_tpu=False)")


def test_a_tpu_estimator_from_the_internal_modules_of_tensorflow_estimator():
    findings = assert_migrates(PACK, RUN_CLASSIFIER, RUN_CLASSIFIER_MIGRATED, findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU013", 12, 17, "migrated"), ("NPU011", 17, 16, "migrated"),
        ("NPU012", 17, 16, "migrated")])
    assert [f.message for f in findings if f.rule_id == "NPU012"] == [
        "set use_tpu=False (was FLAGS.use_tpu) and added eval_on_tpu=False, export_to_tpu=False: "
        "the TPU is switched off on the NPU"]


ESTIMATOR_ONLY = '''\
"""Input and model building of the classifier: tf.estimator through its own package only."""
import tensorflow_estimator as tf_estimator
from tensorflow_estimator.python.estimator import estimator
from tensorflow_estimator.python.estimator.canned import dnn


def build_estimator(model_fn, model_dir, hidden_units=None):
    config = tf_estimator.estimator.RunConfig(model_dir=model_dir, keep_checkpoint_max=3)
    if hidden_units:
        return dnn.DNNClassifier(hidden_units=hidden_units, feature_columns=COLUMNS, config=config)
    return estimator.Estimator(model_fn=model_fn, config=config)
'''
ESTIMATOR_ONLY_MIGRATED = ESTIMATOR_ONLY.replace(
    '"""\nimport tensorflow_estimator', f'"""\n{HEADER}import tensorflow_estimator').replace(
    "keep_checkpoint_max=3)", "keep_checkpoint_max=3, save_summary_steps=0)").replace(
    "config=config)", "config=npu_run_config_init(run_config=config))")


def test_a_file_that_imports_only_tensorflow_estimator_is_migrated():
    assert_migrates(PACK, ESTIMATOR_ONLY, ESTIMATOR_ONLY_MIGRATED, findings=[
        ("NPU013", 8, 13, "migrated"), ("NPU011", 10, 15, "migrated"), ("NPU011", 11, 11, "migrated")])


MODELS = '''\
"""XLNet-style Estimator subclass, defined where only tensorflow_estimator is imported."""
from tensorflow_estimator.python.estimator import estimator as estimator_lib


class XLNetEstimator(estimator_lib.Estimator):
    def __init__(self, model_fn, model_dir=None, config=None, params=None):
        super(XLNetEstimator, self).__init__(model_fn=model_fn, model_dir=model_dir,
                                             config=config, params=params)
'''
TRAIN = '''\
import tensorflow as tf

from xlnet.models import XLNetEstimator


def main(_):
    run_config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_summary_steps=0)
    estimator = XLNetEstimator(model_fn, config=run_config)
    estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)
'''


def test_an_estimator_subclass_in_a_file_importing_only_tensorflow_estimator_is_known():
    loaded_rules = load_rules(RuleSelection())
    facts = loaded_rules.repository_facts([("xlnet/models.py", MODELS.encode()), ("train.py", TRAIN.encode())]).facts
    assert "class:xlnet.models.XLNetEstimator=tensorflow_estimator.python.estimator.estimator.Estimator;" \
           "model_fn,model_dir,config,params" in facts
    after = HEADER + TRAIN.replace("config=run_config)", "config=npu_run_config_init(run_config=run_config))")
    assert_migrates(PACK, TRAIN, after, facts=facts, path="train.py", findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU013", 7, 17, "migrated"), ("NPU011", 8, 16, "migrated")])
    # its own super().__init__(...) is no construction
    assert_reports(PACK, MODELS, facts=facts, path="xlnet/models.py", findings=[])
