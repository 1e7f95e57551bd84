from npu_bridge.npu_init import *
import tensorflow as tf


class TextCNN(object):
    """A CNN for text classification (after Denny Britz's tutorial)."""

    def __init__(self, sequence_length, num_classes, vocab_size, embedding_size, filter_sizes,
                 num_filters, l2_reg_lambda=0.0):
        self.input_x = tf.placeholder(tf.int32, [None, sequence_length], name="input_x")
        self.input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
        self.dropout_keep_prob = tf.placeholder(tf.float32, name="dropout_keep_prob")

        # Embedding layer
        with tf.device('/cpu:0'), tf.name_scope("embedding"):
            self.W = tf.Variable(tf.random_uniform([vocab_size, embedding_size], -1.0, 1.0), name="W")
            self.embedded_chars = tf.nn.embedding_lookup(self.W, self.input_x)
            self.embedded_chars_expanded = tf.expand_dims(self.embedded_chars, -1)

        pooled_outputs = []
        for i, filter_size in enumerate(filter_sizes):
            with tf.name_scope("conv-maxpool-%s" % filter_size):
                filter_shape = [filter_size, embedding_size, 1, num_filters]
                W = tf.Variable(tf.truncated_normal(filter_shape, stddev=0.1), name="W")
                conv = tf.nn.conv2d(self.embedded_chars_expanded, W, strides=[1, 1, 1, 1],
                                    padding="VALID", name="conv")
                pooled_outputs.append(tf.nn.max_pool(tf.nn.relu(conv), ksize=[1, 2, 1, 1],
                                                      strides=[1, 1, 1, 1], padding='VALID'))
        self.h_pool_flat = tf.reshape(tf.concat(pooled_outputs, 3), [-1, num_filters * len(filter_sizes)])

        with tf.name_scope("dropout"):
            self.h_drop = npu_ops.dropout(self.h_pool_flat, self.dropout_keep_prob)

        with tf.name_scope("output"):
            self.scores = tf.layers.dense(self.h_drop, num_classes, name="scores")
            self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                logits=self.scores, labels=self.input_y))
