"""``verify`` on TF 2.x code, on real TensorFlow (CPU): the tool's own migration of a Keras
``fit`` script and of a custom loop with a loss-scale optimizer (``tf2`` and
``tf2-distributed`` packs, run through the ``npu_device`` emulation) is ``equivalent`` with
evidence; a planted change of the loop's learning rate diverges at the step after its first
update.

One ``verify`` over both repositories (module fixture): TensorFlow's import is the cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.orchestrator.verify.verify_repository import repository_tensorflow

from support.cli import cli
from support.git import git, make_repo, show, write_files
from support.verify_repos import VERIFY_TIMEOUT

BRANCH = "npu-codemod/sess-run-to-npu"
VERIFY_TABLE = '[tool.npu-codemod.verify]\ncommand = "python train.py && python loop.py"\n'

FIT = '''\
"""Fit a small regression model with Keras (TF 2.x)."""
import numpy as np
import tensorflow as tf


def make_dataset(features, targets, batch_size):
    return tf.data.Dataset.from_tensor_slices((features, targets)).batch(batch_size)


def main():
    rng = np.random.RandomState(0)
    features = rng.rand(96, 4).astype("float32")
    targets = features.sum(axis=1, keepdims=True)
    inputs = tf.keras.Input(shape=(4,))
    hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    model.fit(make_dataset(features, targets, 16), epochs=2, verbose=0)
    print("loss:", model.evaluate(features, targets, verbose=0))


if __name__ == "__main__":
    main()
'''

LOOP = '''\
"""A custom training loop with a loss-scale optimizer (TF 2.x)."""
import numpy as np
import tensorflow as tf


def main(epochs):
    rng = np.random.RandomState(1)
    features = rng.rand(64, 4).astype("float32")
    targets = features @ np.array([[1.0], [2.0], [-1.0], [0.5]], "float32")
    dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(64, seed=2).batch(16)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))

    @tf.function
    def train_step(batch, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(batch, training=True) - labels))
            scaled = optimizer.get_scaled_loss(loss)
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(epochs):
        for batch, labels in dataset:
            loss = train_step(batch, labels)
    print("loss:", float(loss))


if __name__ == "__main__":
    main(3)
'''

FILES = {"requirements.txt": "tensorflow==2.6.5\nnumpy\n", "pyproject.toml": VERIFY_TABLE,
         "train.py": FIT, "loop.py": LOOP}


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("verify-tf2")
    make_repo(root / "correct", FILES)
    (root / "migrate.txt").write_text("correct\n")
    done = cli("run", "--repos", "migrate.txt", "--no-progress", "--report-dir", "migrate-report",
               "--rules", "default,tf2-distributed", cwd=root)
    assert done.returncode == 0, done.stderr
    migrated = {name: show(root / "correct", BRANCH, name).decode() for name in ("train.py", "loop.py")}
    make_repo(root / "planted", FILES)
    git(root / "planted", "checkout", "-q", "-b", BRANCH)
    write_files(root / "planted", {"train.py": migrated["train.py"],
                                   "loop.py": migrated["loop.py"].replace("SGD(0.1)", "SGD(0.2)")})
    git(root / "planted", "commit", "-q", "-am", "Migrate to the NPU, with a changed learning rate")
    git(root / "planted", "checkout", "-q", "main")
    (root / "repos.txt").write_text("correct\nplanted\n")
    done = cli("verify", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--report-dir",
               "report", cwd=root, timeout=VERIFY_TIMEOUT, expect=1)
    run = json.loads((root / "report" / "run.json").read_text())
    return {"migrated": migrated, "verify": {repo["repo"]: repo["verify"] for repo in run["repos"]}}


def test_the_migration_uses_every_tf2_rewrite_the_emulation_must_run(verified: dict) -> None:
    loop, fit = verified["migrated"]["loop.py"], verified["migrated"]["train.py"]
    for line in ("npu.open().as_default()", "npu.train.optimizer.NpuLossScaleOptimizer(",
                 'grads = npu.distribute.all_reduce(grads, "mean")', "drop_remainder=True",
                 "npu.distribute.broadcast(model.trainable_variables)"):
        assert line in loop, line
    assert "npu.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.SGD(0.05))" in fit


def test_a_migrated_tf2_fit_script_and_custom_loop_are_equivalent_with_evidence(verified: dict) -> None:
    record = verified["verify"]["correct"]
    assert record["verdict"] == "equivalent", record["reason"]
    assert record["steps_compared"] == 20  # 12 Keras batches, then 8 steps of the loop (the limit)
    assert record["evidence"].startswith("20 training step(s) (1 fetched value(s) each)")
    assert "variable(s) at the end" in record["evidence"] and "2 printed metric(s)" in record["evidence"]
    assert record["violations"] == []


def test_a_changed_learning_rate_in_the_loop_diverges_at_the_step_after_its_first_update(
        verified: dict) -> None:
    """Step 1 of the loop computes its gradients from the same initial weights; the changed
    update shows in the gradients of step 2 (steps count per process)."""
    record = verified["verify"]["planted"]
    assert record["verdict"] == "diverged"
    assert record["reason"].startswith("step 2 (training step of a TF 2.x loop ")
    assert "): gradient norm = " in record["reason"] and "in the migrated run (relative difference" \
        in record["reason"]


def test_the_repository_s_tensorflow_decides_the_mode(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(LOOP)
    assert repository_tensorflow(tmp_path) == "2"  # TF 2.x idioms only, no pin
    (tmp_path / "requirements.txt").write_text("tensorflow-gpu==1.15.5\n")
    assert repository_tensorflow(tmp_path) == "1"
    assert repository_tensorflow(tmp_path, configured="2") == "2"
