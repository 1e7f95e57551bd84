"""Real-code-shaped TensorFlow 2.x and TF 2.x-compat scripts for the TF 2.x detection and the
``tf2`` pack's golden tests (``test_tf2_*.py``)."""

from __future__ import annotations

#: NPU061's device init, as it writes it into a file that binds no ``npu``.
DEVICE_INIT = "import npu_device as npu\nnpu.open().as_default()\n"


def with_init(source: str, init: str = DEVICE_INIT) -> str:
    """``source`` with ``init`` right after its module docstring (after a shebang too)."""
    end = source.index('"""', source.index('"""') + 3) + 4
    return source[:end] + init + source[end:]

#: A custom training loop: tf.function, GradientTape, a tf.data pipeline; no TF2-only API.
CUSTOM_LOOP = '''\
"""Train a small CNN on CIFAR-10 with a custom loop (eager TF 2.x)."""
import argparse
import os

import numpy as np
import tensorflow as tf

from models import small_cnn


def make_dataset(images, labels, batch_size, training):
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    if training:
        dataset = dataset.shuffle(10000)
    dataset = dataset.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
    return dataset.batch(batch_size).prefetch(tf.data.experimental.AUTOTUNE)


def main(args):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    train_ds = make_dataset(x_train, y_train, args.batch_size, training=True)
    model = small_cnn(num_classes=10)
    optimizer = tf.keras.optimizers.Adam(args.learning_rate)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for epoch in range(args.epochs):
        losses = [train_step(images, labels).numpy() for images, labels in train_ds]
        print("epoch", epoch, "loss", np.mean(losses))
    model.save_weights(os.path.join(args.model_dir, "ckpt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--model_dir", default="/tmp/cifar")
    main(parser.parse_args())
'''

#: A Keras fit script with a TF 2.x-only API (tf.random.set_seed), callbacks and __main__.
KERAS_FIT = '''\
"""Fine-tune a text classifier with Keras fit (TensorFlow 2.x)."""
import argparse

import tensorflow as tf
from tensorflow import keras


def build_model(vocab_size, dropout):
    inputs = keras.Input(shape=(None,), dtype="int64")
    x = keras.layers.Embedding(vocab_size, 128)(inputs)
    x = keras.layers.Bidirectional(keras.layers.LSTM(64))(x)
    x = tf.nn.dropout(x, rate=dropout)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


def main(args):
    tf.random.set_seed(args.seed)
    (x_train, y_train), (x_val, y_val) = keras.datasets.imdb.load_data(num_words=args.vocab)
    x_train = keras.preprocessing.sequence.pad_sequences(x_train, maxlen=200)
    x_val = keras.preprocessing.sequence.pad_sequences(x_val, maxlen=200)
    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(25000)
    train_ds = train_ds.batch(args.batch_size)
    model = build_model(args.vocab, args.dropout)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    callbacks = [
        keras.callbacks.ModelCheckpoint(args.checkpoint, save_best_only=True),
        keras.callbacks.EarlyStopping(patience=2),
    ]
    model.fit(train_ds, epochs=args.epochs, validation_data=(x_val, y_val), callbacks=callbacks)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=20000)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--dropout", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--checkpoint", default="best.h5")
    main(parser.parse_args())
'''

#: TF 1.x code run on TensorFlow 2.x: compat.v1, disable_v2_behavior, a Session.
COMPAT_SESSION = '''\
"""Linear regression the TF 1.x way, on TensorFlow 2 through tf.compat.v1."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def train(steps=200):
    x = tf.placeholder(tf.float32, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [1, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    data = np.random.rand(64, 1).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op, feed_dict={x: data, y: 3 * data})
        return sess.run(w)


if __name__ == "__main__":
    print(train())
'''

COMPAT_SESSION_MIGRATED = COMPAT_SESSION.replace(
    '''"""Linear regression the TF 1.x way, on TensorFlow 2 through tf.compat.v1."""
''', '''"""Linear regression the TF 1.x way, on TensorFlow 2 through tf.compat.v1."""
import npu_device
from npu_device.compat.v1.npu_init import *
npu_device.compat.enable_v1()
''').replace("with tf.Session() as sess:", "with tf.Session(config=npu_config_proto()) as sess:")

#: A custom loop with mixed precision and a LossScaleOptimizer (the TF 2.6 guide's case).
MIXED_PRECISION_LOOP = '''\
"""ResNet-50 on ImageNet with mixed precision and a custom training loop."""
import os
import time

import tensorflow as tf
from tensorflow.keras import mixed_precision

from official.vision import resnet_model
from official.vision.input_pipeline import imagenet_dataset

FLAGS_BATCH = int(os.environ.get("BATCH_SIZE", "256"))


def build(learning_rate):
    mixed_precision.set_global_policy("mixed_float16")
    model = resnet_model.resnet50(num_classes=1000)
    optimizer = tf.keras.optimizers.SGD(learning_rate, momentum=0.9)
    optimizer = mixed_precision.LossScaleOptimizer(optimizer, dynamic_growth_steps=2000)
    return model, optimizer


def train(data_dir, steps, learning_rate=0.1):
    model, optimizer = build(learning_rate)
    dataset = imagenet_dataset(data_dir, FLAGS_BATCH, training=True)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = loss_fn(labels, logits)
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    start = time.time()
    for step, (images, labels) in enumerate(dataset.take(steps)):
        loss = train_step(images, labels)
        if step % 100 == 0:
            print(step, float(loss), time.time() - start)
    if isinstance(optimizer, mixed_precision.LossScaleOptimizer):
        print("final loss scale", float(optimizer.loss_scale))
    return model


if __name__ == "__main__":
    train(os.environ["DATA_DIR"], int(os.environ.get("STEPS", "1000")))
'''

