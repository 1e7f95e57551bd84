from __future__ import division
import os
import time
import math
from glob import glob
import tensorflow as tf
import numpy as np
from six.moves import xrange

from ops import *
from utils import *

class DCGAN(object):
  def __init__(self, sess, input_height=108, batch_size=64, sample_num = 64):
    """

    Args:
      sess: TensorFlow session
      batch_size: The size of batch. Should be specified before training.
    """
    self.sess = sess
    self.batch_size = batch_size
    self.sample_num = sample_num
    self.build_model()

  def build_model(self):
    self.inputs = tf.placeholder(tf.float32, [self.batch_size, 64, 64, 3], name='real_images')
    self.d_loss = tf.reduce_mean(self.inputs)
    self.saver = tf.train.Saver()

  def train(self, config):
    d_optim = tf.train.AdamOptimizer(config.learning_rate, beta1=config.beta1) \
              .minimize(self.d_loss)
    try:
      tf.global_variables_initializer().run()
    except:
      tf.initialize_all_variables().run()

    counter = 1
    start_time = time.time()
    for epoch in xrange(config.epoch):
      batch_idxs = min(len(self.data), config.train_size) // config.batch_size
      for idx in xrange(0, batch_idxs):
        _, summary_str = self.sess.run([d_optim, self.d_sum],
          feed_dict={ self.inputs: batch_images })
        counter += 1
        print("Epoch: [%2d/%2d] [%4d/%4d] time: %4.4f" \
          % (epoch, config.epoch, idx, batch_idxs, time.time() - start_time))
