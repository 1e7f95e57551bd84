"""A TF 2.x script that trains through a repository's Horovod helpers (``dist.py``: ``wrap_tape``
= ``hvd.DistributedGradientTape``, ``average_gradients`` = ``hvd.allreduce``,
``distributed_optimizer`` = ``hvd.DistributedOptimizer``, ``callbacks`` = Horovod's broadcast
callback) aggregates with Horovod: its program imports Horovod, so NPU067 and NPU068 add no NPU
collective beside it (spec NPU068: "never both (double aggregation)") and NPU070 reports the
helpers' Horovod uses, also in a helper module that imports no TensorFlow. Before, the script got
``npu.distribute.all_reduce`` after Horovod's tape, the Keras wrapper around Horovod's optimizer
and an NPU broadcast, and a helper module importing no TensorFlow got no finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_scopes import decided_facts
from npu_codemod.testing import assert_reports, run_rules

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.packs import repository_facts

TAPE_DIST = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def wrap_tape(tape):
    return hvd.DistributedGradientTape(tape)
'''
TAPE_TRAIN = '''\
import tensorflow as tf
from dist import wrap_tape

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
opt = tf.keras.optimizers.SGD(0.01)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    tape = wrap_tape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    step(tf.zeros([2, 8]), tf.zeros([2, 1]))
'''
AVG_DIST = '''\
import horovod.tensorflow as hvd


def init_dist():
    hvd.init()


def average_gradients(grads):
    return [hvd.allreduce(g, op=hvd.Average) for g in grads]
'''
AVG_TRAIN = '''\
import tensorflow as tf
from dist import init_dist, average_gradients

init_dist()
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
opt = tf.keras.optimizers.SGD(0.01)

if __name__ == "__main__":
    for x, y in [(tf.zeros([2, 8]), tf.zeros([2, 1]))]:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        grads = average_gradients(grads)
        opt.apply_gradients(zip(grads, model.trainable_variables))
'''
KERAS_DIST = '''\
import horovod.tensorflow.keras as hvd


def distributed_optimizer(opt):
    return hvd.DistributedOptimizer(opt)


def callbacks():
    return [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
'''
KERAS_TRAIN = '''\
import tensorflow as tf
from dist import distributed_optimizer, callbacks

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(8,))])
model.compile(optimizer=distributed_optimizer(tf.keras.optimizers.Adam(0.001)), loss="mse")

if __name__ == "__main__":
    model.fit(tf.zeros([4, 8]), tf.zeros([4, 1]), callbacks=callbacks())
'''
DISTRIBUTED_TF2 = {"NPU067", "NPU068", "NPU070"}


def decided(files: dict[str, str]) -> frozenset[str]:
    """The facts the rules get in a TF 2.x repository of ``files``."""
    return decided_facts("2", {}, repository_facts(files))[0]


@pytest.mark.parametrize("dist, train", [(TAPE_DIST, TAPE_TRAIN), (AVG_DIST, AVG_TRAIN), (KERAS_DIST, KERAS_TRAIN)],
                         ids=["tape", "average", "keras"])
def test_a_script_training_through_horovod_helpers_gets_no_npu_collective(dist: str, train: str) -> None:
    facts = decided({"dist.py": dist, "train.py": train})
    found = assert_reports(DISTRIBUTED_TF2, train, facts=facts, path="train.py")
    assert [f.rule_id for f in found] == ["NPU000"]  # TF 2.x code (NPU061 is not run here)


def test_the_same_script_with_a_helper_module_of_no_horovod_is_migrated() -> None:
    dist = "def average_gradients(grads):\n    return grads\n"
    facts = decided({"dist.py": dist, "train.py": AVG_TRAIN})
    outcome = run_rules(DISTRIBUTED_TF2, AVG_TRAIN, facts, "train.py")
    assert outcome.new is not None and 'all_reduce(grads, "mean")' in outcome.new


def test_a_horovod_helper_module_importing_no_tensorflow_is_reported() -> None:
    facts = decided({"dist.py": AVG_DIST, "train.py": AVG_TRAIN})
    assert_reports(DISTRIBUTED_TF2, AVG_DIST, facts=facts, path="dist.py", findings=[
        ("NPU070", 5, 4, "unmigrated"), ("NPU070", 9, 12, "unmigrated")])
    facts = decided({"dist.py": KERAS_DIST, "train.py": KERAS_TRAIN})
    assert_reports(DISTRIBUTED_TF2, KERAS_DIST, facts=facts, path="dist.py", findings=[
        ("NPU070", 5, 11, "unmigrated"), ("NPU070", 9, 12, "unmigrated")])


def test_a_horovod_module_no_tf2_program_reaches_is_not_reported() -> None:
    facts = decided({"dist.py": AVG_DIST, "other.py": "import json\n"})
    assert_reports({"NPU070"}, AVG_DIST, facts=facts, path="dist.py", findings=[])


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_repository_training_through_horovod_helpers_keeps_one_aggregation(tmp_path: Path, engine: str) -> None:
    repo = make_repo(tmp_path / "hvd", {"dist.py": AVG_DIST, "train.py": AVG_TRAIN,
                                        "requirements.txt": "tensorflow==2.6.0\nhorovod==0.22.1\n"})
    (tmp_path / "repos.txt").write_text("hvd\n")
    run = ("run", "--repos", "repos.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine,
           "--rules", "default,tf2-distributed")
    cli(*run, "--report-dir", "on", "--branch", "on", cwd=tmp_path, expect=0)
    migrated = show(repo, "on", "train.py").decode()
    assert "npu.open()" in migrated  # NPU061: the entry opens the NPU
    assert "all_reduce" not in migrated and "broadcast" not in migrated  # Horovod aggregates
    assert show(repo, "on", "dist.py").decode() == AVG_DIST
    findings = repo_record(tmp_path / "on")["findings"]
    assert [(f["path"], f["line"]) for f in findings if f["rule_id"] == "NPU070"] == [
        ("dist.py", 5), ("dist.py", 9)]
    assert not [f for f in findings if f["rule_id"] in ("NPU067", "NPU068")]
    (tmp_path / "again.txt").write_text("hvd on\n")
    again = ("run", "--repos", "again.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine,
             "--rules", "default,tf2-distributed")
    cli(*again, "--report-dir", "again", "--branch", "again", cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "again")["status"] == "unchanged"
