"""NPU061: a library module whose module level only calls a class factory is no entry
(``codemods/module_training``).

``tensorflow/privacy``'s sparse Keras optimizers are made at module level by a factory whose
nested class overrides ``apply_gradients``; nothing trains when the module is imported, and an
NPU init there would open the device in every program that imports the optimizer. A function
trains by the calls of its own body: the functions and classes it defines train only when it
calls them (``spec/rules-tf2.md`` NPU061: defining a class is no training).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.module_training import training_definitions, trains_when_run
from npu_codemod.codemods.modules import module_ast

from support.cli import cli
from support.git import make_repo, show
from support.rules import assert_migrates, assert_unchanged
from support.tf2_scripts import with_init

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU061"}

#: A library module: module-level code that calls a factory of optimizer classes.
FACTORY = '''\
"""Keras optimizers that clip each gradient (imported by the training scripts)."""
import tensorflow as tf


def make_clipped(base, norm=1.0):
    """A subclass of the Keras optimizer ``base`` clipping each gradient to ``norm``."""

    class Clipped(base):

        def apply_gradients(self, grads_and_vars, **kwargs):
            pairs = [(tf.clip_by_norm(grad, norm), var) for grad, var in grads_and_vars]
            return super().apply_gradients(pairs, **kwargs)

        def train_step(self, data):
            return self.minimize(data)

    return Clipped


ClippedSGD = make_clipped(tf.keras.optimizers.SGD)
ClippedAdam = make_clipped(tf.keras.optimizers.Adam, norm=5.0)
'''

#: Module-level training through a function that defines its step and calls it.
NESTED_STEP = '''\
"""Custom loop, run as: python loop.py"""
import tensorflow as tf


def main(steps):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for _ in range(steps):
        step(tf.zeros([8, 4]), tf.zeros([8, 1]))


main(10)
'''

#: Module-level training through a function that defines a class and calls its training method.
NESTED_CLASS = '''\
"""Keras training, run as: python fit.py"""
import tensorflow as tf


def run(epochs):

    class Experiment:

        def fit_once(self):
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(tf.zeros([8, 4]), tf.zeros([8, 1]), epochs=epochs)

    Experiment().fit_once()


run(2)
'''


def test_a_module_that_calls_a_class_factory_is_no_entry() -> None:
    assert assert_unchanged(FACTORY, RULES, facts=TF2_RUNTIME) == []
    tree = module_ast(FACTORY)
    assert tree is not None and not trains_when_run(tree)


@pytest.mark.parametrize("script", [NESTED_STEP, NESTED_CLASS])
def test_a_function_that_calls_what_it_defines_trains(script: str) -> None:
    assert_migrates(script, with_init(script), RULES, facts=TF2_RUNTIME)


def test_a_class_factory_is_used_like_its_class_by_other_modules() -> None:
    """What another module calls: the class the factory returns trains (``training_calls``)."""
    tree = module_ast(FACTORY)
    assert tree is not None and training_definitions(tree) == frozenset({"make_clipped"})


# --- a repository: the library, its test, a script that inspects it, a training script -----------

INSPECT = '''\
"""Prints the optimizers' settings."""
from mylib.clipped import ClippedSGD

if __name__ == "__main__":
    print(ClippedSGD(0.1).get_config())
'''

TEST = '''\
import tensorflow as tf

from mylib import clipped


class ClippedTest(tf.test.TestCase):

    def test_step(self):
        var = tf.Variable(1.0)
        clipped.ClippedSGD(0.1).apply_gradients([(tf.constant(5.0), var)])


if __name__ == "__main__":
    tf.test.main()
'''

TRAIN = '''\
"""Trains the model: python train.py"""
import tensorflow as tf


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(tf.zeros([64, 4]), tf.zeros([64, 1]), batch_size=8, epochs=1)


if __name__ == "__main__":
    main()
'''

ADDED = "added 'import npu_device as npu' and 'npu.open().as_default()' at the top of the entry script"


def _run(root: Path, engine: str, repos: str, name: str) -> dict:
    (root / f"{name}.txt").write_text(repos)
    cli("run", "--repos", f"{name}.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine,
        "--report-dir", name, "--branch", name, cwd=root, expect=0)
    return json.loads((root / name / "run.json").read_text())["repos"][0]


def test_a_library_made_by_a_factory_is_left_alone_and_reruns_clean(tmp_path: Path) -> None:
    records = {}
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "lib", {"requirements.txt": "tensorflow>=2.4\n", "mylib/__init__.py": "",
                                        "mylib/clipped.py": FACTORY, "mylib/tests/clipped_test.py": TEST,
                                        "inspect_opt.py": INSPECT, "train.py": TRAIN})
        record = _run(root, engine, "lib\n", "on")
        npu061 = [(f["path"], f["status"], f["message"]) for f in record["findings"] if f["rule_id"] == "NPU061"]
        assert npu061 == [("train.py", "migrated", ADDED)]
        assert record["files_changed"] == ["train.py"]
        assert show(repo, "on", "mylib/clipped.py").decode() == FACTORY
        assert show(repo, "on", "train.py").decode().startswith(with_init(TRAIN).split("\n\n\n")[0])
        again = _run(root, engine, "lib on\n", "again")
        assert again["status"] == "unchanged"
        assert [(f["path"], f["status"]) for f in again["findings"] if f["rule_id"] == "NPU061"] == [
            ("train.py", "compliant")]
        records[engine] = (record["findings"], again["findings"])
    assert records["selective"] == records["full"]
