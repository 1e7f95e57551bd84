"""The mixed-precision pack: NPU031 loss-scale-optimizer, NPU032 loss-scale-manager, NPU033
auto-mixed-precision, on a trainer as real repositories write it and on each bullet of the spec."""

from __future__ import annotations

import pytest

from npu_codemod.api._toolkit import distribution_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages

PACK = {"NPU001", "NPU031", "NPU032", "NPU033"}
HOROVOD_DISTRIBUTED, STRATEGY_DISTRIBUTED = "distributed:horovod", "distributed:strategy"
HEADER = "from npu_bridge.npu_init import *\n"
OPTIMIZER = "tf.train.experimental.MixedPrecisionLossScaleOptimizer"
DYNAMIC = "ExponentialUpdateLossScaleManager(init_loss_scale=2**15, incr_every_n_steps=2000, incr_ratio=2)"
NPU007_WAY = ('on the NPU, mixed precision is precision_mode="allow_mix_precision" (NPU007\'s '
              'precision_mode setting: [tool.npu-codemod.rules.NPU007] precision_mode = '
              '"allow_mix_precision")')
GUIDE033 = ("(guide: Mixed precision: switching it on (precision_mode), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu033-auto-mixed-precision)")


TRAINER = '''\
"""Mixed-precision training of the transformer (TF 1.15, loss scaling)."""
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_bool("dynamic_loss_scale", True, "Adjust the loss scale while training.")
FLAGS = flags.FLAGS


def loss_scale():
    if FLAGS.dynamic_loss_scale:
        return tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 15,
                                                      increment_period=1000)
    return tf.train.experimental.FixedLossScale(128)


def build_train_op(loss, learning_rate):
    global_step = tf.train.get_or_create_global_step()
    scale = tf.train.experimental.DynamicLossScale(2 ** 12, 500, 2.0)
    optimizer = tf.train.AdamOptimizer(learning_rate, beta1=0.9, beta2=0.98, epsilon=1e-9)
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, loss_scale=scale)
    return optimizer.minimize(loss, global_step=global_step)


def fine_tune_op(loss):
    optimizer = tf.train.MomentumOptimizer(1e-4, momentum=0.9)
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, "dynamic")
    return optimizer.minimize(loss)


def pretrain_op(loss):
    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.AdamOptimizer(1e-4),
                                                                       loss_scale())
    return optimizer.minimize(loss)
'''
TRAINER_MIGRATED = '''\
"""Mixed-precision training of the transformer (TF 1.15, loss scaling)."""
from npu_bridge.npu_init import *
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_bool("dynamic_loss_scale", True, "Adjust the loss scale while training.")
FLAGS = flags.FLAGS


def loss_scale():
    if FLAGS.dynamic_loss_scale:
        return ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 15,
                                                      incr_every_n_steps=1000, incr_ratio=2)
    return FixedLossScaleManager(loss_scale=128)


def build_train_op(loss, learning_rate):
    global_step = tf.train.get_or_create_global_step()
    scale = ExponentialUpdateLossScaleManager(init_loss_scale=2 ** 12, incr_every_n_steps=500, incr_ratio=2.0)
    optimizer = tf.train.AdamOptimizer(learning_rate, beta1=0.9, beta2=0.98, epsilon=1e-9)
    optimizer = NPULossScaleOptimizer(optimizer, loss_scale_manager=scale)
    return optimizer.minimize(loss, global_step=global_step)


def fine_tune_op(loss):
    optimizer = tf.train.MomentumOptimizer(1e-4, momentum=0.9)
    optimizer = NPULossScaleOptimizer(optimizer, ExponentialUpdateLossScaleManager(init_loss_scale=2**15, incr_every_n_steps=2000, incr_ratio=2))
    return optimizer.minimize(loss)


def pretrain_op(loss):
    optimizer = NPULossScaleOptimizer(tf.train.AdamOptimizer(1e-4),
                                                                       loss_scale())
    return optimizer.minimize(loss)
'''


