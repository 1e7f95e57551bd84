"""Deep Q-Network agent (after MorvanZhou's reinforcement-learning tutorial)."""
from npu_bridge.npu_init import *
from npu_bridge.estimator.npu import npu_convert_dropout
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import numpy as np
import tensorflow as tf

np.random.seed(1)
tf.set_random_seed(1)


class ReplayMemory(object):
    def __init__(self, size):
        self.size = size
        self.data = []

    def batch(self, n):
        return [self.data[i] for i in np.random.choice(len(self.data), n)]


class DeepQNetwork:
    def __init__(self, n_actions, n_features, learning_rate=0.01, memory_size=500, batch_size=32):
        self.n_actions = n_actions
        self.n_features = n_features
        self.lr = learning_rate
        self.batch_size = batch_size
        self.memory = ReplayMemory(memory_size)
        self._build_net()
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
        config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
        self.sess = tf.Session(config=config)
        self.sess.run(tf.global_variables_initializer())

    def _build_net(self):
        self.s = tf.placeholder(tf.float32, [None, self.n_features], name='s')
        self.q_target = tf.placeholder(tf.float32, [None, self.n_actions], name='Q_target')
        with tf.variable_scope('eval_net'):
            l1 = tf.layers.dense(self.s, 10, tf.nn.relu)
            l1 = tf.keras.layers.Dropout(0.1)(l1)
            self.q_eval = tf.layers.dense(l1, self.n_actions)
        self.loss = tf.reduce_mean(tf.squared_difference(self.q_target, self.q_eval))
        self._train_op = tf.train.RMSPropOptimizer(self.lr).minimize(self.loss)

    def choose_action(self, observation):
        actions_value = self.sess.run(self.q_eval, feed_dict={self.s: observation[np.newaxis, :]})
        return np.argmax(actions_value)

    def learn(self):
        batch_memory = self.memory.batch(self.batch_size)
        _, cost = self.sess.run([self._train_op, self.loss],
                                feed_dict={self.s: batch_memory, self.q_target: batch_memory})
        return cost
