# -*- coding: utf-8 -*-
# 基于注意力机制的 seq2seq 模型（TF 1.x）
from __future__ import print_function
from npu_bridge.npu_init import *
import tensorflow as tf
from tensorflow.contrib import rnn
from tensorflow.contrib import seq2seq


class Seq2SeqModel(object):
    def __init__(self, vocab_size, hidden_units, keep_prob, mode='train'):
        self.vocab_size = vocab_size
        self.hidden_units = hidden_units
        self.keep_prob = keep_prob
        self.mode = mode
        self.build()

    def _cell(self):
        cell = rnn.LSTMCell(self.hidden_units)
        if self.mode == 'train':
            cell = rnn.DropoutWrapper(cell, output_keep_prob=self.keep_prob)
        return cell

    def build(self):
        self.encoder_inputs = tf.placeholder(tf.int32, [None, None], name='encoder_inputs')
        embedding = tf.get_variable('embedding', [self.vocab_size, self.hidden_units])
        emb = tf.nn.embedding_lookup(embedding, self.encoder_inputs)
        emb = npu_ops.dropout(emb, self.keep_prob)  # 输入 dropout
        outputs, state = tf.nn.dynamic_rnn(self._cell(), emb, dtype=tf.float32)
        self.logits = tf.layers.dense(outputs, self.vocab_size)
