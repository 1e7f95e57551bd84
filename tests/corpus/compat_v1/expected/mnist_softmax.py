"""MNIST softmax regression, run on TF 2 through the compat.v1 API."""
from npu_bridge.npu_init import *
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import argparse
import sys

import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

FLAGS = None


def make_dataset(images, labels, batch_size, training):
  ds = tf.data.Dataset.from_tensor_slices((images, labels))
  if training:
    ds = ds.shuffle(10000).repeat()
  return ds.batch(batch_size, drop_remainder=True).prefetch(2)


def main(_):
  (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
  x_train = x_train.reshape(-1, 784).astype(np.float32) / 255.0
  ds = make_dataset(x_train, y_train.astype(np.int64), 100, True)
  x, y_ = tf.data.make_one_shot_iterator(ds).get_next()

  keep_prob = tf.placeholder_with_default(1.0, shape=())
  W = tf.Variable(tf.zeros([784, 10]))
  b = tf.Variable(tf.zeros([10]))
  h = npu_ops.dropout(x, keep_prob=1 - (1 - keep_prob))
  y = tf.matmul(h, W) + b

  cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
  train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)

  config = tf.ConfigProto()
  custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
  custom_op.name = "NpuOptimizer"
  config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
  config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
  sess = tf.InteractiveSession(config=config)
  tf.global_variables_initializer().run()
  # Train
  for _ in range(1000):
    sess.run(train_step, feed_dict={keep_prob: 0.9})
  print(sess.run(cross_entropy))
  sess.close()


if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('--data_dir', type=str, default='/tmp/tensorflow/mnist/input_data')
  FLAGS, unparsed = parser.parse_known_args()
  tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
