"""Issue 25 items 1, 2 and 7: a repository that vendors TensorFlow's TPUEstimator.

``bert/tpu_estimator.py`` is a fork of TensorFlow's (``class TPUEstimator(estimator_lib.Estimator)``,
an infeed hook that opens a session with the RunConfig's session config, an export helper that
rebuilds a RunConfig and a ``TPUEstimator(..., use_tpu=True)``); ``bert/run_pretraining.py``
builds it with ``use_tpu=FLAGS.use_tpu``. The fork is a TPUEstimator (NPU012 switches the TPU
off where it is built, as for ``tf.contrib.tpu.TPUEstimator``), and the sessions it opens
itself take the RunConfig's config, which ``npu_run_config_init`` configures: NPU007 adds
nothing there.
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import repository_facts
from support.rules import messages

RULES = {"NPU001", "NPU007", "NPU008", "NPU010", "NPU011", "NPU012", "NPU013"}
HEADER = "from npu_bridge.npu_init import *\n"
FUTURE = "from __future__ import print_function\n"
INIT = '''\
"""BERT: pre-training of deep bidirectional transformers."""
'''
MODELING = '''\
"""The main BERT model and related functions."""
import json

import tensorflow as tf


class BertConfig(object):
  """Configuration for `BertModel`."""

  def __init__(self, vocab_size, hidden_size=768):
    self.vocab_size = vocab_size
    self.hidden_size = hidden_size

  @classmethod
  def from_json_file(cls, json_file):
    with tf.gfile.GFile(json_file, "r") as reader:
      return cls(**json.loads(reader.read()))


def pretraining_loss(bert_config, features):
  embeddings = tf.get_variable("embeddings", [bert_config.vocab_size, bert_config.hidden_size])
  return tf.reduce_mean(tf.nn.embedding_lookup(embeddings, features["input_ids"]))
'''
TPU_ESTIMATOR = '''\
# coding=utf-8
# A copy of TensorFlow's TPUEstimator, kept in this repository so that the
# pre-training scripts run on the TensorFlow releases the project supports.
"""TPUEstimator class, vendored."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import collections
import threading
import time

import six

from tensorflow.contrib.tpu.python.ops import tpu_ops
from tensorflow.contrib.tpu.python.tpu import tpu
from tensorflow.contrib.tpu.python.tpu import tpu_config
from tensorflow.python.client import session as tf_session
from tensorflow.python.estimator import estimator as estimator_lib
from tensorflow.python.estimator import model_fn as model_fn_lib
from tensorflow.python.framework import ops
from tensorflow.python.platform import tf_logging as logging
from tensorflow.python.training import session_run_hook
from tensorflow.python.training import training

_TPU_ESTIMATOR = 'tpu_estimator'
_ITERATIONS_PER_LOOP_VAR = 'iterations_per_loop'


class TPUEstimatorSpec(
    collections.namedtuple('TPUEstimatorSpec', [
        'mode', 'predictions', 'loss', 'train_op', 'eval_metrics',
        'export_outputs', 'scaffold_fn', 'host_call'
    ])):
  """Ops and objects returned from a `model_fn` and passed to `TPUEstimator`."""

  def __new__(cls, mode, predictions=None, loss=None, train_op=None,
              eval_metrics=None, export_outputs=None, scaffold_fn=None,
              host_call=None):
    return super(TPUEstimatorSpec, cls).__new__(
        cls, mode=mode, predictions=predictions, loss=loss,
        train_op=train_op, eval_metrics=eval_metrics,
        export_outputs=export_outputs, scaffold_fn=scaffold_fn,
        host_call=host_call)

  def as_estimator_spec(self):
    """Creates an equivalent `EstimatorSpec` used by CPU train/eval."""
    scaffold = self.scaffold_fn() if self.scaffold_fn else None
    return model_fn_lib.EstimatorSpec(
        mode=self.mode, predictions=self.predictions, loss=self.loss,
        train_op=self.train_op, export_outputs=self.export_outputs,
        scaffold=scaffold)


