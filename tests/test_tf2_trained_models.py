"""NPU067 broadcasts, or reports, only the models the program trains: in a TF 2.x repository it
runs on ``tf-neutral`` model-definition files too, where every sub-model (a ``Sequential``
block, a layer stack a builder returns) was a site before (63 on Basic_CNNs_TensorFlow2). A
model is trained where it is fitted, compiled, or its ``trainable_variables`` feed a loop, or
when a function returns it whose result a file of the repository trains. Through the CLI, on
a real git repository shaped like Basic_CNNs (a ``models`` package re-exporting its builders,
a custom-loop trainer, an evaluation script, tests)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods.tf_scopes import decided_facts
from npu_codemod.testing import assert_reports

from support.cli import cli
from support.git import git, make_repo
from support.packs import repository_facts
from support.rules import assert_migrates, assert_unchanged, sites

BRANCH = "npu-codemod/sess-run-to-npu"
BLOCKS = '''"""Residual blocks, stacked into the layers of the ResNets."""
import tensorflow as tf


class BasicBlock(tf.keras.layers.Layer):
    def __init__(self, filter_num, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = tf.keras.layers.Conv2D(filter_num, (3, 3), strides=stride, padding="same")
        self.bn1 = tf.keras.layers.BatchNormalization()
        if stride != 1:
            self.downsample = tf.keras.Sequential()
            self.downsample.add(tf.keras.layers.Conv2D(filter_num, (1, 1), strides=stride))
        else:
            self.downsample = lambda x: x

    def call(self, inputs, training=None):
        residual = self.downsample(inputs)
        x = tf.nn.relu(self.bn1(self.conv1(inputs), training=training))
        return tf.nn.relu(x + residual)


def make_basic_block_layer(filter_num, blocks, stride=1):
    res_block = tf.keras.Sequential()
    res_block.add(BasicBlock(filter_num, stride=stride))
    for _ in range(1, blocks):
        res_block.add(BasicBlock(filter_num, stride=1))
    return res_block
'''
RESNET = '''"""ResNet-18 as a subclassed model, and a small functional variant for fine-tuning."""
import tensorflow as tf

from models.residual_block import make_basic_block_layer

NUM_CLASSES = 10


class ResNet18(tf.keras.Model):
    def __init__(self):
        super(ResNet18, self).__init__()
        self.conv1 = tf.keras.layers.Conv2D(64, (7, 7), strides=2, padding="same")
        self.layer1 = make_basic_block_layer(filter_num=64, blocks=2)
        self.layer2 = make_basic_block_layer(filter_num=128, blocks=2, stride=2)
        self.avgpool = tf.keras.layers.GlobalAveragePooling2D()
        self.fc = tf.keras.layers.Dense(NUM_CLASSES, activation="softmax")

    def call(self, inputs, training=None, mask=None):
        x = self.layer2(self.layer1(self.conv1(inputs), training=training), training=training)
        return self.fc(self.avgpool(x))


def resnet_18():
    return ResNet18()


def small_resnet(input_shape):
    inputs = tf.keras.Input(shape=input_shape)
    x = make_basic_block_layer(filter_num=32, blocks=1)(inputs)
    outputs = tf.keras.layers.Dense(NUM_CLASSES)(tf.keras.layers.GlobalAveragePooling2D()(x))
    model = tf.keras.Model(inputs, outputs)
    return model


def feature_extractor(input_shape):
    inputs = tf.keras.Input(shape=input_shape)
    features = tf.keras.Model(inputs, make_basic_block_layer(16, 1)(inputs))
    return features
'''
TRAIN = '''"""Trains ResNet-18 on CIFAR-10 with a custom loop."""
import tensorflow as tf

from models.resnet import resnet_18

EPOCHS = 50


def main():
    (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
    train_ds = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).shuffle(50000).batch(64)
    model = resnet_18()
    model.build(input_shape=(None, 32, 32, 3))
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy()
    optimizer = tf.keras.optimizers.Adadelta()

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

    for epoch in range(EPOCHS):
        for images, labels in train_ds:
            train_step(images, labels)
    model.save_weights("saved_model/model")


if __name__ == "__main__":
    main()
'''
FINETUNE = '''"""Fine-tunes the small functional ResNet with Keras fit."""
import tensorflow as tf

from models import small_resnet


def main():
    (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
    net = small_resnet((32, 32, 3))
    net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    net.fit(x_train / 255.0, y_train, epochs=2)
    probe = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    probe.compile(optimizer="sgd", loss="mse")
    probe.fit(x_train[:100].reshape(100, -1) / 255.0, tf.one_hot(y_train[:100, 0], 10), epochs=1)


if __name__ == "__main__":
    main()
'''
EVALUATE = '''"""Evaluates a saved ResNet-18 and exports the feature extractor."""
import tensorflow as tf

from models import feature_extractor, resnet_18


def main():
    model = resnet_18()
    model.load_weights("saved_model/model")
    features = feature_extractor((32, 32, 3))
    features.save("saved_model/features")
    _, (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    print(model.evaluate(x_test / 255.0, y_test))


if __name__ == "__main__":
    main()
'''
FILES = {"requirements.txt": "tensorflow==2.3.0\n",
         "models/__init__.py": "from models.resnet import feature_extractor, resnet_18, small_resnet\n",
         "models/residual_block.py": BLOCKS, "models/resnet.py": RESNET, "train.py": TRAIN,
         "finetune.py": FINETUNE, "evaluate.py": EVALUATE,
         "tests/test_resnet.py": "from models import resnet_18\n\n\ndef test_builds():\n    resnet_18()\n"}


def test_only_the_models_the_program_trains_are_broadcast_or_reported(tmp_path: Path) -> None:
    make_repo(tmp_path / "cnns", FILES)
    (tmp_path / "repos.txt").write_text("cnns\n")
    rules = ("--rules", "default,tf2-distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    (record,) = json.loads((tmp_path / "one" / "run.json").read_text())["repos"]
    npu067 = sorted((f["path"], f["line"], f["status"], f["message"].split(":")[0])
                    for f in record["findings"] if f["rule_id"] == "NPU067")
    assert npu067 == [
        ("finetune.py", 12, "unmigrated", "variables are created lazily"),
        ("models/resnet.py", 31, "migrated", "added npu.distribute.broadcast(model.trainable_variables) "
                                             "after the model is built"),
        ("train.py", 12, "migrated", "added npu.distribute.broadcast(model.trainable_variables) after "
                                     "the model is built")]
    assert record["file_kinds"] == {"tf2": 2, "tf-neutral": 3, "non-tf": 1}
    resnet = git(tmp_path / "cnns", "show", f"{BRANCH}:models/resnet.py")
    assert "    model = tf.keras.Model(inputs, outputs)\n    npu.distribute.broadcast(model.trainable_variables)\n" \
        "    return model\n" in resnet  # trained by finetune.py, through the package's re-export
    assert resnet.count("broadcast") == 1  # not the feature extractor evaluate.py only saves
    train = git(tmp_path / "cnns", "show", f"{BRANCH}:train.py")
    assert "    model.build(input_shape=(None, 32, 32, 3))\n    npu.distribute.broadcast(model.trainable_variables)\n" \
        in train
    blocks = git(tmp_path / "cnns", "diff", f"main...{BRANCH}", "--", "models/residual_block.py", "evaluate.py")
    assert blocks == ""  # sub-models, a model only evaluated: no site, no change
    (tmp_path / "again.txt").write_text(f"cnns {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (rerun,) = json.loads((tmp_path / "two" / "run.json").read_text())["repos"]
    assert rerun["files_changed"] == [] and rerun["file_kinds"] == record["file_kinds"]
    done = {"migrated": "done", "compliant": "done"}
    assert Counter((f["rule_id"], done.get(f["status"], f["status"])) for f in rerun["findings"]) == \
        Counter((f["rule_id"], done.get(f["status"], f["status"])) for f in record["findings"])


SEQUENTIAL_GRADIENT = '''\
"""MNIST with a Sequential model and a hand-written training step (TF 2.x tutorial)."""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


def train_one_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def train(epoch, model, optimizer, dataset):
    for step, (x, y) in enumerate(dataset):
        loss = train_one_step(model, optimizer, x, y)
    print("epoch", epoch, "loss", float(loss))


def main(dataset):
    model = keras.Sequential([
        layers.Reshape(target_shape=(28 * 28,), input_shape=(28, 28)),
        layers.Dense(100, activation="relu"),
        layers.Dense(10)])
    probe = keras.Sequential([layers.Dense(10, input_shape=(784,))])
    print(probe.count_params())
    optimizer = keras.optimizers.Adam()
    for epoch in range(20):
        train(epoch, model, optimizer, dataset)
'''


def test_a_model_passed_to_the_file_s_training_function_is_trained() -> None:
    """``train(epoch, model, optimizer)`` trains ``model`` two calls down: it is broadcast; the
    probe no function trains is no site."""
    docstring = '"""MNIST with a Sequential model and a hand-written training step (TF 2.x tutorial)."""\n'
    after = SEQUENTIAL_GRADIENT.replace(docstring, docstring + "import npu_device as npu\n").replace(
        "        layers.Dense(10)])\n",
        "        layers.Dense(10)])\n    npu.distribute.broadcast(model.trainable_variables)\n")
    findings = assert_migrates(SEQUENTIAL_GRADIENT, after, {"NPU067"}, facts={"tf-runtime:2"})
    assert [site for site in sites(findings) if site[0] == "NPU067"] == [("NPU067", 22, 4, "migrated")]


ACTOR = '''\
"""A2C actor (DeepRL-TensorFlow2-shaped): the model comes from a method of the class."""
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input


class Actor:
    def __init__(self, state_dim, action_dim, lr):
        self.state_dim = state_dim
        self.action_dim = action_dim
        self.model = self.create_model()
        self.opt = tf.keras.optimizers.Adam(lr)

    def create_model(self):
        return tf.keras.Sequential([
            Input((self.state_dim,)),
            Dense(32, activation="relu"),
            Dense(self.action_dim, activation="softmax"),
        ])

    def train(self, states, actions, advantages):
        with tf.GradientTape() as tape:
            logits = self.model(states, training=True)
            loss = tf.reduce_mean(advantages * tf.keras.losses.sparse_categorical_crossentropy(actions, logits))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
'''


def test_a_model_a_method_returns_with_its_input_shape_is_broadcast_where_it_is_kept() -> None:
    """``self.model = self.create_model()``, the method returning a ``Sequential`` that starts
    with its ``Input``: the variables exist, so the broadcast goes after the assignment (before,
    "the variables may not exist yet here": 19 sites of DeepRL-TensorFlow2)."""
    after = ACTOR.replace("import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n").replace(
        "        self.model = self.create_model()\n",
        "        self.model = self.create_model()\n        npu.distribute.broadcast(self.model.trainable_variables)\n")
    findings = assert_migrates(ACTOR, after, {"NPU067"}, facts={"tf-runtime:2"})
    assert [site for site in sites(findings) if site[0] == "NPU067"] == [("NPU067", 10, 8, "migrated")]


def test_a_model_whose_variables_are_only_printed_is_not_trained() -> None:
    """A tutorial's lesson that builds a model and prints its variables (lesson22's mlp.py) trains
    nothing: no broadcast (before, reading ``trainable_variables`` anywhere counted)."""
    lesson = '''\
import tensorflow as tf
from tensorflow import keras

x = tf.random.normal([2, 3])
model = keras.Sequential([keras.layers.Dense(2, activation="relu"), keras.layers.Dense(2)])
model.build(input_shape=[None, 3])
model.summary()
for p in model.trainable_variables:
    print(p.name, p.shape)
'''
    findings = assert_unchanged(lesson, {"NPU067"}, facts={"tf-runtime:2"})
    assert [finding for finding in findings if finding.rule_id == "NPU067"] == []


def test_variables_kept_for_the_training_step_are_training() -> None:
    """lesson40's cifar100_train.py keeps ``conv_net.trainable_variables + fc_net...`` in a name
    the tape and the optimizer read: both networks are trained, both broadcast once built."""
    before = '''\
import tensorflow as tf
from tensorflow.keras import Sequential, layers


def main(train_db):
    conv_net = Sequential([layers.Conv2D(64, kernel_size=[3, 3], padding="same"), layers.Flatten()])
    fc_net = Sequential([layers.Dense(100)])
    conv_net.build(input_shape=[None, 32, 32, 3])
    fc_net.build(input_shape=[None, 65536])
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-4)
    variables = conv_net.trainable_variables + fc_net.trainable_variables
    for x, y in train_db:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.losses.categorical_crossentropy(y, fc_net(conv_net(x)), from_logits=True))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
'''
    after = before.replace("import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n").replace(
        "    conv_net.build(input_shape=[None, 32, 32, 3])\n",
        "    conv_net.build(input_shape=[None, 32, 32, 3])\n"
        "    npu.distribute.broadcast(conv_net.trainable_variables)\n").replace(
        "    fc_net.build(input_shape=[None, 65536])\n",
        "    fc_net.build(input_shape=[None, 65536])\n    npu.distribute.broadcast(fc_net.trainable_variables)\n")
    findings = assert_migrates(before, after, {"NPU067"}, facts={"tf-runtime:2"})
    assert [site for site in sites(findings) if site[0] == "NPU067"] == [
        ("NPU067", 6, 4, "migrated"), ("NPU067", 7, 4, "migrated")]


DQN = '''\
"""DQN's action-value model (DeepRL-TensorFlow2-shaped): built and compiled by a method."""
import tensorflow as tf
from tensorflow.keras.layers import Dense, Input


