# -*- coding: utf-8 -*-
"""DQN 智能体（制表符缩进，CRLF 行尾）。"""
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2


def make_config():
	# 会话配置放在辅助函数里
	cfg = tf.ConfigProto()
	cfg.gpu_options.allow_growth = True
	cfg.graph_options.rewrite_options.arithmetic_optimization = rewriter_config_pb2.RewriterConfig.OFF
	return cfg


class DeepQNetwork:
	def __init__(self, n_actions, n_features, learning_rate=0.01):
		self.n_actions = n_actions
		self.n_features = n_features
		self._build_net()
		self.sess = tf.Session(config=make_config())
		self.sess.run(tf.global_variables_initializer())

	def _build_net(self):
		self.s = tf.placeholder(tf.float32, [None, self.n_features], name='s')  # 状态
		with tf.variable_scope('eval_net'):
			l1 = tf.layers.dense(self.s, 20, tf.nn.relu)
			l1 = tf.nn.dropout(l1, keep_prob=0.8)
			self.q_eval = tf.layers.dense(l1, self.n_actions)

	def choose_action(self, observation):
		observation = observation[np.newaxis, :]
		return np.argmax(self.sess.run(self.q_eval, feed_dict={self.s: observation}))