#: A MirroredStrategy custom loop (the opt-in tf2-distributed pack's case).
MIRRORED_LOOP = '''\
"""Multi-GPU training of a ResNet with MirroredStrategy and a custom loop (TF 2.x)."""
import tensorflow as tf

from resnet import resnet50

GLOBAL_BATCH = 256


def train(dataset, epochs):
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = resnet50(num_classes=1000)
        optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
    dist_dataset = strategy.experimental_distribute_dataset(dataset.batch(GLOBAL_BATCH))

    def step(images, labels):
        with tf.GradientTape() as tape:
            per_example = loss_fn(labels, model(images, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(images, labels):
        losses = strategy.run(step, args=(images, labels))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    for epoch in range(epochs):
        for images, labels in dist_dataset:
            loss = distributed_step(images, labels)
        tf.print("epoch", epoch, "loss", loss)
    return model


if __name__ == "__main__":
    train(tf.data.TFRecordDataset(tf.io.gfile.glob("train-*")), epochs=90)
'''

#: A Keras fit script for several workers: a functional model built under a strategy scope,
#: a loaded one, a lazily built one, training and validation pipelines, a sharded input_fn.
KERAS_WORKERS = '''\
"""Train an MNIST classifier on several workers with Keras fit (TF 2.x)."""
import argparse
import os

import tensorflow as tf

from mnist_utils import normalize


def input_fn(files, batch_size, input_context=None):
    dataset = tf.data.TFRecordDataset(files)
    if input_context is not None:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    dataset = dataset.map(normalize)
    return dataset.batch(batch_size)


def build_model(num_classes):
    inputs = tf.keras.Input(shape=(28, 28))
    x = tf.keras.layers.Flatten()(inputs)
    x = tf.keras.layers.Dense(128, activation="relu")(x)
    outputs = tf.keras.layers.Dense(num_classes)(x)
    model = tf.keras.Model(inputs=inputs, outputs=outputs)
    return model


def build_head(num_classes):
    head = tf.keras.Sequential([tf.keras.layers.Dense(num_classes)])
    return head


def main(args):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        if args.resume:
            model = tf.keras.models.load_model(os.path.join(args.model_dir, "last.h5"))
        else:
            model = build_model(10)
        model.compile(optimizer=tf.keras.optimizers.Adam(args.learning_rate),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).batch(args.batch_size)
    eval_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(args.batch_size)
    model.fit(train_ds, epochs=args.epochs, validation_data=eval_ds)
    model.save(os.path.join(args.model_dir, "last.h5"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--model_dir", default="/tmp/mnist")
    parser.add_argument("--resume", action="store_true")
    main(parser.parse_args())
'''

#: A Keras model class with its own train_step, and a minimize loop on a plain optimizer.
OWN_TRAIN_STEP = '''\
"""A regressor with its own train_step, and a warm-up loop with minimize (TF 2.x)."""
import tensorflow as tf
from tensorflow import keras


class Regressor(keras.Model):
    """A regressor that logs its gradient norm."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "grad_norm": tf.linalg.global_norm(grads)}


def warm_up(scale, steps):
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    for _ in range(steps):
        optimizer.minimize(lambda: tf.square(scale - 1.0), [scale])
    return scale


def fit(x, y, epochs):
    inputs = keras.Input(shape=(x.shape[1],))
    outputs = keras.layers.Dense(1)(inputs)
    model = Regressor(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    model.fit(x, y, epochs=epochs)
    return model
'''

#: Keras in session mode on TensorFlow 2.x (compat.v1), its input pipeline pinned to the CPU.
COMPAT_KERAS = '''\
"""Train a Keras classifier in TF 1.x session mode on TensorFlow 2 (tf.compat.v1)."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu", input_shape=(20,)),
        tf.keras.layers.Dense(2, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(epochs):
    with tf.device("/cpu:0"):
        features = np.random.rand(512, 20).astype(np.float32)
        labels = np.random.randint(0, 2, size=512)
    model = build_model()
    model.fit(features, labels, epochs=epochs, batch_size=32)
    return model


if __name__ == "__main__":
    train(3)
'''

#: TFLite's model personalization (``tensorflow/examples``, ``lite/examples/model_personalization``):
#: a ``train`` step exported as an on-device training signature, never run by the script.
PERSONALIZATION = '''\
"""Converts a TF model to a TFLite transfer learning model."""
import tensorflow as tf


class TransferLearningModel(tf.Module):
    def __init__(self, learning_rate=0.001):
        self.ws = tf.Variable(tf.zeros((62720, 4)), name="ws", trainable=True)
        self.bs = tf.Variable(tf.zeros((1, 4)), name="bs", trainable=True)
        self.loss_fn = tf.keras.losses.CategoricalCrossentropy()
        self.optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate)

    @tf.function(input_signature=[tf.TensorSpec([None, 62720], tf.float32),
                                  tf.TensorSpec([None, 4], tf.float32)])
    def train(self, bottleneck, label):
        with tf.GradientTape() as tape:
            logits = tf.matmul(bottleneck, self.ws) + self.bs
            loss = self.loss_fn(tf.nn.softmax(logits), label)
        gradients = tape.gradient(loss, [self.ws, self.bs])
        self.optimizer.apply_gradients(zip(gradients, [self.ws, self.bs]))
        return {"loss": loss}


def convert_and_save(saved_model_dir="saved_model"):
    model = TransferLearningModel()
    tf.saved_model.save(model, saved_model_dir,
                        signatures={"train": model.train.get_concrete_function()})
    converter = tf.lite.TFLiteConverter.from_saved_model(saved_model_dir)
    with open("model.tflite", "wb") as f:
        f.write(converter.convert())


if __name__ == "__main__":
    convert_and_save()
'''