class ActionStateModel:
    def __init__(self, state_dim, action_dim):
        self.state_dim = state_dim
        self.action_dim = action_dim
        self.model = self.create_model()

    def create_model(self):
        state_input = Input((self.state_dim,))
        hidden = Dense(32, activation="relu")(state_input)
        model = tf.keras.Model(state_input, Dense(self.action_dim)(hidden))
        model.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(0.005))
        return model

    def train(self, states, targets):
        self.model.fit(states, targets, epochs=1, verbose=0)
'''


def test_a_model_a_method_builds_and_trains_is_broadcast_there_once() -> None:
    """The method's own model is broadcast where it is built; the assignment of its result says
    so instead of "the variables may not exist yet here" (4 sites of DeepRL-TensorFlow2)."""
    after = DQN.replace("import tensorflow as tf\n", "import npu_device as npu\nimport tensorflow as tf\n").replace(
        "        model = tf.keras.Model(state_input, Dense(self.action_dim)(hidden))\n",
        "        model = tf.keras.Model(state_input, Dense(self.action_dim)(hidden))\n"
        "        npu.distribute.broadcast(model.trainable_variables)\n")
    findings = [f for f in assert_migrates(DQN, after, {"NPU067"}, facts={"tf-runtime:2"}) if f.rule_id == "NPU067"]
    assert sites(findings) == [("NPU067", 10, 8, "migrated"), ("NPU067", 15, 8, "migrated")]
    assert findings[0].message.startswith("the model's initial variables are broadcast in create_model")


NET = '''\
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self, n):
        super().__init__()
        self.dense = tf.keras.layers.Dense(n)

    def call(self, x):
        return self.dense(x)
