"""In a TF 2.x repository, a file whose TensorFlow comes through a star import of the
repository's own module is ``tf-neutral``: the ``tf2-distributed`` pack's NPU068 all-reduces
its custom loop on the first run, as on a rerun (where NPU061's ``npu.open()`` makes the file
``tf2``), so the second run changes nothing. Through the CLI, on a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import cli
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
LAYERS = '''"""The transformer's layers."""
import tensorflow as tf
from tensorflow.python import keras


class Dense(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.inner = keras.layers.Dense(units)

    def call(self, x):
        return self.inner(x)
'''
MODEL = '''"""The model and its training step (MusicTransformer-shaped)."""
from layers import *
import sys
from tensorflow.python import keras


class Transformer(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = Dense(4)

    def call(self, x):
        return self.dense(x)

    def train_on_batch(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.call(x) - y))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return loss


if __name__ == "__main__":
    model = Transformer()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3))
    for step in range(int(sys.argv[1])):
        model.train_on_batch(tf.random.uniform([8, 4]), tf.zeros([8, 4]))
'''
FILES = {"requirements.txt": "tensorflow==2.6.0\n", "layers.py": LAYERS, "model.py": MODEL}


def test_a_neutral_files_custom_loop_is_all_reduced_on_the_first_run(tmp_path: Path) -> None:
    make_repo(tmp_path / "music", FILES)
    (tmp_path / "repos.txt").write_text("music\n")
    rules = ("--rules", "default,tf2-distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    (first,) = json.loads((tmp_path / "one" / "run.json").read_text())["repos"]
    assert first["file_kinds"].get("tf-neutral") == 2
    model = git(tmp_path / "music", "show", f"{BRANCH}:model.py")
    assert 'gradients = npu.distribute.all_reduce(gradients, "mean")' in model
    (tmp_path / "again.txt").write_text(f"music {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (rerun,) = json.loads((tmp_path / "two" / "run.json").read_text())["repos"]
    assert rerun["status"] == "unchanged" and rerun["files_changed"] == []
    def npu068(record: dict) -> list[tuple[int, str]]:
        done = {"migrated": "done", "compliant": "done"}
        return sorted((f["line"] if f["path"] != "model.py" else 0, done.get(f["status"], f["status"]))
                      for f in record["findings"] if f["rule_id"] == "NPU068")

    assert ("done" in {state for _, state in npu068(first)}) and npu068(rerun) == npu068(first)
