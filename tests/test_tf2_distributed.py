"""The opt-in ``tf2-distributed`` pack: NPU068 all-reduces a custom loop's gradients, NPU070
reports MirroredStrategy and Horovod in TF 2.x files (``spec/rules-tf2.md``)."""

from __future__ import annotations

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.tf2_distributed.npu068_gradient_allreduce import npu_codemod_analyze_file

from support.rules import assert_migrates, assert_unchanged, messages, run_rules, sites
from support.tf2_scripts import KERAS_WORKERS, MIRRORED_LOOP, OWN_TRAIN_STEP

TF2_RUNTIME = {"tf-runtime:2"}
PACK = {"NPU067", "NPU068", "NPU069", "NPU070"}
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
    # NPU069: ``train``'s one caller passes a dataset, so ``dataset.batch`` batches one
    assert sorted(sites(ours)) == [("NPU068", 22, 8, "migrated"), ("NPU069", 16, 68, "unmigrated"),
                                   ("NPU070", 10, 15, "unmigrated")]
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
    assert sites(findings) == [("NPU068", 5, 4, "unmigrated"), ("NPU068", 11, 4, "unmigrated"),
                               ("NPU068", 12, 4, "unmigrated")]
    assert findings[0].message.startswith(
        "the gradients are returned: if the caller applies them, add grads = npu.distribute.all_reduce("
        "grads, \"mean\") where it binds them, before they are applied")
    assert findings[1].message.startswith(
        "grads is applied nowhere in this file: if it updates trained variables (apply_gradients or "
        "assign_sub in another file), add grads = npu.distribute.all_reduce(grads, \"mean\") before "
        "they are applied")


def test_gradients_applied_in_another_function_of_the_file_are_said_to_be() -> None:
    source = '''\
import tensorflow as tf


def step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    return grads


def apply(model, optimizer, grads):
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''
    findings = [f for f in assert_unchanged(source, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert sites(findings) == [("NPU068", 7, 4, "unmigrated")]
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


def test_models_broadcast_their_variables_once_they_exist_and_the_optimizer_is_wrapped() -> None:
    """NPU067 after the strategy scope block and after a functional model that ``main``
    trains; the lazy ``Sequential`` of ``build_head``, which nothing trains, is no site;
    NPU068 wraps compile's optimizer; NPU069 reports the shard and the training pipeline, not
    the evaluation one."""
    after = KERAS_WORKERS.replace(
        '"""Train an MNIST classifier on several workers with Keras fit (TF 2.x)."""\n',
        '"""Train an MNIST classifier on several workers with Keras fit (TF 2.x)."""\n'
        "import npu_device as npu\n").replace(
        "    model = tf.keras.Model(inputs=inputs, outputs=outputs)\n",
        "    model = tf.keras.Model(inputs=inputs, outputs=outputs)\n"
        "    npu.distribute.broadcast(model.trainable_variables)\n").replace(
        '                      metrics=["accuracy"])\n',
        '                      metrics=["accuracy"])\n'
        "    npu.distribute.broadcast(model.trainable_variables)\n").replace(
        "model.compile(optimizer=tf.keras.optimizers.Adam(args.learning_rate),",
        "model.compile(optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("
        "tf.keras.optimizers.Adam(args.learning_rate)),")
    chosen = {"NPU067", "NPU068", "NPU069"}
    findings = [f for f in assert_migrates(KERAS_WORKERS, after, chosen, facts=TF2_RUNTIME)
                if f.rule_id in chosen]
    assert sorted(sites(findings)) == [
        ("NPU067", 23, 4, "migrated"),
        ("NPU067", 37, 12, "migrated"),
        ("NPU067", 39, 12, "migrated"),
        ("NPU068", 40, 32, "migrated"),
        ("NPU069", 13, 26, "unmigrated"),
        ("NPU069", 43, 85, "unmigrated")]
    by_line = {(f.rule_id, f.line): f.message for f in findings}
    assert by_line["NPU069", 43].startswith("shard per NPU worker before batching: train_ds, batch_size = "
                                            "npu.distribute.shard_and_rebatch_dataset(train_ds, args.batch_size)")
    assert by_line["NPU069", 13].startswith("shard by the NPU worker count and id")
    assert by_line["NPU067", 39].startswith("the model's initial variables are broadcast")


def test_a_train_step_override_is_a_custom_loop_and_minimize_wraps_its_optimizer() -> None:
    after = OWN_TRAIN_STEP.replace("import tensorflow as tf\n",
                                   "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        "        grads = tape.gradient(loss, self.trainable_variables)\n",
        "        grads = tape.gradient(loss, self.trainable_variables)\n"
        "        grads = npu.distribute.all_reduce(grads, \"mean\")\n").replace(
        "optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)",
        "optimizer = npu.distribute.npu_distributed_keras_optimizer_wrapper("
        "tf.keras.optimizers.SGD(learning_rate=0.1))")
    findings = [f for f in assert_migrates(OWN_TRAIN_STEP, after, PACK, facts=TF2_RUNTIME)
                if f.rule_id == "NPU068"]
    assert sites(findings) == [("NPU068", 13, 8, "migrated"), ("NPU068", 21, 17, "migrated"),
                               ("NPU068", 29, 28, "migrated")]
    assert findings[2].message.startswith("the model's class overrides train_step")


def test_an_optimizer_wrapped_twice_is_reported_and_an_unknown_one_is_not_wrapped() -> None:
    source = '''\
