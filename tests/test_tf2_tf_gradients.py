"""NPU068 treats ``grads = tf.gradients(loss, variables)`` (graph-mode gradients in a
``tf.function``, TensorFlowTTS's trainers) as a gradient statement like ``tape.gradient``: all-
reduced before a later ``apply_gradients`` of the block, reported when another method applies
them. Before, such gradients got no NPU068 finding at all."""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

SAME_BLOCK = '''\
import tensorflow as tf


@tf.function
def step(model, opt, x, y):
    loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tf.gradients(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
'''
SAME_BLOCK_AFTER = '''\
import npu_device as npu
import tensorflow as tf


@tf.function
def step(model, opt, x, y):
    loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tf.gradients(loss, model.trainable_variables)
    grads = npu.distribute.all_reduce(grads, "mean")
    opt.apply_gradients(zip(grads, model.trainable_variables))
'''
TRAINER = '''\
import tensorflow as tf


class Trainer:
    def _gradients(self, x, y):
        loss = tf.reduce_mean(tf.square(self.model(x) - y))
        gradients = tf.gradients(loss, self.model.trainable_variables)
        return gradients, loss

    def _step(self, x, y):
        gradients, loss = self._gradients(x, y)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
'''


def test_tf_gradients_applied_in_the_block_are_all_reduced() -> None:
    assert_migrates({"NPU068"}, SAME_BLOCK, SAME_BLOCK_AFTER, facts={"tf-runtime:2"},
                    findings=[("NPU000", 1, 0, "unmigrated"), ("NPU068", 7, 4, "migrated")])


def test_tf_gradients_applied_in_another_method_are_reported() -> None:
    found = assert_reports({"NPU068"}, TRAINER, facts={"tf-runtime:2"})
    assert [(f.rule_id, f.line, f.status) for f in found if f.rule_id == "NPU068"] == [
        ("NPU068", 7, "unmigrated")]
    assert "gradients = npu.distribute.all_reduce(gradients" in found[-1].message
