"""Train with an Estimator, then restore the checkpoint in a session to export a frozen graph."""
from npu_bridge.npu_init import *
from npu_bridge.estimator.npu import npu_convert_dropout
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import os

import tensorflow as tf
from tensorflow.compat.v1 import ConfigProto, Session

tf.logging.set_verbosity(tf.logging.INFO)


def model_fn(features, labels, mode, params):
    net = tf.layers.dense(features["x"], 64, activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=0.3, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(features, labels, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": features}, labels))
    return dataset.shuffle(1000).repeat().batch(batch_size, drop_remainder=True)


def export_frozen(model_dir, output_node):
    session_conf = ConfigProto(intra_op_parallelism_threads=2)
    ckpt = tf.train.latest_checkpoint(model_dir)
    custom_op = session_conf.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    session_conf.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    session_conf.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    sess = Session(config=session_conf)
    saver = tf.train.import_meta_graph(ckpt + ".meta")
    saver.restore(sess, ckpt)
    frozen = tf.graph_util.convert_variables_to_constants(
        sess, sess.graph.as_graph_def(), [output_node])
    sess.close()
    with tf.gfile.GFile(os.path.join(model_dir, "frozen.pb"), "wb") as f:
        f.write(frozen.SerializeToString())


if __name__ == "__main__":
    run_config = tf.estimator.RunConfig(model_dir="/tmp/model", save_summary_steps=0)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=npu_run_config_init(run_config=run_config))
    estimator.train(lambda: input_fn(x_train, y_train, 128), max_steps=1000)
    export_frozen("/tmp/model", "dense_1/BiasAdd")