import npu_device as npu
import tensorflow as tf


def train(model, loss_fn, optimizer, steps):
    twice = npu.distribute.npu_distributed_keras_optimizer_wrapper(
        npu.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.SGD(0.1)))
    for _ in range(steps):
        twice.minimize(loss_fn, model.trainable_variables)
        optimizer.minimize(loss_fn, model.trainable_variables)
'''
    findings = [f for f in assert_unchanged(source, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert [(f.line, f.status, f.message.split(":")[0]) for f in findings] == [
        (6, "unmigrated", "optimizer wrapped twice"),
        (10, "unmigrated", "optimizer.minimize computes and applies gradients")]


def test_a_model_compiled_where_the_repository_trains_in_a_custom_loop_is_reported() -> None:
    """A builder compiles the model; an executor elsewhere applies its gradients itself (and
    NPU068 all-reduces them there): wrapping the optimizer too would all-reduce them twice."""
    source = '''\
"""Builds the detector and its optimizer."""
import tensorflow as tf


def build_detector(num_classes, learning_rate):
    images = tf.keras.Input(shape=(512, 512, 3))
    features = tf.keras.applications.ResNet50(include_top=False, weights=None)(images)
    outputs = tf.keras.layers.Conv2D(num_classes, 3, padding="same")(features)
    model = tf.keras.Model(inputs=images, outputs=outputs, name="detector")
    optimizer = tf.keras.optimizers.SGD(learning_rate, momentum=0.9)
    model.compile(optimizer=optimizer, loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    return model
'''
    facts = TF2_RUNTIME | {"npu068-custom-loop"}
    findings = [f for f in assert_unchanged(source, {"NPU068"}, facts=facts) if f.rule_id == "NPU068"]
    assert [(f.line, f.status, f.message.split(":")[0]) for f in findings] == [
        (11, "unmigrated", "the repository applies gradients in a custom loop (all-reduced there)")]


def test_a_compile_that_is_not_keras_is_not_an_optimizer() -> None:
    source = '''\
"""Reads the anchors configuration."""
import re

import tensorflow as tf

_SIZE = re.compile(r"(\\d+)x(\\d+)")


def train(model, dataset):
    model.compile("adam", loss="mse")
    with tf.GradientTape() as tape:
        loss = model(next(iter(dataset)))
    return tape
'''
    findings = [f for f in assert_unchanged(source, {"NPU068"}, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert findings == []  # re.compile; a positional optimizer of a receiver not shown to be Keras


def test_a_horovod_script_is_left_to_npu070_not_wrapped_or_broadcast_twice() -> None:
    source = '''\
"""MNIST with Keras and Horovod (TF 2.x)."""
import horovod.tensorflow.keras as hvd
import tensorflow as tf


def main():
    hvd.init()
    inputs = tf.keras.Input(shape=(28, 28))
    outputs = tf.keras.layers.Dense(10)(tf.keras.layers.Flatten()(inputs))
    model = tf.keras.Model(inputs, outputs)
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(0.001 * hvd.size()))
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    return model
'''
    findings = assert_unchanged(source, PACK, facts=TF2_RUNTIME)
    assert {f.rule_id for f in findings} == {"NPU000", "NPU070"}
    assert [f.line for f in findings if f.rule_id == "NPU070"] == [7, 11, 11]  # init, size, optimizer


HOROVOD_KERAS = '''\
"""Train an MNIST classifier with Horovod and Keras fit (TF 2.x), one process per GPU."""
import os

import tensorflow as tf
import horovod.tensorflow.keras as hvd
from horovod.tensorflow.keras.callbacks import LearningRateScheduleCallback

from mnist_utils import build_model, mnist_dataset

EPOCHS = int(os.environ.get("EPOCHS", "24"))


def callbacks(scaled_lr):
    found = [
        # Horovod: start every worker from rank 0's initial variables.
        hvd.callbacks.BroadcastGlobalVariablesCallback(0),
        hvd.callbacks.MetricAverageCallback(),
        hvd.callbacks.LearningRateWarmupCallback(initial_lr=scaled_lr, warmup_epochs=3, verbose=1),
        LearningRateScheduleCallback(initial_lr=scaled_lr, multiplier=1e-1, start_epoch=15),
    ]
    if hvd.rank() == 0:
        found.append(tf.keras.callbacks.ModelCheckpoint("./checkpoint-{epoch}.h5"))
    return found


def main():
    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.001), loss="sparse_categorical_crossentropy")
    model.fit(mnist_dataset(), epochs=EPOCHS, callbacks=callbacks(0.001))
'''
HOROVOD_TF = '''\
"""The same callbacks spelled through horovod.tensorflow."""
import horovod.tensorflow as hvd
import tensorflow as tf


def callbacks():
    return [hvd.keras.callbacks.BroadcastGlobalVariablesCallback(root_rank=0)]
