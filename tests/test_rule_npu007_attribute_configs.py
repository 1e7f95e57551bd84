"""Issue #25 item 2, follow-up: a session config that outlives the method opening the session
(an attribute: ``self._cfg``, ``self.config``) gets the NpuOptimizer lines once, right after
the one statement of its class that builds it, never before the session (one more
NpuOptimizer entry in the same object at every call). One the class is handed (a hook given
the RunConfig's session config by an Estimator fork of another file), or that is not the
method's own object's, is reported: configured where it is built. So is a global that no one
module-level statement builds (``_SESSION_CONFIG = None``, set later by a function).
"""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

from support.session_config import npu_lines

RULES = {"NPU001", "NPU007"}
HEADER = "from npu_bridge.npu_init import *\n"
REWRITER = "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
AGENT = '''\
"""An actor-critic agent: one graph for acting, and evaluation runs in fresh sessions."""
from __future__ import absolute_import

import numpy as np
import tensorflow as tf

from rl import networks
from rl.replay import ReplayBuffer


class Agent(object):
  """Acts with the current policy and evaluates checkpoints in a session of its own."""

  def __init__(self, env_spec, flags):
    self._flags = flags
    self._graph = tf.Graph()
    self._replay = ReplayBuffer(flags.buffer_size)
    self._cfg = tf.ConfigProto(allow_soft_placement=True,
                               intra_op_parallelism_threads=flags.threads)
    self._cfg.gpu_options.allow_growth = True
    with self._graph.as_default():
      self._obs = tf.placeholder(tf.float32, [None] + list(env_spec.shape), name="obs")
      self._policy, self._value = networks.actor_critic(self._obs, env_spec.actions)
      self._saver = tf.train.Saver()

  def act(self, sess, observation):
    logits = sess.run(self._policy, {self._obs: observation[None]})
    return int(np.argmax(logits[0]))

  def evaluate(self, checkpoint, episodes, env):
    """Average return of ``episodes`` episodes with the weights of ``checkpoint``."""
    returns = []
    with tf.Session(graph=self._graph, config=self._cfg) as sess:
      self._saver.restore(sess, checkpoint)
      for _ in range(episodes):
        observation, done, total = env.reset(), False, 0.0
        while not done:
          observation, reward, done, _ = env.step(self.act(sess, observation))
          total += reward
        returns.append(total)
    return float(np.mean(returns))
'''


def test_an_attribute_config_is_configured_once_where_its_class_builds_it():
    after = AGENT.replace("from __future__ import absolute_import\n",
                          "from __future__ import absolute_import\n" + HEADER + REWRITER).replace(
        "                               intra_op_parallelism_threads=flags.threads)\n",
        "                               intra_op_parallelism_threads=flags.threads)\n"
        + npu_lines("self._cfg", "    "))
    findings = assert_migrates(RULES, AGENT, after, path="rl/agent.py", findings=[
        ("NPU001", 4, 0, "migrated"), ("NPU007", 33, 9, "migrated")])
    (message,) = [f.message for f in findings if f.rule_id == "NPU007"]
    assert message.startswith("added the lines that give self._cfg the NPU optimizer config")


HOOKS = '''\
"""Session hooks of the TPU estimator: infeed and outfeed threads."""
from __future__ import absolute_import

import threading

import tensorflow as tf


class InfeedThreadHook(tf.train.SessionRunHook):
  """Feeds the infeed queue from a session of its own, on a thread."""

  def __init__(self, enqueue_ops, session_config, master=""):
    self._enqueue_ops = enqueue_ops
    self._session_config = session_config
    self._master = master
    self._thread = None

  def _run_infeed(self):
    sess = tf.Session(self._master, config=self._session_config)
    try:
      while True:
        sess.run(self._enqueue_ops)
    except tf.errors.OutOfRangeError:
      pass
    finally:
      sess.close()

  def after_create_session(self, session, coord):
    self._thread = threading.Thread(target=self._run_infeed)
    self._thread.daemon = True
    self._thread.start()


def evaluate_in_new_session(flags, fetches):
  with tf.Session(flags.master, config=flags.session_config) as sess:
    return sess.run(fetches)
'''


