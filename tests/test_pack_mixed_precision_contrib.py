"""TF 1.x's ``tf.contrib.mixed_precision`` (NVIDIA's and many BERT forks): its
``LossScaleOptimizer(opt, loss_scale_manager)`` becomes ``NPULossScaleOptimizer`` (NPU031) and
its managers npu_bridge's of the same name and parameters (NPU032), paired as TensorFlow's
loss scales are; NPU100 never sends these uses to a public TF 1.15 equivalent first."""

from __future__ import annotations

import pytest

from npu_codemod.api._toolkit import support_list
from npu_codemod.codemods.api_owners import CONTRIB_OWNERS, OWNERS
from npu_codemod.testing import assert_migrates, assert_reports

from support.audit import GUIDE, audit_messages
from support.rules import messages

PACK = {"NPU001", "NPU031", "NPU032", "NPU100"}
HEADER = "from npu_bridge.npu_init import *\n"
CONTRIB = "tf.contrib.mixed_precision"
GUIDE031 = ("(guide: Mixed precision: loss scaling (NPULossScaleOptimizer), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu031-loss-scale-optimizer)")
GUIDE032 = ("(guide: Mixed precision: loss-scale managers (LossScaleManager), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu032-loss-scale-manager)")

BERT = '''\
import tensorflow as tf


def create_optimizer(loss, init_lr, use_fp16):
    optimizer = tf.train.AdamOptimizer(init_lr)
    if use_fp16:
        loss_scale_manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
            init_loss_scale=2 ** 32, incr_every_n_steps=1000, decr_every_n_nan_or_inf=2, decr_ratio=0.5)
        optimizer = tf.contrib.mixed_precision.LossScaleOptimizer(optimizer, loss_scale_manager)
    return optimizer.minimize(loss)
'''
BERT_MIGRATED = HEADER + '''\
import tensorflow as tf


def create_optimizer(loss, init_lr, use_fp16):
    optimizer = tf.train.AdamOptimizer(init_lr)
    if use_fp16:
        loss_scale_manager = ExponentialUpdateLossScaleManager(
            init_loss_scale=2 ** 32, incr_every_n_steps=1000, decr_every_n_nan_or_inf=2, decr_ratio=0.5)
        optimizer = NPULossScaleOptimizer(optimizer, loss_scale_manager)
    return optimizer.minimize(loss)
'''


