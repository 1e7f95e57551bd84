"""NPU068 on a repository whose Keras model class, in a package, overrides ``train_step``: the
step gets the ``all_reduce``, and neither the training script's ``compile(optimizer=...)`` of an
instance (of the class or of a subclass in another module) nor the class's own
``super().compile(...)`` wraps the optimizer too (``spec/rules-tf2.md``, NPU068: "never both
(double aggregation)"). A plain Keras model in the same script is still wrapped. Through the CLI,
on a real git repository shaped like tensorflow/similarity (``ContrastiveModel``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli import cli
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
RULES = ("--rules", "tf2,tf2-distributed")
CONTRASTIVE = '''"""A contrastive model: its own compile arguments and its own training step."""
import tensorflow as tf


class ContrastiveModel(tf.keras.Model):
    def compile(self, optimizer="adam", loss=None, temperature=0.1, **kwargs):
        self.temperature = temperature
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}
'''
SMALL = '''"""A smaller contrastive model with a projection head."""
import tensorflow as tf

from models.contrastive import ContrastiveModel


class SmallContrastive(ContrastiveModel):
    def call(self, inputs, training=None):
        return tf.math.l2_normalize(super().call(inputs, training=training), axis=-1)
'''
TRAIN = '''"""Trains the contrastive model, and a plain classifier as a baseline."""
import tensorflow as tf

from models.contrastive import ContrastiveModel
from models.small import SmallContrastive


def dataset():
    x = tf.random.normal((64, 4))
    return tf.data.Dataset.from_tensor_slices((x, x)).repeat().batch(8, drop_remainder=True)


if __name__ == "__main__":
    inputs = tf.keras.Input((4,))
    model = ContrastiveModel(inputs, tf.keras.layers.Dense(4)(inputs))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", temperature=0.5)
    model.fit(dataset(), steps_per_epoch=2)
    small = SmallContrastive(inputs, tf.keras.layers.Dense(4)(inputs))
    small.compile(optimizer="adam", loss="mse")
    small.fit(dataset(), steps_per_epoch=2)
    baseline = tf.keras.Model(inputs, tf.keras.layers.Dense(4)(inputs))
    baseline.compile(optimizer="adam", loss="mse")
    baseline.fit(dataset(), steps_per_epoch=2)
'''
FILES = {"requirements.txt": "tensorflow==2.6.5\n", "models/__init__.py": "",
         "models/contrastive.py": CONTRASTIVE, "models/small.py": SMALL, "train.py": TRAIN}


def _run(root: Path, report: str, *extra: str) -> dict[str, Any]:
    cli("run", "--repos", "repos.txt", "--report-dir", report, "--no-progress", "--no-cache",
        *RULES, *extra, cwd=root, expect=0)
    (record,) = json.loads((root / report / "run.json").read_text())["repos"]
    return dict(record)


def _npu068(record: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["status"], f["message"].split(":")[0])
                  for f in record["findings"] if f["rule_id"] == "NPU068")


def test_a_train_step_class_of_another_module_is_all_reduced_once(tmp_path: Path) -> None:
    make_repo(tmp_path / "sim", FILES)
    (tmp_path / "repos.txt").write_text("sim\n")
    record = _run(tmp_path, "one")
    own = "the model's class overrides train_step and applies gradients itself"
    assert _npu068(record) == [
        ("models/contrastive.py", 8, "compliant", own),
        ("models/contrastive.py", 14, "migrated",
         "added gradients = npu.distribute.all_reduce(gradients, \"mean\") before the gradients are applied"),
        ("train.py", 16, "compliant", own),
        ("train.py", 19, "compliant", own),
        ("train.py", 22, "migrated", "added npu.distribute.npu_distributed_keras_optimizer_wrapper(...) "
                                     "around the optimizer")]
    train = git(tmp_path / "sim", "show", f"{BRANCH}:train.py")
    assert train.count("npu_distributed_keras_optimizer_wrapper") == 1
    assert 'baseline.compile(optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("adam")' in train
    contrastive = git(tmp_path / "sim", "show", f"{BRANCH}:models/contrastive.py")
    assert contrastive.count("all_reduce") == 1 and "wrapper" not in contrastive

    full = _run(tmp_path, "full", "--engine", "full", "--dry-run")
    assert full["findings"] == record["findings"]

    (tmp_path / "again.txt").write_text(f"sim {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress",
        "--no-cache", *RULES, cwd=tmp_path, expect=0)
    (rerun,) = json.loads((tmp_path / "two" / "run.json").read_text())["repos"]
    assert rerun["files_changed"] == []
    assert [(path, status) for path, _, status, _ in _npu068(rerun)] == [
        ("models/contrastive.py", "compliant"), ("models/contrastive.py", "compliant"),
        ("train.py", "compliant"), ("train.py", "compliant"), ("train.py", "compliant")]
