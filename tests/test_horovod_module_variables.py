"""Horovod held in a variable of a repository module (NVIDIA's DeepLearningExamples: a wrapper
module sets ``hvd_global_object``, after ``global``, to the Horovod module it imports in
``init()``; the scripts import the wrapper as ``hvd`` and call
``hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)``). No import of the script binds
Horovod, so the broadcast hook and the all-reduce through the wrapper had no finding at all,
with the pack on or off. They are reported now, with what replaces them, and never rewritten:
the variable may hold a stand-in without Horovod, and the wrapper (which imports no
TensorFlow) still starts Horovod."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.tf_aliases import alias_facts
from npu_codemod.testing import assert_reports, run_rules, sites

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.packs import DISTRIBUTED, message_of, repository_facts

WRAPPER = '''\
hvd_global_object = None


def init(use_horovod=False):
    global hvd_global_object
    if use_horovod:
        import horovod.tensorflow as hvd
        hvd.init()
        hvd_global_object = hvd
    else:
        hvd_global_object = _Single()


class _Single(object):
    def rank(self):
        return 0

    def size(self):
        return 1


def size():
    return hvd_global_object.size()
'''
RUNNER = '''\
import tensorflow as tf

from utils import hvd_wrapper as hvd


class Runner(object):

    def __init__(self, use_horovod=False):
        hvd.init(use_horovod)

    def train(self, estimator, input_fn, max_steps):
        training_hooks = []
        if hvd.size() > 1:
            bcast_hook = hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)
            training_hooks.append(bcast_hook)
        estimator.train(input_fn=input_fn, max_steps=max_steps, hooks=training_hooks)


class PartitionHook(tf.estimator.SessionRunHook):

    def begin(self):
        if hvd.size() > 1:
            self.input_op = tf.placeholder(tf.int32, shape=())
            self.allreduce_op = hvd.hvd_global_object.allreduce(
                self.input_op, op=hvd.hvd_global_object.Sum, name="signal_all_reduce")
'''
FILES = {"utils/__init__.py": "", "utils/hvd_wrapper.py": WRAPPER, "runtime/runner.py": RUNNER}
NOT_REWRITTEN = ("not rewritten, as the module variable may hold something else (its module may "
                 "set it to another object: migrate that module's Horovod uses with these)")


def test_a_module_variable_set_to_horovod_after_global_is_a_fact() -> None:
    assert alias_facts("utils/hvd_wrapper.py", WRAPPER) == {"horovod-held:utils.hvd_wrapper.hvd_global_object"}
    assert alias_facts("utils/plain.py", "hvd = None\n\ndef init():\n    import horovod.tensorflow as hvd\n"
                       "    hvd.init()\n") == set()  # no ``global``: a local of init()


def test_the_broadcast_hook_and_allreduce_through_the_wrapper_are_reported_not_rewritten() -> None:
    facts = repository_facts(FILES)
    findings = assert_reports(DISTRIBUTED, RUNNER, path="runtime/runner.py", facts=facts, findings=[
        ("NPU025", 14, 25, "unmigrated"), ("NPU025", 24, 32, "unmigrated"),
        ("NPU027", 16, 8, "unmigrated")])  # a parameter's train(): not shown to be an Estimator's
    assert message_of(findings, "NPU025", 14).startswith(
        "hvd.hvd_global_object.BroadcastGlobalVariablesHook(...) is Horovod's "
        "BroadcastGlobalVariablesHook through the module variable hvd.hvd_global_object "
        "(utils.hvd_wrapper sets it to the Horovod module): use NPUBroadcastGlobalVariablesHook("
        f"root_rank, int(os.getenv('RANK_ID', '0'))); {NOT_REWRITTEN}")
    assert message_of(findings, "NPU025", 24).startswith(
        "hvd.hvd_global_object.allreduce(...) is Horovod's allreduce through the module variable "
        "hvd.hvd_global_object (utils.hvd_wrapper sets it to the Horovod module): use "
        "npu_bridge.hccl.hccl_ops.allreduce(tensor, 'sum')")


def test_with_the_pack_off_npu100_reports_them_with_the_opt_in() -> None:
    outcome = run_rules({"NPU100"}, RUNNER, repository_facts(FILES), path="runtime/runner.py")
    assert outcome.new is None
    assert sites(outcome.findings) == [("NPU100", 14, 25, "unmigrated"), ("NPU100", 24, 32, "unmigrated")]
    assert outcome.findings[0].message.startswith(
        "hvd.hvd_global_object.BroadcastGlobalVariablesHook(...) is Horovod's "
        "BroadcastGlobalVariablesHook through the module variable hvd.hvd_global_object "
        "(utils.hvd_wrapper sets it to the Horovod module): npu-codemod migrates this with "
        "`--rules default,distributed`")


def test_a_variable_imported_by_name_from_the_wrapper_is_reported_too() -> None:
    script = ("import tensorflow as tf\nfrom utils.hvd_wrapper import hvd_global_object as dist\n\n"
              "hooks = [dist.BroadcastGlobalVariablesHook(0)]\n")
    facts = repository_facts({**FILES, "train.py": script})
    findings = assert_reports(DISTRIBUTED, script, path="train.py", facts=facts,
                              findings=[("NPU025", 4, 9, "unmigrated")])
    assert "through the module variable dist (utils.hvd_wrapper sets it" in findings[0].message


def test_run_reports_the_wrapper_s_broadcast_hook_and_leaves_the_runner(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "dle", {**FILES, "requirements.txt": "tensorflow==1.15.5\nhorovod==0.19.0\n"})
    (tmp_path / "repos.txt").write_text("dle\n")
    cli("run", "--repos", "repos.txt", "--rules", "default,distributed", "--no-progress", "--no-cache",
        "--report-dir", "out", "--branch", "npu", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "out")
    hook = [f for f in record["findings"] if f["path"] == "runtime/runner.py" and f["line"] == 14]
    assert [(f["rule_id"], f["status"]) for f in hook] == [("NPU025", "unmigrated")]
    assert (record["status"], record["verdict"]) == ("unchanged", "needs-work")
    assert show(repo, "HEAD", "runtime/runner.py").decode() == RUNNER
