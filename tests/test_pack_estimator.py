"""The estimator pack on scripts as BERT-like repositories write them, end to end.

``run_classifier.py`` is BERT's fine-tuning runner cut to what the pack touches:
``tf.contrib.tpu.TPUEstimator`` with a ``tf.contrib.tpu.RunConfig``/``TPUConfig``, a ``model_fn``
returning ``TPUEstimatorSpec`` with a ``scaffold_fn``, a ``TPUClusterResolver``; its
``optimization.py`` wraps the optimizer in ``CrossShardOptimizer``. The repository test runs the
real command line with ``--rules estimator`` on a repository whose Estimator subclass lives in
another file than the script that builds it.
"""

from __future__ import annotations

import csv
from pathlib import Path

from npu_codemod.testing import assert_migrates, assert_reports, sites

from support.cli import cli
from support.git import make_repo, show
from support.tpu_towers import OPTIMIZATION

PACK = {"NPU001", "NPU011", "NPU012", "NPU013"}
BRANCH = "npu-codemod/sess-run-to-npu"

RUN_CLASSIFIER = '''\
"""BERT finetuning runner."""
import tensorflow as tf

import modeling
import optimization

flags = tf.flags
FLAGS = flags.FLAGS


def model_fn_builder(bert_config, init_checkpoint, use_tpu):
  def model_fn(features, labels, mode, params):
    total_loss = modeling.loss(features)
    scaffold_fn = None
    if init_checkpoint and use_tpu:
      def tpu_scaffold():
        tf.train.init_from_checkpoint(init_checkpoint, {})
        return tf.train.Scaffold()
      scaffold_fn = tpu_scaffold
    if mode == tf.estimator.ModeKeys.TRAIN:
      train_op = optimization.create_optimizer(total_loss, 1e-5, 100, 10, use_tpu)
      output_spec = tf.contrib.tpu.TPUEstimatorSpec(
          mode=mode,
          loss=total_loss,
          train_op=train_op,
          scaffold_fn=scaffold_fn)
    return output_spec
  return model_fn


def main(_):
  tpu_cluster_resolver = None
  if FLAGS.use_tpu and FLAGS.tpu_name:
    tpu_cluster_resolver = tf.contrib.cluster_resolver.TPUClusterResolver(
        FLAGS.tpu_name, zone=FLAGS.tpu_zone, project=FLAGS.gcp_project)

  is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
  run_config = tf.contrib.tpu.RunConfig(
      cluster=tpu_cluster_resolver,
      master=FLAGS.master,
      model_dir=FLAGS.output_dir,
      save_checkpoints_steps=FLAGS.save_checkpoints_steps,
      tpu_config=tf.contrib.tpu.TPUConfig(
          iterations_per_loop=FLAGS.iterations_per_loop,
          num_shards=FLAGS.num_tpu_cores,
          per_host_input_for_training=is_per_host))

  model_fn = model_fn_builder(None, FLAGS.init_checkpoint, FLAGS.use_tpu)

  # If TPU is not available, this will fall back to normal Estimator on CPU
  # or GPU.
  estimator = tf.contrib.tpu.TPUEstimator(
      use_tpu=FLAGS.use_tpu,
      model_fn=model_fn,
      config=run_config,
      train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size,
      predict_batch_size=FLAGS.predict_batch_size)
  estimator.train(input_fn=None, max_steps=100)


if __name__ == "__main__":
  tf.app.run()
'''


