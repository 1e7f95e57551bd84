"""``npu-codemod demo``: build sample TF 1.x repos in a temp dir and run the whole pipeline.

It shows a new user, on a fresh machine, what a run does: branches, commits and reports.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

SAMPLE_REPOS: dict[str, dict[str, str]] = {
    "alexnet-finetune": {
        "finetune.py": '''\
"""Fine-tune AlexNet on a new data set (TF 1.x, sess.run)."""
import numpy as np
import tensorflow as tf
from tensorflow.data import Iterator

from datagenerator import ImageDataGenerator

batch_size = 128
tr_data = ImageDataGenerator("train.txt", batch_size=batch_size, shuffle=True)
iterator = Iterator.from_structure(tr_data.data.output_types, tr_data.data.output_shapes)
next_batch = iterator.get_next()
training_init_op = iterator.make_initializer(tr_data.data)

x = tf.placeholder(tf.float32, [batch_size, 227, 227, 3])
keep_prob = tf.placeholder(tf.float32)
fc7 = tf.layers.dense(tf.layers.flatten(x), 4096)
dropout7 = tf.nn.dropout(fc7, keep_prob)
loss = tf.reduce_mean(dropout7)
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)

init = tf.global_variables_initializer()
sess = tf.Session()
sess.run(init)
for epoch in range(10):
    sess.run(training_init_op)
    img_batch, label_batch = sess.run(next_batch)
    sess.run(train_op, feed_dict={x: img_batch, keep_prob: 0.5})
''',
        "datagenerator.py": '''\
import tensorflow as tf


class ImageDataGenerator(object):
    def __init__(self, txt_file, batch_size, shuffle=True):
        data = tf.data.TextLineDataset(txt_file)
        data = data.map(self._parse, num_parallel_calls=8)
        if shuffle:
            data = data.shuffle(buffer_size=1000)
        self.data = data.batch(batch_size)

    def _parse(self, line):
        return tf.strings.split([line]).values
''',
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
    },
    "plain-python": {
        "tool.py": "import os\n\nprint(os.getcwd())\n",
    },
}


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
                         + "".join(f"{name}\n" for name in SAMPLE_REPOS), encoding="utf-8")
    return repo_list


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=npu-codemod demo", "-c", "user.email=demo@npu-codemod.invalid"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True)