'''


def test_a_subclassed_model_of_another_module_is_reported_at_its_construction() -> None:
    """``from model import Net; model = Net(3)``, compiled and fitted, in a strategy's scope
    or not: its variables are created lazily, as for the same class in the file (the entry
    spells no Keras name, it was skipped)."""
    from npu_codemod.api._toolkit import model_facts

    facts = {"tf-runtime:2", *model_facts("model.py", NET)}
    scoped = '''\
import tensorflow as tf

from model import Net

if __name__ == "__main__":
    ds = tf.data.Dataset.from_tensor_slices(([[1.0]], [0])).repeat().batch(2)
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        net = Net(3)
        net.compile(loss="mse", optimizer=tf.keras.optimizers.Adam())
    net.fit(ds, epochs=1, steps_per_epoch=2)
'''
    plain = scoped.replace("    with strategy.scope():\n        net = Net(3)\n        net.compile",
                           "    net = Net(3)\n    if True:\n        net.compile")
    for source, line, column in ((scoped, 9, 8), (plain, 8, 4)):
        findings = [f for f in assert_unchanged(source, {"NPU067"}, facts=facts) if f.rule_id == "NPU067"]
        assert sites(findings) == [("NPU067", line, column, "unmigrated")]
        assert findings[0].message.startswith("variables are created lazily: call npu.distribute.broadcast("
                                              "net.trainable_variables)")
    factory = "import tensorflow as tf\n\nfrom model import Net\n\n\ndef build(n):\n    net = Net(n)\n    return net\n"
    trained = {*facts, "trained-model-maker:train.build"}  # a file of the repository fits build(...)
    findings = assert_unchanged(factory, {"NPU067"}, facts=trained)
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 7, 4, "unmigrated")]


#: yolov3-tf2's shape: builders named like classes (``YoloV3``) that return a functional model.
YOLO_MODELS = '''\
import tensorflow as tf
from tensorflow.keras import Model
from tensorflow.keras.layers import Dense, Input


