"""NPU065 tf2-loss-scale-optimizer: every spelling of Keras' LossScaleOptimizer in TF 2.x code
becomes npu_device's NpuLossScaleOptimizer (``spec/rules-tf2.md``)."""

from __future__ import annotations

import pytest

from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import MIXED_PRECISION_LOOP

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU065"}
#: With the device init rule, as every run has it: a tf-neutral file that gets ``import
#: npu_device`` is a TF 2.x file in the second run, which without NPU061 gets a file note.
WITH_INIT = RULES | {"NPU061"}
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
    ("import tensorflow as tf\n", "tf.compat.v2.keras.mixed_precision.LossScaleOptimizer"),
    ("import keras\n", "keras.mixed_precision.LossScaleOptimizer"),
    ("from keras import mixed_precision\n", "mixed_precision.LossScaleOptimizer"),
])
def test_every_spelling_is_replaced(imports: str, spelled: str) -> None:
    body = ("\n\ndef make_optimizer(base):\n"
            f"    return {spelled}(base, initial_scale=2 ** 15)\n")
    before = imports + "import tensorflow as tf\n" * ("import tensorflow as tf" not in imports) + body
    after = "import npu_device as npu\n" + before.replace(
        spelled + "(", "npu.train.optimizer.NpuLossScaleOptimizer(")
    assert_migrates(before, after, WITH_INIT, facts=TF2_RUNTIME)


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


PERFORMANCE = '''\
"""Functions and classes related to optimization (weight updates), TF 2.x Model Garden style."""
from absl import logging
import tensorflow as tf


def configure_optimizer(optimizer, use_float16=False, use_graph_rewrite=False, loss_scale="dynamic"):
  """Configures optimizer object with performance options."""
  if use_float16:
    if loss_scale == "dynamic":
      optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")
    else:
      # loss_scale is a number or a tf.mixed_precision.experimental.LossScale
      optimizer = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
          optimizer, loss_scale=loss_scale)
  if use_graph_rewrite:
    # Note: the model dtype must be 'float32', which will ensure
    # tf.keras.mixed_precision and enable_mixed_precision_graph_rewrite do not double up.
    optimizer = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(optimizer)
  logging.info("optimizer: %s", optimizer)
  return optimizer


def fixed_scale(optimizer):
  return tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=2 ** 15)
'''


def test_the_experimental_class_becomes_the_npu_class_with_the_arguments_tensorflow_gives_it() -> None:
    """``'dynamic'`` is the Keras class's default; a number is a fixed scale; a variable cannot
    be read (reported, with both forms); the graph rewrite has no migration path."""
    after = PERFORMANCE.replace("from absl import logging\n", "import npu_device as npu\nfrom absl import logging\n").replace(
        'tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, "dynamic")',
        "npu.train.optimizer.NpuLossScaleOptimizer(optimizer)").replace(
        "tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale=2 ** 15)",
        "npu.train.optimizer.NpuLossScaleOptimizer(optimizer, dynamic=False, initial_scale=2 ** 15)")
    findings = [f for f in assert_migrates(PERFORMANCE, after, WITH_INIT, facts=TF2_RUNTIME)
                if f.rule_id == "NPU065"]
    assert sites(findings) == [("NPU065", 10, 18, "migrated"), ("NPU065", 13, 18, "unmigrated"),
                               ("NPU065", 18, 16, "unmigrated"), ("NPU065", 24, 9, "migrated")]
    said = [f.message.split(" (guide")[0] for f in findings]
    assert said[0].endswith("(loss_scale='dynamic' is the class's default dynamic scaling)")
    assert said[1].startswith("tf.keras.mixed_precision.experimental.LossScaleOptimizer with "
                              "loss_scale=loss_scale: write npu.train.optimizer.NpuLossScaleOptimizer(opt)")
    assert said[2].startswith("tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite: not "
                              "supported on Ascend, no migration path")
    assert said[3].endswith("(loss_scale=2 ** 15: dynamic=False, initial_scale=2 ** 15, as "
                            "TensorFlow's experimental class passes it)")


