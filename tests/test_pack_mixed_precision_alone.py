"""NPU031 and NPU032 each alone: a rule whose partner is disabled never leaves TensorFlow's
loss-scale optimizer with an NPU manager, nor the NPU's optimizer with a TensorFlow loss scale;
it rewrites what it can on its own and reports the rest with what to do."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages

BOTH, NPU031_ONLY, NPU032_ONLY = {"NPU001", "NPU031", "NPU032"}, {"NPU001", "NPU031"}, {"NPU001", "NPU032"}
HEADER = "from npu_bridge.npu_init import *\n"
OPTIMIZER = "tf.train.experimental.MixedPrecisionLossScaleOptimizer"
GUIDE031 = ("(guide: Mixed precision: loss scaling (NPULossScaleOptimizer), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu031-loss-scale-optimizer)")
GUIDE032 = ("(guide: Mixed precision: loss-scale managers (LossScaleManager), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu032-loss-scale-manager)")
BY_HAND = ("replace both by hand: {manager}({keywords}) for the loss scale and "
           "NPULossScaleOptimizer(opt, loss_scale_manager) for the optimizer")
DYNAMIC_KEYWORDS = "init_loss_scale=..., incr_every_n_steps=..., incr_ratio=..."


TRAINER = '''\
"""Transformer training with loss scaling (TF 1.15)."""
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_bool("use_fp16", True, "Train in float16 with loss scaling.")
FLAGS = flags.FLAGS


def create_optimizer(loss, learning_rate):
    global_step = tf.train.get_or_create_global_step()
    optimizer = tf.train.AdamOptimizer(learning_rate, epsilon=1e-6)
    if FLAGS.use_fp16:
        loss_scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 15,
                                                            increment_period=1000)
        optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer,
                                                                           loss_scale=loss_scale)
    return optimizer.minimize(loss, global_step=global_step)


def fine_tune_op(loss):
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.MomentumOptimizer(1e-4, momentum=0.9), tf.train.experimental.FixedLossScale(128))
    return optimizer.minimize(loss)
'''
MIGRATED_DYNAMIC = '''\
        loss_scale = ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 15,
                                                            incr_every_n_steps=1000, incr_ratio=2)
        optimizer = NPULossScaleOptimizer(optimizer,
                                                                           loss_scale_manager=loss_scale)
'''
KEPT_DYNAMIC = '''\
        loss_scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 15,
                                                            increment_period=1000)
        optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer,
                                                                           loss_scale=loss_scale)
'''
MIGRATED_FINE_TUNE = '''\
    optimizer = NPULossScaleOptimizer(
        tf.train.MomentumOptimizer(1e-4, momentum=0.9), FixedLossScaleManager(loss_scale=128))
'''
KEPT_FINE_TUNE = '''\
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.MomentumOptimizer(1e-4, momentum=0.9), tf.train.experimental.FixedLossScale(128))
'''


def trainer_after(dynamic: str, fine_tune: str) -> str:
    """The trainer with its imports header and the two loss-scaled optimizers as given."""
    return TRAINER.replace('"""\nimport', f'"""\n{HEADER}import').replace(
        KEPT_DYNAMIC, dynamic).replace(KEPT_FINE_TUNE, fine_tune)


def test_both_rules_migrate_the_trainer():
    findings = assert_migrates(BOTH, TRAINER, trainer_after(MIGRATED_DYNAMIC, MIGRATED_FINE_TUNE), findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU032", 13, 21, "migrated"), ("NPU031", 15, 20, "migrated"),
        ("NPU031", 21, 16, "migrated")])
    assert messages(findings, "NPU031") == [
        f"replaced {OPTIMIZER} with NPULossScaleOptimizer",
        f"replaced {OPTIMIZER} with NPULossScaleOptimizer and its loss scale with FixedLossScaleManager"]


def test_npu031_alone_reports_an_optimizer_whose_loss_scale_only_npu032_would_migrate():
    findings = assert_migrates(NPU031_ONLY, TRAINER, trainer_after(KEPT_DYNAMIC, MIGRATED_FINE_TUNE), findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU031", 15, 20, "unmigrated"), ("NPU031", 21, 16, "migrated")])
    assert messages(findings, "NPU031") == [
        "the loss scale loss_scale is bound to tf.train.experimental.DynamicLossScale (line 13), which "
        "NPU032 makes an NPU loss-scale manager, but NPU032 is disabled: enable NPU032 (pack "
        f"mixed-precision), or make it ExponentialUpdateLossScaleManager({DYNAMIC_KEYWORDS}) by hand "
        f"and replace {OPTIMIZER} with NPULossScaleOptimizer(opt, loss_scale_manager) {GUIDE031}",
        f"replaced {OPTIMIZER} with NPULossScaleOptimizer and its loss scale with FixedLossScaleManager"]


def test_npu032_alone_reports_the_loss_scales_of_optimizers_that_stay_tensorflows():
    findings = assert_reports(NPU032_ONLY, TRAINER, findings=[
        ("NPU032", 13, 21, "unmigrated"), ("NPU032", 22, 56, "unmigrated")])
    dynamic = BY_HAND.format(manager="ExponentialUpdateLossScaleManager", keywords=DYNAMIC_KEYWORDS)
    fixed = BY_HAND.format(manager="FixedLossScaleManager", keywords="loss_scale=...")
    assert messages(findings, "NPU032") == [
        f"tf.train.experimental.DynamicLossScale is the loss scale of {OPTIMIZER} at line 15, which "
        f"NPU031 migrates with it, but NPU031 is disabled: enable NPU031 (pack mixed-precision), or "
        f"{dynamic} {GUIDE032}",
        f"tf.train.experimental.FixedLossScale is the loss scale of {OPTIMIZER}, which NPU031 migrates "
        f"with it, but NPU031 is disabled: enable NPU031 (pack mixed-precision), or {fixed} {GUIDE032}"]


MIXED_BINDINGS = '''\
import tensorflow as tf
from scaling import tuned_loss_scale


def build_train_op(loss, optimizer):
    if FLAGS.tuned_loss_scale:
        scale = tuned_loss_scale()
    else:
        scale = tf.train.experimental.FixedLossScale(1024)
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, scale)
    return optimizer.minimize(loss)
'''


@pytest.mark.parametrize("rules", [BOTH, NPU032_ONLY])
def test_a_loss_scale_of_an_optimizer_npu031_leaves_stays_tensorflows(rules: set):
    findings = assert_reports(rules, MIXED_BINDINGS, findings=[
        ("NPU032", 9, 16, "unmigrated"), *([("NPU031", 10, 16, "unmigrated")] if "NPU031" in rules else [])])
    fixed = BY_HAND.format(manager="FixedLossScaleManager", keywords="loss_scale=...")
    why = ("which NPU031 leaves as it is (see its finding there): an NPU manager would break it; "
           if "NPU031" in rules else "which NPU031 migrates with it, but NPU031 is disabled: enable "
           "NPU031 (pack mixed-precision), or ")
    assert messages(findings, "NPU032") == [
        f"tf.train.experimental.FixedLossScale is the loss scale of {OPTIMIZER} at line 10, {why}{fixed} "
        f"{GUIDE032}"]


HALF_MIGRATED = '''\
from npu_bridge.npu_init import *
import tensorflow as tf


def build_train_op(loss, optimizer):
    optimizer = NPULossScaleOptimizer(optimizer, tf.train.experimental.FixedLossScale(1024))
    return optimizer.minimize(loss)
'''


@pytest.mark.parametrize("rules, finding, message", [
    (BOTH, ("NPU031", 6, 16, "migrated"),
     "replaced the loss scale of NPULossScaleOptimizer with FixedLossScaleManager"),
    (NPU031_ONLY, ("NPU031", 6, 16, "migrated"),
     "replaced the loss scale of NPULossScaleOptimizer with FixedLossScaleManager"),
    (NPU032_ONLY, ("NPU032", 6, 49, "migrated"),
     "replaced tf.train.experimental.FixedLossScale with FixedLossScaleManager"),
])
def test_the_npu_optimizer_given_a_tensorflow_loss_scale_gets_the_manager(rules: set, finding: tuple,
                                                                         message: str):
    after = HALF_MIGRATED.replace("tf.train.experimental.FixedLossScale(1024)",
                                  "FixedLossScaleManager(loss_scale=1024)")
    findings = assert_migrates(rules, HALF_MIGRATED, after, findings=[("NPU001", 1, 0, "migrated"), finding])
    assert [f.message for f in findings if f.rule_id == finding[0]] == [message]


def test_the_npu_optimizer_given_a_name_bound_to_a_tensorflow_loss_scale_without_npu032():
    source = HALF_MIGRATED.replace(
        "    optimizer = NPULossScaleOptimizer(optimizer, tf.train.experimental.FixedLossScale(1024))\n",
        "    scale = tf.train.experimental.FixedLossScale(1024)\n"
        "    optimizer = NPULossScaleOptimizer(optimizer, loss_scale_manager=scale)\n")
    findings = assert_reports(NPU031_ONLY, source, findings=[("NPU001", 1, 0, "migrated"),
                                                             ("NPU031", 7, 16, "unmigrated")])
    assert messages(findings, "NPU031") == [
        "the loss scale scale is bound to tf.train.experimental.FixedLossScale (line 6), which NPU032 "
        "makes an NPU loss-scale manager, but NPU032 is disabled: enable NPU032 (pack mixed-precision), "
        f"or make it FixedLossScaleManager(loss_scale=...) by hand {GUIDE031}"]
    after = source.replace("tf.train.experimental.FixedLossScale(1024)", "FixedLossScaleManager(loss_scale=1024)")
    assert_migrates(BOTH, source, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU032", 6, 12, "migrated"), ("NPU031", 7, 16, "migrated")])
