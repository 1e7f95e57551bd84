"""Horovod bound through a repository module (``common.py``: ``import horovod.tensorflow as
hvd``; ``train.py``: ``from common import hvd``) is Horovod in the importer, as its own import
would be (``codemods/tf_aliases``): the distributed pack migrates its uses (NPU021-NPU025),
NPU100 reports them while the pack is off, and in TF 2.x NPU070 reports them while NPU067 and
NPU068 add no NPU collective beside Horovod's. Before, the importer's Horovod calls got no
rewrite and no finding (verdict ``ready``), and in TF 2.x NPU068 all-reduced the gradients
Horovod's tape had already reduced."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_aliases import alias_facts, file_aliases, repository_aliases
from npu_codemod.testing import assert_migrates, run_rules, sites

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.packs import DISTRIBUTED, INIT, repository_facts

COMMON = "import horovod.tensorflow as hvd\n"
TRAIN = '''\
import tensorflow as tf
from common import hvd


def main():
    hvd.init()
    x = tf.Variable(1.0)
    opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(0.001 * hvd.size()))
    train_op = opt.minimize(x * x)
    with tf.train.MonitoredTrainingSession(hooks=[hvd.BroadcastGlobalVariablesHook(0)]) as sess:
        sess.run(train_op)
'''
MIGRATED = INIT + '''\
import os
import tensorflow as tf


def main():
    x = tf.Variable(1.0)
    opt = npu_distributed_optimizer_wrapper(tf.train.AdamOptimizer(0.001 * get_npu_rank_size()))
    train_op = opt.minimize(x * x)
    with tf.train.MonitoredTrainingSession(hooks=[NPUBroadcastGlobalVariablesHook(0, int(os.getenv('RANK_ID', '0')))]) as sess:
        sess.run(train_op)
'''
TF2_TRAIN = '''\
import tensorflow as tf
from common import hvd

hvd.init()
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
opt = tf.keras.optimizers.SGD(0.01 * hvd.size())


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    hvd.broadcast_variables(model.variables, root_rank=0)
    return loss
'''
FACT = "tf-alias:common.hvd=horovod.tensorflow"


def test_a_module_s_horovod_import_and_its_re_export_are_facts() -> None:
    assert alias_facts("common.py", COMMON) == {FACT, "horovod-held:common.hvd"}  # ``common.hvd.rank()``
    assert alias_facts("pkg/__init__.py", "from .dist import hvd\n") == {"tf-alias:pkg.hvd=@pkg.dist.hvd"}
    assert alias_facts("other.py", "import horovod.tensorflow as h\nimport horovod.torch as hvd\n") == {
        "tf-alias:other.hvd=horovod.torch", "horovod-held:other.h"}  # ``h``: not a name followed
    # (its uses through the module are reported: ``horovod_holders``); torch: not NPU021's
    aliases = repository_aliases(frozenset({FACT}))
    assert file_aliases("train.py", aliases, {"hvd": "common.hvd", "tf": "tensorflow"}) == {
        "hvd": "horovod.tensorflow"}


def test_horovod_imported_from_a_repository_module_is_migrated_by_the_distributed_pack() -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": TRAIN})
    findings = assert_migrates(DISTRIBUTED, TRAIN, MIGRATED, facts=facts,
                               removed=[("NPU021", 6, 4, "migrated"), ("NPU025", 2, 0, "migrated")])
    assert sites(findings) == [("NPU021", 6, 4, "migrated"), ("NPU022", 8, 66, "migrated"),
                               ("NPU023", 8, 10, "migrated"), ("NPU024", 10, 50, "migrated"),
                               ("NPU025", 2, 0, "migrated")]


def test_with_the_pack_off_npu100_reports_each_horovod_use_of_the_importer() -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": TRAIN})
    outcome = run_rules({"NPU100"}, TRAIN, facts)
    assert outcome.new is None
    assert sites(outcome.findings) == [("NPU100", 6, 4, "unmigrated"), ("NPU100", 8, 10, "unmigrated"),
                                       ("NPU100", 8, 66, "unmigrated"), ("NPU100", 10, 9, "unmigrated"),
                                       ("NPU100", 10, 50, "unmigrated")]  # 10, 9: the session, NPU007's


@pytest.mark.parametrize("rules", [{"NPU067", "NPU068", "NPU070"}, {"NPU071"}])
def test_tf2_horovod_from_a_repository_module_is_reported_and_gets_no_npu_collective(rules: set[str]) -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": TF2_TRAIN}) | {"tf-runtime:2"}
    outcome = run_rules(rules, TF2_TRAIN, facts)
    assert outcome.new is None  # no npu.distribute.all_reduce after Horovod's tape, no broadcast
    (rule,) = rules & {"NPU070", "NPU071"}
    assert sites(f for f in outcome.findings if f.rule_id == rule) == [
        (rule, 4, 0, "unmigrated"), (rule, 6, 37, "unmigrated"), (rule, 13, 11, "unmigrated"),
        (rule, 16, 4, "unmigrated")]


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_repository_importing_horovod_from_its_module_is_migrated_and_reruns_clean(
        tmp_path: Path, engine: str) -> None:
    repo = make_repo(tmp_path / "hvd", {"common.py": COMMON, "train.py": TRAIN,
                                        "requirements.txt": "tensorflow==1.15.5\nhorovod==0.19.0\n"})
    (tmp_path / "repos.txt").write_text("hvd\n")
    run = ("run", "--repos", "repos.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine)
    cli(*run, "--report-dir", "off", "--branch", "off", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "off")
    assert record["verdict"] != "ready"
    assert [(f["line"], f["rule_id"]) for f in record["findings"] if f["rule_id"] == "NPU100"] == [
        (6, "NPU100"), (8, "NPU100"), (8, "NPU100"), (10, "NPU100")]  # the session is NPU007's
    cli(*run, "--rules", "default,distributed", "--report-dir", "on", "--branch", "on", cwd=tmp_path, expect=0)
    migrated = show(repo, "on", "train.py").decode()
    assert "hvd" not in migrated and "npu_distributed_optimizer_wrapper(" in migrated
    assert {f["rule_id"] for f in repo_record(tmp_path / "on")["findings"]} >= {
        "NPU021", "NPU022", "NPU023", "NPU024", "NPU025"}
    assert show(repo, "on", "common.py").decode() == COMMON  # another module imports hvd from it
    (tmp_path / "again.txt").write_text("hvd on\n")
    again = ("run", "--repos", "again.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine)
    cli(*again, "--rules", "default,distributed", "--report-dir", "again", "--branch", "again",
        cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "again")["status"] == "unchanged"
