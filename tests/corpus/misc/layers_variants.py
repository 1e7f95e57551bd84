import math
import tensorflow as tf
keras = tf.keras
from tensorflow.keras import layers


def gelu_erf(input_tensor):
  """Original BERT GELU (erf form)."""
  cdf = 0.5 * (1.0 + tf.erf(input_tensor / tf.sqrt(2.0)))
  return input_tensor * cdf


class Block(keras.layers.Layer):

  def __init__(self, rate):
    super(Block, self).__init__()
    self.drop = keras.layers.SpatialDropout2D(rate)
    self.drop2 = layers.Dropout(rate, noise_shape=None)
    self.act = lambda x: 0.5 * x * (1 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))

  def call(self, x, training=False):
    y = tf.nn.dropout(x, keep_prob=0.9, noise_shape=[tf.shape(x)[0], 1, 1, tf.shape(x)[3]])
    return self.drop2(self.drop(y, training=training), training=training)


def input_pipeline(filenames, batch_size, is_training):
  dataset = tf.data.TextLineDataset(filenames)
  dataset = dataset.map(lambda l: tf.string_split([l]).values)
  dataset = dataset.padded_batch(batch_size, padded_shapes=[None])
  eval_ds = tf.data.Dataset.range(100).batch(batch_size, drop_remainder=is_training)
  return dataset, eval_ds