class TPUInfeedOutfeedSessionHook(session_run_hook.SessionRunHook):
  """Initializes the TPU system and runs the infeed and outfeed threads."""

  def __init__(self, ctx, enqueue_ops, dequeue_ops, master=None,
               session_config=None):
    self._master_job = ctx.master_job
    self._enqueue_ops = enqueue_ops
    self._dequeue_ops = dequeue_ops
    self._master = master
    self._session_config = session_config
    self._feed_error = None
    self._finished = False

  def begin(self):
    logging.info('TPU job name %s', self._master_job)
    self._init_ops = [tpu.initialize_system(job=self._master_job)]
    self._finalize_ops = [tpu.shutdown_system(job=self._master_job)]

  def after_create_session(self, session, coord):
    logging.info('Init TPU system')
    start = time.time()
    with ops.Graph().as_default():
      with tf_session.Session(
          self._master, config=self._session_config) as sess:
        sess.run(self._init_ops, options=None)
    logging.info('Initialized TPU in %d seconds', time.time() - start)

    self._infeed_thread = threading.Thread(
        target=self._run_infeed, args=(session,))
    self._infeed_thread.daemon = True
    self._infeed_thread.start()

  def _run_infeed(self, session):
    logging.info('Starting infeed thread controller.')
    for _ in six.moves.range(1):
      session.run(self._enqueue_ops)

  def end(self, session):
    self._finished = True
    logging.info('Shutdown TPU system.')
    session.run(self._finalize_ops)


class TPUEstimator(estimator_lib.Estimator):
  """Estimator with TPU support.

  Runs on CPU or GPU when `use_tpu` is False.
  """

  def __init__(self,
               model_fn=None,
               model_dir=None,
               config=None,
               params=None,
               use_tpu=True,
               train_batch_size=None,
               eval_batch_size=None,
               predict_batch_size=None,
               batch_axis=None,
               eval_on_tpu=True,
               export_to_tpu=True,
               warm_start_from=None):
    if config is None or not isinstance(config, tpu_config.RunConfig):
      raise ValueError(
          '`config` must be provided with type `tpu_config.RunConfig`')
    if params is not None and 'batch_size' in params:
      raise ValueError('`params` must not have the reserved key batch_size')
    super(TPUEstimator, self).__init__(
        model_fn=model_fn,
        model_dir=model_dir,
        config=config,
        params=params,
        warm_start_from=warm_start_from)
    self._use_tpu = use_tpu
    self._eval_on_tpu = eval_on_tpu
    self._export_to_tpu = export_to_tpu
    self._train_batch_size = train_batch_size
    self._eval_batch_size = eval_batch_size
    self._predict_batch_size = predict_batch_size

  def _create_infeed_hook(self, ctx, enqueue_ops, dequeue_ops):
    return TPUInfeedOutfeedSessionHook(
        ctx, enqueue_ops, dequeue_ops,
        master=self._config.master,
        session_config=self._session_config)

  def _evaluate_on_host(self, checkpoint_path):
    with training.MonitoredSession(
        session_creator=training.ChiefSessionCreator(
            checkpoint_filename_with_path=checkpoint_path,
            config=self._config.session_config)) as session:
      return session.run(self._eval_ops)


def export_estimator_savedmodel(estimator,
                                export_dir_base,
                                serving_input_receiver_fn,
                                assets_extra=None,
                                as_text=False,
                                checkpoint_path=None):
  """Export `Estimator` trained model for TPU inference."""
  # `TPUEstimator` requires `tpu_config.RunConfig`, so we cannot use
  # `estimator.config`.
  config = tpu_config.RunConfig(model_dir=estimator.model_dir)
  est = TPUEstimator(
      estimator._model_fn,  # pylint: disable=protected-access
      config=config,
      params=estimator.params,
      use_tpu=True,
      train_batch_size=2048,  # Does not matter.
      eval_batch_size=2048,  # Does not matter.
  )
  return est.export_savedmodel(export_dir_base, serving_input_receiver_fn,
                               assets_extra, as_text, checkpoint_path)
