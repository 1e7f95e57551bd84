"""``verify`` on TF 2.x code, on real TensorFlow (CPU): the tool's own migration (``tf2`` and
``tf2-distributed`` packs, run through the ``npu_device`` emulation) of a script that trains
twice (a custom loop, then Keras ``fit``) and of a module-level custom loop with a loss-scale
optimizer (XLA-compiled) that would run 10,000 steps is ``equivalent``, compared on the loss and
the gradient norm of each training step, numbered once over the run's two processes; the loop stops at the step limit. Planted changes (a learning rate, a dropped line)
diverge at the step where they first show, named with both values.

One ``verify`` over the three repositories (module fixture): TensorFlow's import is the cost
(eight TensorFlow processes; the planted ones run only the script their change is in)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from npu_codemod.orchestrator.verify.verify_repository import repository_tensorflow

from support.cli import cli
from support.git import git, make_repo, show, write_files
from support.verify_repos import VERIFY_TIMEOUT

BRANCH = "npu-codemod/sess-run-to-npu"
STEPS = 12  # 3 + 3 steps of the two phases, then 6 steps of the long loop
VERIFY_TABLE = f'[tool.npu-codemod.verify]\ncommand = "python phases.py && python loop.py"\nsteps = {STEPS}\n'

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

PHASES = '''\
"""Pretrain a regressor with a custom loop, then fine-tune its head with Keras fit (TF 2.x)."""
import numpy as np
import tensorflow as tf


def load(seed, size):
    rng = np.random.RandomState(seed)
    features = rng.rand(size, 4).astype("float32")
    return features, features @ np.array([[0.5], [-1.0], [2.0], [1.0]], "float32")


def pretrain(model, features, targets, steps, batch_size=8):
    optimizer = tf.keras.optimizers.Adam(0.01)
    for step in range(steps):
        start = step * batch_size % len(features)
        batch, labels = features[start:start + batch_size], targets[start:start + batch_size]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(batch, training=True) - labels))
        grads = tape.gradient(loss, model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print("pretrain step", step, "loss", round(float(loss), 4))


def main():
    features, targets = load(3, 48)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh", input_shape=(4,)),
                                 tf.keras.layers.Dense(1)])
    pretrain(model, features, targets, steps=3)
    model.layers[0].trainable = False
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    model.fit(features, targets, batch_size=16, epochs=1, verbose=0, shuffle=False)
    print("fine-tuned loss:", model.evaluate(features, targets, verbose=0))


if __name__ == "__main__":
    main()
'''

LOOP = '''\
"""Train a linear model in a custom loop with loss scaling (TF 2.x): a module-level script."""
import numpy as np
import tensorflow as tf

TRAIN_STEPS = 10000

rng = np.random.RandomState(1)
features = rng.rand(64, 4).astype("float32")
targets = features @ np.array([[1.0], [2.0], [-1.0], [0.5]], "float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(64, seed=2).repeat().batch(16)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


@tf.function(jit_compile=True)
def train_step(batch, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(batch, training=True) - labels))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step, (batch, labels) in enumerate(dataset.take(TRAIN_STEPS)):
    loss = train_step(batch, labels)
    print(f"step {step} loss {float(loss):.5f}")
model.save_weights("linear.ckpt")
'''

ADVERSARIAL = '''\
"""Pretrain a generator with Keras fit, then train it against a critic (TF 2.x)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
real = rng.normal(2.0, 0.5, size=(64, 2)).astype("float32")
noise = rng.normal(size=(64, 2)).astype("float32")
generator = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,))])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
generator.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
generator.fit(noise, real, batch_size=32, epochs=1, verbose=0)
generator_optimizer, critic_optimizer = tf.keras.optimizers.Adam(0.01), tf.keras.optimizers.Adam(0.01)


@tf.function
def adversarial_step(z, x):
    with tf.GradientTape() as generator_tape, tf.GradientTape() as critic_tape:
        fake = generator(z, training=True)
        critic_loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(x))
        generator_loss = -tf.reduce_mean(critic(fake))
    generator_grads = generator_tape.gradient(generator_loss, generator.trainable_variables)
    critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    generator_optimizer.apply_gradients(zip(generator_grads, generator.trainable_variables))
    critic_optimizer.apply_gradients(zip(critic_grads, critic.trainable_variables))
    return generator_loss, critic_loss


