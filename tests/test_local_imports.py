"""Files that import TensorFlow only inside functions get their NPU imports there.

TensorFlowOnSpark's examples (``examples/mnist/estimator/mnist_spark.py``) and library
(``tensorflowonspark/pipeline.py``) import TensorFlow inside the function the Spark executors
run; the module's top runs in the Spark driver, which may have no ``npu_bridge`` (and
``pipeline.py`` also has a TF 2.x path that ``npu_bridge`` breaks). ``codemods/local_imports``
puts the imports the rewrites need right after the function's own TensorFlow import, with the
names it uses, when that is exact; otherwise the import stays at the module's top and NPU001
says what to move where.
"""

from __future__ import annotations

from collections import Counter

from npu_codemod.testing import assert_migrates as assert_migrates_at

from support.rules import assert_migrates, messages, run_rules, sites

RULES = {"NPU001", "NPU002", "NPU007", "NPU011", "NPU026", "NPU027"}

HEAD = '''"""Train MNIST with an Estimator on a Spark cluster (TensorFlowOnSpark)."""

from __future__ import absolute_import, division, print_function


def main_fun(args, ctx):
  import numpy as np
  import tensorflow as tf
'''
BODY = '''  from tensorflowonspark import TFNode

  strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
  tf_feed = TFNode.DataFeed(ctx.mgr, False)

  def model_fn(features, labels, mode):
    logits = tf.layers.dense(features, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.train.GradientDescentOptimizer(0.01)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss))

  def input_fn(mode, input_context=None):
    ds = tf.data.Dataset.from_generator(lambda: tf_feed.next_batch(64), (tf.float32, tf.float32))
    return ds.repeat().batch(64)

  config = tf.estimator.RunConfig(train_distribute=strategy, save_checkpoints_steps=100)
  classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir, config=config)
  tf.estimator.train_and_evaluate(
      classifier,
      train_spec=tf.estimator.TrainSpec(input_fn=input_fn, max_steps=args.steps),
      eval_spec=tf.estimator.EvalSpec(input_fn=input_fn))
'''
#: What the rules make of ``BODY``: the names they write come from ``npu_bridge.npu_init``.
MIGRATED = BODY.replace(
    "tf.distribute.experimental.MultiWorkerMirroredStrategy()", "npu_strategy.NPUStrategy()").replace(
    "ds.repeat().batch(64)", "ds.repeat().batch(64, drop_remainder=True)").replace(
    "config=config)", "config=npu_run_config_init(run_config=config))").replace(
    "max_steps=args.steps)", "max_steps=args.steps, hooks=npu_hooks_append())").replace(
    "EvalSpec(input_fn=input_fn)", "EvalSpec(input_fn=input_fn, hooks=npu_hooks_append())")
DRIVER = '''

if __name__ == "__main__":
  import argparse
  from pyspark.context import SparkContext
  from pyspark.conf import SparkConf
  from tensorflowonspark import TFCluster

  sc = SparkContext(conf=SparkConf().setAppName("mnist_estimator"))
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", default="mnist_model")
  parser.add_argument("--steps", type=int, default=1000)
  args = parser.parse_args()
  cluster = TFCluster.run(sc, main_fun, args, 2, 0, input_mode=TFCluster.InputMode.SPARK)
  cluster.shutdown()
'''
LOCAL = "  from npu_bridge.npu_init import npu_hooks_append, npu_run_config_init, npu_strategy\n"
STAR = "from npu_bridge.npu_init import *\n"


def npu001(findings: list) -> list:
    return [site for site in sites(findings) if site[0] == "NPU001"]


def test_spark_main_fun_imports_what_it_uses_after_its_tensorflow_import() -> None:
    findings = assert_migrates(HEAD + BODY + DRIVER, HEAD + LOCAL + MIGRATED + DRIVER, RULES)
    assert npu001(findings) == [("NPU001", 8, 2, "migrated")]
    assert messages(findings, "NPU001") == [
        "added 'from npu_bridge.npu_init import npu_hooks_append, npu_run_config_init, npu_strategy' "
        "in main_fun() after its TensorFlow import (TensorFlow is imported only inside functions "
        "here: the module's top also runs in processes that do not train, such as a Spark driver)"]


