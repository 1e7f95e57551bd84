"""BytePS (``import byteps.tensorflow as bps``, Horovod's API on a collective stack the NPU has
no counterpart of: ``codemods/byteps``): each use is reported by the audits with the NPU form
the distributed pack gives Horovod's (NPU100 in TF 1.x code, NPU071 in TF 2.x code), never
rewritten; and the ``tf2-distributed`` rules add no NPU collective to a file that imports it.
Before, a BytePS script was ``ready``, and in TF 2.x NPU068 all-reduced the gradients
BytePS's tape had already reduced and wrapped its DistributedOptimizer a second time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.testing import run_rules, sites

from support.cli import cli
from support.git import make_repo, show

TF1 = '''\
import tensorflow as tf
import byteps.tensorflow as bps


def main():
    bps.init()
    x = tf.Variable(1.0)
    opt = bps.DistributedOptimizer(tf.train.AdamOptimizer(0.001 * bps.size()))
    train_op = opt.minimize(x * x)
    config = tf.ConfigProto()
    config.gpu_options.visible_device_list = str(bps.local_rank())
    with tf.train.MonitoredTrainingSession(hooks=[bps.BroadcastGlobalVariablesHook(0)], config=config) as sess:
        sess.run(train_op)
'''
TF2 = '''\
import tensorflow as tf
import byteps.tensorflow as bps

bps.init()
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
opt = tf.keras.optimizers.SGD(0.01 * bps.size())


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    tape = bps.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    bps.broadcast_variables(model.variables, root_rank=0)
    return loss


def fitted():
    model.compile(optimizer=bps.DistributedOptimizer(opt), loss="mse")
    return model


if __name__ == "__main__":
    step(tf.zeros([8, 4]), tf.zeros([8, 1]))
'''
TF2_RUNTIME = frozenset({"tf-runtime:2"})


def test_each_byteps_use_of_tf1_code_is_reported_with_the_npu_form_of_horovod_s() -> None:
    outcome = run_rules({"NPU100"}, TF1)
    assert outcome.new is None
    byteps = [f for f in outcome.findings if f.message.startswith("BytePS")]
    assert sites(byteps) == [("NPU100", 6, 4, "unmigrated"), ("NPU100", 8, 10, "unmigrated"),
                             ("NPU100", 8, 66, "unmigrated"), ("NPU100", 11, 49, "unmigrated"),
                             ("NPU100", 12, 50, "unmigrated")]
    assert byteps[2].message.startswith(
        "BytePS (bps.size) has no NPU counterpart: port it as Horovod is ported, to the NPU's HCCL "
        "collectives (npu_bridge, `from npu_bridge.npu_init import *`; see NPU021-NPU024): "
        "replace it by get_npu_rank_size()")


def test_a_tf2_byteps_file_gets_no_npu_collective_and_each_use_is_reported() -> None:
    rules = {"NPU067", "NPU068", "NPU069", "NPU070", "NPU071"}
    outcome = run_rules(rules, TF2, TF2_RUNTIME)
    assert outcome.new is None  # no all_reduce after BytePS's tape, no second optimizer wrapper
    ours = [f for f in outcome.findings if f.rule_id != "NPU000"]  # NPU000: TF 2.x code, NPU061 off
    assert sites(ours) == [("NPU071", 4, 0, "unmigrated"), ("NPU071", 6, 37, "unmigrated"),
                                       ("NPU071", 13, 11, "unmigrated"), ("NPU071", 16, 4, "unmigrated"),
                                       ("NPU071", 21, 28, "unmigrated")]
    assert "replace it by npu.distribute.all_reduce(grads, \"mean\") on the gradients" in \
        ours[2].message


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_byteps_repositories_are_never_ready_and_get_no_npu_collective(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path / "tf1", {"train.py": TF1, "requirements.txt": "tensorflow==1.15.5\nbyteps==0.2.5\n"})
    tf2 = make_repo(tmp_path / "tf2", {"train.py": TF2, "requirements.txt": "tensorflow==2.6.0\nbyteps==0.2.5\n"})
    (tmp_path / "repos.txt").write_text("tf1\ntf2\n")
    cli("run", "--repos", "repos.txt", "--rules", "default,distributed,tf2-distributed", "--report-dir", "rep",
        "--branch", "mig", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine, cwd=tmp_path, expect=0)
    records = {Path(r["repo"]).name: r for r in json.loads((tmp_path / "rep" / "run.json").read_text())["repos"]}
    assert {name: record["verdict"] for name, record in records.items()} == {"tf1": "needs-work",
                                                                             "tf2": "needs-work"}
    assert sum(f["message"].startswith("BytePS") for f in records["tf1"]["findings"]) == 5
    migrated = show(tf2, "mig", "train.py").decode()
    assert "npu.distribute" not in migrated and "bps.DistributedGradientTape(tape)" in migrated
