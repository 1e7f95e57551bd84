"""A repository module whose name merely starts with ``tensorflow`` is the repository's own, not
TensorFlow: Horovod's ``examples/tensorflow2`` names its training modules
``tensorflow2_mnist_data_service_train_fn_*`` and imports them from a non-TF launcher."""

from __future__ import annotations

from npu_codemod.codemods.tf_programs import ENTRY_FACT, graph_fact, program_facts
from npu_codemod.codemods.tf_versions import RUNTIME_TF2, signals_of

LAUNCHER = '''"""Launch the data-service example."""
import argparse
import os

from tensorflow2_mnist_train_fn import train_fn

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("configfile", type=str)
    args = parser.parse_args()
    train_fn(args.configfile)
'''

TRAIN_FN = '''"""The training function, run on each worker."""
import tensorflow as tf


def train_fn(config):
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(loss=tf.losses.SparseCategoricalCrossentropy(), optimizer=tf.optimizers.Adam(0.001))
    dataset = tf.data.Dataset.range(100).batch(8)
    model.fit(dataset, epochs=1)
'''


def test_a_launcher_importing_a_module_named_tensorflow_something_is_the_entry() -> None:
    files = {"launch.py": LAUNCHER, "tensorflow2_mnist_train_fn.py": TRAIN_FN}
    facts = set()
    for path, text in files.items():
        signals = signals_of(text, path) if "import tensorflow" in text else None
        facts.add(graph_fact(path, text, signals))
    launcher = next(fact for fact in facts if "launch.py" in fact)
    assert launcher.endswith("|argparse,os,tensorflow2_mnist_train_fn.train_fn")
    programs, messages = program_facts(frozenset(facts), RUNTIME_TF2)
    assert ENTRY_FACT + "launch.py" in programs
    assert messages == ()
