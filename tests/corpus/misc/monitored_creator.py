"""Evaluation loop with MonitoredSession + ChiefSessionCreator, and an Estimator export."""
import tensorflow as tf
from tensorflow.python import debug as tf_debug

FLAGS = tf.flags.FLAGS


def evaluate(checkpoint_dir, eval_op):
  session_config = tf.ConfigProto(allow_soft_placement=True)
  session_config.graph_options.rewrite_options.remapping = 1
  creator = tf.train.ChiefSessionCreator(
      checkpoint_dir=checkpoint_dir, config=session_config)
  with tf.train.MonitoredSession(session_creator=creator) as sess:
    while not sess.should_stop():
      sess.run(eval_op)


def debug_run(train_op, steps):
  sess = tf.Session()
  sess = tf_debug.LocalCLIDebugWrapperSession(sess)
  sess.run(tf.global_variables_initializer())
  for _ in range(steps):
    sess.run(train_op)
  print("done")


def export(model_fn, model_dir):
  run_config = tf.estimator.RunConfig(
      model_dir=model_dir,
      session_config=tf.ConfigProto(log_device_placement=False))
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config)
  return estimator


def make_session(graph):
  """Return a session for the caller to own."""
  return tf.Session(graph=graph)


def with_callback(train_op):
  sess = tf.Session()

  def step():
    return sess.run(train_op)

  for _ in range(10):
    step()
