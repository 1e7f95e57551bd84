#! /usr/bin/env python

import datetime

import numpy as np
import tensorflow as tf

from text_cnn import TextCNN

tf.flags.DEFINE_integer("batch_size", 64, "Batch Size (default: 64)")
tf.flags.DEFINE_integer("num_epochs", 200, "Number of training epochs (default: 200)")
tf.flags.DEFINE_boolean("allow_soft_placement", True, "Allow device soft device placement")
tf.flags.DEFINE_boolean("log_device_placement", False, "Log placement of ops on devices")
FLAGS = tf.flags.FLAGS


def train(x_train, y_train, vocab_size):
	with tf.Graph().as_default():
		session_conf = tf.ConfigProto(
			allow_soft_placement=FLAGS.allow_soft_placement,
			log_device_placement=FLAGS.log_device_placement)
		sess = tf.Session(config=session_conf)
		with sess.as_default():
			cnn = TextCNN(sequence_length=x_train.shape[1], num_classes=y_train.shape[1],
						  vocab_size=vocab_size, embedding_size=128, filter_sizes=[3, 4, 5],
						  num_filters=128)
			train_op = tf.train.AdamOptimizer(1e-3).minimize(cnn.loss)
			sess.run(tf.global_variables_initializer())
			for x_batch, y_batch in batches(x_train, y_train, FLAGS.batch_size):
				feed_dict = {cnn.input_x: x_batch, cnn.input_y: y_batch, cnn.dropout_keep_prob: 0.5}
				_, loss = sess.run([train_op, cnn.loss], feed_dict)
				print("{}: loss {:g}".format(datetime.datetime.now().isoformat(), loss))

		# training done
	return True


def batches(x, y, batch_size):
	for start in range(0, len(x), batch_size):
		yield x[start:start + batch_size], y[start:start + batch_size]