def test_crlf_file_gets_a_crlf_import_in_the_function() -> None:
    def crlf(text: str) -> str:
        return text.replace("\n", "\r\n")
    assert_migrates(crlf(HEAD + BODY + DRIVER), crlf(HEAD + LOCAL + MIGRATED + DRIVER), RULES)


def test_a_module_level_tensorflow_import_keeps_the_star_import_at_the_top() -> None:
    head = HEAD.replace("from __future__ import absolute_import, division, print_function\n",
                        "from __future__ import absolute_import, division, print_function\n\n"
                        "import tensorflow as tf\n")
    after = head.replace("print_function\n", "print_function\n" + STAR, 1)
    findings = assert_migrates(head + BODY + DRIVER, after + MIGRATED + DRIVER, RULES)
    assert npu001(findings) == [("NPU001", 5, 0, "migrated")]


def test_a_module_level_tensorflow_import_under_try_is_module_level() -> None:
    guarded = "try:\n  import tensorflow as tf\nexcept ImportError:\n  tf = None\n"
    head = HEAD.replace("\n\ndef main_fun", "\n" + guarded + "\n\ndef main_fun")
    after = head.replace("print_function\n", "print_function\n" + STAR, 1)
    assert_migrates(head + BODY + DRIVER, after + MIGRATED + DRIVER, RULES)


SESSION_LIBRARY = '''"""Inference helpers shared by the Spark pipeline (TF 1.x and TF 2.x paths)."""

import logging

from .util import single_node_env, find_in_path

__all__ = ["single_node_env", "find_in_path", "run_model"]

logger = logging.getLogger(__name__)


def run_model(iterator, args):
  """Run a saved graph over one partition: TF 1.x only."""
  from tensorflow.python.saved_model import loader
  single_node_env(args)
  import tensorflow as tf
  tf.reset_default_graph()
  sess = tf.Session(graph=tf.get_default_graph())
  loader.load(sess, args.tag_set.split(","), args.export_dir)
  return [sess.run(args.output_tensors, feed_dict={args.input: row}) for row in iterator]


def run_model_tf2(iterator, args):
  import tensorflow as tf
  model = tf.saved_model.load(args.export_dir)
  return [model(row) for row in iterator]
'''
SESSION_CONFIG = '''  config = tf.ConfigProto()
  custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  sess = tf.Session(graph=tf.get_default_graph(), config=config)
'''


def test_package_init_that_reexports_stays_importable_without_npu_bridge() -> None:
    """A package's ``__init__``: importing the package (for its re-exports) must not need
    ``npu_bridge``; the TF 2.x function is not touched. No name of ``npu_init`` is used, so
    the function imports the adapter itself (it registers the NpuOptimizer)."""
    after = SESSION_LIBRARY.replace(
        "  from tensorflow.python.saved_model import loader\n",
        "  from tensorflow.python.saved_model import loader\n  import npu_bridge.npu_init\n"
        "  from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n").replace(
        "  sess = tf.Session(graph=tf.get_default_graph())\n", SESSION_CONFIG)
    findings = assert_migrates_at(RULES, SESSION_LIBRARY, after, path="tensorflowonspark/__init__.py")
    assert [site for site in sites(findings) if site[0] == "NPU001"] == [("NPU001", 14, 2, "migrated")]


def test_lazy_global_import_leaves_the_import_at_the_top_and_says_what_to_move() -> None:
    """``global tf`` in one function, the session in another: no function holds both the
    TensorFlow import and the rewritten code, so the imports stay at the module's top."""
    doc = '"""Ray actor that trains lazily."""\n'
    code = ("\n\ndef _load():\n  global tf\n  import tensorflow as tf\n\n\ndef make_session():\n"
            "  _load()\n")
    after = (doc + STAR + "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n" + code
             + "  config = tf.ConfigProto()\n" + SESSION_CONFIG.split("\n", 1)[1].replace(
                 "graph=tf.get_default_graph(), ", "").replace("  sess = ", "  return "))
    findings = assert_migrates(doc + code + "  return tf.Session()\n", after, RULES)
    assert npu001(findings) == [("NPU001", 4, 0, "migrated"), ("NPU001", 4, 0, "unmigrated")]
    assert [f.message for f in findings if f.status == "unmigrated"][0].startswith(
        "TensorFlow is imported only inside functions here, but make_session() holds rewritten "
        "code but no plain TensorFlow import: 'from npu_bridge.npu_init import *' at the module's top")


