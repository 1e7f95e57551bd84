"""``npu-codemod verify`` on real TF 1.x code shapes: ``tf.contrib`` (slim in an
``arg_scope``, ``tf.contrib.layers``' initializer, ``tf.contrib.rnn``'s cells), an Estimator
and a TPUEstimator (``use_tpu=False``), each migrated by the tool: all reach a verdict with
evidence, and the tool's migrations are equivalent.
"""

from __future__ import annotations

import pytest

from support.verify_repos import migrated_by_the_tool, repo_with_branch, verify_all, verify_table

CONTRIB = '''\
"""A small sequence classifier written with tf.contrib: slim layers in an arg_scope, an LSTM
from tf.contrib.rnn, a Xavier initializer from tf.contrib.layers."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import slim

rng = np.random.RandomState(0)
tokens = rng.randint(0, 50, size=(64, 12)).astype("int32")
labels = rng.randint(0, 2, size=(64,)).astype("int64")
dataset = tf.data.Dataset.from_tensor_slices((tokens, labels)).repeat(20).batch(16, drop_remainder=True)
x, y = dataset.make_one_shot_iterator().get_next()
embeddings = tf.get_variable("embeddings", [50, 8], initializer=tf.contrib.layers.xavier_initializer())
inputs = tf.unstack(tf.nn.embedding_lookup(embeddings, x), axis=1)
cell = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(16) for _ in range(2)])
outputs, _ = tf.contrib.rnn.static_rnn(cell, inputs, dtype=tf.float32)
with slim.arg_scope([slim.fully_connected], weights_regularizer=slim.l2_regularizer(1e-4)):
    hidden = slim.fully_connected(outputs[-1], 16)
    logits = slim.fully_connected(hidden, 2, activation_fn=None)
loss = tf.losses.sparse_softmax_cross_entropy(y, logits) + tf.add_n(tf.losses.get_regularization_losses())
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    steps = 0
    try:
        while True:
            _, value = sess.run([train_op, loss])
            steps += 1
    except tf.errors.OutOfRangeError:
        print("trained", steps, "steps; final loss", value)
'''
ESTIMATOR = '''\
"""A regression Estimator: train, then evaluate on a held-out set."""
import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features["x"], 16, activation=tf.nn.relu)
    hidden = tf.layers.dropout(hidden, rate=0.25, training=mode == tf.estimator.ModeKeys.TRAIN)
    predictions = tf.layers.dense(hidden, 1)
    loss = tf.losses.mean_squared_error(labels, predictions)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(features, labels, repeat):
    def make():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": features}, labels))
        return (dataset.repeat() if repeat else dataset).batch(16, drop_remainder=True)
    return make


rng = np.random.RandomState(0)
features, labels = rng.rand(64, 8).astype("float32"), rng.rand(64, 1).astype("float32")
config = tf.estimator.RunConfig(model_dir="model", tf_random_seed=1, save_checkpoints_steps=None)
estimator = tf.estimator.Estimator(model_fn, config=config)
estimator.train(input_fn(features, labels, repeat=True), steps=500)
print("eval loss", estimator.evaluate(input_fn(features, labels, repeat=False))["loss"])
'''
TPU_ESTIMATOR = '''\
"""A TPUEstimator (on CPU: use_tpu=False), as TPU code is written for TF 1.x."""
import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features, 1)
    loss = tf.losses.mean_squared_error(labels, logits)
    optimizer = tf.contrib.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.05))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
    rng = np.random.RandomState(0)
    features, labels = rng.rand(64, 8).astype("float32"), rng.rand(64, 1).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


config = tf.contrib.tpu.RunConfig(model_dir="model", tf_random_seed=1,
                                  tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=1))
estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False,
                                        train_batch_size=16, eval_batch_size=16)
estimator.train(input_fn, max_steps=300)
print("eval loss", estimator.evaluate(input_fn, steps=2)["loss"])
'''
SCRIPTS = {"contrib": CONTRIB, "estimator": ESTIMATOR, "tpu-estimator": TPU_ESTIMATOR}


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("verify-contrib")
    for name, text in SCRIPTS.items():
        migrated = migrated_by_the_tool(root / f"migrate-{name}", {"train.py": text}, "train.py")
        files = {"train.py": text, "pyproject.toml": verify_table("python train.py")}
        repo_with_branch(root / name, files, {"train.py": migrated})
    done, records = verify_all(root, list(SCRIPTS))
    return {"done": done, "verify": records}


@pytest.mark.parametrize("name, evidence", [
    ("contrib", "10 training step(s) (1 fetched value(s) each), 1 other result(s), 9 variable(s) at "
                "the end (4418 parameters), 1 printed metric(s)"),
    ("estimator", "10 training step(s) (1 fetched value(s) each), 4 other result(s), 4 variable(s) "
                  "at the end (161 parameters), 1 printed metric(s)"),
    ("tpu-estimator", "10 training step(s) (1 fetched value(s) each), 2 other result(s), 2 "
                      "variable(s) at the end (9 parameters), 1 printed metric(s)"),
])
def test_real_tf1_code_reaches_a_verdict_on_evidence(verified, name: str, evidence: str) -> None:
    record = verified["verify"][name]
    assert record["verdict"] == "equivalent", record["reason"]
    assert record["evidence"] == evidence
    assert record["violations"] == []
    assert record["original_violations"][0].startswith("session created without the NpuOptimizer")
    assert verified["done"].returncode == 0, verified["done"].stderr