'''


def test_horovod_s_keras_callbacks_are_reported_with_what_replaces_each() -> None:
    """Horovod's Keras callbacks, in each spelling, are Horovod uses like ``hvd.rank()``:
    ``hvd.callbacks.*`` of ``horovod.tensorflow.keras``, a ``from`` import of its ``callbacks``
    module, ``hvd.keras.callbacks.*`` of ``horovod.tensorflow``. Before, NPU070 left them out:
    the broadcast, the metric averaging and the warm-up went unreported."""
    findings = [f for f in assert_unchanged(HOROVOD_KERAS, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU070"]
    replaced = [(f.line, f.message.split("; replace ")[1].split(" (guide")[0]) for f in findings if f.line != 21]
    assert replaced == [
        (16, "hvd.callbacks.BroadcastGlobalVariablesCallback by npu.distribute.broadcast("
             "model.trainable_variables) once the model is built (NPU067)"),
        (17, "hvd.callbacks.MetricAverageCallback by npu.distribute.all_reduce(value, \"mean\") of "
             "each metric in a callback of your own (each worker logs its own metrics otherwise)"),
        (18, "hvd.callbacks.LearningRateWarmupCallback by a warm-up in "
             "tf.keras.callbacks.LearningRateScheduler, the rate scaled by the RANK_SIZE environment variable"),
        (19, "LearningRateScheduleCallback by tf.keras.callbacks.LearningRateScheduler, the rate "
             "scaled by the RANK_SIZE environment variable"),
    ]
    assert [f.line for f in findings if f.line == 21] == [21]  # hvd.rank()
    (through_tf,) = [f for f in assert_unchanged(HOROVOD_TF, PACK, facts=TF2_RUNTIME) if f.rule_id == "NPU070"]
    assert (through_tf.line, through_tf.message.split("; replace ")[1].split(" by ")[0]) == (
        7, "hvd.keras.callbacks.BroadcastGlobalVariablesCallback")
def test_the_shard_line_names_the_global_batch_as_the_batch_call_passes_it() -> None:
    source = ("import tensorflow as tf\n\nBATCH_SIZE = 256\n\n\ndef train(model, files):\n"
              "    train_dataset = tf.data.TFRecordDataset(files)\n"
              "    train_dataset = train_dataset.batch(batch_size=BATCH_SIZE)\n"
              "    model.fit(train_dataset)\n")
    findings = [f for f in assert_unchanged(source, {"NPU069"}, facts=TF2_RUNTIME) if f.rule_id == "NPU069"]
    assert findings[0].message.startswith(
        "shard per NPU worker before batching: train_dataset, batch_size = "
        "npu.distribute.shard_and_rebatch_dataset(train_dataset, BATCH_SIZE)")


MULTI_WORKER = '''\
"""Train a regressor on several hosts with MultiWorkerMirroredStrategy and Keras fit."""
import tensorflow as tf

strategy = tf.distribute.{strategy}()


def build():
    inputs = tf.keras.Input(shape=(4,))
    model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    return model


if __name__ == "__main__":
    with strategy.scope():
        model = build()
    model.fit(tf.zeros([64, 4]), tf.zeros([64, 1]), epochs=1)
'''


def test_every_multi_device_strategy_is_reported_as_mirrored_strategy_is() -> None:
    """MultiWorkerMirroredStrategy (either name), CentralStorageStrategy,
    ParameterServerStrategy and TPUStrategy aggregate by themselves like MirroredStrategy:
    NPU067/NPU068 port the training to npu.distribute inside their scope as they do for
    MirroredStrategy, so NPU070 reports each strategy, saying to remove it. Before, the
    multi-worker ones got no finding at all (the TF 2.6 list calls them harmless) and the file
    was ``ready`` with two aggregations."""
    for strategy in ("MirroredStrategy", "MultiWorkerMirroredStrategy",
                     "experimental.MultiWorkerMirroredStrategy", "experimental.CentralStorageStrategy",
                     "experimental.ParameterServerStrategy", "TPUStrategy"):
        before = MULTI_WORKER.replace("{strategy}", strategy)
        after = before.replace("import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n").replace(
            "    model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))\n",
            "    model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))\n"
            "    npu.distribute.broadcast(model.trainable_variables)\n").replace(
            "optimizer=tf.keras.optimizers.SGD(0.01)",
            "optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.SGD(0.01))")
        findings = [f for f in assert_migrates(before, after, PACK | {"NPU071"}, facts=TF2_RUNTIME)
                    if f.rule_id in {"NPU070", "NPU071"}]
        assert sites(findings) == [("NPU070", 4, 11, "unmigrated")], strategy
        assert "then remove the strategy and its scope()" in findings[0].message


MIXED_PRECISION_LOOP = '''\
"""A mixed-precision custom loop, as in TensorFlow's mixed-precision guide."""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
'''


def test_unscaled_gradients_are_followed_to_apply_gradients_and_all_reduced_once() -> None:
    """``get_unscaled_gradients`` gives the gradients a new name: they are still applied in the
    block, so the all_reduce goes right after the gradient statement (the mean of the scaled
    gradients unscales to the mean of the gradients), not a report that they go elsewhere."""
    after = MIXED_PRECISION_LOOP.replace("import tensorflow as tf\n",
                                         "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        "    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)\n",
        "    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)\n"
        "    scaled_gradients = npu.distribute.all_reduce(scaled_gradients, \"mean\")\n")
    findings = [f for f in assert_migrates(MIXED_PRECISION_LOOP, after, {"NPU068"}, facts=TF2_RUNTIME)
                if f.rule_id == "NPU068"]
    assert [(f.line, f.status, f.message) for f in findings] == [
        (13, "migrated", "added scaled_gradients = npu.distribute.all_reduce(scaled_gradients, "
                         "\"mean\") before the gradients are applied")]


CLIPPED_LOOPS = '''\
import tensorflow as tf