def test_a_mixed_precision_trainer_uses_the_npu_loss_scaling():
    findings = assert_migrates(PACK, TRAINER, TRAINER_MIGRATED, findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU032", 11, 15, "migrated"), ("NPU032", 13, 11, "migrated"),
        ("NPU032", 18, 12, "migrated"), ("NPU031", 20, 16, "migrated"), ("NPU031", 26, 16, "migrated"),
        ("NPU031", 31, 16, "migrated")])
    assert messages(findings, "NPU032") == [
        "replaced tf.train.experimental.DynamicLossScale with ExponentialUpdateLossScaleManager "
        "(TensorFlow's defaults for incr_ratio)",
        "replaced tf.train.experimental.FixedLossScale with FixedLossScaleManager",
        "replaced tf.train.experimental.DynamicLossScale with ExponentialUpdateLossScaleManager"]
    assert messages(findings, "NPU031") == [
        "replaced tf.train.experimental.MixedPrecisionLossScaleOptimizer with NPULossScaleOptimizer",
        "replaced tf.train.experimental.MixedPrecisionLossScaleOptimizer with NPULossScaleOptimizer "
        '''and its loss scale "dynamic" with ExponentialUpdateLossScaleManager''',
        "replaced tf.train.experimental.MixedPrecisionLossScaleOptimizer with NPULossScaleOptimizer"]


@pytest.mark.parametrize("loss_scale, manager", [
    ("tf.train.experimental.DynamicLossScale()", DYNAMIC),
    ("tf.train.experimental.DynamicLossScale(multiplier=4)",
     "ExponentialUpdateLossScaleManager(incr_ratio=4, init_loss_scale=2**15, incr_every_n_steps=2000)"),
    ("tf.train.experimental.DynamicLossScale(1024, increment_period=100)",
     "ExponentialUpdateLossScaleManager(init_loss_scale=1024, incr_every_n_steps=100, incr_ratio=2)"),
    ("tf.train.experimental.FixedLossScale(loss_scale_value=1024)", "FixedLossScaleManager(loss_scale=1024)"),
    ("tf.compat.v1.train.experimental.FixedLossScale(64)", "FixedLossScaleManager(loss_scale=64)"),
])
def test_loss_scales_become_managers_with_tensorflows_defaults(loss_scale: str, manager: str):
    optimizer = "opt = {}(opt, loss_scale)\n"
    before = f"import tensorflow as tf\n\nloss_scale = {loss_scale}\n" + optimizer.format(OPTIMIZER)
    after = f"{HEADER}import tensorflow as tf\n\nloss_scale = {manager}\n" + optimizer.format("NPULossScaleOptimizer")
    assert_migrates(PACK, before, after, findings=[("NPU001", 1, 0, "migrated"), ("NPU032", 3, 13, "migrated"),
                                                   ("NPU031", 4, 6, "migrated")])


@pytest.mark.parametrize("argument, manager", [
    ('"dynamic"', DYNAMIC),
    ("1024", "FixedLossScaleManager(loss_scale=1024)"),
    ("tf.train.experimental.FixedLossScale(8)", "FixedLossScaleManager(loss_scale=8)"),
    ("loss_scale=tf.train.experimental.DynamicLossScale()", f"loss_scale_manager={DYNAMIC}"),
])
def test_the_optimizers_loss_scale_becomes_a_manager_with_it(argument: str, manager: str):
    before = ("import tensorflow as tf\n\n"
              f"opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, {argument})\n")
    after = f"{HEADER}import tensorflow as tf\n\nopt = NPULossScaleOptimizer(opt, {manager})\n"
    # one site: the loss scale inside is the optimizer's (NPU031's), on both runs
    assert_migrates(PACK, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                   ("NPU031", 3, 6, "migrated")])


@pytest.mark.parametrize("facts", [{HOROVOD_DISTRIBUTED}, {STRATEGY_DISTRIBUTED}])
def test_in_a_distributed_repository_the_optimizer_is_distributed(facts: set):
    before = ("import tensorflow as tf\n\nscale = FixedLossScaleManager(loss_scale=128)\n"
              "opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale=scale)\n"
              "tuned = NPULossScaleOptimizer(opt, manager)\n")
    after = (f"{HEADER}import tensorflow as tf\n\nscale = FixedLossScaleManager(loss_scale=128)\n"
             "opt = NPULossScaleOptimizer(opt, loss_scale_manager=scale, is_distributed=True)\n"
             "tuned = NPULossScaleOptimizer(opt, manager, is_distributed=True)\n")
    findings = assert_migrates(PACK, HEADER + before, after, facts=facts, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU032", 4, 8, "migrated"), ("NPU031", 5, 6, "migrated"),
        ("NPU031", 6, 8, "migrated")])
    assert messages(findings, "NPU031") == [
        "replaced tf.train.experimental.MixedPrecisionLossScaleOptimizer with NPULossScaleOptimizer "
        "(is_distributed=True: the repository trains distributed)",
        "added is_distributed=True: the repository trains distributed"]


