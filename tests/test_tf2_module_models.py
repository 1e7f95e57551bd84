"""NPU067 on models that are no Keras models: a ``tf.Module`` subclass (in the file or in another
module of the repository) or a Sonnet module trained in a custom loop is reported at its
construction (``spec/rules-tf2.md``, NPU067: subclassed and lazily built models are "unmigrated
at the construction"), while NPU068 all-reduces its gradients: without the broadcast each worker
keeps its own initial weights. NPU068 follows Sonnet's ``optimizer.apply(gradients, variables)``
as it follows ``apply_gradients`` (sonnet's examples/simple_mnist.py)."""

from __future__ import annotations

from npu_codemod.api._toolkit import class_facts, model_facts
from npu_codemod.plugins.rules.tf2_distributed._trained import builder_facts

from support.rules import assert_migrates, assert_unchanged, sites

TF2_RUNTIME = {"tf-runtime:2"}
PACK = {"NPU067", "NPU068"}
ALL_REDUCE = '    gradients = npu.distribute.all_reduce(gradients, "mean")\n'
SONNET = '''\
import sonnet as snt
import tensorflow as tf


@tf.function
def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    variables = model.trainable_variables
    gradients = tape.gradient(loss, variables)
    optimizer.apply(gradients, variables)
    return loss


def main():
    model = snt.nets.MLP([8, 1])
    optimizer = snt.optimizers.SGD(0.1)
    for _ in range(3):
        train_step(model, optimizer, tf.zeros([4, 2]), tf.zeros([4, 1]))
'''
NET = '''\
import tensorflow as tf


class Dense(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([2, 1]))

    def __call__(self, x):
        return x @ self.w


class Net(Dense):
    pass
'''
LOOP = '''\
def main():
    model = Net()
    opt = tf.keras.optimizers.SGD(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.ones([4, 2]))))
        gradients = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(gradients, model.trainable_variables))
'''


def _ours(findings: list) -> list:
    return [f for f in findings if f.rule_id in PACK]


def test_a_sonnet_model_is_reported_and_its_apply_gets_the_all_reduce() -> None:
    after = "import npu_device as npu\n" + SONNET \
        .replace("    gradients = tape.gradient(loss, variables)\n",
                 "    gradients = tape.gradient(loss, variables)\n" + ALL_REDUCE)
    found = _ours(assert_migrates(SONNET, after, PACK, facts=TF2_RUNTIME))
    assert sites(found) == [("NPU067", 16, 4, "unmigrated"), ("NPU068", 10, 4, "migrated")]
    broadcast = next(f for f in found if f.rule_id == "NPU067")
    assert broadcast.message.startswith("snt.nets.MLP is a tf.Module model")
    assert "npu.distribute.broadcast(model.trainable_variables)" in broadcast.message


def test_a_tf_module_subclass_of_the_file_or_of_the_repository_is_reported_at_its_construction() -> None:
    source = NET + "\n\n" + LOOP
    after = ("import npu_device as npu\n" + source).replace("        gradients = tape.gradient(loss, model.trainable_variables)\n",
                 "        gradients = tape.gradient(loss, model.trainable_variables)\n    " + ALL_REDUCE)
    facts = TF2_RUNTIME | class_facts("train.py", source)
    found = _ours(assert_migrates(source, after, PACK, facts=facts))
    assert sites(found) == [("NPU067", 18, 4, "unmigrated"), ("NPU068", 23, 8, "migrated")]
    assert found[0].message.startswith("Net is a tf.Module model")

    imported = "import tensorflow as tf\n\nfrom models.net import Net\n\n\n" + LOOP
    facts = TF2_RUNTIME | class_facts("models/net.py", NET)
    found = _ours(assert_unchanged(imported, {"NPU067"}, facts=facts))
    assert sites(found) == [("NPU067", 7, 4, "unmigrated")]


