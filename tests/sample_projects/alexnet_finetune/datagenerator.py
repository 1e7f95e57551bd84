"""Containes a helper class for image input pipelines in tensorflow."""
import tensorflow as tf
import numpy as np

from tensorflow.python.framework import dtypes
from tensorflow.python.framework.ops import convert_to_tensor

IMAGENET_MEAN = tf.constant([123.68, 116.779, 103.939], dtype=tf.float32)


class ImageDataGenerator(object):
    """Wrapper class around the new Tensorflows dataset pipeline."""

    def __init__(self, txt_file, mode, batch_size, num_classes, shuffle=True, buffer_size=1000):
        self.txt_file = txt_file
        self.num_classes = num_classes
        self._read_txt_file()
        self.data_size = len(self.labels)
        self.img_paths = convert_to_tensor(self.img_paths, dtype=dtypes.string)
        self.labels = convert_to_tensor(self.labels, dtype=dtypes.int32)

        data = tf.data.Dataset.from_tensor_slices((self.img_paths, self.labels))
        if mode == 'training':
            data = data.map(self._parse_function_train, num_parallel_calls=8)
        else:
            data = data.map(self._parse_function_inference, num_parallel_calls=8)
        if shuffle:
            data = data.shuffle(buffer_size=buffer_size)

        # create a new dataset with batches of images
        data = data.batch(batch_size)
        self.data = data

    def _read_txt_file(self):
        self.img_paths, self.labels = [], []
        with open(self.txt_file, 'r') as f:
            for line in f.readlines():
                items = line.split(' ')
                self.img_paths.append(items[0])
                self.labels.append(int(items[1]))

    def _parse_function_train(self, filename, label):
        one_hot = tf.one_hot(label, self.num_classes)
        img_decoded = tf.image.decode_png(tf.read_file(filename), channels=3)
        img_resized = tf.image.resize_images(img_decoded, [227, 227])
        img_centered = tf.subtract(img_resized, IMAGENET_MEAN)
        return img_centered[:, :, ::-1], one_hot

    _parse_function_inference = _parse_function_train