@pytest.mark.parametrize("text, facts", [
    ("import horovod.tensorflow as hvd\nhvd.init()\n", {HOROVOD_DISTRIBUTED}),
    ("from horovod import tensorflow as hvd\n", {HOROVOD_DISTRIBUTED}),
    ("import horovod.tensorflow.keras as hvd\n", {HOROVOD_DISTRIBUTED}),
    ("import horovod.tensorflow\n", {HOROVOD_DISTRIBUTED}),
    ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n", {STRATEGY_DISTRIBUTED}),
    ("import tensorflow as tf\ns = tf.distribute.experimental.MultiWorkerMirroredStrategy()\n",
     {STRATEGY_DISTRIBUTED}),
    ("import tensorflow as tf\ns = tf.contrib.distribute.MirroredStrategy(num_gpus=4)\n", {STRATEGY_DISTRIBUTED}),
    ("import horovod.torch as hvd\n", set()),
    ("import tensorflow as tf\n# tf.distribute.MirroredStrategy() is for later\n", set()),
])
def test_the_distribution_facts(text: str, facts: set):
    assert distribution_facts("train.py", text) == facts


def test_a_loss_scale_not_shown_to_be_a_manager_is_reported_and_the_optimizer_kept():
    source = ('import tensorflow as tf\nfrom scaling import make_loss_scale\n\n'
              'a = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, make_loss_scale())\n'
              'b = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, FLAGS.loss_scale)\n'
              'c = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, **options)\n')
    findings = assert_reports(PACK, source, findings=[("NPU031", 4, 4, "unmigrated"),
                                                      ("NPU031", 5, 4, "unmigrated"),
                                                      ("NPU031", 6, 4, "unmigrated")])
    assert messages(findings, "NPU031")[0].startswith(
        "the loss scale make_loss_scale() is not shown to be an NPU loss-scale manager: make it "
        "FixedLossScaleManager(loss_scale=...) or ExponentialUpdateLossScaleManager(...), then "
        "replace tf.train.experimental.MixedPrecisionLossScaleOptimizer with "
        "NPULossScaleOptimizer(opt, loss_scale_manager)")


def test_a_name_bound_to_a_loss_scale_in_the_scope_is_trusted_to_npu032():
    before = ("import tensorflow as tf\n\n\ndef build(opt):\n"
              "    scale = tf.train.experimental.FixedLossScale(256)\n"
              "    return tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, scale)\n")
    after = HEADER + before.replace("tf.train.experimental.FixedLossScale(256)",
                                    "FixedLossScaleManager(loss_scale=256)").replace(
        "tf.train.experimental.MixedPrecisionLossScaleOptimizer", "NPULossScaleOptimizer")
    assert_migrates(PACK, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                   ("NPU031", 6, 11, "migrated"),
                                                   ("NPU032", 5, 12, "migrated")])


def test_loss_scales_built_from_unpacked_arguments_are_reported_with_their_optimizer():
    source = ("import tensorflow as tf\n\nscale = tf.train.experimental.DynamicLossScale(**FLAGS.scale_args)\n"
              f"opt = {OPTIMIZER}(opt, scale)\n")
    findings = assert_reports(PACK, source, findings=[("NPU032", 3, 8, "unmigrated"),
                                                      ("NPU031", 4, 6, "unmigrated")])
    assert messages(findings, "NPU032")[0].startswith(
        "the arguments are unpacked: replace tf.train.experimental.DynamicLossScale with "
        "ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...) by hand")
    assert messages(findings, "NPU031")[0].startswith(
        "the loss scale scale is bound to tf.train.experimental.DynamicLossScale (line 3), which stays "
        "TensorFlow's (see NPU032's finding there); give the optimizer its own "
        "ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...) and "
        f"replace {OPTIMIZER} with NPULossScaleOptimizer(opt, loss_scale_manager)")