def test_bert_run_classifier_runs_on_the_npu_with_the_tpu_off():
    after = RUN_CLASSIFIER.replace(
        '"""BERT finetuning runner."""\n', '"""BERT finetuning runner."""\nfrom npu_bridge.npu_init import *\n').replace(
        "per_host_input_for_training=is_per_host))",
        "per_host_input_for_training=is_per_host), save_summary_steps=0)").replace(
        "      use_tpu=FLAGS.use_tpu,", "      use_tpu=False,").replace(
        "      config=run_config,", "      config=npu_run_config_init(run_config=run_config),").replace(
        "predict_batch_size=FLAGS.predict_batch_size)",
        "predict_batch_size=FLAGS.predict_batch_size, eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(PACK, RUN_CLASSIFIER, after, path="run_classifier.py", findings=[
        ("NPU001", 2, 0, "migrated"),
        ("NPU012", 22, 20, "unmigrated"),  # TPUEstimatorSpec(..., scaffold_fn=scaffold_fn)
        ("NPU012", 34, 27, "unmigrated"),  # TPUClusterResolver
        ("NPU013", 38, 15, "migrated"),  # tf.contrib.tpu.RunConfig
        ("NPU011", 52, 14, "migrated"), ("NPU012", 52, 14, "migrated")])  # TPUEstimator
    assert [f.message for f in findings if f.line == 52] == [
        "wrapped config in npu_run_config_init(run_config=...)",
        "set use_tpu=False (was FLAGS.use_tpu) and added eval_on_tpu=False, export_to_tpu=False: "
        "the TPU is switched off on the NPU"]


def test_bert_optimization_is_left_with_its_cross_shard_optimizer_reported():
    assert sites(assert_reports(PACK, OPTIMIZATION, path="optimization.py")) == [
        ("NPU012", 9, 16, "unmigrated")]


ESTIMATORS = '''\
"""The project's Estimators."""
import tensorflow as tf


class ClassifierEstimator(tf.estimator.Estimator):
    def __init__(self, num_labels, model_dir=None, config=None):
        super(ClassifierEstimator, self).__init__(
            model_fn=make_model_fn(num_labels), model_dir=model_dir, config=config)
'''
TRAIN = '''\
import tensorflow as tf

from estimators import ClassifierEstimator


def main(_):
    run_config = tf.estimator.RunConfig(model_dir=FLAGS.output_dir)
    estimator = ClassifierEstimator(FLAGS.num_labels, config=run_config)
    estimator.train(input_fn=train_input_fn, max_steps=FLAGS.num_train_steps)
'''
TRAIN_MIGRATED = '''\
from npu_bridge.npu_init import *
import tensorflow as tf

from estimators import ClassifierEstimator


def main(_):
    run_config = tf.estimator.RunConfig(model_dir=FLAGS.output_dir, save_summary_steps=0)
    estimator = ClassifierEstimator(FLAGS.num_labels, config=npu_run_config_init(run_config=run_config))
    estimator.train(input_fn=train_input_fn, max_steps=FLAGS.num_train_steps)
'''


def test_run_with_the_estimator_pack_wraps_a_subclass_of_another_file(tmp_path: Path):
    repo = make_repo(tmp_path / "classifier", {
        "estimators.py": ESTIMATORS, "train.py": TRAIN,
        "download.py": "import requests\n\nsession = requests.Session()\n"})
    (tmp_path / "repos.txt").write_text("classifier\n")
    result = cli("run", "--repos", "repos.txt", "--rules", "estimator", "--report-dir", "rep",
                 "--no-progress", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert show(repo, BRANCH, "train.py").decode() == TRAIN_MIGRATED
    assert show(repo, BRANCH, "estimators.py").decode() == ESTIMATORS  # never inside its __init__
    with (tmp_path / "rep" / "findings.csv").open(encoding="utf-8", newline="") as stream:
        rows = [(row["path"], row["line"], row["rule_id"], row["status"]) for row in csv.DictReader(stream)]
    assert sorted(rows) == [("train.py", "7", "NPU013", "migrated"),  # no NPU001: the import is no site
                            ("train.py", "8", "NPU011", "migrated")]


def test_the_demo_shows_the_estimator_pack(tmp_path: Path):
    result = cli("demo", "--report-dir", "rep", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "rep" / "findings.csv").open(encoding="utf-8", newline="") as stream:
        rows = {(row["path"], row["line"], row["rule_id"], row["status"])
                for row in csv.DictReader(stream) if row["repo"] == "bert-classifier"}
    assert rows == {
        ("run_classifier.py", "19", "NPU013", "migrated"),
        ("run_classifier.py", "23", "NPU011", "migrated"), ("run_classifier.py", "23", "NPU012", "migrated"),
        ("run_classifier.py", "30", "NPU011", "migrated"), ("run_classifier.py", "30", "NPU013", "migrated"),
        ("optimization.py", "6", "NPU031", "migrated"),
        ("optimization.py", "8", "NPU012", "unmigrated")}
