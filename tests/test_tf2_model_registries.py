"""NPU067 on models a registry or a factory makes (``model = MODELS[args.model](...)``,
``model = registry.get(name)(cfg)``, a ``build_model(cfg)`` of another module): which model the
call makes is decided at run time, so nothing is rewritten; before, the rule said nothing at
all. Each is now reported where the broadcast belongs; a builder the package re-exports is still
broadcast (or reported) in its own file only, and a model reloaded after training (to evaluate
it) is no training's."""

from __future__ import annotations

from npu_codemod import testing
from npu_codemod.codemods.tf_scopes import decided_facts

from support.packs import repository_facts
from support.rules import assert_migrates, messages, sites

RULES = frozenset({"NPU067"})

ZOO = '''\
"""The model zoo: builders by name."""
import tensorflow as tf


def resnet(num_classes):
    inputs = tf.keras.Input(shape=(32, 32, 3))
    x = tf.keras.layers.Conv2D(16, 3)(inputs)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(num_classes)(x))


class Registry:
    def __init__(self):
        self._builders = {}

    def register(self, name, builder):
        self._builders[name] = builder

    def get(self, name):
        return self._builders[name]


MODELS = {"resnet": resnet}
registry = Registry()
registry.register("resnet", resnet)
'''
TRAIN = '''\
"""Train a model of the zoo, chosen on the command line."""
import argparse

import tensorflow as tf

from zoo import MODELS, registry


def main(args):
    ds = tf.data.Dataset.from_tensor_slices((tf.zeros([8, 32, 32, 3]), tf.zeros([8])))
    model = MODELS[args.model](num_classes=10)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(ds.batch(4), epochs=args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet")
    parser.add_argument("--epochs", type=int, default=1)
    main(parser.parse_args())
'''


def _reported(files: dict[str, str], path: str) -> list:
    """NPU067's findings on ``files[path]`` in a TF 2.x repository of ``files`` (left unchanged)."""
    facts = decided_facts("2", {}, repository_facts(files))[0]
    return [f for f in testing.assert_reports(RULES, files[path], facts=facts, path=path) if f.rule_id == "NPU067"]


def test_a_model_looked_up_in_a_registry_dict_is_reported_where_it_is_built() -> None:
    findings = _reported({"zoo.py": ZOO, "train.py": TRAIN}, "train.py")
    assert sites(findings) == [("NPU067", 11, 4, "unmigrated")]
    assert [message.partition(" (guide: ")[0] for message in messages(findings, "NPU067")] == [
        "model is built by MODELS[args.model], a registry or factory lookup: which model it is, and whether "
        "its variables exist yet, is decided at run time: call npu.distribute.broadcast("
        "model.trainable_variables) once they exist (right after this line for a functional or loaded Keras "
        "model, else after model.build(...) or the first training step)"]
    assert findings[0].level == "note"


def test_a_model_a_registry_object_gives_is_reported_where_it_is_built() -> None:
    train = TRAIN.replace("MODELS[args.model](num_classes=10)", "registry.get(args.model)(10)")
    findings = _reported({"zoo.py": ZOO, "train.py": train}, "train.py")
    assert sites(findings) == [("NPU067", 11, 4, "unmigrated")]
    assert findings[0].message.startswith("model is built by registry.get(args.model), a registry or factory")


def test_a_registry_lookup_the_program_does_not_train_is_no_site() -> None:
    """A layer or a metric picked by name, never fitted: nothing to broadcast."""
    train = TRAIN.replace("    model.compile(optimizer=\"adam\", loss=\"sparse_categorical_crossentropy\")\n"
                          "    model.fit(ds.batch(4), epochs=args.epochs)\n", "    print(model.name)\n")
    assert _reported({"zoo.py": ZOO, "train.py": train}, "train.py") == []


#: A package whose ``__init__`` re-exports the builder of its ``factory`` module.
FACTORY = '''\
"""Build the model the config names."""
import tensorflow as tf

from nets.zoo import MODELS, resnet


def build_model(cfg):
    BODY
'''
BY_PACKAGE = TRAIN.replace("from zoo import MODELS, registry", "from nets import build_model") \
    .replace("MODELS[args.model](num_classes=10)", "build_model(args)")


def _package(body: str) -> dict[str, str]:
    return {"nets/__init__.py": "from nets.factory import build_model\n", "nets/zoo.py": ZOO,
            "nets/factory.py": FACTORY.replace("BODY", body), "train.py": BY_PACKAGE}