'''
RUN_PRETRAINING = '''\
# coding=utf-8
"""Run masked LM/next sentence masked_lm pre-training."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os

import tensorflow as tf

from bert import modeling
from bert import optimization
from bert import tpu_estimator

flags = tf.flags
FLAGS = flags.FLAGS

flags.DEFINE_string("output_dir", None, "The output directory.")
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")


def model_fn_builder(bert_config, learning_rate, use_tpu):
  """Returns `model_fn` closure for TPUEstimator."""

  def model_fn(features, labels, mode, params):  # pylint: disable=unused-argument
    total_loss = modeling.pretraining_loss(bert_config, features)
    train_op = optimization.create_optimizer(total_loss, learning_rate, use_tpu)
    return tpu_estimator.TPUEstimatorSpec(mode=mode, loss=total_loss, train_op=train_op)

  return model_fn


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  bert_config = modeling.BertConfig.from_json_file(FLAGS.bert_config_file)
  tf.gfile.MakeDirs(FLAGS.output_dir)

  is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
  run_config = tf.contrib.tpu.RunConfig(
      master=FLAGS.master,
      model_dir=FLAGS.output_dir,
      save_checkpoints_steps=FLAGS.save_checkpoints_steps,
      tpu_config=tf.contrib.tpu.TPUConfig(
          iterations_per_loop=FLAGS.iterations_per_loop,
          per_host_input_for_training=is_per_host))

  model_fn = model_fn_builder(bert_config, FLAGS.learning_rate, FLAGS.use_tpu)
  estimator = tpu_estimator.TPUEstimator(
      use_tpu=FLAGS.use_tpu,
      model_fn=model_fn,
      config=run_config,
      train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size,
      eval_on_tpu=FLAGS.use_tpu)
  estimator.train(input_fn=modeling.input_fn_builder(FLAGS.input_file), max_steps=FLAGS.num_train_steps)
  tpu_estimator.export_estimator_savedmodel(estimator, os.path.join(FLAGS.output_dir, "export"),
                                            modeling.serving_input_fn)


if __name__ == "__main__":
  flags.mark_flag_as_required("output_dir")
  tf.app.run()
'''
FILES = {"bert/__init__.py": INIT, "bert/modeling.py": MODELING,
         "bert/tpu_estimator.py": TPU_ESTIMATOR, "bert/run_pretraining.py": RUN_PRETRAINING}
FACTS = repository_facts(FILES)


def switched_off(use_tpu: str) -> str:
    """NPU012's message for a construction given ``use_tpu=<use_tpu>`` and neither
    ``eval_on_tpu`` nor ``export_to_tpu``."""
    return (f"set use_tpu=False (was {use_tpu}) and added eval_on_tpu=False, export_to_tpu=False: "
            "the TPU is switched off on the NPU")


def test_the_vendored_tpu_estimator_is_built_with_the_tpu_off():
    before = RUN_PRETRAINING
    after = before.replace(FUTURE, FUTURE + HEADER).replace(
        "per_host_input_for_training=is_per_host))",
        "per_host_input_for_training=is_per_host), save_summary_steps=0)").replace(
        "      use_tpu=FLAGS.use_tpu,", "      use_tpu=False,").replace(
        "      config=run_config,", "      config=npu_run_config_init(run_config=run_config),").replace(
        "      eval_on_tpu=FLAGS.use_tpu)", "      eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, before, after, facts=FACTS, path="bert/run_pretraining.py", findings=[
        ("NPU001", 8, 0, "migrated"), ("NPU013", 41, 15, "migrated"),
        ("NPU011", 50, 14, "migrated"), ("NPU012", 50, 14, "migrated")])
    assert messages(findings, "NPU012") == [
        "set use_tpu=False (was FLAGS.use_tpu), eval_on_tpu=False (was FLAGS.use_tpu) and added "
        "export_to_tpu=False: the TPU is switched off on the NPU"]


def test_inside_the_fork_the_export_helper_is_switched_off_and_the_runconfig_config_left_alone():
    before = TPU_ESTIMATOR
    after = before.replace(FUTURE, FUTURE + HEADER).replace(
        "RunConfig(model_dir=estimator.model_dir)",
        "RunConfig(model_dir=estimator.model_dir, save_summary_steps=0)").replace(
        "      config=config,\n      params=estimator.params,\n      use_tpu=True,",
        "      config=npu_run_config_init(run_config=config),\n      params=estimator.params,\n"
        "      use_tpu=False,").replace(
        "      eval_batch_size=2048,  # Does not matter.\n",
        "      eval_batch_size=2048,  # Does not matter.\n      eval_on_tpu=False, export_to_tpu=False,\n")
    findings = assert_migrates(RULES, before, after, facts=FACTS, path="bert/tpu_estimator.py", findings=[
        ("NPU001", 10, 0, "migrated"),
        ("NPU007", 78, 11, "migrated"),  # tf_session.Session(self._master, config=self._session_config)
        ("NPU007", 143, 9, "migrated"),  # MonitoredSession(session_creator=ChiefSessionCreator(...))
        ("NPU007", 144, 24, "migrated"),  # ChiefSessionCreator(config=self._config.session_config)
        ("NPU013", 159, 11, "migrated"), ("NPU011", 160, 8, "migrated"), ("NPU012", 160, 8, "migrated")])
    note = ("is the session config of the Estimator's RunConfig, which npu_run_config_init() "
            "configures where the Estimator is built: nothing to add here")
    assert messages(findings, "NPU007") == [
        f"self._session_config {note}",
        "the session takes its config from its training.ChiefSessionCreator, configured there",
        f"self._config.session_config {note}"]
    assert messages(findings, "NPU012") == [
        "set use_tpu=False (was True) and added eval_on_tpu=False, export_to_tpu=False: "
        "the TPU is switched off on the NPU"]


def test_the_other_files_of_the_repository_are_left_as_they_are():
    for path in ("bert/__init__.py", "bert/modeling.py"):
        assert_reports(RULES, FILES[path], facts=FACTS, path=path, findings=[])


SUBCLASS = '''\
"""XLNet's estimator: the vendored TPUEstimator with its own defaults."""
import tensorflow as tf

