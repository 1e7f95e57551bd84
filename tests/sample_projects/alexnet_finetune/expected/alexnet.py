"""AlexNet in TensorFlow 1.x, for fine-tuning the last layers (after Kratzert's tutorial)."""
from npu_bridge.npu_init import *
import tensorflow as tf
import numpy as np


class AlexNet(object):
    """Implementation of the AlexNet."""

    def __init__(self, x, keep_prob, num_classes, skip_layer, weights_path='DEFAULT'):
        self.X = x
        self.NUM_CLASSES = num_classes
        self.KEEP_PROB = keep_prob
        self.SKIP_LAYER = skip_layer
        self.WEIGHTS_PATH = 'bvlc_alexnet.npy' if weights_path == 'DEFAULT' else weights_path
        self.create()

    def create(self):
        """Create the network graph."""
        conv1 = conv(self.X, 11, 11, 96, 4, 4, padding='VALID', name='conv1')
        pool1 = max_pool(conv1, 3, 3, 2, 2, padding='VALID', name='pool1')
        flattened = tf.reshape(pool1, [-1, 6*6*256])
        fc6 = fc(flattened, 6*6*256, 4096, name='fc6')
        dropout6 = npu_ops.dropout(fc6, self.KEEP_PROB)
        fc7 = fc(dropout6, 4096, 4096, name='fc7')
        dropout7 = npu_ops.dropout(fc7, self.KEEP_PROB)
        self.fc8 = fc(dropout7, 4096, self.NUM_CLASSES, relu=False, name='fc8')

    def load_initial_weights(self, session):
        """Load weights from file into network."""
        weights_dict = np.load(self.WEIGHTS_PATH, encoding='bytes').item()
        for op_name in weights_dict:
            if op_name not in self.SKIP_LAYER:
                with tf.variable_scope(op_name, reuse=True):
                    for data in weights_dict[op_name]:
                        var = tf.get_variable('weights' if len(data.shape) > 1 else 'biases',
                                              trainable=False)
                        session.run(var.assign(data))


def conv(x, filter_height, filter_width, num_filters, stride_y, stride_x, name, padding='SAME'):
    input_channels = int(x.get_shape()[-1])
    with tf.variable_scope(name) as scope:
        weights = tf.get_variable('weights', shape=[filter_height, filter_width,
                                                    input_channels, num_filters])
        biases = tf.get_variable('biases', shape=[num_filters])
    conv = tf.nn.conv2d(x, weights, strides=[1, stride_y, stride_x, 1], padding=padding)
    return tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)


def fc(x, num_in, num_out, name, relu=True):
    with tf.variable_scope(name) as scope:
        weights = tf.get_variable('weights', shape=[num_in, num_out], trainable=True)
        biases = tf.get_variable('biases', [num_out], trainable=True)
        act = tf.nn.xw_plus_b(x, weights, biases, name=scope.name)
    return tf.nn.relu(act) if relu else act


def max_pool(x, filter_height, filter_width, stride_y, stride_x, name, padding='SAME'):
    return tf.nn.max_pool(x, ksize=[1, filter_height, filter_width, 1],
                          strides=[1, stride_y, stride_x, 1], padding=padding, name=name)