def test_a_builder_returning_a_registry_lookup_is_reported_in_the_builder() -> None:
    files = _package("return MODELS[cfg.name](cfg.classes)")
    findings = _reported(files, "nets/factory.py")
    assert sites(findings) == [("NPU067", 8, 4, "unmigrated")]
    assert findings[0].message.startswith("build_model() returns a model built by MODELS[cfg.name], a registry "
                                          "or factory lookup, and the program trains it")
    assert _reported(files, "train.py") == []


def test_a_re_exported_builder_that_binds_nothing_leaves_the_site_at_its_caller() -> None:
    """``from nets import build_model``, which returns ``resnet(...)`` as it is: no binding in
    the builder to broadcast after, so the caller's model is the site."""
    files = _package("return resnet(cfg.classes)")
    assert sites(_reported(files, "train.py")) == [("NPU067", 11, 4, "unmigrated")]
    assert _reported(files, "nets/factory.py") == []


def test_a_re_exported_builder_that_binds_its_model_is_the_only_site() -> None:
    """The builder binds a functional model: broadcast there, and its caller (through the
    package's re-export) has no site of its own, not a second request for a broadcast."""
    files = _package("inputs = tf.keras.Input(shape=(4,))\n"
                     "    model = tf.keras.Model(inputs, tf.keras.layers.Dense(cfg.classes)(inputs))\n"
                     "    return model")
    assert _reported(files, "train.py") == []


CHATBOT = '''\
"""Train the chatbot, save it, reload it and talk to it (tf2-transformer-chatbot-shaped)."""
import tensorflow as tf


def main(dataset, epochs):
    inputs = tf.keras.Input(shape=(None,))
    outputs = tf.keras.layers.Dense(8)(tf.keras.layers.Embedding(100, 16)(inputs))
    chatbot = tf.keras.Model(inputs, outputs)
    chatbot.compile(optimizer="adam", loss="mse")
    chatbot.fit(dataset, epochs=epochs)
    chatbot.save("model.h5")
    del chatbot
    tf.keras.backend.clear_session()
    chatbot = tf.keras.models.load_model("model.h5", compile=False)
    print(chatbot(tf.zeros([1, 4])))
'''


def test_a_model_reloaded_after_training_to_evaluate_it_is_not_broadcast() -> None:
    """Before, the reload got a second broadcast: ``chatbot`` is trained, by its earlier binding."""
    after = CHATBOT.replace("    chatbot = tf.keras.Model(inputs, outputs)\n",
                            "    chatbot = tf.keras.Model(inputs, outputs)\n"
                            "    npu.distribute.broadcast(chatbot.trainable_variables)\n") \
        .replace('import tensorflow as tf\n', 'import npu_device as npu\nimport tensorflow as tf\n', 1)
    findings = assert_migrates(CHATBOT, after, RULES, facts={"tf-runtime:2"})
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 8, 4, "migrated")]


#: keras-retinanet's ``bin/train.py``: the backbone's builder is given to ``create_models``, which
#: loads weights into what it builds and trains it through an alias (``training_model = model``).
RETINANET_TRAIN = '''\
#!/usr/bin/env python
"""Training script for RetinaNet."""
import argparse

import tensorflow as tf
from tensorflow import keras

from retina import models


def model_with_weights(model, weights, skip_mismatch):
    if weights is not None:
        model.load_weights(weights, by_name=True, skip_mismatch=skip_mismatch)
    return model


def create_models(backbone_retinanet, num_classes, weights, lr=1e-5):
    model = model_with_weights(backbone_retinanet(num_classes, modifier=None), weights=weights,
                               skip_mismatch=True)
    training_model = model
    prediction_model = models.retinanet_bbox(model=model)
    training_model.compile(loss={"regression": "huber", "classification": "binary_crossentropy"},
                           optimizer=keras.optimizers.Adam(lr=lr, clipnorm=0.001))
    return model, training_model, prediction_model


def main(args=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--backbone", default="resnet50")
    parser.add_argument("--weights")
    args = parser.parse_args(args)
    backbone = models.backbone(args.backbone)
    dataset = tf.data.Dataset.from_tensor_slices(tf.zeros([8, 64, 64, 3])).batch(2, drop_remainder=True)
    model, training_model, prediction_model = create_models(
        backbone_retinanet=backbone.retinanet, num_classes=80, weights=args.weights)
    return training_model.fit(dataset, epochs=50)


if __name__ == "__main__":
    main()
'''
RETINANET_MODELS = '''\
"""Backbones and the RetinaNet heads."""
from tensorflow import keras


def resnet_retinanet(num_classes, modifier=None):
    inputs = keras.layers.Input(shape=(None, None, 3))
    x = keras.layers.Conv2D(16, 3)(inputs)
    outputs = [keras.layers.Dense(4)(x), keras.layers.Dense(num_classes)(x)]
    return keras.models.Model(inputs=inputs, outputs=outputs, name="retinanet")


class Backbone(object):
    def __init__(self, backbone):
        self.backbone = backbone

    def retinanet(self, *args, **kwargs):
        return resnet_retinanet(*args, **kwargs)


def backbone(name):
    return Backbone(name)


def retinanet_bbox(model):
    return keras.models.Model(inputs=model.inputs, outputs=model.outputs, name="retinanet-bbox")
'''


