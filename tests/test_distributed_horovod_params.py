"""Horovod passed as a parameter (NVIDIA's BERT: ``create_optimizer(..., hvd=hvd)`` into a
module that does not import Horovod): its ``DistributedOptimizer`` (NPU023) and other uses
(NPU025) there are reported with their replacements, not rewritten, and the caller is told
where the module goes instead of "remove it" (which would drop the gradient all-reduce)."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.testing import assert_reports

from support.cli import cli
from support.git import make_repo, show
from support.packs import DISTRIBUTED, message_of, repository_facts

BRANCH = "npu-codemod/sess-run-to-npu"
NOT_REWRITTEN = "not rewritten, as the parameter may hold something else in some call"

OPTIMIZATION = '''\
import tensorflow as tf


def create_optimizer(loss, lr, hvd=None):
    opt = tf.train.AdamOptimizer(lr)
    if hvd is not None:
        opt = hvd.DistributedOptimizer(opt)
    return opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
'''
TRAIN = '''\
import tensorflow as tf
import horovod.tensorflow as hvd
import optimization


def model_fn(features, labels, mode, params):
    loss = tf.reduce_sum(tf.get_variable("w", [1]) * features)
    train_op = optimization.create_optimizer(loss, 0.1 * hvd.size(), hvd=hvd)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


if __name__ == "__main__":
    hvd.init()
    tf.estimator.Estimator(model_fn=model_fn).train(input_fn=lambda: None, max_steps=10)
'''
REDUCE = '''\
import tensorflow as tf


def average(values, dist):
    if dist.rank() == 0:
        tf.logging.info("averaging over %d workers", dist.size())
    return [dist.allreduce(value) for value in values]


def mean(value, hvd):
    return hvd.allreduce(value) / hvd.size()


def unrelated(hvd):
    return hvd.process(1)
'''


def test_the_optimizer_of_a_passed_horovod_module_is_reported_not_rewritten() -> None:
    facts = repository_facts({"train.py": TRAIN, "optimization.py": OPTIMIZATION})
    findings = assert_reports(DISTRIBUTED, OPTIMIZATION, path="optimization.py", facts=facts,
                              findings=[("NPU023", 7, 14, "unmigrated")])
    assert message_of(findings, "NPU023", 7).startswith(
        "hvd.DistributedOptimizer(...) is Horovod's DistributedOptimizer through the parameter hvd "
        "(a caller passes the Horovod module to create_optimizer()): replace it with "
        f"npu_distributed_optimizer_wrapper(<the optimizer>) (from npu_bridge.npu_init import *); {NOT_REWRITTEN}")


def test_the_caller_is_told_where_the_module_goes() -> None:
    facts = repository_facts({"train.py": TRAIN, "optimization.py": OPTIMIZATION})
    findings = assert_reports({"NPU025"}, TRAIN, facts=facts, findings=[("NPU025", 8, 73, "unmigrated")])
    message = message_of(findings, "NPU025", 8)
    assert message.startswith("the Horovod module (hvd) is passed to optimization.create_optimizer() "
                              "as hvd=: migrate the Horovod uses there")
    assert "remove it" not in message


def test_other_uses_through_a_parameter_are_reported_with_their_replacements() -> None:
    """``dist`` is Horovod's because a caller passes the module to it; ``hvd`` by its name;
    ``hvd.process`` is no Horovod API: not taken for one."""
    caller = "import tensorflow as tf\nimport horovod.tensorflow as hvd\nfrom reduce import average\n\n" \
             "grads = average([tf.ones([1])], hvd)\n"
    facts = repository_facts({"train.py": caller, "reduce.py": REDUCE})
    findings = assert_reports(DISTRIBUTED, REDUCE, path="reduce.py", facts=facts, findings=[
        ("NPU025", 5, 7, "unmigrated"), ("NPU025", 6, 53, "unmigrated"),
        ("NPU025", 7, 12, "unmigrated"), ("NPU025", 11, 11, "unmigrated"),
        ("NPU025", 11, 34, "unmigrated")])
    assert message_of(findings, "NPU025", 5).startswith(
        "dist.rank() is Horovod's rank through the parameter dist (a caller passes the Horovod "
        f"module to average()): use get_npu_rank_id(); {NOT_REWRITTEN}")
    assert message_of(findings, "NPU025", 7).startswith(
        "dist.allreduce(...) is Horovod's allreduce through the parameter dist (a caller passes the "
        "Horovod module to average()): use npu_bridge.hccl.hccl_ops.allreduce(tensor, 'sum')")
    # without the caller, only the parameter named as Horovod's module is taken for it
    alone = repository_facts({"reduce.py": REDUCE})
    assert_reports(DISTRIBUTED, REDUCE, path="reduce.py", facts=alone, findings=[
        ("NPU025", 11, 11, "unmigrated"), ("NPU025", 11, 34, "unmigrated")])


def test_run_reports_the_optimizer_of_a_horovod_module_passed_to_another_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bert", {"train.py": TRAIN, "optimization.py": OPTIMIZATION})
    (tmp_path / "repos.txt").write_text("bert\n")
    run = cli("run", "--repos", "repos.txt", "--rules", "default,distributed", "--report-dir", "out",
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert show(repo, BRANCH, "optimization.py").decode() == OPTIMIZATION  # reported, not rewritten
    assert "hvd=hvd" in show(repo, BRANCH, "train.py").decode()
    report = (tmp_path / "out" / "findings.csv").read_text(encoding="utf-8")
    assert "optimization.py,7,14,NPU023,horovod-optimizer,unmigrated," in report
    assert "used as a value" not in report


TRAINER = '''\
import tensorflow as tf


class HorovodTrainer(object):
    def __init__(self, average=True):
        import horovod.tensorflow as hvd
        self.hvd = hvd
        hvd.init()
        self._average = average

    def _setup_graph(self, grads):
        if self.hvd.size() == 1:
            return grads
        return [self.hvd.allreduce(g, average=self._average) for g in grads]

    def _broadcast(self):
        self.helper.rank()
        return self.hvd.broadcast_global_variables(0)
'''


def test_uses_through_an_attribute_set_to_the_horovod_module_are_reported() -> None:
    """tensorpack's HorovodTrainer keeps the module in ``self.hvd``: its all-reduce, size and
    broadcast are Horovod's (a subclass may set another module there: not rewritten)."""
    findings = assert_reports(DISTRIBUTED, TRAINER, facts=repository_facts({"trainer.py": TRAINER}),
                              path="trainer.py", findings=[
        ("NPU025", 7, 19, "unmigrated"), ("NPU021", 8, 8, "unmigrated"),
        ("NPU025", 12, 11, "unmigrated"), ("NPU025", 14, 16, "unmigrated"),
        ("NPU025", 18, 15, "unmigrated")])
    assert message_of(findings, "NPU025", 14).startswith(
        "self.hvd.allreduce(...) is Horovod's allreduce through the attribute self.hvd (set to the "
        "Horovod module on line 7): use npu_bridge.hccl.hccl_ops.allreduce(tensor, 'sum') (divide by "
        "get_npu_rank_size() to average); not rewritten, as the attribute may hold something else")
    assert message_of(findings, "NPU025", 7).startswith(
        "the Horovod module (hvd) is kept in self.hvd: migrate the Horovod uses through self.hvd "
        "(NPU025 and NPU023 report them), then remove it: removing it alone breaks them")
    assert message_of(findings, "NPU025", 18).startswith(
        "self.hvd.broadcast_global_variables(...) is Horovod's broadcast_global_variables through the "
        "attribute self.hvd (set to the Horovod module on line 7): pass NPUBroadcastGlobalVariablesHook("
        "root_rank, int(os.getenv('RANK_ID', '0'))) to the session's hooks instead; not rewritten")