def YoloV3(size=None, classes=80):
    inputs = Input([size, size, 3], name="input")
    outputs = Dense(classes)(inputs)
    return Model(inputs, outputs, name="yolov3")
'''
YOLO_TRAIN = '''\
import tensorflow as tf

from models import YoloV3


def main():
    model = YoloV3(416, classes=2)
    model.compile(optimizer="adam", loss="mse")
    model.fit(tf.zeros((8, 416, 416, 3)), tf.zeros((8, 2)), epochs=1)
'''


def test_a_model_a_repository_function_named_like_a_class_returns_is_not_called_lazy() -> None:
    """``model = YoloV3(...)`` calls a function of the repository (named like a class, as
    yolov3-tf2's are) that returns a functional model: its variables exist, so the message may
    not say they are "created lazily" (it did: a capitalised callee was taken for a class)."""
    facts = decided_facts("2", {}, repository_facts({"models.py": YOLO_MODELS, "train.py": YOLO_TRAIN}))[0]
    found = [finding for finding in assert_reports({"NPU067"}, YOLO_TRAIN, facts=facts, path="train.py")
             if finding.rule_id == "NPU067"]
    assert sites(found) == [("NPU067", 7, 4, "unmigrated")]
    assert found[0].message.startswith("the variables may not exist yet here")


VIT = '''\
"""MobileViT backbones: one builder, and a function per size that calls it."""
import tensorflow as tf


