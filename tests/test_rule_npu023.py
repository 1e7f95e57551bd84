"""NPU023 horovod-optimizer: golden before/after per bullet of the spec (and the compiled Keras
model's optimizer, which this rule owns so that every wrapper is reported once)."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.packs import (
    BOTH_REPO,
    HOROVOD_REPO,
    HVD,
    INIT,
    STRATEGY_REPO,
    message_of,
    pack_migrates,
    repository_facts,
)

RULES = {"NPU023"}
KERAS_HVD = "import tensorflow as tf\nimport horovod.tensorflow.keras as hvd\n"


@pytest.mark.parametrize("arguments, kept", [
    ("opt", "opt"),
    ("optimizer=opt", "opt"),
    ("opt, compression=hvd.Compression.none", "opt"),
    ("opt, op=hvd.Average, sparse_as_dense=False, backward_passes_per_step=1", "opt"),
    ("opt, name=None, use_locking=False, device_dense='', device_sparse=\"\"", "opt"),
    ("opt, None, False, '', ''", "opt"),  # name, use_locking, device_dense, device_sparse
    ("compression=hvd.Compression.none, optimizer=opt", "opt"),
    ("\n    opt,\n    compression=hvd.Compression.none,\n", "\n    opt,\n"),  # layout kept
    ("tf.train.AdamOptimizer(  # Adam\n        1e-3), op=hvd.Average", "tf.train.AdamOptimizer(  # Adam\n        1e-3)"),
])
def test_the_optimizer_is_wrapped_and_default_arguments_are_dropped(arguments: str, kept: str) -> None:
    findings = pack_migrates(RULES, f"opt = hvd.DistributedOptimizer({arguments})\n",
                             f"opt = npu_distributed_optimizer_wrapper({kept})\n",
                             findings=[("NPU023", 3, 6, "migrated")])
    assert findings[0].message.startswith(
        "replaced hvd.DistributedOptimizer(...) with npu_distributed_optimizer_wrapper(...)")


def test_the_message_names_the_dropped_defaults() -> None:
    findings = pack_migrates(RULES,
                             "opt = hvd.DistributedOptimizer(opt, compression=hvd.Compression.none)\n",
                             "opt = npu_distributed_optimizer_wrapper(opt)\n")
    assert findings[0].message == (
        "replaced hvd.DistributedOptimizer(...) with npu_distributed_optimizer_wrapper(...) "
        "(dropped compression=hvd.Compression.none: Horovod's defaults)")


def test_the_keras_module_and_its_own_argument_order() -> None:
    # Horovod's Keras DistributedOptimizer has no use_locking: its 3rd parameter is device_dense.
    pack_migrates(RULES,
                  "opt = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(0.001), None, '')\n",
                  "opt = npu_distributed_optimizer_wrapper(tf.keras.optimizers.Adam(0.001))\n",
                  header=KERAS_HVD)


@pytest.mark.parametrize("arguments, named", [
    ("opt, compression=hvd.Compression.fp16", "compression=hvd.Compression.fp16"),
    ("opt, sparse_as_dense=True", "sparse_as_dense=True"),
    ("opt, backward_passes_per_step=4, op=hvd.Adasum", "backward_passes_per_step=4, op=hvd.Adasum"),
    ("opt, 'DistributedAdam'", "name='DistributedAdam'"),
    ("opt, device_dense='/gpu:0'", "device_dense='/gpu:0'"),
    ("opt, compression=fp16", "compression=fp16"),  # a variable: not shown to be the default
])
def test_an_argument_other_than_the_default_keeps_the_call(arguments: str, named: str) -> None:
    findings = assert_reports(RULES, HVD + f"opt = hvd.DistributedOptimizer({arguments})\n",
                              facts=HOROVOD_REPO, findings=[("NPU023", 3, 6, "unmigrated")])
    assert findings[0].message.startswith(
        f"hvd.DistributedOptimizer(...): no NPU equivalent for {named}; replace "
        "hvd.DistributedOptimizer(...) with npu_distributed_optimizer_wrapper(<the optimizer>)")


@pytest.mark.parametrize("source, why", [
    ("opt = hvd.DistributedOptimizer(*args, **kwargs)\n", "its arguments are unpacked"),
    ("opt = hvd.DistributedOptimizer()\n", "no optimizer is passed"),
    ("make = hvd.DistributedOptimizer\n", "used as a value, not called"),
])
def test_calls_it_cannot_read_are_reported(source: str, why: str) -> None:
    findings = assert_reports(RULES, HVD + source, facts=HOROVOD_REPO)
    assert [f.status for f in findings] == ["unmigrated"] and why in findings[0].message


def test_the_gradient_tape_is_reported() -> None:
    findings = assert_reports(RULES, HVD + "tape = hvd.DistributedGradientTape(tape)\n",
                              facts=HOROVOD_REPO, findings=[("NPU023", 3, 7, "unmigrated")])
    assert findings[0].message.startswith("hvd.DistributedGradientTape(...) wraps an eager gradient tape")


def test_a_second_run_reports_the_wrapper() -> None:
    assert_reports(RULES, INIT + HVD + "opt = npu_distributed_optimizer_wrapper(opt)\n",
                   facts=HOROVOD_REPO, findings=[("NPU023", 4, 6, "migrated")])


KERAS_SCRIPT = '''\
import tensorflow as tf
import horovod.tensorflow.keras as hvd


def build_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
    return model


def main():
    opt = tf.keras.optimizers.Adadelta(1.0 * hvd.size())
    opt = hvd.DistributedOptimizer(opt)
    model = build_model()
    model.compile(loss="sparse_categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    other = build_model()
    other.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    direct = tf.keras.models.load_model("base.h5")
    direct.compile(hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.01)), "mse")
    named = build_model()
    named.compile(optimizer="adam", loss="mse")
    scaler.compile(optimizer=opt)
'''
KERAS_SCRIPT_AFTER = '''\
from npu_bridge.npu_init import *
import tensorflow as tf
import horovod.tensorflow.keras as hvd


def build_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
    return model


def main():
    opt = tf.keras.optimizers.Adadelta(1.0 * hvd.size())
    opt = npu_distributed_optimizer_wrapper(opt)
    model = build_model()
    model.compile(loss="sparse_categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    other = build_model()
    other.compile(optimizer=npu_distributed_optimizer_wrapper(tf.keras.optimizers.SGD(0.01)), loss="mse")
    direct = tf.keras.models.load_model("base.h5")
    direct.compile(npu_distributed_optimizer_wrapper(tf.keras.optimizers.SGD(0.01)), "mse")
    named = build_model()
    named.compile(optimizer="adam", loss="mse")
    scaler.compile(optimizer=opt)
'''


def test_a_compiled_keras_model_gets_its_optimizer_wrapped_once() -> None:
    facts = repository_facts({"train.py": KERAS_SCRIPT})
    findings = assert_migrates(RULES, KERAS_SCRIPT, KERAS_SCRIPT_AFTER, facts=facts, findings=[
        ("NPU023", 12, 10, "migrated"),  # hvd.DistributedOptimizer
        ("NPU023", 16, 28, "migrated"),  # compiled with an unwrapped optimizer
        ("NPU023", 18, 19, "migrated"),  # hvd.DistributedOptimizer given to compile directly
        ("NPU023", 20, 28, "unmigrated"),  # a name, not an optimizer object
    ])
    assert message_of(findings, "NPU023", 16) == ("wrapped the optimizer the Keras model compiles "
                                                  "with in npu_distributed_optimizer_wrapper()")
    assert message_of(findings, "NPU023", 20).startswith("optimizer=\"adam\" is no optimizer object")


def test_compile_is_left_alone_outside_a_distributed_repository() -> None:
    source = ("import tensorflow as tf\nmodel = tf.keras.Sequential()\n"
              "model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss='mse')\n")
    assert run_rules(RULES, source).new is None
    after = source.replace("optimizer=tf.keras.optimizers.SGD(0.01)",
                           "optimizer=npu_distributed_optimizer_wrapper(tf.keras.optimizers.SGD(0.01))")
    assert_migrates(RULES, source, INIT + after, facts=STRATEGY_REPO, findings=[("NPU023", 3, 24, "migrated")])


def test_compile_in_a_repository_with_both_modes_is_reported() -> None:
    source = ("import tensorflow as tf\nmodel = tf.keras.Sequential()\n"
              "model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss='mse')\n")
    findings = assert_reports(RULES, source, facts=BOTH_REPO, findings=[("NPU023", 3, 24, "unmigrated")])
    assert findings[0].message.startswith("the repository trains with Horovod and with a "
                                          "tf.distribute strategy: pick one distribution mode, then wrap")


@pytest.mark.parametrize("value", ["None", "0.1", "'adam' 'w'"])
def test_compile_with_no_optimizer_object_is_reported(value: str) -> None:
    source = f"import tensorflow as tf\nmodel = tf.keras.Sequential()\nmodel.compile(optimizer={value})\n"
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[("NPU023", 3, 24, "unmigrated")])
    assert findings[0].message.startswith(f"optimizer={value} is no optimizer object")


def test_compile_without_an_optimizer_is_reported() -> None:
    source = "import tensorflow as tf\nmodel = tf.keras.Sequential()\nmodel.compile(loss='mse')\n"
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[("NPU023", 3, 0, "unmigrated")])
    assert findings[0].message.startswith("compile() without an optimizer uses 'rmsprop'")


def test_an_optimizer_of_unknown_origin_is_reported_not_wrapped_again() -> None:
    source = '''\
import tensorflow as tf


def build_model(optimizer):
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer=optimizer, loss="mse")  # the caller may have wrapped it
    return model
'''
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[("NPU023", 6, 28, "unmigrated")])
    assert findings[0].message.startswith(
        "optimizer=optimizer: where this optimizer comes from is not known here: make sure it is "
        "wrapped once, in npu_distributed_optimizer_wrapper(), where it is built")