MODEL = '''\
import tensorflow as tf


class Model(object):
    def __init__(self, params, hvd=None):
        self._hvd = hvd
        if self._hvd:
            self._data = params["layer"](num_workers=self._hvd.size(), worker_id=self._hvd.rank())


def train(train_model):
    hvd = train_model.hvd
    if hvd:
        master_worker = hvd.rank() == 0
    config = tf.ConfigProto()
    if hvd is not None:
        config.gpu_options.visible_device_list = str(hvd.local_rank())
'''


def test_uses_through_an_attribute_of_a_parameter_and_a_local_hvd_are_reported() -> None:
    """OpenSeq2Seq: the model keeps the ``hvd`` it is given in ``self._hvd``; ``train()`` takes
    it back into a local ``hvd``."""
    findings = assert_reports(DISTRIBUTED, MODEL, facts=repository_facts({"model.py": MODEL}),
                              path="model.py", findings=[
        ("NPU025", 8, 53, "unmigrated"), ("NPU025", 8, 81, "unmigrated"),
        ("NPU025", 14, 24, "unmigrated"), ("NPU025", 17, 53, "unmigrated")])
    assert message_of(findings, "NPU025", 17).startswith(  # a GPU pinning: not "use get_npu_local_rank_id()"
        "hvd.local_rank() is Horovod's local_rank through the name hvd (named as Horovod's module "
        "is, and used as it): remove this GPU pinning line: GPU pinning has no meaning on the NPU, "
        "where each process's device comes from how the job is launched (its rank table and device "
        "ID); not rewritten, as the name may hold something else")
