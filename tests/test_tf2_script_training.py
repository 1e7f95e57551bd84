"""NPU061 reads what a script runs and what it fits (``codemods/script_training``), review round
tf2h. A TensorFlow Lite conversion script (TFLite's model-personalization example: a ``train``
step with a ``GradientTape`` exported as an on-device signature and never run; a converter that
compiles a model to evaluate it) got ``npu.open().as_default()`` as if it trained, and so did a
file checked alone (``npu-codemod check FILE``) whose only ``.fit(`` is a scikit-learn scaler's or
a class of its own. The spec (NPU061): a script that trains nothing is reported, not given the
init. A script that trains (quantization-aware ``fit`` before converting; a Keras model or one
the file cannot see) keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import cli
from support.packs import tf2_entries
from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import PERSONALIZATION, with_init

RULES = frozenset({"NPU061"})
TF2_RUNTIME = frozenset({"tf-runtime:2"})
NO_TRAINING = "TF 2.x script without training code"

#: A detector's export script: load, compile to evaluate, convert (yolov4-tflite's shape).
EVALUATE_AND_CONVERT = '''\
"""Evaluate the trained detector and write its TFLite model."""
import sys

import tensorflow as tf


def main(weights, images, labels):
    model = tf.keras.models.load_model(weights, compile=False)
    model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    print(model.evaluate(images, labels, batch_size=32))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    open("detector.tflite", "wb").write(converter.convert())


if __name__ == "__main__":
    main(sys.argv[1], *tf.keras.datasets.mnist.load_data()[1])
'''

#: Quantization-aware training, then conversion: it trains.
QUANTIZATION_AWARE = EVALUATE_AND_CONVERT.replace(
    '    print(model.evaluate(images, labels, batch_size=32))\n',
    '    model.fit(images, labels, batch_size=32, epochs=1)\n')


@pytest.mark.parametrize("script", [PERSONALIZATION, EVALUATE_AND_CONVERT])
def test_a_tflite_conversion_script_that_runs_no_training_gets_no_init(script: str) -> None:
    findings = assert_unchanged(script, RULES, facts=TF2_RUNTIME)
    assert [(f.status, f.level, f.message.split(":")[0]) for f in findings] == [
        ("unmigrated", "note", NO_TRAINING)]
    assert tf2_entries({"requirements.txt": "tensorflow==2.6.5\n", "convert.py": script}) == set()


@pytest.mark.parametrize("script", [
    QUANTIZATION_AWARE,
    PERSONALIZATION.replace('''    tf.saved_model.save(model, saved_model_dir,
                        signatures={"train": model.train.get_concrete_function()})
''', '''    for _ in range(10):
        model.train(tf.zeros([8, 62720]), tf.zeros([8, 4]))
''')], ids=["fit-then-convert", "step-run-then-convert"])
def test_a_conversion_script_that_trains_first_keeps_its_init(script: str) -> None:
    findings = assert_migrates(script, with_init(script), RULES, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 2, 0, "migrated")]
    assert tf2_entries({"requirements.txt": "tensorflow==2.6.5\n", "convert.py": script}) == {"convert.py"}


#: A feature-scaling step before writing TFRecords: scikit-learn's ``fit``, no model.
SCALE_FEATURES = '''\
"""Scale the tabular features and write them as TFRecords."""
import sys

import numpy as np
import tensorflow as tf
from sklearn.preprocessing import StandardScaler


def main(source, target):
    features = np.load(source)
    scaler = StandardScaler()
    scaler.fit(features)
    with tf.io.TFRecordWriter(target) as writer:
        for row in scaler.transform(features):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}))
            writer.write(example.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''

#: The same with a normalizer class of the file.
OWN_NORMALIZER = SCALE_FEATURES.replace('from sklearn.preprocessing import StandardScaler\n', '''

class Normalizer(object):
    def fit(self, x):
        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        return self

    def transform(self, x):
        return (x - self.mean) / self.std
''').replace("scaler = StandardScaler()", "scaler = Normalizer()")


@pytest.mark.parametrize("script", [SCALE_FEATURES, OWN_NORMALIZER], ids=["sklearn", "own-class"])
def test_a_file_alone_whose_fit_is_no_keras_model_s_trains_nothing(script: str) -> None:
    findings = assert_unchanged(script, RULES, facts=TF2_RUNTIME)
    assert [(f.status, f.level, f.message.split(":")[0]) for f in findings] == [
        ("unmigrated", "note", NO_TRAINING)]


@pytest.mark.parametrize("model", [
    "tf.keras.Sequential([tf.keras.layers.Dense(1)])",
    "tf.keras.models.load_model(source + '.h5')",
    "build_regressor(features.shape[1])",  # from an import the file cannot see
    "Regressor()",  # a subclass of tf.keras.Model
])
def test_a_file_alone_that_fits_a_model_it_may_hold_trains(model: str) -> None:
    source = SCALE_FEATURES.replace(
        "from sklearn.preprocessing import StandardScaler\n",
        "from sklearn.preprocessing import StandardScaler\n\nfrom models import build_regressor\n\n\n"
        "class Regressor(tf.keras.Model):\n    def call(self, x):\n        return x\n").replace(
        "    scaler.fit(features)\n",
        f"    scaler.fit(features)\n    model = {model}\n    model.fit(features, features[:, 0])\n")
    findings = assert_migrates(source, with_init(source), RULES, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 2, 0, "migrated")]


def test_a_fit_of_a_parameter_may_be_a_model_s() -> None:
    """``def train(model, x, y): model.fit(x, y)``: the file cannot tell what it is given."""
    source = SCALE_FEATURES.replace(
        "def main(source, target):\n",
        "def train(model, x, y):\n    model.fit(x, y, epochs=2)\n\n\ndef main(source, target):\n")
    findings = assert_migrates(source, with_init(source), RULES, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 2, 0, "migrated")]


@pytest.mark.parametrize("script", [OWN_NORMALIZER, PERSONALIZATION], ids=["own-class", "tflite"])
def test_check_on_one_file_reads_it_the_same_way(tmp_path: Path, script: str) -> None:
    """``npu-codemod check FILE`` (a pre-commit hook) analyses the files it is given as a
    repository: the file is reported, not given the init."""
    (tmp_path / "tool.py").write_text(script)
    done = cli("check", "--tensorflow", "2", "tool.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert [line.split(":", 3)[3].strip().startswith("NPU061 TF 2.x script without training code:")
            for line in done.stdout.splitlines() if " NPU061 " in line] == [True]
