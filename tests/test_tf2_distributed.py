"""The opt-in ``tf2-distributed`` pack: NPU068 all-reduces a custom loop's gradients, NPU070
reports MirroredStrategy and Horovod in TF 2.x files (``spec/rules-tf2.md``)."""

from __future__ import annotations

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import MIRRORED_LOOP

TF2_RUNTIME = {"tf-runtime:2"}
PACK = {"NPU068", "NPU070"}
DOCSTRING = '"""Multi-GPU training of a ResNet with MirroredStrategy and a custom loop (TF 2.x)."""\n'


def test_the_pack_is_opt_in() -> None:
    default = {rule.id for rule in load_rules(RuleSelection()).rules}
    assert not PACK & default
    chosen = {rule.id for rule in load_rules(RuleSelection(only=frozenset({"tf2-distributed"}))).rules}
    assert chosen - {"NPU001"} == PACK  # --rules adds NPU001 to any selection


def test_a_mirrored_strategy_loop_all_reduces_its_gradients_and_reports_the_strategy() -> None:
    after = MIRRORED_LOOP.replace(DOCSTRING, DOCSTRING + "import npu_device as npu\n").replace(
        "        grads = tape.gradient(loss, model.trainable_variables)\n",
        "        grads = tape.gradient(loss, model.trainable_variables)\n"
        "        grads = npu.distribute.all_reduce(grads, \"mean\")\n")
    findings = assert_migrates(MIRRORED_LOOP, after, PACK, facts=TF2_RUNTIME)
    ours = sorted((f for f in findings if f.rule_id in PACK), key=lambda f: f.line)
    assert sorted(sites(ours)) == [("NPU068", 22, 8, "migrated"), ("NPU070", 10, 15, "unmigrated")]
    assert ours[0].message.startswith("training runs after porting with npu.distribute")


def test_gradients_applied_elsewhere_or_to_a_tuple_are_reported() -> None:
    source = '''\
import tensorflow as tf


def gradients(model, tape, loss):
    return tape.gradient(loss, model.trainable_variables)


def step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    g_vars, d_vars = tape.gradient(loss, [model.a, model.b])
    return grads, g_vars, d_vars
'''
    findings = [f for f in assert_unchanged(source, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert sites(findings) == [("NPU068", 11, 4, "unmigrated"), ("NPU068", 12, 4, "unmigrated")]
    assert findings[0].message.startswith("grads is applied in another block or function")


def test_horovod_in_tf2_code_is_reported_with_the_npu_call() -> None:
    source = '''\
import horovod.tensorflow.keras as hvd
import tensorflow as tf

hvd.init()


def main():
    tf.random.set_seed(hvd.rank())
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=hvd.DistributedOptimizer(tf.keras.optimizers.Adam()), loss="mse")
'''
    findings = [f for f in assert_unchanged(source, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU070"]
    assert [(f.line, f.message.split("; ")[1].split(" (guide")[0]) for f in findings] == [
        (4, "replace hvd.init by nothing: npu.open() reads the rank table and rank id when "
            "RANK_SIZE > 1"),
        (8, "replace hvd.rank by the RANK_ID environment variable the adapter reads at npu.open()"),
        (10, "replace hvd.DistributedOptimizer by npu.distribute.npu_distributed_keras_optimizer_"
             "wrapper(optimizer)")]
