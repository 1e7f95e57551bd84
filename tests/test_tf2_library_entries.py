"""A ``__main__`` script with no training code of its own is no NPU061 entry because it imports
library code of the repository that trains: library code elsewhere in the repository that asks
which TensorFlow runs it (Horovod's ``horovod/_keras``, ``horovod/tensorflow``) is a dependency
the repository carries, not the script's program (``codemods/program_graph``). Regression:
Horovod's ``horovod/spark/tensorflow/compute_worker.py`` (a data-service worker, run with
``python -m``) got the device init only because ``horovod.spark`` reaches Horovod's Keras code."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import check_lines
from support.git import make_repo

KERAS_TOOLS = '''\
"""Keras helpers for both TensorFlow versions."""
import tensorflow as tf
from packaging import version

_TF2 = version.parse(tf.__version__) >= version.parse("2.0.0")


def train(model, dataset, epochs):
    model.compile(optimizer="sgd", loss="mse")
    return model.fit(dataset, epochs=epochs)


@tf.function
def step(model, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    return tape.gradient(loss, model.trainable_variables)
'''

RUNNER = '''\
"""Starts workers on a cluster (imports no TensorFlow)."""
import subprocess


def run(command, hosts):
    return [subprocess.call(["ssh", host, command]) for host in hosts]
'''

WORKER = '''\
"""A data-service worker: python -m mylib.data.worker --port 5050"""
import argparse

from mylib import run
from mylib.data.service import serve

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=5050)
    serve(parser.parse_args().port)
'''

TF_WORKER = '''\
"""A tf.data service worker: python -m mylib.data.worker --port 5050"""
import argparse

import tensorflow as tf

from mylib import run


def serve(port):
    server = tf.data.experimental.service.WorkerServer(
        tf.data.experimental.service.WorkerConfig(dispatcher_address="localhost:5000", port=port))
    server.join()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=5050)
    serve(parser.parse_args().port)
'''

SERVICE = '''\
"""Serves batches over the network."""
import socket


def serve(port):
    with socket.create_server(("", port)) as server:
        server.accept()
'''

EXAMPLE = '''\
"""Train a small model with mylib's helpers."""
import tensorflow as tf

from mylib.keras_tools import train


if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    train(model, tf.data.Dataset.from_tensor_slices(([[1.0]], [[2.0]])).batch(1), epochs=1)
'''


def library_repo(root: Path, tools: str, worker: str = WORKER, pins: str = "") -> Path:
    files = {"mylib/__init__.py": "from mylib.runner import run\nfrom mylib import keras_tools\n",
             "mylib/runner.py": RUNNER, "mylib/keras_tools.py": tools, "mylib/data/__init__.py": "",
             "mylib/data/service.py": SERVICE, "mylib/data/worker.py": worker,
             "examples/train.py": EXAMPLE}
    if pins:
        files["requirements.txt"] = pins
    return make_repo(root / "repo", files)


def npu061(lines: list[str]) -> list[str]:
    """Each NPU061 line: where, and ``init`` (the device init added) or the finding's first words."""
    found = [line.split(" NPU061 ") for line in lines if " NPU061 " in line]
    return [f"{where} {'init' if text.startswith('[fixable]') else text.split(':')[0]}" for where, text in found]


@pytest.mark.parametrize("pins", ["", "tensorflow==2.6.5\n"], ids=["undetermined", "tf2"])
def test_a_worker_that_imports_a_library_with_training_code_is_no_entry(tmp_path: Path, pins: str) -> None:
    library_repo(tmp_path, KERAS_TOOLS, pins=pins)
    assert npu061(check_lines(tmp_path, "repo", expect=1)) == [
        "repo/examples/train.py:2:1: init"]


def test_a_tf_worker_without_training_code_gets_the_specs_note(tmp_path: Path) -> None:
    library_repo(tmp_path, KERAS_TOOLS, TF_WORKER, pins="tensorflow==2.6.5\n")
    assert npu061(check_lines(tmp_path, "repo", expect=1)) == [
        "repo/examples/train.py:2:1: init",
        "repo/mylib/data/worker.py:15:1: TF 2.x script without training code"]


def test_a_script_reaching_training_code_of_its_own_repository_is_an_entry(tmp_path: Path) -> None:
    """Code that does not ask which TensorFlow runs it is TF 2.x code of the program: the
    spec's rule (a ``__main__`` script whose import closure holds a ``tf2`` file that trains)."""
    library_repo(tmp_path, KERAS_TOOLS.replace('_TF2 = version.parse(tf.__version__) >= version.parse("2.0.0")\n', ""))
    assert npu061(check_lines(tmp_path, "repo", expect=1)) == [
        "repo/examples/train.py:2:1: init",
        "repo/mylib/data/worker.py:2:1: init"]
