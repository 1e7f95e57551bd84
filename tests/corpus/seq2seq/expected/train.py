# -*- coding: utf-8 -*-
from __future__ import print_function
from npu_bridge.npu_init import *
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
import os
import time
import tensorflow as tf
from seq2seq_model import Seq2SeqModel

tf.app.flags.DEFINE_integer('batch_size', 64, '批大小')
tf.app.flags.DEFINE_integer('max_epochs', 10, '训练轮数')
FLAGS = tf.app.flags.FLAGS


def load_data(path, batch_size):
    lines = tf.data.TextLineDataset(path)
    pairs = lines.map(lambda l: tf.string_split([l], '\t').values)
    return pairs.padded_batch(batch_size, padded_shapes=[None], drop_remainder=True)


def train():
    model = Seq2SeqModel(vocab_size=30000, hidden_units=256, keep_prob=0.8)
    data = load_data('train.txt', FLAGS.batch_size)
    it = data.make_initializable_iterator()
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
    config.gpu_options.allow_growth = True
    saver = tf.train.Saver()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(FLAGS.max_epochs):
            sess.run(it.initializer)
            start = time.time()
            while True:
                try:
                    sess.run(model.logits)
                except tf.errors.OutOfRangeError:
                    break
            print('epoch %d took %.1fs' % (epoch, time.time() - start))
            saver.save(sess, os.path.join('ckpt', 'model'), global_step=epoch)


if __name__ == '__main__':
    train()
