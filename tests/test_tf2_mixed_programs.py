"""Which files make a program *mixed* (``spec/rules-tf2.md``, "Mixed programs"): an entry that
reaches both ``tf2`` files and ``tf2-compat`` files (or, the version undetermined, TF 1.x files).
A ``tf-neutral`` file (no TF 2.x signal) is neither, whatever its text spells (``re.compile(``
is no Keras ``compile``); library code elsewhere in the repository that asks which TensorFlow
runs it (Horovod's own ``horovod/tensorflow``) runs in graph mode as well and mixes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_programs import TRAINING_TEXT

from support.cli import check_lines
from support.git import make_repo

COMPAT_TRAIN = '''\
import tensorflow.compat.v1 as tf
import hp

tf.disable_v2_behavior()


def main():
    names = hp.load("cfg.yaml")
    x = tf.placeholder(tf.float32, [None, len(names)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())


if __name__ == "__main__":
    main()
'''

REGEX_HELPER = '''\
import re
import tensorflow.compat.v1 as tf

_KEY = re.compile(r"\\w+")


def load(path):
    with tf.gfile.Open(path) as f:
        return _KEY.findall(f.read())
'''

KERAS_HELPER = '''\
"""Compiles a model it is given: no TF 2.x signal of its own."""
import tensorflow.compat.v1 as tf


def load(path):
    return tf.io.gfile.listdir(path)


def prepare(model):
    model.compile(optimizer="sgd", loss="mse")
    return model
'''

COMPAT_HEADER = "NPU062 [fixable] add the TF Adapter 2.x compat header"


@pytest.mark.parametrize("text", ["_KEY = re.compile(r'\\w+')", "regex.compile(p)", "py_compile.compile(f)",
                                  "sre_compile.compile(p, 0)"])
def test_the_standard_librarys_compile_is_no_training_text(text: str) -> None:
    assert not TRAINING_TEXT.found(text)
    assert TRAINING_TEXT.pattern.search(text) is None


@pytest.mark.parametrize("text", ["model.compile(optimizer='adam')", "self.compile(loss=loss)",
                                  "_re.compile(x)"])
def test_other_compile_calls_are_still_training_text(text: str) -> None:
    assert TRAINING_TEXT.found(text)


@pytest.mark.parametrize("helper", [REGEX_HELPER, KERAS_HELPER], ids=["re.compile", "neutral-keras-compile"])
def test_a_compat_program_that_imports_a_tf_neutral_helper_is_not_mixed(tmp_path: Path, helper: str) -> None:
    """Regression (tensorflow/tpu): a helper calling ``re.compile(...)`` counted as eager TF 2.x
    training code and the whole program was refused as mixed. A helper that compiles a model it
    is given has no TF 2.x signal either: ``tf-neutral``, neither side of the check."""
    make_repo(tmp_path / "mix", {"requirements.txt": "tensorflow==2.6.5\n", "hp.py": helper,
                                 "train.py": COMPAT_TRAIN})
    lines = check_lines(tmp_path, "mix", expect=1)
    assert not [line for line in lines if "mixes" in line or "mixed" in line]
    assert any(line.startswith("mix/train.py:1:1: " + COMPAT_HEADER) for line in lines)


LIBRARY = '''\
"""mylib: distributed helpers for both TensorFlow versions."""
import tensorflow as tf
from packaging import version

_TF2 = version.parse(tf.__version__) >= version.parse("2.0.0")


def executing_eagerly():
    return tf.executing_eagerly()


def wrap(f):
    return tf.function(f)
'''

LIBRARY_EAGER_ONLY = '''\
"""mylib: an eager TF 2.x training helper."""
import tensorflow as tf


def wrap(f):
    return tf.function(f)


@tf.function
def step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''

EXAMPLE = '''\
"""Train a linear model with sessions, through mylib."""
import tensorflow.compat.v1 as tf

from mylib.util import wrap

tf.disable_v2_behavior()


def main():
    x = tf.placeholder(tf.float32, [None, 4])
    loss = tf.reduce_mean(wrap(lambda t: t * 2.0)(x))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, feed_dict={x: [[1.0] * 4]})


if __name__ == "__main__":
    main()
'''


def library_repo(root: Path, library: str, pins: str) -> Path:
    files = {"setup.py": "from setuptools import setup, find_packages\nsetup(name='mylib', packages=find_packages())\n",
             "mylib/__init__.py": "", "mylib/util.py": library, "examples/train.py": EXAMPLE}
    if pins:
        files["requirements.txt"] = pins
    return make_repo(root / "lib", files)


@pytest.mark.parametrize("pins, header", [("", "NPU001"), ("tensorflow==2.6.5\n", "NPU062")],
                         ids=["undetermined", "tf2"])
def test_a_compat_example_of_a_library_that_adapts_to_the_version_is_not_mixed(
        tmp_path: Path, pins: str, header: str) -> None:
    """Horovod's TF 1.x examples import ``horovod.tensorflow``, whose ``tf.function`` sits in code
    that asks which TensorFlow runs it: the examples are TF 1.x (compat) programs, ported as such."""
    library_repo(tmp_path, LIBRARY, pins)
    lines = check_lines(tmp_path, "lib", expect=1)
    assert not [line for line in lines if "mixes" in line or "mixed" in line]
    assert any(line.startswith(f"lib/examples/train.py:2:1: {header} [fixable]") for line in lines)


def test_a_compat_example_of_an_eager_only_library_is_still_mixed(tmp_path: Path) -> None:
    library_repo(tmp_path, LIBRARY_EAGER_ONLY, "tensorflow==2.6.5\n")
    lines = check_lines(tmp_path, "lib", expect=1)
    assert "lib/examples/train.py:1:1: NPU061 this program mixes eager TF 2.x files (lib/mylib/util.py) and " \
           "compat.v1 graph files (lib/examples/train.py)" in "\n".join(lines)


STAR_LAYERS = '''\
import tensorflow as tf
from tensorflow import keras


class Dense(keras.layers.Layer):
    def build(self, shape):
        with tf.variable_scope(self.name + "_vars"):
            self.w = self.add_weight(shape=(shape[-1], 2))

    def call(self, x, training=None):
        return tf.nn.dropout(tf.matmul(x, self.w), 0.5) if training else tf.matmul(x, self.w)
'''
STAR_MODELS = '''\
import tensorflow as tf
from tensorflow import keras
from layers import *


class GCN(keras.Model):
    def __init__(self):
        super().__init__()
        self.d = Dense()

    def call(self, x, training=None):
        return self.d(x, training=training)
'''
STAR_TRAIN = '''\
import numpy as np
import tensorflow as tf
from models import GCN

if __name__ == "__main__":
    model = GCN()
    opt = tf.keras.optimizers.Adam(0.01)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(np.ones((2, 4), "float32"), training=True))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
'''


def test_a_module_reached_through_a_star_import_is_part_of_the_program(tmp_path: Path) -> None:
    """``from layers import *`` is an edge of the program like ``from layers import Dense``:
    the eager entry and its TF 1.x layers are one mixed program, nothing rewritten; before, the
    layers got TF Adapter 1.x's import (absent from TF Adapter 2.x) and NPU004's keep-prob
    dropout on a TF 2.x drop rate. (``demo/seed.py``'s TF 2.x-only API leaves the version
    undecided by the code.)"""
    make_repo(tmp_path / "gcn", {"layers.py": STAR_LAYERS, "models.py": STAR_MODELS, "train.py": STAR_TRAIN,
                                 "demo/seed.py": "import tensorflow as tf\n\ntf.random.set_seed(1)\n"})
    lines = check_lines(tmp_path, "gcn", expect=1)
    assert not [line for line in lines if "npu_ops.dropout" in line or "fixable" in line]
    assert any(line.startswith("gcn/train.py:1:1: NPU061 this program mixes eager TF 2.x files") for line in lines)


GRAPH_EXTRACTOR = '''\
"""Legacy graph-mode feature extractor, run in a graph of its own."""
import tensorflow as tf


def extract(images):
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        y = tf.compat.v1.layers.dense(x, 2)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return sess.run(y, feed_dict={x: images})
'''
EAGER_PREDICT = '''\
"""Eager TF 2.x inference on the extracted features (no training)."""
import numpy as np
import tensorflow as tf

from features.legacy import extract


@tf.function
def serve(model, x):
    return model(x)


if __name__ == "__main__":
    model = tf.saved_model.load("exported")
    print(serve(model, tf.constant(extract(np.zeros((4, 4))))).numpy())
'''


def test_an_eager_script_that_trains_nothing_keeps_the_compat_header_out_of_its_imports(tmp_path: Path) -> None:
    """Before, only a training entry made a program mixed: ``features/legacy.py`` got NPU062's
    header, whose ``enable_v1()`` switches the eager ``predict.py`` that imports it to graph mode
    (``.numpy()``, ``tf.saved_model.load`` then fail). The script is eager TF 2.x code of its own:
    the program is mixed, nothing in it is rewritten."""
    make_repo(tmp_path / "mix", {"requirements.txt": "tensorflow==2.6.5\n", "features/__init__.py": "",
                                 "features/legacy.py": GRAPH_EXTRACTOR, "predict.py": EAGER_PREDICT})
    lines = check_lines(tmp_path, "mix", expect=1)
    assert not [line for line in lines if COMPAT_HEADER in line]
    assert "mix/predict.py:1:1: NPU061 this program mixes eager TF 2.x files (mix/predict.py) and compat.v1 " \
           "graph files (mix/features/legacy.py)" in "\n".join(lines)
    assert "mix/features/legacy.py:1:1: NPU062 part of a program that mixes eager TF 2.x and compat.v1 graph " \
           "files (entry mix/predict.py): not rewritten" in "\n".join(lines)
