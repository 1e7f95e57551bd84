"""Issue #26's acceptance on eager-mode files: the engine leaves a file that enables eager
execution whole (one file finding, no rule rewrites it), and the distributed pack then does
not migrate its Horovod either; NPU100 still gives every Horovod use of it a finding, which
names the opt-in while the pack is off. Nothing of such a file is rewritten, pack or not.
"""

from __future__ import annotations

from npu_codemod.plugins.manager import load_plugins
from npu_codemod.testing import assert_reports

from support.packs import DISTRIBUTED, repository_facts

OPT_IN = "npu-codemod migrates this with `--rules default,distributed`"
EAGER = '''\
#!/usr/bin/env python
"""Horovod MNIST in eager mode (TF 1.x): each worker trains on its shard of the data.

Run with: horovodrun -np 4 python tensorflow_mnist_eager.py
"""
import os

import tensorflow as tf
import horovod.tensorflow as hvd

from mnist_common import mnist_model, shard_of

tf.enable_eager_execution()

# Horovod: initialize Horovod and pin one GPU per process.
hvd.init()
config = tf.ConfigProto()
config.gpu_options.visible_device_list = str(hvd.local_rank())


def train(steps=1000):
  (images, labels), _ = tf.keras.datasets.mnist.load_data(path="mnist-%d.npz" % hvd.rank())
  dataset = shard_of(images, labels, hvd.size(), hvd.rank()).shuffle(1000).batch(128)
  model = mnist_model()
  # Horovod: scale the learning rate by the number of workers.
  optimizer = tf.train.RMSPropOptimizer(0.001 * hvd.size())
  checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
  for batch, (images, labels) in enumerate(dataset.take(steps // hvd.size())):
    with tf.GradientTape() as tape:
      logits = model(images, training=True)
      loss_value = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    # Horovod: average the gradients of every worker.
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss_value, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables),
                              global_step=tf.train.get_or_create_global_step())
    if batch == 0:
      # Horovod: start every worker from rank 0's variables.
      hvd.broadcast_variables(model.variables, root_rank=0)
    if batch % 10 == 0 and hvd.local_rank() == 0:
      print("Step #%d\\tLoss: %.6f" % (batch, loss_value))
  if hvd.rank() == 0:
    checkpoint.save(os.path.join(os.environ.get("CHECKPOINTS", "/tmp"), "ckpt"))


if __name__ == "__main__":
  train()
'''
COMMON = '''\
"""The model and data helpers of the MNIST examples."""
import tensorflow as tf


def mnist_model():
  return tf.keras.Sequential([
      tf.keras.layers.Reshape(target_shape=[28, 28, 1], input_shape=(28, 28)),
      tf.keras.layers.Conv2D(32, [3, 3], activation="relu"),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(10)])


def shard_of(images, labels, count, index):
  dataset = tf.data.Dataset.from_tensor_slices(
      (tf.cast(images[..., tf.newaxis] / 255.0, tf.float32), tf.cast(labels, tf.int64)))
  return dataset.shard(count, index)
'''
FACTS = repository_facts({"tensorflow_mnist_eager.py": EAGER, "mnist_common.py": COMMON})
#: The lines of EAGER that use Horovod (not its import).
USES = {number for number, line in enumerate(EAGER.splitlines(), 1)
        if "hvd." in line and not line.lstrip().startswith(("#", "import"))}


def default_rules() -> set[str]:
    return {rule.id for rule in load_plugins().rules() if rule.default_on and rule.pack != "distributed"}


def test_with_the_pack_off_each_horovod_use_of_an_eager_file_names_the_opt_in() -> None:
    findings = assert_reports(default_rules(), EAGER, facts=FACTS, path="tensorflow_mnist_eager.py")
    horovod = [f for f in findings if f.rule_id == "NPU100"]
    assert {f.line for f in horovod} == USES
    assert all(OPT_IN in f.message and f.status == "unmigrated" for f in horovod)
    (init,) = [f.message for f in horovod if f.line == 16]
    assert init.startswith("Horovod API in a file no rule rewrites (hvd.init): port the file to "
                           "graph mode (tf.Session or Estimator) first, then " + OPT_IN)
    (skipped,) = [f for f in findings if f.rule_id == "NPU000"]
    assert skipped.line == 13 and skipped.message.startswith("eager execution is enabled")


def test_with_the_pack_on_an_eager_file_is_left_and_each_horovod_use_reported() -> None:
    findings = assert_reports(default_rules() | DISTRIBUTED, EAGER, facts=FACTS,
                              path="tensorflow_mnist_eager.py")
    horovod = [f for f in findings if f.rule_id == "NPU100"]
    assert {f.line for f in horovod} == USES
    assert all("first, then the distributed pack migrates it" in f.message for f in horovod)


def test_a_helper_without_horovod_gets_no_horovod_finding() -> None:
    findings = assert_reports(default_rules(), COMMON, facts=FACTS, path="mnist_common.py")
    assert not [f for f in findings if "Horovod" in f.message]
