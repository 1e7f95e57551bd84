"""NPU026 tf-distribute-strategy: golden before/after per bullet of the spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli, repo_record
from support.git import make_repo
from support.packs import BOTH_REPO, DISTRIBUTED, INIT, STRATEGY_REPO, message_of, repository_facts

RULES = {"NPU026"}
TF = "import tensorflow as tf\n"
MIRRORED = '''\
"""Trains a ResNet on CIFAR-10 with tf.distribute.MirroredStrategy and tf.estimator."""
import tensorflow as tf

from resnet import input_fn, resnet_model_fn

FLAGS = tf.app.flags.FLAGS


def main(_):
    strategy = tf.distribute.MirroredStrategy(
        devices=["/gpu:0", "/gpu:1"],
        cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn, model_dir=FLAGS.model_dir, config=config)
    train_spec = tf.estimator.TrainSpec(input_fn=lambda: input_fn(True), max_steps=FLAGS.train_steps)
    eval_spec = tf.estimator.EvalSpec(input_fn=lambda: input_fn(False), steps=100)
    tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)


if __name__ == "__main__":
    tf.app.run()
'''
MIRRORED_AFTER = '''\
"""Trains a ResNet on CIFAR-10 with tf.distribute.MirroredStrategy and tf.estimator."""
from npu_bridge.npu_init import *
import tensorflow as tf

from resnet import input_fn, resnet_model_fn

FLAGS = tf.app.flags.FLAGS


def main(_):
    strategy = npu_strategy.NPUStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn, model_dir=FLAGS.model_dir, config=config)
    train_spec = tf.estimator.TrainSpec(input_fn=lambda: input_fn(True), max_steps=FLAGS.train_steps, hooks=npu_hooks_append())
    eval_spec = tf.estimator.EvalSpec(input_fn=lambda: input_fn(False), steps=100, hooks=npu_hooks_append())
    tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)


if __name__ == "__main__":
    tf.app.run()
'''


def test_a_mirrored_strategy_estimator_script() -> None:
    facts = repository_facts({"train.py": MIRRORED})
    assert facts >= STRATEGY_REPO
    findings = assert_migrates(DISTRIBUTED, MIRRORED, MIRRORED_AFTER, facts=facts, findings=[
        ("NPU026", 10, 15, "migrated"), ("NPU027", 16, 17, "migrated"), ("NPU027", 17, 16, "migrated")])
    assert message_of(findings, "NPU026", 10) == (
        "replaced tf.distribute.MirroredStrategy(...) with npu_strategy.NPUStrategy(); dropped "
        "devices=[\"/gpu:0\", \"/gpu:1\"], cross_device_ops=tf.distribute.HierarchicalCopyAllReduce(): "
        "the NPU strategy takes none")


@pytest.mark.parametrize("spelled", [
    "tf.distribute.MirroredStrategy",
    "tf.compat.v1.distribute.MirroredStrategy",
    "tf.distribute.experimental.MultiWorkerMirroredStrategy",
    "tf.contrib.distribute.MirroredStrategy",
])
def test_every_mirrored_strategy(spelled: str) -> None:
    findings = assert_migrates(RULES, TF + f"strategy = {spelled}()\n",
                               INIT + TF + "strategy = npu_strategy.NPUStrategy()\n",
                               facts=STRATEGY_REPO, findings=[("NPU026", 2, 11, "migrated")])
    assert findings[0].message == f"replaced {spelled}() with npu_strategy.NPUStrategy()"


def test_the_tf2_only_strategy_makes_a_tf2_file_left_to_the_tf2_packs() -> None:
    """tf.distribute.MultiWorkerMirroredStrategy (not experimental) exists in TF 2.x only: the
    file is TF 2.x code, where NPUStrategy (a TF 1.x adapter API) is never written (NPU070)."""
    source = TF + "strategy = tf.distribute.MultiWorkerMirroredStrategy()\n"
    findings = assert_reports(RULES, source, facts=STRATEGY_REPO)
    assert [(f.rule_id, f.message.split(":")[0]) for f in findings] == [("NPU000", "TF 2.x code")]


def test_positional_arguments_are_named_in_the_message() -> None:
    findings = assert_migrates(
        RULES, TF + "s = tf.distribute.experimental.MultiWorkerMirroredStrategy(\n"
                    "    tf.distribute.experimental.CollectiveCommunication.NCCL)\n",
        INIT + TF + "s = npu_strategy.NPUStrategy()\n", facts=STRATEGY_REPO)
    assert findings[0].message.endswith(
        "; dropped communication=tf.distribute.experimental.CollectiveCommunication.NCCL: the "
        "NPU strategy takes none")


@pytest.mark.parametrize("spelled", [
    "tf.distribute.experimental.ParameterServerStrategy",
    "tf.distribute.experimental.TPUStrategy",
    "tf.distribute.experimental.CentralStorageStrategy",
    "tf.distribute.OneDeviceStrategy",
    "tf.contrib.distribute.OneDeviceStrategy",
])
def test_other_strategies_are_reported(spelled: str) -> None:
    findings = assert_reports(RULES, TF + f"strategy = {spelled}(resolver)\n",
                              facts=STRATEGY_REPO, findings=[("NPU026", 2, 11, "unmigrated")])
    assert findings[0].message.startswith(
        f"{spelled}(...) has no NPU counterpart: train with npu_strategy.NPUStrategy() "
        "(one process per NPU) or on one device")


def test_a_strategy_used_as_a_value_is_reported() -> None:
    assert_reports(RULES, TF + "STRATEGIES = {'mirrored': tf.distribute.MirroredStrategy}\n",
                   facts=STRATEGY_REPO, findings=[("NPU026", 2, 26, "unmigrated")])


def test_a_second_run_reports_the_npu_strategy() -> None:
    assert_reports(RULES, INIT + TF + "strategy = npu_strategy.NPUStrategy()\n",
                   facts=STRATEGY_REPO, findings=[("NPU026", 3, 11, "migrated")])


def test_both_modes_are_reported() -> None:
    findings = assert_reports(RULES, TF + "strategy = tf.distribute.MirroredStrategy()\n",
                              facts=BOTH_REPO, findings=[("NPU026", 2, 11, "unmigrated")])
    assert findings[0].message.startswith(
        "the repository trains with Horovod and with a tf.distribute strategy: pick one "
        "distribution mode, then replace tf.distribute.MirroredStrategy() with npu_strategy.NPUStrategy()")


def test_a_strategy_of_another_library_is_left_alone() -> None:
    assert_reports(RULES, TF + "from mylib import MirroredStrategy\ns = MirroredStrategy()\n",
                   facts=STRATEGY_REPO, findings=[])


PS_WORKER = '''\
"""A3C-shaped between-graph replication: one ps task, workers that share its variables."""
import tensorflow as tf


def cluster_spec(workers):
    return tf.train.ClusterSpec({"ps": ["127.0.0.1:2222"],
                                "worker": ["127.0.0.1:%d" % (2223 + i) for i in range(workers)]})


def run(job, task, workers):
    cluster = cluster_spec(workers)
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    if job == "ps":
        server.join()
        return
    with tf.device(tf.train.replica_device_setter(1, worker_device="/job:worker/task:%d" % task)):
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.AdamOptimizer(1e-4).minimize(tf.square(tf.get_variable("w", [])), step)
    sv = tf.train.Supervisor(is_chief=(task == 0), global_step=step)
    with sv.managed_session(server.target) as sess:
        sess.run(train_op)
'''
BETWEEN_GRAPH = (" sets up between-graph parameter-server training, which has no NPU counterpart: "
                 "the NPU trains data-parallel with HCCL, one process per NPU and each worker on "
                 "its own device; drop the ps jobs, servers and device setter, broadcast the "
                 "variables from rank 0 (NPUBroadcastGlobalVariablesHook) and all-reduce the "
                 "gradients (npu_distributed_optimizer_wrapper(opt), or an Estimator's "
                 "hooks=npu_hooks_append()), or train on one device")


def test_between_graph_parameter_server_training_is_reported_at_each_site() -> None:
    """Classic TF 1.x ps/worker training is a parameter-server strategy spelled by hand: each
    cluster, server and device setter is reported, as ParameterServerStrategy is (the
    repository need not be distributed otherwise)."""
    findings = assert_reports(RULES, PS_WORKER, findings=[
        ("NPU026", 6, 11, "unmigrated"), ("NPU026", 12, 13, "unmigrated"),
        ("NPU026", 16, 19, "unmigrated")])
    assert [f.message.split(" (guide:")[0] for f in findings] == [
        spelled + "(...)" + BETWEEN_GRAPH
        for spelled in ("tf.train.ClusterSpec", "tf.train.Server", "tf.train.replica_device_setter")]


@pytest.mark.parametrize("source, findings", [
    ("import tensorflow.compat.v1 as tf\nserver = tf.distribute.Server(cluster, 'worker', 0)\n",
     [("NPU026", 2, 9, "unmigrated")]),
    ("from tensorflow.python.training import device_setter\nd = device_setter.replica_device_setter(2)\n",
     [("NPU026", 2, 4, "unmigrated")]),
    (TF + "server = tf.train.Server.create_local_server()\n", []),  # one process, in-process
    (TF + "ok = isinstance(spec, tf.train.ClusterSpec)\n", []),
])
def test_every_spelling_of_the_cluster_and_not_a_local_server(source: str, findings: list) -> None:
    assert_reports(RULES, source, findings=findings)


def test_a_parameter_server_repository_through_the_command_line(tmp_path: Path) -> None:
    """With the pack on, the sites are left and the verdict is needs-work (it was ready); with
    it off, nothing, as for ParameterServerStrategy (supported in Ascend's list)."""
    make_repo(tmp_path / "a3c", {"worker.py": PS_WORKER})
    (tmp_path / "repos.txt").write_text("a3c\n")
    for rules, report, sites, verdict in (("default,distributed", "pack", 3, "needs-work"),
                                          ("default", "default", 0, "ready")):
        cli("scan", "--repos", "repos.txt", "--rules", rules, "--report-dir", report,
            "--no-progress", cwd=tmp_path, expect=0)
        record = repo_record(tmp_path / report)
        assert len([f for f in record["findings"] if f["rule_id"] == "NPU026"]) == sites
        assert record["verdict"] == verdict


TF_CONFIG_ESTIMATOR = '''\
"""Cloud ML-shaped census trainer: the Estimator takes its ps and worker roles from TF_CONFIG."""
import json
import os

import tensorflow as tf


def worker_session_config():
    env = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = env.get("task", {})
    if task.get("type") == "worker":
        return tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task["index"]])
    return None


def train(model_fn, input_fn, job_dir):
    config = tf.estimator.RunConfig(model_dir=job_dir, session_config=worker_session_config())
    estimator = tf.estimator.Estimator(model_fn, config=config)
    tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, max_steps=100),
                                    tf.estimator.EvalSpec(input_fn, steps=1))
'''
FROM_TF_CONFIG = (" sets up parameter-server training (the ps job of the cluster in TF_CONFIG, "
                  "from which an Estimator starts its roles), which has no NPU counterpart: the "
                  "NPU trains data-parallel with HCCL, one process per NPU and each worker on its "
                  "own device; drop the ps job (from the cluster and from the session config's "
                  "device_filters) and train each worker with npu_run_config_init() and "
                  "hooks=npu_hooks_append(), or on one device")
PS_DEVICES = "device_filters with /job:ps" + FROM_TF_CONFIG
PS_JOB = 'the "ps" job of a cluster in a file that uses TF_CONFIG' + FROM_TF_CONFIG


def test_ps_device_filters_of_a_tf_config_estimator_are_reported() -> None:
    """An Estimator takes its parameter-server cluster from TF_CONFIG: no ClusterSpec nor
    Server in the code, only the session config that keeps a worker to the ps devices."""
    findings = assert_reports(RULES, TF_CONFIG_ESTIMATOR, findings=[("NPU026", 12, 30, "unmigrated")])
    assert [f.message.split(" (guide:")[0] for f in findings] == [PS_DEVICES]


@pytest.mark.parametrize("source, findings", [
    (TF + "config = tf.compat.v1.ConfigProto(device_filters=['/job:ps/replica:0', '/job:worker'])\n",
     [("NPU026", 2, 34, "unmigrated")]),
    (TF + "config = tf.ConfigProto()\nconfig.device_filters.extend(['/job:ps', worker])\n",
     [("NPU026", 3, 0, "unmigrated")]),
    (TF + "config = tf.ConfigProto()\nconfig.device_filters.append('/job:ps')\n",
     [("NPU026", 3, 0, "unmigrated")]),
    (TF + "config = tf.ConfigProto()\nconfig.device_filters = ['/job:ps', '/job:chief']\n",
     [("NPU026", 3, 0, "unmigrated")]),
    (TF + "config = tf.ConfigProto(device_filters=['/job:worker/task:0'])\n", []),
    (TF + "config = tf.ConfigProto(device_filters=['/job:psx'])\n", []),
])
def test_every_spelling_of_ps_device_filters(source: str, findings: list) -> None:
    assert_reports(RULES, source, findings=findings)


READS_TF_CONFIG = TF + "import json\nimport os\n\nenv = json.loads(os.environ['TF_CONFIG'])\n"


@pytest.mark.parametrize("source, findings", [
    (READS_TF_CONFIG + "ps_hosts = env['cluster']['ps']\n", [("NPU026", 6, 26, "unmigrated")]),
    (READS_TF_CONFIG + "num_ps = len(env['cluster'].get('ps', []))\n",
     [("NPU026", 6, 32, "unmigrated")]),
    (READS_TF_CONFIG + "def launch(ps, workers):\n"
     "    os.environ['TF_CONFIG'] = json.dumps({'cluster': {'ps': ps, 'worker': workers}})\n",
     [("NPU026", 7, 54, "unmigrated")]),
    (READS_TF_CONFIG + "workers = env['cluster']['worker']\n", []),
    (TF + "hosts = {'ps': ['a:1']}['ps']\n", []),  # no TF_CONFIG: NPU026 reports the ClusterSpec
])
def test_the_ps_job_of_a_tf_config_cluster_is_reported(source: str, findings: list) -> None:
    reported = assert_reports(RULES, source, findings=findings)
    assert [f.message.split(" (guide:")[0] for f in reported] == [PS_JOB] * len(findings)


def test_a_tf_config_parameter_server_estimator_through_the_command_line(tmp_path: Path) -> None:
    """Needs work with the pack on (it was ready); with it off, ready, as the other
    parameter-server set-ups are."""
    make_repo(tmp_path / "census", {"task.py": TF_CONFIG_ESTIMATOR})
    (tmp_path / "repos.txt").write_text("census\n")
    for rules, report, sites, verdict in (("default,distributed", "pack", 1, "needs-work"),
                                          ("default", "default", 0, "ready")):
        cli("scan", "--repos", "repos.txt", "--rules", rules, "--report-dir", report,
            "--no-progress", cwd=tmp_path, expect=0)
        record = repo_record(tmp_path / report)
        assert len([f for f in record["findings"] if f["rule_id"] == "NPU026"]) == sites
        assert record["verdict"] == verdict