def test_tensorflow_import_under_try_in_the_function_is_not_guessed() -> None:
    before = HEAD.replace("  import tensorflow as tf\n",
                          "  try:\n    import tensorflow as tf\n  except ImportError:\n"
                          "    tf = None\n") + BODY + DRIVER
    after = before.replace(BODY, MIGRATED).replace(
        "from __future__ import absolute_import, division, print_function\n",
        "from __future__ import absolute_import, division, print_function\n" + STAR)
    findings = assert_migrates(before, after, RULES)
    assert [status for _, _, _, status in npu001(findings)] == ["migrated", "unmigrated"]
    assert "main_fun() holds rewritten code but no plain TensorFlow import" in " ".join(
        messages(findings, "NPU001"))


RAY_ACTOR = '''"""A Ray actor that trains with mixed precision; TensorFlow stays optional for the driver."""

import ray


@ray.remote
class Trainer:
    def __init__(self, lr):
        self.lr = lr

    def build(self):
        import tensorflow as tf
        optimizer = tf.keras.optimizers.Adam(self.lr)
        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
        return self.optimizer
'''


def test_tf2_npu_device_import_goes_into_the_method_that_imports_tensorflow() -> None:
    """The tf2 pack's ``import npu_device as npu`` for a site in a method (``device_name_at``
    binds it only in module-level functions): the engine puts it into the method, after its
    TensorFlow import, not at the top of a module the Ray driver imports."""
    after = RAY_ACTOR.replace("        import tensorflow as tf\n",
                              "        import tensorflow as tf\n        import npu_device as npu\n").replace(
        "tf.keras.mixed_precision.LossScaleOptimizer", "npu.train.optimizer.NpuLossScaleOptimizer")
    assert_migrates(RAY_ACTOR, after, {"NPU061", "NPU065"}, facts={"tf-runtime:2"})


def test_a_second_run_changes_nothing_and_counts_the_same() -> None:
    once, first = run_rules(HEAD + BODY + DRIVER, RULES)
    assert once is not None
    again, second = run_rules(once, RULES)
    assert again is None
    assert Counter((f.rule_id, f.status) for f in first) == Counter((f.rule_id, f.status) for f in second)
    assert messages(second, "NPU001") == ["npu_bridge.npu_init is imported in main_fun()"]


def test_names_an_earlier_import_in_the_function_binds_are_not_imported_again() -> None:
    """Someone already imported one name by hand: only the others are added."""
    own = "  from npu_bridge.npu_init import npu_strategy\n"
    before = HEAD + own + BODY.replace("tf.distribute.experimental.MultiWorkerMirroredStrategy()",
                                       "npu_strategy.NPUStrategy()")
    after = HEAD + "  from npu_bridge.npu_init import npu_hooks_append, npu_run_config_init\n" + own + MIGRATED
    findings = assert_migrates(before + DRIVER, after + DRIVER, RULES)
    assert messages(findings, "NPU001")[0].startswith(
        "added 'from npu_bridge.npu_init import npu_hooks_append, npu_run_config_init' in main_fun()")


def test_a_name_used_in_a_default_argument_is_not_a_use_inside_the_function() -> None:
    """A default is evaluated where the ``def`` runs (the module's top): a name imported in the
    function would not exist there, so the import stays at the top and NPU001 says so."""
    head = HEAD.replace("def main_fun(args, ctx):", "def main_fun(args, ctx, make_hooks=npu_hooks_append):")
    after = head.replace("print_function\n", "print_function\n" + STAR, 1)
    findings = assert_migrates(head + BODY + DRIVER, after + MIGRATED + DRIVER, RULES)
    assert "npu_hooks_append is used outside functions" in " ".join(messages(findings, "NPU001"))