@pytest.mark.parametrize("imports, spelled, arguments, written", [
    ("from tensorflow.keras import mixed_precision\n", "mixed_precision.experimental.LossScaleOptimizer",
     "base, 'dynamic'", "base"),
    ("from tensorflow.keras.mixed_precision import experimental as mixed_precision\n",
     "mixed_precision.LossScaleOptimizer", "base, loss_scale=1024.0",
     "base, dynamic=False, initial_scale=1024.0"),
    ("from tensorflow.python.keras.mixed_precision.experimental import loss_scale_optimizer\n",
     "loss_scale_optimizer.LossScaleOptimizer", "base, loss_scale='dynamic'", "base"),
    ("import tensorflow as tf\n", "tf.compat.v2.keras.mixed_precision.experimental.LossScaleOptimizer",
     "base, 'dynamic'", "base"),
])
def test_every_spelling_of_the_experimental_class_is_replaced(imports: str, spelled: str, arguments: str,
                                                              written: str) -> None:
    body = ("\n\ndef make_optimizer(base):\n"
            f"    return {spelled}({arguments})\n")
    before = imports + "import tensorflow as tf\n" * ("import tensorflow as tf" not in imports) + body
    after = "import npu_device as npu\n" + before.replace(
        f"{spelled}({arguments})", f"npu.train.optimizer.NpuLossScaleOptimizer({written})")
    assert_migrates(before, after, WITH_INIT, facts=TF2_RUNTIME)


def test_tf1_code_keeps_its_own_loss_scale_rules() -> None:
    """In a TF 1.x file NPU065 does not run (NPU031 owns loss scaling there)."""
    source = ("import tensorflow as tf\n\nsess = tf.Session()\n"
              "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.train.AdamOptimizer(), 'dynamic')\n")
    assert assert_unchanged(source, RULES, facts={"tf-runtime:1"}) == []


def test_a_subclass_is_reported_isinstance_is_left_alone() -> None:
    source = (
        "import tensorflow as tf\nfrom tensorflow.keras import mixed_precision\n\n\n"
        "class LoggingLossScaleOptimizer(mixed_precision.LossScaleOptimizer):\n"
        "    def apply_gradients(self, grads_and_vars, **kwargs):\n"
        "        tf.print('loss scale', self.loss_scale)\n"
        "        return super().apply_gradients(grads_and_vars, **kwargs)\n\n\n"
        "def is_scaled(opt):\n    return isinstance(opt, mixed_precision.LossScaleOptimizer)\n\n\n"
        "class LegacyScaled(mixed_precision.experimental.LossScaleOptimizer):\n    pass\n\n\n"
        "def is_legacy(opt):\n    return isinstance(opt, mixed_precision.experimental.LossScaleOptimizer)\n")
    findings = [f for f in assert_unchanged(source, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU065"]
    assert sites(findings) == [("NPU065", 5, 32, "unmigrated"), ("NPU065", 15, 19, "unmigrated")]
    assert findings[0].message.startswith("class deriving from mixed_precision.LossScaleOptimizer: "
                                          "derive from npu.train.optimizer.NpuLossScaleOptimizer")


def test_the_graph_rewrite_of_tf_train_experimental_in_a_tf2_repository_is_reported() -> None:
    """TF 2.6 has it only as ``tf.compat.v1.mixed_precision.…`` (NPU065 reports that one, above):
    ``tf.train.experimental.enable_mixed_precision_graph_rewrite`` is a TF 1.x-only API there,
    which the file's detection reports (nothing in the file is rewritten)."""
    source = ("import tensorflow as tf\n\n\ndef make(opt):\n"
              "    opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n"
              "    return tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n")
    findings = assert_unchanged(source, RULES, facts=TF2_RUNTIME)
    assert [(f.rule_id, f.line) for f in findings] == [("NPU000", 6)]
    assert findings[0].message.startswith(
        "uses TF 1.x-only and TF 2.x-only APIs (tf.keras.mixed_precision.LossScaleOptimizer, "
        "tf.train.experimental.enable_mixed_precision_graph_rewrite)")
