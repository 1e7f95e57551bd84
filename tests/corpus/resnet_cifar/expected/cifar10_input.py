"""Routine for decoding the CIFAR-10 binary file format."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function
from npu_bridge.npu_init import *

import tensorflow as tf

IMAGE_SIZE = 24


def _generate_image_and_label_batch(image, label, min_queue_examples,
                                    batch_size, shuffle):
  num_preprocess_threads = 16
  if shuffle:
    images, label_batch = tf.train.shuffle_batch(
        [image, label],
        batch_size=batch_size,
        num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size,
        min_after_dequeue=min_queue_examples)
  else:
    images, label_batch = tf.train.batch(
        [image, label],
        batch_size=batch_size,
        num_threads=num_preprocess_threads,
        capacity=min_queue_examples + 3 * batch_size,
        allow_smaller_final_batch=True)

  # Display the training images in the visualizer.
  tf.summary.image('images', images)

  return images, tf.reshape(label_batch, [batch_size])


def input_fn(data_dir, batch_size, is_training):
  filenames = [data_dir + '/data_batch_%d.bin' % i for i in range(1, 6)]
  dataset = tf.data.FixedLengthRecordDataset(filenames, 3073)
  if is_training:
    dataset = dataset.shuffle(buffer_size=50000)
  dataset = dataset.map(lambda v: tf.decode_raw(v, tf.uint8), num_parallel_calls=4)
  dataset = dataset.batch(batch_size, drop_remainder=True)
  dataset = dataset.prefetch(1)
  iterator = dataset.make_one_shot_iterator()
  return iterator.get_next()