def test_automatic_mixed_precision_is_reported_with_the_npu_setting():
    source = '''\
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

optimizer = tf.train.AdamOptimizer(1e-3)
optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, loss_scale="dynamic")
policy = mixed_precision.Policy("mixed_float16")
mixed_precision.set_policy(policy)
tf.keras.mixed_precision.experimental.set_policy("float32")
'''
    findings = assert_reports(PACK, source, findings=[
        ("NPU033", 5, 12, "unmigrated"), ("NPU033", 6, 9, "unmigrated"), ("NPU033", 7, 0, "unmigrated"),
        ("NPU033", 8, 0, "unmigrated")])
    assert messages(findings, "NPU033") == [
        f"tf.train.experimental.enable_mixed_precision_graph_rewrite has no NPU equivalent: {NPU007_WAY}; "
        f"remove the call and use `optimizer`, wrapped in NPULossScaleOptimizer if it needs loss "
        f"scaling {GUIDE033}",
        f"mixed_precision.Policy has no NPU equivalent: {NPU007_WAY}; remove it {GUIDE033}",
        f"mixed_precision.set_policy has no NPU equivalent: {NPU007_WAY}; remove it {GUIDE033}",
        f"tf.keras.mixed_precision.experimental.set_policy has no NPU equivalent: {NPU007_WAY}; "
        f"remove it {GUIDE033}"]


def test_a_file_that_does_not_import_tensorflow_is_left_alone():
    source = "from apex import amp\n\nmodel, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n" \
             "scaler = DynamicLossScale()\n"
    assert_reports(PACK, source, findings=[])


GRAPH_REWRITE_SCALE = '''\
import tensorflow as tf


def build(loss):
    opt = tf.train.AdamOptimizer(1e-3)
    scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=1024, increment_period=1000, multiplier=2.0)
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, scale)
    tf.summary.scalar("loss_scale", scale())
    return opt.minimize(loss)
'''
STAYS = ("{spelled} stays TensorFlow's: its value is {uses} (not only the loss scale of a loss-scale "
         "optimizer), and an NPU loss-scale manager is no LossScale (it cannot be called, nor given to "
         "TensorFlow's mixed-precision APIs); where it scales the loss, use "
         "NPULossScaleOptimizer(opt, loss_scale_manager={manager}) instead {guide}")
GUIDE032 = ("(guide: Mixed precision: loss-scale managers (LossScaleManager), "
            "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu032-loss-scale-manager)")
DYNAMIC_BY_HAND = "ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...)"


def test_a_loss_scale_called_and_given_to_the_graph_rewrite_stays_tensorflows():
    """NVIDIA BERT's optimization.py: a manager there fails at graph build (not callable)."""
    findings = assert_reports(PACK, GRAPH_REWRITE_SCALE, findings=[("NPU032", 6, 12, "unmigrated"),
                                                                   ("NPU033", 7, 10, "unmigrated")])
    assert messages(findings, "NPU032") == [STAYS.format(
        spelled="tf.train.experimental.DynamicLossScale",
        uses="passed to tf.train.experimental.enable_mixed_precision_graph_rewrite at line 7, called at line 8",
        manager=DYNAMIC_BY_HAND, guide=GUIDE032)]


@pytest.mark.parametrize("source, uses", [
    ("scale = tf.train.experimental.FixedLossScale(128)\n", "never used (bound to scale at line 3)"),
    ("scale = tf.train.experimental.FixedLossScale(128)\nlog_loss_scale(scale)\n",
     "passed to log_loss_scale at line 4"),
    ("def loss_scale():\n    return tf.train.experimental.FixedLossScale(128)\n\n\n"
     "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, loss_scale())\n",
     "passed to tf.train.experimental.enable_mixed_precision_graph_rewrite at line 7"),
    ("def loss_scale():\n    return tf.train.experimental.FixedLossScale(128)\n",
     "returned by loss_scale(), which the file never calls"),
])
def test_a_loss_scale_not_shown_to_go_to_an_optimizer_stays_tensorflows(source: str, uses: str):
    findings = assert_reports(PACK, "import tensorflow as tf\n\n" + source, findings=[
        ("NPU032", 3 if source.startswith("scale") else 4, 8 if source.startswith("scale") else 11,
         "unmigrated"), *([("NPU033", 7, 6, "unmigrated")] if "enable_" in source else [])])
    assert messages(findings, "NPU032") == [STAYS.format(
        spelled="tf.train.experimental.FixedLossScale", uses=uses,
        manager="FixedLossScaleManager(loss_scale=...)", guide=GUIDE032)]


