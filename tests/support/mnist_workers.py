"""A small Horovod training repository: a script, its model module and its worker setup, in
the shape real repositories have (the Horovod calls behind helper functions of their own
module, the model in another)."""

from __future__ import annotations

TRAIN = '''\
"""Trains the MNIST classifier on several workers with Horovod."""
import tensorflow as tf

from model import classifier
from workers import setup_workers


def main():
    setup_workers()
    images = tf.placeholder(tf.float32, [None, 784])
    logits = classifier(images, keep_prob=0.9)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())


if __name__ == "__main__":
    main()
'''

MODEL = '''\
"""The classifier: two dense layers with dropout between them."""
import tensorflow as tf


def classifier(features, keep_prob):
    hidden = tf.layers.dense(features, 256, activation=tf.nn.relu)
    return tf.layers.dense(tf.nn.dropout(hidden, keep_prob), 10)
'''

WORKERS = '''\
"""Worker setup: Horovod ranks and the optimizer they share."""
import horovod.tensorflow as hvd
import tensorflow as tf


def setup_workers():
    hvd.init()
    return hvd.rank()


def shared_optimizer(learning_rate):
    optimizer = tf.train.AdamOptimizer(learning_rate * hvd.size())
    return hvd.DistributedOptimizer(optimizer)
'''

FILES = {"train.py": TRAIN, "model.py": MODEL, "workers.py": WORKERS,
         "README.md": "MNIST on many workers.\n"}

#: A third-party rule pack a team keeps beside the repositories: it moves the team's own
#: ``mylib.dropout`` helper onto the NPU's dropout.
MYLIB_PLUGIN = '''\
from npu_codemod.api import Rule, hookimpl


class MylibDropout(Rule):
    id = "MYL001"
    name = "mylib-dropout"
    description = "mylib.dropout -> npu_ops.dropout"
    modules = ("mylib",)
    pattern = "power< 'mylib' trailer< '.' 'dropout' > trailer< '(' [any] ')' > >"

    def visit(self, node, capture, ctx):
        node.children[0].value = "npu_ops"
        ctx.report(node, "migrated", "replaced mylib.dropout with npu_ops.dropout")


@hookimpl
def npu_codemod_rules():
    return [MylibDropout()]
'''

HEAD = '''\
"""The classification head: mylib's dropout over pooled features."""
import mylib


def head(pooled, keep_prob):
    return mylib.dropout(pooled, keep_prob)
'''
