"""NPU066 tf2-loop-size: a tf.function looping over training steps is reported with the NPU
loop size to set (``spec/rules-tf2.md``)."""

from __future__ import annotations

from support.rules import assert_unchanged, sites
from support.tf2_scripts import CUSTOM_LOOP

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU066"}

CONTROLLER = '''\
"""A Model Garden-style controller: several steps per tf.function call."""
import tensorflow as tf
from absl import flags

flags.DEFINE_integer("steps_per_loop", 100, "steps per call")
flags.DEFINE_bool("use_tf_while_loop", True, "loop inside the function")
FLAGS = flags.FLAGS


def make_train_loop(strategy, train_step):
    @tf.function
    def train_loop(iterator):
        for _ in tf.range(FLAGS.steps_per_loop):
            strategy.run(train_step, args=(next(iterator),))

    @tf.function(experimental_relax_shapes=True)
    def warmup(iterator):
        for _ in tf.range(10):
            train_step(next(iterator))

    return train_loop, warmup


def evaluate(model, dataset):
    for step in tf.range(10):
        model(next(iter(dataset)))
'''


def test_offload_loops_are_reported_with_their_step_count() -> None:
    findings = [f for f in assert_unchanged(CONTROLLER, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU066"]
    assert sites(findings) == [("NPU066", 13, 8, "unmigrated"), ("NPU066", 18, 8, "unmigrated")]
    assert findings[0].message.startswith(
        "iteration offload: set the NPU loop size to the steps per call of train_loop() "
        "(NPU_LOOP_SIZE=FLAGS.steps_per_loop before importing npu_device, or "
        "npu.set_npu_loop_size(FLAGS.steps_per_loop) before calling it); with use_tf_while_loop "
        "on, it must equal steps_per_loop")
    assert "NPU_LOOP_SIZE=10 " in findings[1].message


def test_a_loop_size_set_in_the_file_is_migrated_and_one_step_per_call_needs_nothing() -> None:
    source = CONTROLLER.replace('import tensorflow as tf\n', 'import npu_device as npu\n'
                                'import tensorflow as tf\n\nnpu.set_npu_loop_size(100)\n')
    statuses = {f.status for f in assert_unchanged(source, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU066"}
    assert statuses == {"migrated"}
    assert [f for f in assert_unchanged(CUSTOM_LOOP, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU066"] == []
