"""Review round M3: a ``__main__`` tool that imports its repository's package is no NPU061 entry
because some module of the package traces a ``tf.function`` helper or holds a trainer the tool
never calls (``codemods/training_calls``). TF-GNN's schema validator, record printer, OGB
converter and Beam sampler, Sonnet's checkpoint generator and TF Addons' doc builder all got
``npu.open().as_default()``, so they could not run where there is no NPU (a Dataflow worker).
The spec (NPU061): scripts that train nothing (data conversion, export, validation, doc
generation) are reported. The repository's trainer keeps its init."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.tf_programs import graph_fact
from npu_codemod.codemods.tf_versions import signals_of

from support.cli import cli
from support.git import make_repo, show
from support.packs import tf2_entries
from support.tf2_scripts import DEVICE_INIT

BRANCH = "npu-codemod/sess-run-to-npu"
PINS = "tensorflow==2.6.5\n"
NO_TRAINING = "TF 2.x script without training code"
ADDED = "added 'import npu_device as npu' and 'npu.open().as_default()' at the top of the entry script"

#: Graph-tensor helpers, traced: inference and data processing, no training.
OPS = '''\
import tensorflow as tf


@tf.function
def pad_to(x, n):
    return tf.pad(x, [[0, n - tf.shape(x)[0]]])


def read_schema(path):
    with open(path) as f:
        return f.read()
'''

#: The package's trainer, re-exported by ``mygnn/runner/__init__.py``.
ORCHESTRATION = '''\
import tensorflow as tf


def run(model, dataset, epochs):
    model.compile(optimizer="adam", loss="mse")
    return model.fit(dataset, epochs=epochs)
'''

TRAINER = '''\
import tensorflow as tf


class KerasTrainer:
    def __init__(self, steps):
        self.steps = steps

    def train(self, model, dataset):
        optimizer = tf.keras.optimizers.SGD()
        for x in dataset.take(self.steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''

RUNNER_INIT = '''\
from mygnn.runner.orchestration import run as run_pipeline
from mygnn.runner.trainer import KerasTrainer
'''

PACKAGE_INIT = '''\
from mygnn import ops
from mygnn import runner
from mygnn.ops import read_schema
'''

#: A TensorFlow tool: validates a schema with absl's ``app.run`` (no repository ``run``).
VALIDATE = '''\
"""Validates a graph schema."""
import sys

import tensorflow as tf
from absl import app

import mygnn


def main(argv):
    schema = mygnn.read_schema(argv[1])
    tf.print(mygnn.ops.pad_to(tf.constant([1, 2]), 4), len(schema))


if __name__ == "__main__":
    app.run(main)
'''

#: A tool importing no TensorFlow: counts the records (the reproducer's ``count_records.py``).
COUNT = '''\
"""Counts the records of a file."""
import sys

import mygnn


def main(path):
    print(len(mygnn.read_schema(path)))


if __name__ == "__main__":
    main(sys.argv[1])
'''

#: The repository's trainer: runs the pipeline the runner package re-exports under another name.
TRAIN = '''\
"""Trains a model with the runner."""
import tensorflow as tf

from mygnn import runner


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    runner.run_pipeline(model, tf.data.Dataset.from_tensor_slices([[1.0]]).batch(1, drop_remainder=True), 1)


if __name__ == "__main__":
    main()
'''

#: A training loop through the trainer class (its ``train`` method trains).
TRAIN_LOOP = '''\
"""Trains with the custom loop."""
import tensorflow as tf

import mygnn.runner


if __name__ == "__main__":
    trainer = mygnn.runner.KerasTrainer(10)
    trainer.train(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.data.Dataset.range(3))
'''

FILES = {"requirements.txt": PINS, "mygnn/__init__.py": PACKAGE_INIT, "mygnn/ops.py": OPS,
         "mygnn/runner/__init__.py": RUNNER_INIT, "mygnn/runner/orchestration.py": ORCHESTRATION,
         "mygnn/runner/trainer.py": TRAINER, "tools/validate.py": VALIDATE, "tools/count.py": COUNT,
         "examples/train.py": TRAIN, "examples/train_loop.py": TRAIN_LOOP}


def test_a_tf_function_alone_is_no_training_code() -> None:
    flags = graph_fact("ops.py", OPS, signals_of(OPS, "ops.py")).split("|")[1]  # type: ignore[union-attr]
    assert "t" not in flags
    keras = OPS + "\n\ndef fit_all(model, batches):\n    for x, y in batches:\n        model.train_on_batch(x, y)\n"
    assert "t" in graph_fact("ops.py", keras, signals_of(keras, "ops.py")).split("|")[1]  # type: ignore[union-attr]


def test_only_the_scripts_that_run_the_trainer_are_tf2_entries() -> None:
    assert tf2_entries(FILES) == {"examples/train.py", "examples/train_loop.py"}


def test_a_library_of_traced_helpers_alone_makes_no_entry() -> None:
    """The reproducer's shape: ``mylib/ops.py`` holds only a ``@tf.function`` helper."""
    files = {"requirements.txt": PINS, "mygnn/__init__.py": "from mygnn import ops\n", "mygnn/ops.py": OPS,
             "tools/validate.py": VALIDATE.replace("mygnn.read_schema", "mygnn.ops.read_schema"),
             "tools/count.py": COUNT.replace("mygnn.read_schema", "mygnn.ops.read_schema")}
    assert tf2_entries(files) == set()