def test_a_model_a_factory_parameter_builds_and_an_alias_trains_is_reported_where_it_is_built() -> None:
    findings = _reported({"train.py": RETINANET_TRAIN, "retina/__init__.py": "", "retina/models.py": RETINANET_MODELS},
                         "train.py")
    said = {(f.line, f.level, f.message.partition(" (guide: ")[0]) for f in findings}
    assert said == {(18, "note", "model is built by backbone_retinanet(), a model factory the caller gives "
                     "create_models(): which model it is, and whether its variables exist yet, is decided at "
                     "run time: call npu.distribute.broadcast(model.trainable_variables) once they exist (right "
                     "after this line for a functional or loaded Keras model, else after model.build(...) or "
                     "the first training step)")}


def test_a_factory_parameter_s_model_nothing_trains_is_no_site() -> None:
    """The same builder used to export a prediction model: nothing compiles or fits it."""
    export = RETINANET_TRAIN.replace("    training_model = model\n", "").replace(
        "    training_model.compile(loss={\"regression\": \"huber\", \"classification\": \"binary_crossentropy\"},\n"
        "                           optimizer=keras.optimizers.Adam(lr=lr, clipnorm=0.001))\n", "").replace(
        "    return model, training_model, prediction_model\n", "    return prediction_model\n").replace(
        "    model, training_model, prediction_model = create_models(", "    prediction_model = create_models(").replace(
        "    return training_model.fit(dataset, epochs=50)\n", "    prediction_model.save(\"retinanet.h5\")\n")
    assert _reported({"train.py": export, "retina/__init__.py": "", "retina/models.py": RETINANET_MODELS},
                     "train.py") == []


#: sayakpaul's Distributed-Training-in-TensorFlow-2-with-AI-Platform: ``trainer/`` is the folder
#: the job runs from, so its modules import each other as top-level names (``import model_utils``).
SIBLING_BUILDER = '''\
from tensorflow import keras


def get_model():
    inputs = keras.layers.Input((224, 224, 3))
    x = keras.layers.GlobalAveragePooling2D()(inputs)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    return model
'''
SIBLING_TRAINING = '''\
import tensorflow as tf
from tensorflow import keras

import model_utils

strategy = tf.distribute.MirroredStrategy()


def run(train_ds):
    with strategy.scope():
        model = model_utils.get_model()
        model.compile(optimizer=keras.optimizers.Adam(0.001), loss="mse")
    model.fit(train_ds, epochs=100)
'''


def test_a_builder_a_neighbour_module_imports_by_its_short_name_is_the_only_site() -> None:
    """The broadcast goes into ``get_model`` after its functional model; the caller in the same
    folder (``import model_utils``) asked for a second one: "the variables may not exist yet"."""
    files = {"trainer/model_utils.py": SIBLING_BUILDER, "trainer/model_training.py": SIBLING_TRAINING,
             "trainer/task.py": "import model_training\n\nif __name__ == \"__main__\":\n    model_training.run(None)\n"}
    assert _reported(files, "trainer/model_training.py") == []
    facts = decided_facts("2", {}, repository_facts(files))[0]
    after = SIBLING_BUILDER.replace("from tensorflow import keras\n", "import npu_device as npu\nfrom tensorflow import keras\n") \
        .replace("    model = keras.Model(inputs, outputs)\n",
                 "    model = keras.Model(inputs, outputs)\n    npu.distribute.broadcast(model.trainable_variables)\n")
    findings = testing.assert_migrates(RULES, SIBLING_BUILDER, after, facts=facts, path="trainer/model_utils.py")
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 8, 4, "migrated")]
