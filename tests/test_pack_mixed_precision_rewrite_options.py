"""Issue 25: ``rewrite_options.auto_mixed_precision`` switched on in a session or RunConfig
config is TensorFlow's automatic mixed precision; NPU033 reports it with the NPU's way
(``precision_mode``), as it reports ``enable_mixed_precision_graph_rewrite``.

``config_utils.py`` is a helper module of a BERT-style repository that builds the session
config every script passes to its RunConfig; ``run_squad.py`` sets the option on the names
and ``RewriterConfig(...)`` objects it builds itself.
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import repository_facts
from support.rules import messages

RULES = {"NPU001", "NPU007", "NPU011", "NPU013", "NPU031", "NPU032", "NPU033"}
HEADER = "from npu_bridge.npu_init import *\n"
NPU_WAY = ('on the NPU, mixed precision is precision_mode="allow_mix_precision" (NPU007\'s '
           'precision_mode setting: [tool.npu-codemod.rules.NPU007] precision_mode = '
           '"allow_mix_precision")')
GUIDE = ("(guide: Mixed precision: switching it on (precision_mode), "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu033-auto-mixed-precision)")

CONFIG_UTILS = '''\
"""Session configuration shared by the training and evaluation scripts."""
import os

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2


def get_session_config(flags):
  """The session config of the RunConfig: threads, XLA, automatic mixed precision."""
  config = tf.ConfigProto()
  config.intra_op_parallelism_threads = flags.intra_threads
  config.inter_op_parallelism_threads = flags.inter_threads
  if flags.amp:
    tf.logging.info("Enabling automatic mixed precision (float16 compute)")
    config.graph_options.rewrite_options.auto_mixed_precision = (
        rewriter_config_pb2.RewriterConfig.ON)
  else:
    # Keep the graph in float32 when --amp is not given.
    config.graph_options.rewrite_options.auto_mixed_precision = rewriter_config_pb2.RewriterConfig.OFF
  if os.environ.get("TF_XLA_FLAGS"):
    tf.logging.info("XLA flags: %s", os.environ["TF_XLA_FLAGS"])
  return config


def log_config(config):
  tf.logging.info("intra-op threads: %d", config.intra_op_parallelism_threads)
  tf.logging.info("inter-op threads: %d", config.inter_op_parallelism_threads)
'''
RUN_SQUAD = '''\
"""Run BERT on SQuAD 1.1 and SQuAD 2.0."""
from __future__ import absolute_import

import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

import config_utils

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_bool("amp", False, "Whether to use automatic mixed precision.")
flags.DEFINE_integer("amp_level", 1, "RewriterConfig toggle of the mixed precision rewrite.")


def eval_session_config():
  """Evaluation runs with the rewrite options of the training job, and its own level."""
  options = RewriterConfig(auto_mixed_precision=FLAGS.amp_level, constant_folding=RewriterConfig.ON)
  return tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=options))


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  session_config = config_utils.get_session_config(FLAGS)
  rewrite_options = session_config.graph_options.rewrite_options
  if FLAGS.amp:
    rewrite_options.auto_mixed_precision = 1
  config_utils.log_config(session_config)
  run_config = tf.estimator.RunConfig(model_dir=FLAGS.output_dir, session_config=session_config)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config)
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.num_train_steps)
  eval_config = tf.estimator.RunConfig(model_dir=FLAGS.output_dir, session_config=eval_session_config())
  evaluator = tf.estimator.Estimator(model_fn=model_fn, config=eval_config)
  return evaluator.evaluate(input_fn=eval_input_fn)


if __name__ == "__main__":
  tf.app.run()
'''
FILES = {"config_utils.py": CONFIG_UTILS, "run_squad.py": RUN_SQUAD}
FACTS = repository_facts(FILES)


def test_the_option_switched_on_in_a_helper_is_reported_and_off_left_alone():
    findings = assert_reports(RULES, CONFIG_UTILS, facts=FACTS, path="config_utils.py",
                              findings=[("NPU033", 15, 4, "unmigrated")])
    assert messages(findings, "NPU033") == [
        "rewrite_options.auto_mixed_precision = rewriter_config_pb2.RewriterConfig.ON is "
        f"TensorFlow's automatic mixed precision, which has no NPU equivalent: {NPU_WAY}; remove "
        f"the setting {GUIDE}"]


def test_a_name_bound_to_the_options_and_a_rewriter_config_keyword_are_reported():
    after = RUN_SQUAD.replace("from __future__ import absolute_import\n",
                              "from __future__ import absolute_import\n" + HEADER).replace(
        "session_config=session_config)", "session_config=session_config, save_summary_steps=0)").replace(
        "config=run_config)", "config=npu_run_config_init(run_config=run_config))").replace(
        "session_config=eval_session_config())", "session_config=eval_session_config(), save_summary_steps=0)").replace(
        "config=eval_config)", "config=npu_run_config_init(run_config=eval_config))")
    findings = assert_migrates(RULES, RUN_SQUAD, after, facts=FACTS, path="run_squad.py", findings=[
        ("NPU001", 4, 0, "migrated"),
        ("NPU033", 17, 27, "unmigrated"),  # RewriterConfig(auto_mixed_precision=FLAGS.amp_level)
        ("NPU033", 26, 4, "unmigrated"),  # rewrite_options.auto_mixed_precision = 1
        ("NPU013", 28, 15, "migrated"), ("NPU011", 29, 14, "migrated"),
        ("NPU013", 31, 16, "migrated"), ("NPU011", 32, 14, "migrated")])
    assert messages(findings, "NPU033") == [
        f"rewrite_options.auto_mixed_precision = {value} is TensorFlow's automatic mixed "
        f"precision, which has no NPU equivalent: {NPU_WAY}; remove the setting {GUIDE}"
        for value in ("FLAGS.amp_level", "1")]


def test_other_objects_with_such_an_attribute_are_no_session_config():
    source = '''\
import tensorflow as tf


class TrainerOptions(object):

  def __init__(self, amp):
    self.auto_mixed_precision = amp
    self.policy = dict(auto_mixed_precision=amp)
'''
    assert_reports(RULES, source, path="options.py", findings=[])
