"""NPU065 tf2-loss-scale-optimizer: every spelling of Keras' LossScaleOptimizer in TF 2.x code
becomes npu_device's NpuLossScaleOptimizer (``spec/rules-tf2.md``)."""

from __future__ import annotations

import pytest

from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import MIXED_PRECISION_LOOP

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU065"}
HEADER = '"""ResNet-50 on ImageNet with mixed precision and a custom training loop."""\n'


def test_a_custom_loop_gets_the_npu_loss_scale_optimizer() -> None:
    after = MIXED_PRECISION_LOOP.replace(HEADER, HEADER + "import npu_device as npu\n").replace(
        "optimizer = mixed_precision.LossScaleOptimizer(optimizer, dynamic_growth_steps=2000)",
        "optimizer = npu.train.optimizer.NpuLossScaleOptimizer(optimizer, dynamic_growth_steps=2000)")
    findings = assert_migrates(MIXED_PRECISION_LOOP, after, RULES, facts=TF2_RUNTIME)
    ours = [f for f in findings if f.rule_id == "NPU065"]
    assert sites(ours) == [("NPU065", 18, 16, "migrated")]
    assert ours[0].message.startswith(
        "replaced mixed_precision.LossScaleOptimizer by npu.train.optimizer.NpuLossScaleOptimizer")


@pytest.mark.parametrize("imports, spelled", [
    ("import tensorflow as tf\n", "tf.keras.mixed_precision.LossScaleOptimizer"),
    ("from tensorflow import keras\n", "keras.mixed_precision.LossScaleOptimizer"),
    ("from tensorflow.keras.mixed_precision import LossScaleOptimizer\n", "LossScaleOptimizer"),
    ("from tensorflow.keras.mixed_precision import LossScaleOptimizer as LSO\n", "LSO"),
    ("from tensorflow.python.keras.mixed_precision import loss_scale_optimizer as lso\n",
     "lso.LossScaleOptimizer"),
])
def test_every_spelling_is_replaced(imports: str, spelled: str) -> None:
    body = ("\n\ndef make_optimizer(base):\n"
            f"    return {spelled}(base, initial_scale=2 ** 15)\n")
    before = imports + "import tensorflow as tf\n" * ("import tensorflow as tf" not in imports) + body
    after = "import npu_device as npu\n" + before.replace(
        spelled + "(", "npu.train.optimizer.NpuLossScaleOptimizer(")
    assert_migrates(before, after, RULES, facts=TF2_RUNTIME)


def test_an_existing_npu_device_binding_is_used_and_npu_taken_means_npu_device() -> None:
    bound = ("import npu_device as dev\nimport tensorflow as tf\n\n"
             "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n")
    assert_migrates(bound, bound.replace("tf.keras.mixed_precision.LossScaleOptimizer",
                                         "dev.train.optimizer.NpuLossScaleOptimizer"),
                    RULES, facts=TF2_RUNTIME)
    taken = ("import numpy as npu\nimport tensorflow as tf\n\n"
             "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n")
    assert_migrates(taken, "import npu_device\n" + taken.replace(
        "tf.keras.mixed_precision.LossScaleOptimizer", "npu_device.train.optimizer.NpuLossScaleOptimizer"),
        RULES, facts=TF2_RUNTIME)


def test_a_name_that_is_not_tensorflows_is_untouched() -> None:
    source = ("import tensorflow as tf\nimport mylib as foo\n\n"
              "opt = foo.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n")
    assert assert_unchanged(source, RULES, facts=TF2_RUNTIME) == []


def test_experimental_and_graph_rewrite_loss_scaling_are_reported() -> None:
    source = ("import tensorflow as tf\n\n\ndef make(opt):\n"
              "    opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"
              "    return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)\n")
    findings = assert_unchanged(source, RULES, facts=TF2_RUNTIME)
    ours = [f for f in findings if f.rule_id == "NPU065"]
    assert sites(ours) == [("NPU065", 5, 10, "unmigrated"), ("NPU065", 6, 11, "unmigrated")]
    assert ours[0].message.startswith("tf.keras.mixed_precision.experimental.LossScaleOptimizer: "
                                          "switch to tf.keras.mixed_precision.LossScaleOptimizer")


def test_tf1_code_keeps_its_own_loss_scale_rules() -> None:
    """In a TF 1.x file NPU065 does not run (NPU031 owns loss scaling there)."""
    source = ("import tensorflow as tf\n\nsess = tf.Session()\n"
              "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.train.AdamOptimizer(), 'dynamic')\n")
    assert assert_unchanged(source, RULES, facts={"tf-runtime:1"}) == []
