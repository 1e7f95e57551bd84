"""A ``__main__`` script with no training code of its own is no NPU061 entry because it imports
library code of the repository that trains: library code elsewhere in the repository that asks
which TensorFlow runs it (Horovod's ``horovod/_keras``, ``horovod/tensorflow``) is a dependency
the repository carries, not the script's program (``codemods/program_graph``). Regression:
Horovod's ``horovod/spark/tensorflow/compute_worker.py`` (a data-service worker, run with
``python -m``) got the device init only because ``horovod.spark`` reaches Horovod's Keras code."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_programs import graph_fact
from npu_codemod.codemods.tf_versions import signals_of

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


CALLING_WORKER = WORKER.replace("from mylib import run\n", "import mylib\n").replace(
    "    serve(parser.parse_args().port)\n", "    mylib.keras_tools.train(None, None, epochs=1)\n")


def test_a_script_reaching_training_code_of_its_own_repository_is_an_entry(tmp_path: Path) -> None:
    """Code that does not ask which TensorFlow runs it is TF 2.x code of the program: the
    spec's rule (a ``__main__`` script whose import closure holds a ``tf2`` file that trains),
    when the script calls it (``training_calls``)."""
    library_repo(tmp_path, KERAS_TOOLS.replace('_TF2 = version.parse(tf.__version__) >= version.parse("2.0.0")\n', ""),
                 CALLING_WORKER)
    assert npu061(check_lines(tmp_path, "repo", expect=1)) == [
        "repo/examples/train.py:2:1: init",
        "repo/mylib/data/worker.py:2:1: init"]


def test_a_script_that_imports_training_code_it_never_calls_is_no_entry(tmp_path: Path) -> None:
    """Review round M3: the worker reaches ``keras_tools`` (``mylib/__init__`` imports it) and
    calls only ``serve``: it trains nothing, so it gets no device init (it imports no
    TensorFlow: no finding either)."""
    library_repo(tmp_path, KERAS_TOOLS.replace('_TF2 = version.parse(tf.__version__) >= version.parse("2.0.0")\n', ""))
    assert npu061(check_lines(tmp_path, "repo", expect=1)) == ["repo/examples/train.py:2:1: init"]


EVALS = '''\
"""Embedding evaluation: a PCA of the embeddings a saved model makes."""
import numpy as np
import tensorflow as tf
from sklearn.decomposition import PCA
from scipy import optimize


def pca_embeddings(embs, n=2):
    pca_model = PCA(n_components=n)
    pca_model.fit(embs)
    return pca_model.transform(embs)


def threshold(scores):
    return optimize.minimize(lambda t: ((scores > t) - 0.5).sum() ** 2, 0.5).x


class EvalCallback(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(pca_embeddings(np.random.rand(10, 4)))


if __name__ == "__main__":
    model = tf.keras.models.load_model("model.h5", compile=False)
    print(pca_embeddings(model(np.random.rand(10, 4)).numpy()))
'''


def test_another_library_s_fit_or_minimize_is_no_training_code(tmp_path: Path) -> None:
    """scikit-learn's ``PCA.fit`` and SciPy's ``optimize.minimize`` share TensorFlow training's
    method names: the script trains nothing, so it is reported, and no device init goes into
    a module the trainer imports."""
    flags = graph_fact("evals.py", EVALS, signals_of(EVALS, "evals.py")).split("|")[1]  # type: ignore[union-attr]
    assert "t" not in flags
    keras = EVALS.replace("    pca_model.fit(embs)\n", "    pca_model.fit(embs)\n    tf.keras.Sequential().fit(embs)\n")
    assert "t" in graph_fact("evals.py", keras, signals_of(keras, "evals.py")).split("|")[1]  # type: ignore[union-attr]
    make_repo(tmp_path / "faces", {"requirements.txt": "tensorflow>=2.6\n", "evals.py": EVALS})
    lines = check_lines(tmp_path, "faces", expect=1)
    assert [line.split(": ", 1)[1][:60] for line in lines if "NPU061" in line] == [
        "NPU061 TF 2.x script without training code: add the NPU devi"]
