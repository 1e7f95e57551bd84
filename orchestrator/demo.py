"""``npu-codemod demo``: build sample TF 1.x and TF 2.x repos in a temp dir and run the whole pipeline.

It shows a new user, on a fresh machine, what a run does: branches, commits and reports.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

SAMPLE_REPOS: dict[str, dict[str, str]] = {
    "alexnet-finetune": {
        "finetune.py": '''\
"""Fine-tune AlexNet's last layers on a new data set (TF 1.x, sess.run)."""
import tensorflow as tf
from tensorflow.data import Iterator

from datagenerator import ImageDataGenerator

batch_size = 16
num_epochs = 8
tr_data = ImageDataGenerator("train.txt", batch_size=batch_size, shuffle=True)
iterator = Iterator.from_structure(tr_data.data.output_types, tr_data.data.output_shapes)
next_batch = iterator.get_next()
training_init_op = iterator.make_initializer(tr_data.data)

x = tf.placeholder(tf.float32, [batch_size, 32, 32, 3])
y = tf.placeholder(tf.float32, [batch_size, 2])
keep_prob = tf.placeholder(tf.float32)
fc7 = tf.layers.dense(tf.layers.flatten(x), 64, activation=tf.nn.relu)
dropout7 = tf.nn.dropout(fc7, keep_prob)
logits = tf.layers.dense(dropout7, 2)
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)

init = tf.global_variables_initializer()
sess = tf.Session()
sess.run(init)
for epoch in range(num_epochs):
    sess.run(training_init_op)
    img_batch, label_batch = sess.run(next_batch)
    _, value = sess.run([train_op, loss], feed_dict={x: img_batch, y: label_batch, keep_prob: 0.5})
    print("epoch", epoch, "loss", value)
''',
        "datagenerator.py": '''\
import tensorflow as tf


class ImageDataGenerator(object):
    """Images and one-hot labels from lines ``<image path> <label>``."""

    def __init__(self, txt_file, batch_size, shuffle=True):
        data = tf.data.TextLineDataset(txt_file)
        data = data.map(self._parse, num_parallel_calls=8)
        if shuffle:
            data = data.shuffle(buffer_size=1000, seed=7)
        self.data = data.batch(batch_size)

    def _parse(self, line):
        parts = tf.strings.split([line]).values
        path, label = parts[0], parts[1]
        # A stand-in for decoding the JPEG: a pattern that depends on the file name.
        shade = tf.cast(tf.strings.to_hash_bucket_fast(path, 100), tf.float32) / 100.0
        image = tf.reshape(tf.range(32 * 32 * 3, dtype=tf.float32), [32, 32, 3]) / 3072.0 * shade
        return image, tf.one_hot(tf.strings.to_number(label, tf.int32), 2)
''',
        "train.txt": "".join(f"images/{n:03d}.jpg {n % 2}\n" for n in range(40)),
        "pyproject.toml": '[tool.npu-codemod.verify]\ncommand = "python finetune.py"\n',
    },
    "dqn-agent": {
        "agent.py": '''\
import random

import tensorflow as tf


class DQNAgent:
    def __init__(self, n_actions):
        self.n_actions = n_actions
        self.memory = ReplayMemory(10000)
        self.sess = tf.Session()  # closed by the caller, if ever

    def train(self):
        batch = self.memory.batch(32)
        return batch


class ReplayMemory:
    def __init__(self, size):
        self.items = []

    def batch(self, n):
        return random.sample(self.items, n)
''',
        "train.py": '''\
"""Train the agent's Q-network on transitions of a synthetic environment."""
import numpy as np
import tensorflow as tf

from agent import DQNAgent

agent = DQNAgent(n_actions=4)
rng = np.random.RandomState(0)
agent.memory.items = [(rng.rand(8).astype("float32"), rng.randint(4), rng.rand()) for _ in range(256)]

states = tf.placeholder(tf.float32, [32, 8])
actions = tf.placeholder(tf.int32, [32])
targets = tf.placeholder(tf.float32, [32])
hidden = tf.layers.dense(states, 32, activation=tf.nn.relu)
q_values = tf.layers.dense(hidden, agent.n_actions)
chosen = tf.reduce_sum(q_values * tf.one_hot(actions, agent.n_actions), axis=1)
loss = tf.reduce_mean(tf.square(targets - chosen))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)

agent.sess.run(tf.global_variables_initializer())
for step in range(6):
    batch = agent.train()
    feed = {states: np.stack([s for s, _, _ in batch]), actions: [a for _, a, _ in batch],
            targets: [r for _, _, r in batch]}
    _, value = agent.sess.run([train_op, loss], feed_dict=feed)
    print("step", step, "loss", value)
agent.sess.close()
''',
    },
    "bert-classifier": {
        "run_classifier.py": '''\
"""Fine-tune BERT on a classification task with TPUEstimator (TF 1.x, Estimator)."""
import tensorflow as tf

from estimators import ClassifierEstimator
import optimization