def test_a_config_the_class_is_handed_is_reported_never_configured_per_call():
    """``self._session_config`` is the RunConfig's session config that the Estimator fork of
    another file hands the hook (configured by npu_run_config_init where the Estimator is
    built): adding the lines in ``_run_infeed`` would append one NpuOptimizer per infeed run."""
    findings = assert_reports(RULES, HOOKS, path="model/tpu_hooks.py", findings=[
        ("NPU007", 19, 11, "unmigrated"), ("NPU007", 35, 7, "unmigrated")])
    hook, flags = [f.message for f in sorted(findings, key=lambda f: f.line)]
    assert hook.startswith("self._session_config outlives this function: NpuOptimizer lines here "
                           "would add one more NpuOptimizer entry to it at every call")
    assert "custom_op = self._session_config.graph_options.rewrite_options" in hook
    assert flags.startswith("flags.session_config outlives this function")


SERVING = '''\
"""Serves exported translation models from one process: a session per request batch."""
from __future__ import absolute_import

import logging

import tensorflow as tf

from serving import batching

_SESSION_CONFIG = None
_GRAPHS = {}


def configure(threads, log_device_placement=False):
  """Called once by the server before the first request."""
  global _SESSION_CONFIG
  _SESSION_CONFIG = tf.ConfigProto(intra_op_parallelism_threads=threads,
                                   log_device_placement=log_device_placement)


def load(name, export_dir, loader_session):
  """Loads with the server's loader session; requests run in sessions of their own."""
  with loader_session.graph.as_default():
    tf.saved_model.loader.load(loader_session, ["serve"], export_dir)
  _GRAPHS[name] = loader_session.graph


def translate(name, sentences):
  graph = _GRAPHS[name]
  with tf.Session(graph=graph, config=_SESSION_CONFIG) as sess:
    outputs = sess.run("outputs:0", {"inputs:0": batching.pad(sentences)})
  logging.info("translated %d sentences with %s", len(sentences), name)
  return batching.unpad(outputs)
'''


def test_a_global_config_set_by_a_function_is_reported_never_configured_at_import() -> None:
    """``_SESSION_CONFIG = None`` is no config: lines after it would fail at import, lines in
    ``translate`` would add one NpuOptimizer entry per request."""
    findings = assert_reports({"NPU007"}, SERVING, path="serving/server.py",
                              findings=[("NPU007", 30, 7, "unmigrated")])
    assert findings[0].message.startswith("_SESSION_CONFIG outlives this function: NpuOptimizer "
                                          "lines here would add one more NpuOptimizer entry to it")


FREEZER = '''\
"""Freezes an Estimator's graph for serving."""
import tensorflow as tf

from export import graph_utils


def freeze_estimator(estimator, input_names, output_names):
  """Optimizes the frozen graph in a session run with the Estimator's own session config."""
  frozen = graph_utils.freeze(estimator, input_names, output_names)
  tf.reset_default_graph()
  with tf.Session(config=estimator.config.session_config):
    frozen = graph_utils.optimize(frozen, input_names, output_names)
  return frozen
'''


def test_soft_placement_is_not_set_on_a_config_npu007_left_to_where_it_is_built() -> None:
    """``estimator.config.session_config`` is the Estimator's RunConfig's, None unless it was
    given one: NPU007 leaves it (reported), and NPU008 must not write
    ``estimator.config.session_config.allow_soft_placement = True`` before the session, which
    would raise AttributeError on None (and change the Estimator's own config); it reports."""
    findings = assert_reports({"NPU001", "NPU007", "NPU008"}, FREEZER, path="export/freeze.py",
                              facts={"uses-tf-device"},
                              findings=[("NPU007", 11, 7, "unmigrated"), ("NPU008", 11, 7, "unmigrated")])
    soft = [f.message for f in findings if f.rule_id == "NPU008"][0]
    assert soft.startswith("set estimator.config.session_config.allow_soft_placement = True where "
                           "it is built")