def mobile_vit(channels, size, input_shape):
    inputs = tf.keras.Input(shape=input_shape)
    x = tf.keras.layers.Conv2D(channels, 3)(inputs)
    model = tf.keras.Model(inputs, x, name="mobilevit_" + size)
    return model


def mobile_vit_s(input_shape=(256, 256, 3)):
    return mobile_vit(64, "s", input_shape)


def mobile_vit_xs(input_shape=(256, 256, 3)):
    return mobile_vit(48, "xs", input_shape)
'''
VIT_TRAIN = '''\
"""Train a backbone on ImageNet."""
import tensorflow as tf

from vit import mobile_vit_s


def main():
    model = mobile_vit_s()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(tf.zeros((8, 256, 256, 3)), tf.zeros((8,)), epochs=1)


if __name__ == "__main__":
    main()
'''


def test_a_builder_a_trained_size_function_returns_is_broadcast_where_it_binds_the_model() -> None:
    """``mobile_vit_s()`` is trained by the script and returns ``mobile_vit(...)``: the builder's
    model is trained through it, so the builder is where the broadcast goes (keras-YOLOv3's
    ``MobileViT_S`` -> ``MobileViT``: nothing was broadcast nor said)."""
    facts = decided_facts("2", {}, repository_facts({"vit.py": VIT, "train.py": VIT_TRAIN}))[0]
    after = VIT.replace('"""MobileViT backbones: one builder, and a function per size that calls it."""\n',
                        '"""MobileViT backbones: one builder, and a function per size that calls it."""\n'
                        "import npu_device as npu\n").replace(
        '    model = tf.keras.Model(inputs, x, name="mobilevit_" + size)\n',
        '    model = tf.keras.Model(inputs, x, name="mobilevit_" + size)\n'
        "    npu.distribute.broadcast(model.trainable_variables)\n")
    testing.assert_migrates({"NPU067"}, VIT, after, facts=facts, path="vit.py",
                            findings=[("NPU067", 8, 4, "migrated")])


#: tf_SIREN's training scripts: a subclassed model called once on a dummy batch ("instantiate
#: model") before it is compiled and fitted; a prediction call after ``fit`` is no build.
INSTANTIATED = '''\
"""Fit a SIREN to an image."""
import tensorflow as tf

from model import Net

ds = tf.data.Dataset.from_tensor_slices((tf.zeros([64, 2]), tf.zeros([64, 3]))).batch(8, drop_remainder=True)

# Build model
model = Net(3)

# instantiate model
dummy_input = tf.zeros([1, 2])
_ = model(dummy_input)

model.summary()
model.compile(tf.keras.optimizers.Adam(1e-4), loss="mse")
model.fit(ds, epochs=2)
'''


def test_a_model_called_once_before_training_is_broadcast_after_that_call() -> None:
    from npu_codemod.api._toolkit import model_facts

    facts = {"tf-runtime:2", *model_facts("model.py", NET)}
    after = INSTANTIATED.replace('"""Fit a SIREN to an image."""\n', '"""Fit a SIREN to an image."""\nimport npu_device as npu\n') \
        .replace("_ = model(dummy_input)\n", "_ = model(dummy_input)\nnpu.distribute.broadcast(model.trainable_variables)\n")
    findings = assert_migrates(INSTANTIATED, after, {"NPU067"}, facts=facts)
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 9, 0, "migrated")]
    called_late = INSTANTIATED.replace("_ = model(dummy_input)\n", "").replace(
        "model.fit(ds, epochs=2)\n", "model.fit(ds, epochs=2)\nprint(model(dummy_input))\n")
    findings = [f for f in assert_unchanged(called_late, {"NPU067"}, facts=facts) if f.rule_id == "NPU067"]
    assert sites(findings) == [("NPU067", 9, 0, "unmigrated")]
    assert findings[0].message.startswith("variables are created lazily")