for start in (0, 32):
    generator_loss, critic_loss = adversarial_step(noise[start:start + 32], real[start:start + 32])
    print("generator loss", float(generator_loss), "critic loss", float(critic_loss))
'''
FILES = {"requirements.txt": "tensorflow==2.6.5\nnumpy\n", "pyproject.toml": VERIFY_TABLE,
         "train.py": FIT, "phases.py": PHASES, "loop.py": LOOP}
#: Planted on the migration branch: (file, old, new) made once, and the command that shows it.
PLANTED = {
    "learning-rate": ("loop.py", "SGD(0.1)", "SGD(0.2)", "python loop.py"),
    "dropped-line": ("phases.py", "    model.layers[0].trainable = False\n", "", "python phases.py"),
}


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("verify-tf2")
    make_repo(root / "correct", FILES)
    (root / "migrate.txt").write_text("correct\n")
    done = cli("run", "--repos", "migrate.txt", "--no-progress", "--report-dir", "migrate-report",
               "--rules", "default,tf2-distributed", cwd=root)
    assert done.returncode == 0, done.stderr
    migrated = {name: show(root / "correct", BRANCH, name).decode() for name in ("train.py", "phases.py", "loop.py")}
    lines = ["correct\n"]
    for name, (path, old, new, command) in PLANTED.items():
        make_repo(root / name, FILES)
        git(root / name, "checkout", "-q", "-b", BRANCH)
        assert migrated[path].count(old) == 1, old
        write_files(root / name, {**migrated, path: migrated[path].replace(old, new)})
        git(root / name, "commit", "-q", "-am", f"Migrate to the NPU, with a planted {name}")
        git(root / name, "checkout", "-q", "main")
        lines.append(f'{name} main verify="{command}"\n')
    (root / "repos.txt").write_text("".join(lines))
    done = cli("verify", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--report-dir",
               "report", cwd=root, timeout=VERIFY_TIMEOUT, expect=1)
    run = json.loads((root / "report" / "run.json").read_text())
    return {"migrated": migrated, "verify": {repo["repo"]: repo["verify"] for repo in run["repos"]}}


def test_the_migration_uses_every_tf2_rewrite_the_emulation_must_run(verified: dict) -> None:
    migrated = verified["migrated"]
    for name in ("train.py", "phases.py"):  # the entry scripts (loop.py has no __main__ block)
        assert migrated[name].count("npu.open().as_default()") == 1, name
    assert 'grads = npu.distribute.all_reduce(grads, "mean")' in migrated["loop.py"]
    assert "npu.distribute.broadcast(model.trainable_variables)" in migrated["phases.py"]
    assert "npu.train.optimizer.NpuLossScaleOptimizer(" in migrated["loop.py"]
    assert "drop_remainder=True" in migrated["loop.py"]
    assert "npu.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.SGD(0.05))" \
        in migrated["train.py"]


def test_migrated_tf2_scripts_are_equivalent_on_the_loss_and_gradient_norm(verified: dict) -> None:
    """Two processes, one sequence of steps: the two phases (1-6), the loop of 10,000 steps
    (7-12), stopped before the run's 13th step updates anything: the loop printed one line
    after each step it executed, six."""
    record = verified["verify"]["correct"]
    assert record["verdict"] == "equivalent", record["reason"]
    assert record["steps_compared"] == STEPS
    assert record["evidence"].startswith(f"loss and gradient norm over {STEPS} training step(s), ")
    # printed: 3 pretraining steps and the fine-tuned loss, then one line per step the long
    # loop executed (each printed after its step ran): 6, the steps the limit left it
    assert record["evidence"].endswith("variable(s) at the end (5 parameters), 10 printed metric(s)")
    assert record["reason"].startswith(record["evidence"] + ": equal within rtol 1e-05; max relative "
                                       "difference ")
    assert record["reason"].endswith("; stopped at the step limit (a TF 2.x training loop has no "
                                     "input the launcher can end): what follows it did not run")
    assert record["violations"] == []


def test_a_changed_learning_rate_diverges_on_the_loss_of_the_step_after_its_first_update(
        verified: dict) -> None:
    """The first step computes its loss from the same initial weights; the changed update
    shows in the loss of the next one."""
    record = verified["verify"]["learning-rate"]
    assert record["verdict"] == "diverged"
    assert record["reason"].startswith("step 2 (training step of a TF 2.x loop 2): loss = ")
    assert " in the original, " in record["reason"]
    assert "in the migrated run (relative difference" in record["reason"]


def test_a_dropped_line_diverges_on_the_gradient_norm_of_the_second_phase(verified: dict) -> None:
    """Without the freeze, fine-tuning's first batch has the same loss (same weights) but
    applies the gradients of every layer: step 4 of the run (3 pretraining steps before)."""
    record = verified["verify"]["dropped-line"]
    assert record["verdict"] == "diverged"
    assert record["reason"].startswith("step 4 (result (Keras fit) 4): gradient norm = ")


def launched(folder: Path, name: str, script: str, steps: int) -> tuple[int, dict]:
    """``script`` written to ``folder/name`` and run under verify's launcher in TF 2.x mode with a
    limit of ``steps``: its exit code and the run record it prints."""
    (folder / name).write_text(script)
    done = subprocess.run([sys.executable, "-m", "npu_codemod.orchestrator.verify.launch", "--steps", str(steps),
                           "--tensorflow", "2", "--", "python", name],
                          cwd=folder, capture_output=True, text=True, timeout=VERIFY_TIMEOUT)
    return done.returncode, json.loads(done.stdout)


def test_a_fit_that_starts_after_the_step_limit_stops_the_run(tmp_path: Path) -> None:
    """With 3 steps, pretraining takes them all: fine-tuning's ``fit`` would train past the
    limit, so the launcher ends the process there, with the variables after step 3."""
    returncode, run = launched(tmp_path, "phases.py", PHASES, steps=3)
    assert (returncode, run["stopped"], run["training_steps"]) == (0, True, 3)
    assert [(call["step"], call["kind"], call["names"]) for call in run["calls"]] == [
        (step, "train", ["loss", "gradient norm"]) for step in (1, 2, 3)]
    assert [name for name, _ in run["printed"]] == ["loss"] * 3  # no fine-tuned loss
    assert [variable[2] for variable in run["variables"]] == [[4, 8], [8], [8, 1], [1]]
    assert ("npu-codemod verify: stopped after 3 training steps: a Keras fit starts after the step "
            "limit: it and what follows it did not run") in run["output_tail"]


def test_fit_then_two_optimizers_number_their_steps_once_each_with_its_own_loss(tmp_path: Path) -> None:
    """Two fit batches, then two adversarial steps of two optimizers each: steps 3 to 6, each
    optimizer's step with the loss its gradients were taken of (as the script prints them)."""
    returncode, run = launched(tmp_path, "adversarial.py", ADVERSARIAL, steps=10)
    assert (returncode, run["stopped"], run["training_steps"]) == (0, False, 6)
    steps = [call for call in run["calls"] if call["step"]]
    assert [(call["step"], call["kind"], call["names"]) for call in steps] == [
        (1, "fit", ["loss", "gradient norm"]), (2, "fit", ["loss", "gradient norm"]),
        *((step, "train", ["loss", "gradient norm"]) for step in (3, 4, 5, 6))]
    printed = [float(value) for _, value in run["printed"]]
    assert [call["values"][0] for call in steps[2:]] == pytest.approx(printed, rel=1e-6)
    assert [variable[2] for variable in run["variables"]] == [[2, 2], [2], [2, 1], [1]]


def test_the_repository_s_tensorflow_decides_the_mode(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(PHASES)
    assert repository_tensorflow(tmp_path) == "2"  # TF 2.x idioms only, no pin
    (tmp_path / "requirements.txt").write_text("tensorflow-gpu==1.15.5\n")
    assert repository_tensorflow(tmp_path) == "1"
    assert repository_tensorflow(tmp_path, configured="2") == "2"