from bert import tpu_estimator


class XLNetEstimator(tpu_estimator.TPUEstimator):

  def __init__(self, model_fn, config, **kwargs):
    kwargs.setdefault("train_batch_size", 32)
    super(XLNetEstimator, self).__init__(model_fn=model_fn, config=config, **kwargs)


def build_estimator(model_fn, run_config, flags):
  """The estimator the training script runs."""
  tf.logging.info("Building the estimator for %s", flags.model_dir)
  return XLNetEstimator(model_fn, run_config, use_tpu=flags.use_tpu)
'''


def test_a_subclass_of_the_fork_is_a_tpu_estimator_too():
    facts = repository_facts({**FILES, "xlnet/estimator.py": SUBCLASS})
    after = SUBCLASS.replace("import tensorflow as tf\n", HEADER + "import tensorflow as tf\n").replace(
        "XLNetEstimator(model_fn, run_config, use_tpu=flags.use_tpu)",
        "XLNetEstimator(model_fn, npu_run_config_init(run_config=run_config), use_tpu=False, "
        "eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, SUBCLASS, after, facts=facts, path="xlnet/estimator.py", findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU011", 17, 9, "migrated"), ("NPU012", 17, 9, "migrated")])
    assert messages(findings, "NPU012") == [switched_off("flags.use_tpu")]


FORK_BY_ITS_SWITCHES = '''\
"""A TPU-capable estimator of this project."""
import tensorflow as tf


class PretrainingEstimator(tf.estimator.Estimator):
  """Runs on the TPU when use_tpu is set, on CPU/GPU otherwise."""

  def __init__(self, model_fn, config=None, params=None, use_tpu=True, eval_on_tpu=True):
    super(PretrainingEstimator, self).__init__(model_fn=model_fn, config=config, params=params)
    self._use_tpu = use_tpu
    self._eval_on_tpu = eval_on_tpu


def train(model_fn, run_config, steps):
  estimator = PretrainingEstimator(model_fn, run_config, None, True)
  estimator.train(input_fn=lambda: None, max_steps=steps)