flags = tf.flags
FLAGS = flags.FLAGS


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["pooled_output"], params["num_labels"])
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = optimization.create_optimizer(loss, params["learning_rate"], FLAGS.use_tpu)
    return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main(_):
    run_config = tf.contrib.tpu.RunConfig(
        model_dir=FLAGS.output_dir,
        save_checkpoints_steps=1000,
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=1000, num_shards=8))
    estimator = tf.contrib.tpu.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn,
        config=run_config,
        train_batch_size=32,
        params={"num_labels": 2, "learning_rate": 2e-5})
    estimator.train(input_fn=train_input_fn, max_steps=10000)
    distilled = ClassifierEstimator(num_labels=2, config=tf.estimator.RunConfig(FLAGS.output_dir))
    distilled.train(input_fn=train_input_fn, max_steps=1000)


if __name__ == "__main__":
    tf.app.run()
''',
        "estimators.py": '''\
import tensorflow as tf


class ClassifierEstimator(tf.estimator.Estimator):
    def __init__(self, num_labels, model_dir=None, config=None):
        super(ClassifierEstimator, self).__init__(
            model_fn=make_model_fn(num_labels), model_dir=model_dir, config=config)
''',
        "optimization.py": '''\
import tensorflow as tf


def create_optimizer(loss, learning_rate, use_tpu):
    optimizer = tf.train.AdamOptimizer(learning_rate)
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, "dynamic")
    if use_tpu:
        optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
    return optimizer.minimize(loss, global_step=tf.train.get_global_step())
''',
    },
    # Migrated by the distributed pack, which is opt-in: `npu-codemod run --rules default,distributed`.
    "horovod-mnist": {
        "train.py": '''\
"""Horovod MNIST on tf.estimator (TF 1.x): one process per GPU, launched by horovodrun."""
import tensorflow as tf
import horovod.tensorflow as hvd

from model import cnn_model_fn, train_input_fn


def main(_):
    hvd.init()
    config = tf.ConfigProto()
    config.gpu_options.visible_device_list = str(hvd.local_rank())
    model_dir = "./mnist_model" if hvd.rank() == 0 else None
    classifier = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir=model_dir,
                                        config=tf.estimator.RunConfig(session_config=config))
    classifier.train(input_fn=lambda: train_input_fn(hvd.size(), hvd.rank()),
                     steps=20000 // hvd.size(),
                     hooks=[hvd.BroadcastGlobalVariablesHook(0)])


if __name__ == "__main__":
    tf.app.run()
''',
        "model.py": '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def cnn_model_fn(features, labels, mode):
    logits = tf.layers.dense(tf.layers.flatten(features["x"]), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    optimizer = hvd.DistributedOptimizer(tf.train.MomentumOptimizer(0.001 * hvd.size(), 0.9))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def train_input_fn(shards, index):
    dataset = tf.data.TFRecordDataset("mnist.tfrecord").shard(shards, index)
    return dataset.shuffle(10000).batch(100).repeat()
''',
    },
    "plain-python": {
        "tool.py": "import os\n\nprint(os.getcwd())\n",
    },
    # TF 2.x (the tf2 pack): a Keras fit script with mixed precision, pinned to TF 2.6.
    "keras-tf2": {
        "requirements.txt": "tensorflow==2.6.5\n",
        "train.py": '''\
"""Train a CIFAR-10 classifier with Keras fit and mixed precision (TensorFlow 2.x)."""
import argparse

import tensorflow as tf
from tensorflow.keras import mixed_precision


def build_model():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10, dtype="float32"),
    ])


def main(args):
    mixed_precision.set_global_policy("mixed_float16")
    (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
    dataset = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).shuffle(10000)
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(args.learning_rate))
    model = build_model()
    model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(dataset.batch(args.batch_size), epochs=args.epochs,
              callbacks=[tf.keras.callbacks.TensorBoard(args.log_dir)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--log_dir", default="logs")
    main(parser.parse_args())
''',
    },
}


#: The verify command of a sample repository that has none in its own pyproject.toml: on its
#: repo-list line (``verify="..."``), as a user would give it.
SAMPLE_VERIFY: dict[str, str] = {"dqn-agent": "python train.py"}


def build_sample_repos(root: Path) -> Path:
    """Create the sample git repos under ``root`` and return the repo list file."""
    for name, files in SAMPLE_REPOS.items():
        repo = root / name
        repo.mkdir(parents=True)
        for relative, text in files.items():
            (repo / relative).write_text(text, encoding="utf-8")
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "Initial TF 1.x code")
    repo_list = root / "repos.txt"
    repo_list.write_text("# sample repositories built by npu-codemod demo\n"
                         + "".join(_list_line(name) for name in SAMPLE_REPOS), encoding="utf-8")
    return repo_list


def _list_line(name: str) -> str:
    command = SAMPLE_VERIFY.get(name)
    return f'{name} verify="{command}"\n' if command else f"{name}\n"


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=npu-codemod demo", "-c", "user.email=demo@npu-codemod.invalid"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True)