@pytest.mark.parametrize("use", ['tf.summary.scalar("loss_scale", scale())',
                                 "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt, scale)"])
def test_the_optimizer_of_a_loss_scale_used_elsewhere_too_stays_tensorflows(use: str):
    source = ("import tensorflow as tf\n\n\ndef build(loss, opt):\n"
              "    scale = tf.train.experimental.FixedLossScale(128)\n"
              f"    opt = {OPTIMIZER}(opt, scale)\n    {use}\n    return opt.minimize(loss)\n")
    findings = assert_reports(PACK, source, findings=[
        ("NPU032", 5, 12, "unmigrated"), ("NPU031", 6, 10, "unmigrated"),
        *([("NPU033", 7, 10, "unmigrated")] if "enable_" in use else [])])
    how = "called at line 7" if "scalar" in use else \
        "passed to tf.train.experimental.enable_mixed_precision_graph_rewrite at line 7"
    assert messages(findings, "NPU031")[0].startswith(
        "the loss scale scale is bound to tf.train.experimental.FixedLossScale (line 5), which stays "
        f"TensorFlow's (see NPU032's finding there): its value is also {how}; give the optimizer its own "
        f"FixedLossScaleManager(loss_scale=...) and replace {OPTIMIZER} with "
        "NPULossScaleOptimizer(opt, loss_scale_manager)")
    assert messages(findings, "NPU032")[0].startswith(
        f"tf.train.experimental.FixedLossScale stays TensorFlow's: its value is {how} (not only")


ENVIRONMENT = '''\
import os

import tensorflow as tf

AMP_SWITCH = "TF_ENABLE_AUTO_MIXED_PRECISION"


def setup(amp):
    if amp:
        os.environ["TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE"] = "1"
        os.environ['TF_ENABLE_AUTO_MIXED_PRECISION'] = str(int(amp))
        os.environ.setdefault("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
        os.putenv("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "1")
        os.environ[AMP_SWITCH] = "1"
    else:
        os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "0"
        os.environ["TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE"] = "false"
    os.environ["TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING"] = "1"
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"
    settings["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"
'''


def test_automatic_mixed_precision_switched_on_by_the_environment_is_reported():
    """The NPU ignores TensorFlow's variable: an --amp run would train at its default precision."""
    findings = assert_reports(PACK, ENVIRONMENT, findings=[
        ("NPU033", 10, 8, "unmigrated"), ("NPU033", 11, 8, "unmigrated"), ("NPU033", 12, 8, "unmigrated"),
        ("NPU033", 13, 8, "unmigrated"), ("NPU033", 14, 8, "unmigrated")])
    switch = ("the environment variable {} = {} switches on TensorFlow's automatic mixed precision, "
              f"which the NPU ignores: {NPU007_WAY}; remove the setting {GUIDE033}")
    assert messages(findings, "NPU033") == [
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", '"1"'),
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION", "str(int(amp))"),
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION", '"1"'),
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", '"1"'),
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION", '"1"')]


ENVIRONMENT_UPDATES = '''\
import os

import tensorflow as tf


def configure(flags):
    """Set the process up for training."""
    os.environ.update({"TF_ENABLE_AUTO_MIXED_PRECISION": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})
    os.environ.update(TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE=str(int(flags.amp)))
    os.environ.update(dict(TF_ENABLE_AUTO_MIXED_PRECISION="0"))
    os.environ.update({"TF_ENABLE_AUTO_MIXED_PRECISION": "false"})
    settings.update({"TF_ENABLE_AUTO_MIXED_PRECISION": "1"})
'''


def test_the_switch_set_by_an_update_of_the_environment_is_reported():
    """``os.environ.update(...)`` sets the variable as an item does: a dict display's string
    keys and keywords are read; updates leaving it off, and other dicts' updates, are not."""
    findings = assert_reports(PACK, ENVIRONMENT_UPDATES, findings=[
        ("NPU033", 8, 4, "unmigrated"), ("NPU033", 9, 4, "unmigrated")])
    switch = ("the environment variable {} = {} switches on TensorFlow's automatic mixed precision, "
              f"which the NPU ignores: {NPU007_WAY}; remove the setting {GUIDE033}")
    assert messages(findings, "NPU033") == [
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION", '"1"'),
        switch.format("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "str(int(flags.amp))")]