@pytest.mark.parametrize("call", ["mygnn.runner.run_pipeline(None, None, 1)", "mygnn.runner.KerasTrainer(2)"])
def test_a_tool_that_calls_the_trainer_is_an_entry(call: str) -> None:
    tool = COUNT.replace("    print(len(mygnn.read_schema(path)))\n", f"    {call}\n")
    assert tf2_entries({**FILES, "tools/count.py": tool}) == {"examples/train.py", "examples/train_loop.py",
                                                         "tools/count.py"}


def test_a_helper_of_the_repository_that_calls_the_trainer_carries_it() -> None:
    """``main.py`` -> ``launch.go`` (no TensorFlow) -> the trainer: found through ``go``."""
    launch = "from mygnn import runner\n\n\ndef go():\n    return runner.KerasTrainer(3)\n\n\ndef help():\n    return 1\n"
    main = "import launch\n\nif __name__ == \"__main__\":\n    launch.{}()\n"
    files = {**FILES, "launch.py": launch, "main.py": main.format("go"), "usage.py": main.format("help")}
    assert tf2_entries(files) - {"examples/train.py", "examples/train_loop.py"} == {"main.py"}


def test_a_star_import_counts_as_calling_everything() -> None:
    tool = "from mygnn.runner import *\n\nif __name__ == \"__main__\":\n    print(1)\n"
    assert "tools/star.py" in tf2_entries({**FILES, "tools/star.py": tool})


def npu061(record: dict) -> list[tuple[str, str, str]]:
    return sorted((f["path"], f["status"], f["message"].split(":")[0])
                  for f in record["findings"] if f["rule_id"] == "NPU061")


def run(root: Path, report: str, engine: str) -> dict:
    cli("run", "--repos", "repos.txt", "--report-dir", report, "--jobs", "1", "--engine", engine,
        cwd=root, expect=0)
    return json.loads((root / report / "run.json").read_text())["repos"][0]


def test_tools_are_reported_and_trainers_get_the_init_with_either_engine(tmp_path: Path) -> None:
    records, branches = [], []
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "gnn", FILES)
        (root / "repos.txt").write_text("gnn\n")
        record = run(root, "rep", engine)
        assert npu061(record) == [("examples/train.py", "migrated", ADDED),
                                  ("examples/train_loop.py", "migrated", ADDED),
                                  ("tools/validate.py", "unmigrated", NO_TRAINING)]
        assert sorted(record["files_changed"]) == ["examples/train.py", "examples/train_loop.py"]
        assert show(repo, BRANCH, "examples/train.py").decode() == TRAIN.replace(
            '"""\n', '"""\n' + DEVICE_INIT, 1)
        again = run(root, "rep2", engine)
        assert again["status"] == "unchanged"
        assert [(path, status) for path, status, _ in npu061(again)] == [
            ("examples/train.py", "migrated"), ("examples/train_loop.py", "migrated"),
            ("tools/validate.py", "unmigrated")]
        records.append(record["findings"])
        branches.append({path: show(repo, BRANCH, path) for path in sorted(record["files_changed"])})
    assert records[0] == records[1]
    assert branches[0] == branches[1]