'''


def test_a_class_whose_init_takes_the_switches_is_a_tpu_estimator():
    facts = repository_facts({"pretraining.py": FORK_BY_ITS_SWITCHES})
    after = FORK_BY_ITS_SWITCHES.replace("import tensorflow as tf\n", HEADER + "import tensorflow as tf\n").replace(
        "PretrainingEstimator(model_fn, run_config, None, True)",
        "PretrainingEstimator(model_fn, npu_run_config_init(run_config=run_config), None, False, "
        "eval_on_tpu=False)")
    findings = assert_migrates(RULES, FORK_BY_ITS_SWITCHES, after, facts=facts, path="pretraining.py",
                               findings=[("NPU001", 2, 0, "migrated"), ("NPU011", 15, 14, "migrated"),
                                         ("NPU012", 15, 14, "migrated"), ("NPU012", 15, 14, "unmigrated")])
    assert messages(findings, "NPU012") == [
        "PretrainingEstimator.__init__ takes no export_to_tpu: pass export_to_tpu=False to the "
        "TPUEstimator it builds (guide: Estimator migration: TPUEstimator, "
        "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu012-tpu-estimator)",
        "set use_tpu=False (was True) and added eval_on_tpu=False: the TPU is switched off on the NPU"]


OWN_CONFIG = '''\
"""Serving for the vendored estimator: its own session, with a config it makes itself."""
import tensorflow as tf


class ServingEstimator(tf.estimator.Estimator):

  def __init__(self, model_fn, config=None):
    super(ServingEstimator, self).__init__(model_fn=model_fn, config=config)
    self._session_config = tf.ConfigProto(allow_soft_placement=True)
    self._session = tf.Session(config=self._session_config)

  def warm_up(self, fetches):
    return self._session.run(fetches)
'''


def test_a_config_the_fork_makes_itself_gets_the_npu_lines():
    lines = ("    custom_op = self._session_config.graph_options.rewrite_options.custom_optimizers.add()\n"
             '    custom_op.name = "NpuOptimizer"\n'
             "    self._session_config.graph_options.rewrite_options.remapping = RewriterConfig.OFF\n"
             "    self._session_config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF\n")
    after = OWN_CONFIG.replace(
        "import tensorflow as tf\n",
        HEADER + "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\nimport tensorflow as tf\n").replace(
        "(allow_soft_placement=True)\n", "(allow_soft_placement=True)\n" + lines)
    findings = assert_migrates(RULES, OWN_CONFIG, after, path="serving.py",
                               findings=[("NPU001", 2, 0, "migrated"), ("NPU007", 10, 20, "migrated"),
                                         ("NPU010", 10, 20, "unmigrated")])
    assert "is the session config of the Estimator's RunConfig" not in messages(findings, "NPU007")[0]


TPU_MODEL = '''\
"""Transformer model_fn for TPUEstimator, written against the modules that define the TPU API."""
from __future__ import absolute_import

import tensorflow as tf
from tensorflow.contrib.tpu.python import tpu as tpu_lib
from tensorflow.contrib.tpu.python.tpu import bfloat16
from tensorflow.contrib.tpu.python.tpu import tpu_estimator

from bert import modeling


def _body(features, params):
  """The transformer stack, in bfloat16 on the TPU."""
  with bfloat16.bfloat16_scope():
    hidden = tf.layers.dense(features["inputs"], params["hidden_size"])
    for layer in range(params["num_layers"]):
      with tf.variable_scope("layer_%d" % layer):
        hidden = tf.layers.dense(hidden, params["hidden_size"], activation=tf.nn.relu)
  return tf.cast(hidden, tf.float32)


def model_fn(features, labels, mode, params):
  logits = _body(features, params)
  loss = tf.losses.softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdamOptimizer(params["learning_rate"]).minimize(
      loss, global_step=tf.train.get_global_step())

  def scaffold_fn():
    tf.train.init_from_checkpoint(params["init_checkpoint"], {"bert/": "bert/"})
    return tf.train.Scaffold()

  if mode == tf.estimator.ModeKeys.PREDICT:
    return tpu_lib.tpu.TPUEstimatorSpec(mode=mode, predictions={"logits": logits},
                                        scaffold_fn=scaffold_fn)
  return tpu_estimator.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                        scaffold_fn=scaffold_fn)


