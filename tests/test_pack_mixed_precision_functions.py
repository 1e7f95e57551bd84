"""NPU031 and NPU032 on a loss scale that a function of the file returns, passed as
``MixedPrecisionLossScaleOptimizer(opt, loss_scale())``: the pair agrees. Both rewrite (the
optimizer becomes NPULossScaleOptimizer fed by the function's NPU manager), or, when one of
them is disabled or cannot act, neither does and both report."""

from __future__ import annotations

from npu_codemod.testing import assert_migrates, assert_reports

PACK = {"NPU001", "NPU031", "NPU032"}

TRAINER = '''\
"""Mixed-precision BERT pretraining: the optimizer and its loss scale."""
import tensorflow as tf

FLAGS = tf.flags.FLAGS


def loss_scale():
    """Dynamic loss scaling, as the NVIDIA BERT recipe sets it."""
    if FLAGS.fixed_loss_scale:
        return tf.train.experimental.FixedLossScale(FLAGS.fixed_loss_scale)
    scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 32, increment_period=1000)
    return scale


def create_optimizer(loss, learning_rate):
    optimizer = tf.train.AdamOptimizer(learning_rate)
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, loss_scale())
    return optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
'''
MIGRATED = TRAINER.replace(
    '"""\nimport tensorflow', '"""\nfrom npu_bridge.npu_init import *\nimport tensorflow').replace(
    "tf.train.experimental.FixedLossScale(FLAGS.fixed_loss_scale)",
    "FixedLossScaleManager(loss_scale=FLAGS.fixed_loss_scale)").replace(
    "tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 32, increment_period=1000)",
    "ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 32, incr_every_n_steps=1000, incr_ratio=2)"
).replace("tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, loss_scale())",
          "NPULossScaleOptimizer(optimizer, loss_scale())")


def test_both_rewrite_a_loss_scale_returned_by_a_function_of_the_file() -> None:
    findings = assert_migrates(PACK, TRAINER, MIGRATED, findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU032", 10, 15, "migrated"),
        ("NPU032", 11, 12, "migrated"), ("NPU031", 17, 16, "migrated")])
    assert [f.message for f in findings if f.rule_id == "NPU031"] == [
        "replaced tf.train.experimental.MixedPrecisionLossScaleOptimizer with NPULossScaleOptimizer"]


def test_with_npu032_disabled_neither_rewrites() -> None:
    findings = assert_reports({"NPU031"}, TRAINER, findings=[("NPU031", 17, 16, "unmigrated")])
    assert findings[0].message.startswith(
        "the loss scale loss_scale() is bound to tf.train.experimental.FixedLossScale (line 10), "
        "which NPU032 makes an NPU loss-scale manager, but NPU032 is disabled")


def test_with_npu031_disabled_neither_rewrites() -> None:
    findings = assert_reports({"NPU032"}, TRAINER, findings=[
        ("NPU032", 10, 15, "unmigrated"), ("NPU032", 11, 12, "unmigrated")])
    assert all("is the loss scale of tf.train.experimental.MixedPrecisionLossScaleOptimizer at "
               "line 17, which NPU031 migrates with it, but NPU031 is disabled" in f.message
               for f in findings)


def test_a_function_returning_something_else_too_leaves_both_reporting() -> None:
    source = TRAINER.replace("    return scale\n", "    return scale if FLAGS.amp else None\n")
    findings = assert_reports(PACK, source, findings=[
        ("NPU032", 10, 15, "unmigrated"), ("NPU032", 11, 12, "unmigrated"),
        ("NPU031", 17, 16, "unmigrated")])
    assert findings[-1].message.startswith("the loss scale loss_scale() is not shown to be an NPU "
                                           "loss-scale manager")