def test_contribs_loss_scaling_becomes_npu_bridges_with_its_arguments_as_written():
    findings = assert_migrates(PACK, BERT, BERT_MIGRATED, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU031", 9, 20, "migrated"), ("NPU032", 7, 29, "migrated")])
    assert messages(findings, "NPU032") == [
        f"replaced {CONTRIB}.ExponentialUpdateLossScaleManager with ExponentialUpdateLossScaleManager"]
    assert messages(findings, "NPU031") == [
        f"replaced {CONTRIB}.LossScaleOptimizer with NPULossScaleOptimizer"]
    assert audit_messages(findings) == []  # no "public TF 1.15 equivalent" advice


@pytest.mark.parametrize("imports, optimizer, manager", [
    ("from tensorflow.contrib.mixed_precision import LossScaleOptimizer, FixedLossScaleManager",
     "LossScaleOptimizer", "FixedLossScaleManager"),
    ("from tensorflow.contrib import mixed_precision as mp", "mp.LossScaleOptimizer", "mp.FixedLossScaleManager"),
    ("from tensorflow.contrib.mixed_precision.python import loss_scale_manager as lsm\n"
     "from tensorflow.contrib.mixed_precision.python.loss_scale_optimizer import LossScaleOptimizer",
     "LossScaleOptimizer", "lsm.FixedLossScaleManager"),
])
def test_every_spelling_of_contribs_classes_is_migrated(imports: str, optimizer: str, manager: str):
    before = f"{imports}\n\nopt = {optimizer}(opt, loss_scale_manager={manager}(loss_scale=128))\n"
    after = (f"{HEADER}{imports}\n\n"
             "opt = NPULossScaleOptimizer(opt, loss_scale_manager=FixedLossScaleManager(loss_scale=128))\n")
    findings = assert_migrates(PACK, before, after)
    assert [finding.rule_id for finding in findings if finding.rule_id != "NPU001"] == ["NPU031"]
    assert messages(findings, "NPU031") == [
        f"replaced {optimizer} with NPULossScaleOptimizer and its loss scale with FixedLossScaleManager"]


def test_a_manager_returned_by_a_function_of_the_file_is_npu032s():
    before = '''\
import tensorflow as tf


def manager():
    return tf.contrib.mixed_precision.FixedLossScaleManager(2 ** 10)


opt = tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager())
'''
    after = HEADER + before.replace("tf.contrib.mixed_precision.FixedLossScaleManager", "FixedLossScaleManager") \
        .replace("tf.contrib.mixed_precision.LossScaleOptimizer", "NPULossScaleOptimizer")
    assert_migrates(PACK, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU031", 8, 6, "migrated"), ("NPU032", 5, 11, "migrated")])


def test_in_a_distributed_repository_the_optimizer_is_distributed():
    before = f"import tensorflow as tf\n\nopt = {CONTRIB}.LossScaleOptimizer(opt, {CONTRIB}.FixedLossScaleManager(8))\n"
    after = (f"{HEADER}import tensorflow as tf\n\n"
             "opt = NPULossScaleOptimizer(opt, FixedLossScaleManager(8), is_distributed=True)\n")
    findings = assert_migrates(PACK, before, after, facts={"distributed:horovod"})
    assert messages(findings, "NPU031") == [
        f"replaced {CONTRIB}.LossScaleOptimizer with NPULossScaleOptimizer and its loss scale with "
        "FixedLossScaleManager (is_distributed=True: the repository trains distributed)"]


USED_ELSEWHERE = '''\
import tensorflow as tf


def create_optimizer(opt):
    manager = tf.contrib.mixed_precision.FixedLossScaleManager(128)
    tf.summary.scalar("loss_scale", manager.get_loss_scale())
    return tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager)


def fine_tune(opt, manager):
    return tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager)
'''


def test_a_manager_used_elsewhere_is_reported_with_its_optimizer():
    findings = assert_reports(PACK, USED_ELSEWHERE, findings=[
        ("NPU031", 7, 11, "unmigrated"), ("NPU031", 11, 11, "unmigrated"), ("NPU032", 5, 14, "unmigrated")])
    assert messages(findings, "NPU032") == [
        f"{CONTRIB}.FixedLossScaleManager stays TensorFlow's: its value is used at line 6 (not only "
        "the loss_scale_manager of a loss-scale optimizer that becomes NPULossScaleOptimizer): check "
        "that those uses take an NPU manager, then replace it with FixedLossScaleManager (same "
        f"arguments) by hand {GUIDE032}"]
    assert messages(findings, "NPU031") == [
        f"the loss scale manager is bound to {CONTRIB}.FixedLossScaleManager (line 5), which stays "
        "TensorFlow's (see NPU032's finding there): its value is also used at line 6; give the "
        "optimizer its own FixedLossScaleManager(loss_scale=...) and replace "
        f"{CONTRIB}.LossScaleOptimizer with NPULossScaleOptimizer(opt, loss_scale_manager) {GUIDE031}",
        "the loss scale manager is not shown to be an NPU loss-scale manager: make it "
        "FixedLossScaleManager(loss_scale=...) or ExponentialUpdateLossScaleManager(...), then "
        f"replace {CONTRIB}.LossScaleOptimizer with NPULossScaleOptimizer(opt, loss_scale_manager) {GUIDE031}"]
    assert audit_messages(findings) == []


def test_npu032_alone_leaves_a_manager_whose_optimizer_stays_contribs():
    findings = assert_reports({"NPU001", "NPU032"}, BERT, findings=[("NPU032", 7, 29, "unmigrated")])
    assert messages(findings, "NPU032") == [
        f"{CONTRIB}.ExponentialUpdateLossScaleManager is the loss scale of {CONTRIB}.LossScaleOptimizer "
        "at line 9, which NPU031 migrates with it, but NPU031 is disabled: enable NPU031 (pack "
        "mixed-precision), or replace both by hand: ExponentialUpdateLossScaleManager(init_loss_scale=..., "
        "incr_every_n_steps=..., incr_ratio=...) for the loss scale and "
        f"NPULossScaleOptimizer(opt, loss_scale_manager) for the optimizer {GUIDE032}"]


def test_with_the_pack_off_the_audit_names_the_rules_not_a_public_equivalent():
    findings = assert_reports({"NPU100"}, BERT)
    ids = "--rules default,NPU032,NPU031"
    assert audit_messages(findings) == [
        (7, f"npu-codemod's NPU032 or NPU031 migrates {CONTRIB}.ExponentialUpdateLossScaleManager to "
            "npu_bridge's ExponentialUpdateLossScaleManager, but it was off in this run: turn it on "
            f"({ids}) or replace it with ExponentialUpdateLossScaleManager by hand{GUIDE}"),
        (9, f"npu-codemod's NPU031 migrates {CONTRIB}.LossScaleOptimizer to npu_bridge's "
            "NPULossScaleOptimizer, but it was off in this run: turn it on (--rules default,NPU031) "
            f"or replace it with NPULossScaleOptimizer by hand{GUIDE}")]


def test_a_tensorflow_loss_scale_migrated_with_its_optimizer_is_no_audit_miss():
    before = ("import tensorflow as tf\n\nopt = tf.train.experimental.MixedPrecisionLossScaleOptimizer("
              "opt, tf.train.experimental.DynamicLossScale(128))\n")
    after = (f"{HEADER}import tensorflow as tf\n\nopt = NPULossScaleOptimizer(opt, "
             "ExponentialUpdateLossScaleManager(init_loss_scale=128, incr_every_n_steps=2000, incr_ratio=2))\n")
    findings = assert_migrates(PACK, before, after)
    assert audit_messages(findings) == []


def test_the_contrib_apis_a_rule_owns_are_the_lists_deprecated_ones():
    statuses = support_list().statuses
    assert {api: statuses[api] for api in CONTRIB_OWNERS} == dict.fromkeys(CONTRIB_OWNERS, "deprecated")
    assert not set(CONTRIB_OWNERS) & set(OWNERS)