def summary_loss(bert_config, features):
  return modeling.pretraining_loss(bert_config, features)
'''


def test_tpu_apis_spelled_through_their_defining_modules_get_npu012s_instruction():
    findings = assert_reports(RULES | {"NPU100"}, TPU_MODEL, facts=FACTS, path="t2t/model.py", findings=[
        ("NPU012", 14, 7, "unmigrated"),  # bfloat16.bfloat16_scope()
        ("NPU012", 33, 11, "unmigrated"),  # tpu_lib.tpu.TPUEstimatorSpec(..., scaffold_fn=...)
        ("NPU012", 35, 9, "unmigrated")])  # tpu_estimator.TPUEstimatorSpec(..., scaffold_fn=...)
    guide = ("(guide: Estimator migration: TPUEstimator, "
             "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu012-tpu-estimator)")
    assert messages(findings, "NPU012") == [
        "bfloat16.bfloat16_scope() is not supported on Ascend: remove it (on the NPU, mixed "
        f"precision is NPU007's precision_mode setting) {guide}",
        "tpu_lib.tpu.TPUEstimatorSpec with scaffold_fn: check the scaffold_fn runs on CPU (without "
        f"the TPU, TPUEstimator runs it on the host) {guide}",
        "tpu_estimator.TPUEstimatorSpec with scaffold_fn: check the scaffold_fn runs on CPU "
        f"(without the TPU, TPUEstimator runs it on the host) {guide}"]


GOOGLE3_FORK = '''\
"""TPUEstimator, vendored: the same file builds inside Google and outside."""

from __future__ import absolute_import

try:
  import google3
  from google3.third_party.tensorflow.contrib.tpu.python.tpu import tpu_config
  from google3.third_party.tensorflow.python.estimator import estimator as estimator_lib
except:
  import tensorflow
  from tensorflow.contrib.tpu.python.tpu import tpu_config
  from tensorflow.python.estimator import estimator as estimator_lib


class TPUEstimator(estimator_lib.Estimator):
  """Estimator with TPU support and a cache of memories between steps."""

  def __init__(self, model_fn=None, train_cache_fn=None, config=None, params=None,
               use_tpu=True, train_batch_size=None, eval_on_tpu=True, export_to_tpu=True):
    super(TPUEstimator, self).__init__(model_fn=model_fn, config=config, params=params)
    self._train_cache_fn = train_cache_fn
    self._use_tpu = use_tpu
'''
GOOGLE3_TRAIN = '''\
"""Trains Transformer-XL with the vendored TPUEstimator (run from the tf/ folder)."""
import tensorflow as tf
import tpu_estimator

FLAGS = tf.app.flags.FLAGS


def main(model_fn, train_cache_fn, run_config):
  estimator = tpu_estimator.TPUEstimator(
      model_fn=model_fn,
      train_cache_fn=train_cache_fn,
      use_tpu=FLAGS.use_tpu,
      config=run_config,
      train_batch_size=FLAGS.train_batch_size)
  estimator.train(input_fn=model_fn, max_steps=FLAGS.train_steps)
'''


def test_a_fork_importing_google3_or_tensorflow_is_a_tpu_estimator_built_with_the_tpu_off():
    facts = repository_facts({"tf/tpu_estimator.py": GOOGLE3_FORK, "tf/train.py": GOOGLE3_TRAIN})
    after = GOOGLE3_TRAIN.replace('"""\nimport', '"""\n' + HEADER + "import").replace(
        "use_tpu=FLAGS.use_tpu,", "use_tpu=False,").replace(
        "config=run_config,", "config=npu_run_config_init(run_config=run_config),").replace(
        "train_batch_size=FLAGS.train_batch_size)",
        "train_batch_size=FLAGS.train_batch_size, eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, GOOGLE3_TRAIN, after, facts=facts, path="tf/train.py", findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU011", 9, 14, "migrated"), ("NPU012", 9, 14, "migrated")])
    assert messages(findings, "NPU012") == [switched_off("FLAGS.use_tpu")]