@tf.function
def step_global_norm(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    raw = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(raw, 5.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


@tf.function
def step_each_norm(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    raw = tape.gradient(loss, model.trainable_variables)
    clipped = [tf.clip_by_norm(g, 1.0) for g in raw]
    optimizer.apply_gradients(zip(clipped, model.trainable_variables))


@tf.function
def step_pairs(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    raw = tape.gradient(loss, model.trainable_variables)
    pairs = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in zip(raw, model.trainable_variables)]
    optimizer.apply_gradients(pairs)
'''


def test_gradients_clipped_into_a_new_name_are_all_reduced_before_clipping() -> None:
    after = CLIPPED_LOOPS.replace("import tensorflow as tf\n",
                                  "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        "    raw = tape.gradient(loss, model.trainable_variables)\n",
        "    raw = tape.gradient(loss, model.trainable_variables)\n"
        "    raw = npu.distribute.all_reduce(raw, \"mean\")\n")
    findings = assert_migrates(CLIPPED_LOOPS, after, {"NPU068"}, facts=TF2_RUNTIME)
    assert [site for site in sites(findings) if site[0] == "NPU068"] == [("NPU068", 8, 4, "migrated"), ("NPU068", 17, 4, "migrated"),
                               ("NPU068", 26, 4, "migrated")]


def test_gradients_applied_after_a_step_not_followed_are_reported_with_that_step() -> None:
    source = '''\
import tensorflow as tf


@tf.function
def step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    raw = tape.gradient(loss, model.trainable_variables)
    kept = [g for g in raw if g is not None]
    optimizer.apply_gradients(zip(kept, model.trainable_variables))
'''
    (finding,) = [f for f in assert_unchanged(source, {"NPU068"}, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert (finding.line, finding.status) == (8, "unmigrated")
    assert finding.message.startswith(
        "raw reaches apply_gradients through `kept = [g for g in raw if g is not None]`, a step "
        "NPU068 does not follow")


OWN_STEP_CLASS = '''\
"""A contrastive model that trains its own step and takes its own compile arguments."""
import tensorflow as tf


class Contrastive(tf.keras.Model):
    def compile(self, optimizer="adam", loss=None, temperature=0.1):
        self.temperature = temperature
        super().compile(optimizer=optimizer, loss=loss)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
'''


def test_the_own_compile_of_a_class_that_steps_itself_is_not_told_to_wrap() -> None:
    after = OWN_STEP_CLASS.replace("import tensorflow as tf\n",
                                   "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        "        grads = tape.gradient(loss, self.trainable_variables)\n",
        "        grads = tape.gradient(loss, self.trainable_variables)\n"
        "        grads = npu.distribute.all_reduce(grads, \"mean\")\n")
    findings = [f for f in assert_migrates(OWN_STEP_CLASS, after, {"NPU068"}, facts=TF2_RUNTIME)
                if f.rule_id == "NPU068"]
    assert [(f.line, f.status, f.message.split(":")[0]) for f in findings] == [
        (8, "migrated", "the model's class overrides train_step and applies gradients itself"),
        (14, "migrated", "added grads = npu.distribute.all_reduce(grads, \"mean\") before the "
                         "gradients are applied")]


IMPORTED_OWN_STEP = '''\
import tensorflow as tf

from models.contrastive import Contrastive
from models.small import SmallContrastive


def main():
    inputs = tf.keras.Input((4,))
    model = Contrastive(inputs, tf.keras.layers.Dense(2)(inputs))
    model.compile(optimizer=tf.keras.optimizers.SGD(), loss="mse")
    small = SmallContrastive(inputs, tf.keras.layers.Dense(2)(inputs))
    small.compile(optimizer="adam", loss="mse")
    baseline = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    baseline.compile(optimizer="adam", loss="mse")
'''
#: What the analysis of ``models/contrastive.py`` (:data:`OWN_STEP_CLASS`) and of
#: ``models/small.py`` (``class SmallContrastive(Contrastive)``) tells the repository.
OWN_STEP_FACTS = TF2_RUNTIME | {
    "class:models.contrastive.Contrastive=tensorflow.keras.Model;-",
    "class:models.small.SmallContrastive=models.contrastive.Contrastive;-",
    "npu068-own-step:models.contrastive.Contrastive"}


def test_a_model_of_an_imported_class_that_steps_itself_keeps_its_optimizer() -> None:
    """The class (or its base) all-reduces in its train_step in another file: wrapping the
    optimizer here too would aggregate each step twice; a plain Keras model is still wrapped."""
    after = IMPORTED_OWN_STEP.replace("import tensorflow as tf\n",
                                      "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        '    baseline.compile(optimizer="adam", loss="mse")\n',
        '    baseline.compile(optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("adam"), '
        'loss="mse")\n')
    findings = [f for f in assert_migrates(IMPORTED_OWN_STEP, after, {"NPU068"}, facts=OWN_STEP_FACTS)
                if f.rule_id == "NPU068"]
    assert [(f.line, f.message.split(":")[0]) for f in findings] == [
        (10, "the model's class overrides train_step and applies gradients itself"),
        (12, "the model's class overrides train_step and applies gradients itself"),
        (14, "added npu.distribute.npu_distributed_keras_optimizer_wrapper(...) around the optimizer")]


#: A helper that compiles a model it is given (automl's ``setup_model``, TensorFlowTTS's
#: ``trainer.compile(model=..., optimizer=...)``): the receiver is not shown to be a Keras model.
SETUP_MODEL = '''\
import tensorflow as tf


def setup_model(model, learning_rate):
    model.build((None, 512, 512, 3))
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate), loss="mse")
    return model
'''


def test_an_unknown_model_compiled_where_the_repository_trains_in_a_custom_loop_warns_of_both() -> None:
    """Regression (automl's EfficientDet ``tf2/train.py``): the model's class, in another file,
    all-reduces in its own ``train_step``; the compile of the model ``setup_model`` is given was
    told "wrap the optimizer if this is a Keras model", and it is one: following both findings
    all-reduces every step's gradients twice."""
    findings = [f for f in assert_unchanged(SETUP_MODEL, {"NPU068"}, facts=TF2_RUNTIME | {"npu068-custom-loop"})
                if f.rule_id == "NPU068"]
    assert [(f.line, f.status) for f in findings] == [(6, "unmigrated")]
    assert findings[0].message.split(" (guide: ")[0] == (
        "wrap the optimizer for distributed training if this is a Keras model that trains with fit: "
        "optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>); not if its "
        "gradients are applied in the repository's custom loop or its own train_step, where NPU068 "
        "all-reduces them (never both: gradients would be all-reduced twice)")
    alone = [f for f in assert_unchanged(SETUP_MODEL, {"NPU068"}, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert alone[0].message.split(" (guide: ")[0] == (
        "wrap the optimizer for distributed training if this is a Keras model: "
        "optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>)")


def test_a_trainer_applying_tf_gradients_is_a_custom_loop_of_the_repository() -> None:
    """TensorFlowTTS's trainers compute ``tf.gradients`` (no tape) and apply them: NPU068
    all-reduces them there, so the repository trains in a custom loop."""
    trainer = '''\
import tensorflow as tf


class Trainer:
    def _step(self, x, y):
        loss = tf.reduce_mean(tf.square(self.model(x) - y))
        gradients = tf.gradients(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
'''
    assert "npu068-custom-loop" in (npu_codemod_analyze_file("trainer.py", trainer) or frozenset())
    assert npu_codemod_analyze_file("trainer.py", trainer.replace("tf.gradients", "tf.stop_gradient")) is None


#: Model Maker's EfficientDet ``backbone/train_backbone.py``: a ``train_step`` that minimizes with
#: the optimizer the model is compiled with (``tape=``): no gradients to all-reduce there.
MINIMIZE_STEP = '''\
import tensorflow as tf


class Trainable(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
        return {"loss": loss}


def main(x, y):
    inputs = tf.keras.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(1)(inputs)
    model = Trainable(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y)
'''


def test_a_train_step_minimizing_with_the_compiled_optimizer_gets_it_wrapped_at_compile() -> None:
    """Regression: the compile was reported compliant ("its gradients are all-reduced there
    (custom loop)") although nothing all-reduces in a ``train_step`` that calls
    ``self.optimizer.minimize``: the compiled optimizer is what must aggregate."""
    after = MINIMIZE_STEP.replace("import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n", 1) \
        .replace("model.compile(optimizer=tf.keras.optimizers.SGD(0.1)",
                 "model.compile(optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("
                 "tf.keras.optimizers.SGD(0.1))")
    findings = [f for f in assert_migrates(MINIMIZE_STEP, after, {"NPU068"}, facts=TF2_RUNTIME)
                if f.rule_id == "NPU068"]
    assert [(f.line, f.status) for f in findings] == [(9, "unmigrated"), (17, "migrated")]
    assert findings[0].message.split(" (guide: ")[0] == (
        "self.optimizer.minimize in train_step applies gradients with the optimizer the model is "
        "compiled with: it aggregates once that optimizer is wrapped at compile(optimizer="
        "npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>)), which NPU068 does where "
        "the file builds the model")


def test_an_optimizer_compiled_and_applied_in_a_loop_of_the_file_is_not_wrapped() -> None:
    """yolov3-tf2's train.py: ``setup_model`` compiles the model with ``optimizer`` and returns
    both; ``main`` fits, or (``--mode eager_tf``) applies that optimizer's gradients itself,
    all-reduced there. The wrapper patches the optimizer object in place (``hccl.py``:
    ``optimizer.apply_gradients = ...``), so wrapping it at compile all-reduced the loop's
    gradients twice: reported instead, the loop's all_reduce kept."""
    source = '''\
import tensorflow as tf


def setup_model():
    inputs = tf.keras.Input(shape=(4,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    model.compile(optimizer=optimizer, loss="mse")
    return model, optimizer


def main(eager, dataset):
    model, optimizer = setup_model()
    if eager:
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    else:
        model.fit(dataset, epochs=2)
'''
    new, findings = run_rules(source, {"NPU068"}, facts=TF2_RUNTIME | {"npu068-custom-loop"})
    assert new is not None and "npu_distributed_keras_optimizer_wrapper" not in new
    assert 'grads = npu.distribute.all_reduce(grads, "mean")' in new
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU068"] == [(8, "unmigrated"), (18, "migrated")]
    assert messages(findings, "NPU068")[0].startswith(
        "optimizer also applies the gradients of a custom loop in this file")


FREEZE_THEN_UNFREEZE = '''\
import tensorflow as tf
from tensorflow.keras.optimizers import SGD, Adam


def train(strategy, dataset, freeze_epochs, total_epochs, optimizer_type="adam"):
    inputs = tf.keras.Input(shape=(416, 416, 3))
    model = tf.keras.Model(inputs, tf.keras.layers.Conv2D(75, 1)(inputs))
    optimizer = {
        "adam": Adam(learning_rate=1e-3),
        "sgd": SGD(learning_rate=1e-2, momentum=0.937, nesterov=True),
    }[optimizer_type]
    if strategy is not None:
        with strategy.scope():
            model.compile(optimizer=optimizer, loss="mse")
    else:
        model.compile(optimizer=optimizer, loss="mse")
    model.fit(dataset, epochs=freeze_epochs)
    for layer in model.layers:
        layer.trainable = True
    model.compile(optimizer=optimizer, loss="mse")  # recompile to apply the change
    model.fit(dataset, initial_epoch=freeze_epochs, epochs=total_epochs)
'''


def test_an_optimizer_compiled_again_is_reported_not_wrapped_at_each_compile() -> None:
    """bubbliiiing's yolov4-tf2: the frozen stage and the unfrozen one compile the model with
    the same optimizer object. The wrapper patches that object in place (``hccl.py``:
    ``optimizer.apply_gradients = ...``), so wrapping it at both compiles nested the patch: from
    the second stage on every step all-reduced its gradients twice. Each compile is reported."""
    findings = assert_unchanged(FREEZE_THEN_UNFREEZE, {"NPU068"}, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU068"] == [
        (14, "unmigrated"), (16, "unmigrated"), (20, "unmigrated")]
    assert messages(findings, "NPU068")[0].startswith(
        "optimizer is compiled more than once with the same optimizer object (lines 14, 16, 20): "
        "npu_distributed_keras_optimizer_wrapper patches the object in place")


def test_an_optimizer_compiled_in_a_loop_is_reported_and_one_made_per_compile_is_wrapped() -> None:
    """Exclusive branches compile it once; a new object per stage is a new optimizer; a
    compile in a loop over stages of one object made before the loop runs again."""
    source = '''\
import tensorflow as tf


def train(dataset, stages, distributed):
    inputs = tf.keras.Input(shape=(32, 32, 3))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(10)(tf.keras.layers.Flatten()(inputs)))
    optimizer = tf.keras.optimizers.SGD(0.1)
    if distributed:
        model.compile(optimizer=optimizer, loss="mse", run_eagerly=False)
    else:
        model.compile(optimizer=optimizer, loss="mse")
    model.fit(dataset, epochs=1)
    optimizer = tf.keras.optimizers.SGD(0.01)
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(dataset, epochs=1)
    fine_tune = tf.keras.optimizers.Adam(1e-4)
    for size in stages:
        model.compile(optimizer=fine_tune, loss="mse")
        model.fit(dataset.map(lambda x, y: (tf.image.resize(x, (size, size)), y)), epochs=1)
'''
    wrapped = "optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(optimizer)"
    after = "import npu_device as npu\n" + source.replace("optimizer=optimizer", wrapped)
    findings = assert_migrates(source, after, {"NPU068"}, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU068"] == [
        (9, "migrated"), (11, "migrated"), (14, "migrated"), (18, "unmigrated")]
    assert messages(findings, "NPU068")[3].startswith(
        "fine_tune is compiled more than once with the same optimizer object (in a loop): ")


INLINE_GRADIENTS = '''\
"""A GAN whose steps apply the tape's gradients without naming them (TF 2.x)."""
import npu_device as npu
import tensorflow as tf


class Critic(tf.keras.Model):
    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(data, self(data, training=True))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}


@tf.function
def generator_step(generator, critic, optimizer, noise):
    with tf.GradientTape() as g_tape:
        loss = -tf.reduce_mean(critic(generator(noise)))
    optimizer.apply_gradients(zip(g_tape.gradient(loss, generator.trainable_variables),
                                  generator.trainable_variables))
    return loss


@tf.function
def reduced_step(generator, critic, optimizer, noise):
    with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(critic(generator(noise)))
    variables = generator.trainable_variables
    optimizer.apply_gradients(zip(npu.distribute.all_reduce(tape.gradient(loss, variables), "mean"), variables))
'''


def test_gradients_computed_inside_apply_gradients_are_reported() -> None:
    """``apply_gradients(zip(tape.gradient(...), variables))``: no gradient statement to
    all-reduce after, so nothing aggregated them and nothing said so (and a compile of a
    ``Critic`` was told its gradients are all-reduced in its step)."""
    findings = assert_unchanged(INLINE_GRADIENTS, {"NPU068"}, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU068"] == [
        (10, "unmigrated"), (19, "unmigrated"), (29, "migrated")]
    assert messages(findings, "NPU068")[0].startswith(
        "the gradients are computed inside apply_gradients: bind them first (grads = "
        "tape.gradient(...)), then add grads = npu.distribute.all_reduce(grads, \"mean\") before "
        "apply_gradients")


def test_a_trainer_s_own_train_step_minimizing_is_no_compiled_keras_optimizer() -> None:
    """A ``train_step`` of a class that is no Keras model (``class Seq2seq:``) minimizes with
    an optimizer it was given, not one a ``compile`` wraps: not told to wrap it at compile."""
    source = '''\
import tensorflow as tf


class Seq2seqTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        self.optimizer.minimize(loss, self.model.trainable_variables, tape=tape)
'''
    findings = assert_unchanged(source, {"NPU068"}, facts=TF2_RUNTIME)
    assert [(f.line, f.status, f.level) for f in findings if f.rule_id == "NPU068"] == [(11, "unmigrated", "")]
    assert messages(findings, "NPU068")[0].startswith("self.optimizer.minimize computes and applies gradients")


def test_an_optimizer_passed_by_name_to_an_unknown_model_s_compile_is_wrapped_once() -> None:
    """keras-YOLOv3-model-set: ``get_train_model`` (another file) compiles the model with
    ``optimizer``, wrapped there by NPU068; train.py recompiles it after unfreezing with the
    same object. The note to wrap it there now says that wrapping an already wrapped object
    again all-reduces twice."""
    source = '''\
import tensorflow as tf

from yolo3.model import get_yolo3_train_model


def main(args, anchors, num_classes, dataset):
    optimizer = tf.keras.optimizers.Adam(args.learning_rate)
    model = get_yolo3_train_model(anchors, num_classes, optimizer=optimizer)
    model.fit(dataset, epochs=args.transfer_epoch)
    for layer in model.layers:
        layer.trainable = True
    model.compile(optimizer=optimizer, loss={"yolo_loss": lambda y_true, y_pred: y_pred})
    model.fit(dataset, initial_epoch=args.transfer_epoch, epochs=args.total_epoch)
'''
    findings = [f for f in assert_unchanged(source, {"NPU068"}, facts=TF2_RUNTIME) if f.rule_id == "NPU068"]
    assert [(f.line, f.status) for f in findings] == [(12, "unmigrated")]
    assert findings[0].message.split(" (guide: ")[0].endswith(
        "; once per optimizer object: the wrapper patches optimizer in place, so if another compile "
        "wrapped it already (a model-building helper's), wrapping it again all-reduces twice")


WRAPPED_GRADIENTS = '''\
"""A detector's steps that clip the tape's gradients in the statement computing them (TF 2.x)."""
import npu_device as npu
import tensorflow as tf


@tf.function
def train_step(model, optimizer, images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
    grads, _ = tf.clip_by_global_norm(tape.gradient(loss, model.trainable_variables), 10.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def clipped_step(model, optimizer, images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
    grads = [tf.clip_by_norm(g, 1.0) for g in tape.gradient(loss, model.trainable_variables)]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


@tf.function
def reduced_step(model, optimizer, images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
    reduced = npu.distribute.all_reduce(tape.gradient(loss, model.trainable_variables), "mean")
    grads, _ = tf.clip_by_global_norm(reduced, 10.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''


def test_gradients_computed_inside_another_call_of_a_statement_are_reported() -> None:
    """``grads, _ = tf.clip_by_global_norm(tape.gradient(...), 10.0)``: the gradient call is
    not the statement's value, so no all_reduce can follow it; it was silent (a distributed
    loop left unaggregated, nothing said). Already all-reduced around the call: migrated."""
    findings = assert_unchanged(WRAPPED_GRADIENTS, {"NPU068"}, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU068"] == [
        (10, "unmigrated"), (19, "unmigrated"), (27, "migrated")]
    assert messages(findings, "NPU068")[0].startswith(
        "the gradients are computed inside tf.clip_by_global_norm(...): bind them first (grads = "
        "tape.gradient(...)), then add grads = npu.distribute.all_reduce(grads, \"mean\") right "
        "after, before tf.clip_by_global_norm")
    assert messages(findings, "NPU068")[1].startswith(
        "the gradients are computed inside this expression: bind them first")


SCOPE_RETURNS = '''\
"""A model factory that returns from inside the strategy's scope (TF 2.x)."""
import tensorflow as tf


def create_model(strategy, units):
    with strategy.scope():
        inputs = tf.keras.Input(shape=(16,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))
        model.compile(optimizer="adam", loss="mse")
        return model


def train(strategy, x, y):
    create_model(strategy, 4).fit(x, y, epochs=2)
'''


def test_a_scope_block_that_returns_the_model_gets_the_broadcast_inside_it() -> None:
    """After the ``with strategy.scope():`` block, as the guide places it, the broadcast would
    follow the block's ``return model``: dead code, reported migrated while no worker ever
    broadcast. It goes after the model's statement, inside the block, instead."""
    after = SCOPE_RETURNS.replace(
        "import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n", 1).replace(
        "        model = tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))\n",
        "        model = tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))\n"
        "        npu.distribute.broadcast(model.trainable_variables)\n")
    assert_migrates(SCOPE_RETURNS, after, {"NPU067"}, facts=TF2_RUNTIME)


GENERATOR_FIT = '''\
"""Train the segmentation net from a Keras Sequence (TF 2.x)."""
import tensorflow as tf

from data import Frames

model = tf.keras.models.load_model("segnet.h5", compile=False)
model.compile(optimizer=tf.keras.optimizers.Adam(1e-4), loss="sparse_categorical_crossentropy")
model.fit_generator(Frames("train.txt"), steps_per_epoch=600, epochs=30)
'''


def test_a_model_the_file_fits_from_a_generator_gets_its_optimizer_wrapped() -> None:
    """``fit_generator`` trains with the compiled optimizer as ``fit`` does: with custom loops
    elsewhere in the repository, the file that compiles and fits its model still wraps it,
    instead of saying "only if this model trains with fit"."""
    after = GENERATOR_FIT.replace('"""Train the segmentation net from a Keras Sequence (TF 2.x)."""\n',
                                  '"""Train the segmentation net from a Keras Sequence (TF 2.x)."""\n'
                                  "import npu_device as npu\n").replace(
        "optimizer=tf.keras.optimizers.Adam(1e-4)",
        "optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.Adam(1e-4))")
    facts = TF2_RUNTIME | {"npu068-custom-loop"}
    findings = assert_migrates(GENERATOR_FIT, after, {"NPU068"}, facts=facts)
    assert sites(f for f in findings if f.rule_id == "NPU068") == [("NPU068", 7, 24, "migrated")]


GRADIENT_PENALTY = '''\
"""WGAN-GP critic step: the penalty differentiates the critic by its inputs (TF 2.x)."""
import tensorflow as tf


@tf.function
def critic_step(critic, optimizer, real, fake):
    alpha = tf.random.uniform([tf.shape(real)[0], 1, 1, 1])
    mixed = alpha * real + (1.0 - alpha) * fake
    with tf.GradientTape() as tape:
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(mixed)
            score = critic(mixed, training=True)
        norm = tf.sqrt(tf.reduce_sum(tf.square(gp_tape.gradient(score, mixed)), axis=[1, 2, 3]))
        loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) + 10.0 * tf.reduce_mean((norm - 1.0) ** 2)
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
'''


def test_a_gradient_by_the_inputs_inside_an_expression_is_no_update_to_all_reduce() -> None:
    """The gradient penalty's ``gp_tape.gradient(score, mixed)`` differentiates by an input
    tensor, not by variables: no worker applies it, so it gets no finding; the critic's own
    gradients are all-reduced."""
    after = GRADIENT_PENALTY.replace(
        '"""WGAN-GP critic step: the penalty differentiates the critic by its inputs (TF 2.x)."""\n',
        '"""WGAN-GP critic step: the penalty differentiates the critic by its inputs (TF 2.x)."""\n'
        "import npu_device as npu\n").replace(
        "    grads = tape.gradient(loss, critic.trainable_variables)\n",
        "    grads = tape.gradient(loss, critic.trainable_variables)\n"
        "    grads = npu.distribute.all_reduce(grads, \"mean\")\n")
    findings = assert_migrates(GRADIENT_PENALTY, after, {"NPU068"}, facts=TF2_RUNTIME)
    assert sites(f for f in findings if f.rule_id == "NPU068") == [("NPU068", 15, 4, "migrated")]


def test_a_bound_gradient_by_the_inputs_is_no_update_to_all_reduce() -> None:
    """``slopes = gp_tape.gradient(score, mixed)``: by the interpolated inputs, for the penalty;
    it was told it "is applied in another block or function" and to all-reduce it."""
    source = GRADIENT_PENALTY.replace(
        "        norm = tf.sqrt(tf.reduce_sum(tf.square(gp_tape.gradient(score, mixed)), axis=[1, 2, 3]))\n",
        "        slopes = gp_tape.gradient(score, mixed)\n"
        "        norm = tf.sqrt(tf.reduce_sum(tf.square(slopes), axis=[1, 2, 3]))\n")
    findings = [f for f in run_rules(source, {"NPU068"}, facts=TF2_RUNTIME)[1] if f.rule_id == "NPU068"]
    assert sites(findings) == [("NPU068", 16, 4, "migrated")]
