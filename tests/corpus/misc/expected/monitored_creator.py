"""Evaluation loop with MonitoredSession + ChiefSessionCreator, and an Estimator export."""
from npu_bridge.npu_init import *
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import tensorflow as tf
from tensorflow.python import debug as tf_debug

FLAGS = tf.flags.FLAGS


def evaluate(checkpoint_dir, eval_op):
  session_config = tf.ConfigProto(allow_soft_placement=True)
  session_config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  custom_op = session_config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  session_config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  creator = tf.train.ChiefSessionCreator(
      checkpoint_dir=checkpoint_dir, config=session_config)
  with tf.train.MonitoredSession(session_creator=creator) as sess:
    while not sess.should_stop():
      sess.run(eval_op)


def debug_run(train_op, steps):
  config = tf.ConfigProto()
  custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  sess = tf.Session(config=config)
  sess = tf_debug.LocalCLIDebugWrapperSession(sess)
  sess.run(tf.global_variables_initializer())
  for _ in range(steps):
    sess.run(train_op)
  print("done")


def export(model_fn, model_dir):
  run_config = tf.estimator.RunConfig(
      model_dir=model_dir,
      session_config=tf.ConfigProto(log_device_placement=False), save_summary_steps=0)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=npu_run_config_init(run_config=run_config))
  return estimator


def make_session(graph):
  """Return a session for the caller to own."""
  config = tf.ConfigProto()
  custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  return tf.Session(graph=graph, config=config)


def with_callback(train_op):
  config = tf.ConfigProto()
  custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  sess = tf.Session(config=config)

  def step():
    return sess.run(train_op)

  for _ in range(10):
    step()