def test_a_module_model_broadcast_already_is_migrated_and_one_not_trained_is_no_site() -> None:
    broadcast = SONNET.replace("    optimizer = snt.optimizers.SGD(0.1)\n",
                               "    model(tf.zeros([1, 2]))\n"
                               "    npu.distribute.broadcast(model.trainable_variables)\n"
                               "    optimizer = snt.optimizers.SGD(0.1)\n")
    assert sites(_ours(assert_unchanged(broadcast, {"NPU067"}, facts=TF2_RUNTIME))) == [
        ("NPU067", 16, 4, "migrated")]
    untrained = "import sonnet as snt\n\n\ndef head():\n    layer = snt.Linear(1)\n    return layer(1.0)\n"
    assert _ours(assert_unchanged(untrained, {"NPU067"}, facts=TF2_RUNTIME)) == []


BUILDER = '''\
import tensorflow as tf


def build_model(width):
    inputs = tf.keras.layers.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(width)(inputs)
    model = tf.keras.Model(inputs=inputs, outputs=outputs)
    return model


def build_inline(width):
    inputs = tf.keras.layers.Input(shape=(4,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(width)(inputs))
'''
FIT = '''
model = build_model(1)
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=1)
other = build_inline(1)
other.compile(optimizer="sgd", loss="mse")
other.fit(x, y, epochs=1)
'''


def test_a_model_from_a_function_that_binds_it_is_broadcast_there_and_not_again_at_the_caller() -> None:
    """rvl L5 (kubeflow/examples openvaccine model.py): the broadcast goes after the binding in
    ``build_model``; the caller has no site (a finding there asked for a second broadcast). A
    function that returns the model it makes without binding it has no site: the caller keeps it."""
    source = BUILDER + FIT
    after = ("import npu_device as npu\n" + source).replace(
        "    model = tf.keras.Model(inputs=inputs, outputs=outputs)\n",
        "    model = tf.keras.Model(inputs=inputs, outputs=outputs)\n"
        "    npu.distribute.broadcast(model.trainable_variables)\n")
    found = [f for f in assert_migrates(source, after, {"NPU067"}, facts=TF2_RUNTIME) if f.rule_id == "NPU067"]
    assert sites(found) == [("NPU067", 7, 4, "migrated"), ("NPU067", 18, 0, "unmigrated")]
    assert found[1].message.startswith("the variables may not exist yet here")


def test_a_model_from_a_builder_of_another_module_has_no_site_at_the_caller() -> None:
    facts = TF2_RUNTIME | model_facts("models/net.py", BUILDER) | builder_facts("models/net.py", BUILDER)
    caller = "import tensorflow as tf\n\nfrom models.net import build_inline, build_model\n" + FIT
    found = [f for f in assert_unchanged(caller, {"NPU067"}, facts=facts) if f.rule_id == "NPU067"]
    assert sites(found) == [("NPU067", 8, 0, "unmigrated")]


def test_an_input_shape_in_a_comment_builds_no_variables() -> None:
    """Regression (KISTI's ``tf_keras_cats_dogs.org.py``: ``#...BatchNormalization(input_shape=
    (224,224,3)),`` commented out): the shape test read the comment, so the Sequential counted as
    built and got a broadcast of variables that do not exist yet. It is lazily built: reported."""
    source = ('import tensorflow as tf\n\n\ndef build_model():\n'
              '    model = tf.keras.Sequential([\n'
              '        tf.keras.layers.BatchNormalization(),\n'
              '        #tf.keras.layers.BatchNormalization(input_shape=(224, 224, 3)),\n'
              '        tf.keras.layers.Dense(1),\n'
              '    ])\n    return model\n\n\n'
              'model = build_model()\nmodel.compile(optimizer="sgd", loss="mse")\n'
              'model.fit(tf.zeros([4, 4]), tf.zeros([4, 1]), epochs=1)\n')
    found = [f for f in assert_unchanged(source, {"NPU067"}, facts=TF2_RUNTIME) if f.rule_id == "NPU067"]
    assert found and all(f.status == "unmigrated" for f in found)
    assert "npu.distribute.broadcast" not in source
