"""NPU025 horovod-other: every other Horovod use reported, unused Horovod imports removed."""

from __future__ import annotations

import pytest

from npu_codemod.api._toolkit import ApiStatus, support_list
from npu_codemod.codemods.support_list import SupportList
from npu_codemod.plugins.rules.distributed import npu025_horovod_other
from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import BOTH_REPO, DISTRIBUTED, HOROVOD_REPO, HVD, INIT, message_of

RULES = {"NPU025"}
OTHERWISE = "remove it, or use the NPU's collective communication (npu_bridge.hccl.hccl_ops)"
PASSED_ON = ("migrate the Horovod uses there (hvd.DistributedOptimizer -> "
             "npu_distributed_optimizer_wrapper(opt), NPU023; hvd.allreduce and the others as "
             "NPU025 reports them), then stop passing it: removing it here alone drops what they "
             "do there (the gradient all-reduce: each worker would train alone)")


@pytest.mark.parametrize("use, message", [
    ("loss = hvd.allreduce(loss)",
     "hvd.allreduce(...) has no NPU form (Ascend's API list has hvd.allreduce under analysis): "
     "use npu_bridge.hccl.hccl_ops.allreduce(tensor, 'sum') (divide by get_npu_rank_size() to average)"),
    ("gathered = hvd.allgather(t)",
     "hvd.allgather(...) has no NPU form (Ascend's API list has hvd.allgather under analysis): "
     "use npu_bridge.hccl.hccl_ops.allgather(tensor, get_npu_rank_size())"),
    ("weights = hvd.broadcast(w, 0)",
     "hvd.broadcast(...) has no NPU form (Ascend's API list has hvd.broadcast under analysis): "
     "use npu_bridge.hccl.hccl_ops.broadcast([tensor], root_rank)"),
    ("hvd.shutdown()",
     f"hvd.shutdown() has no NPU form (Ascend's API list has hvd.shutdown under analysis): {OTHERWISE}"),
    ("ok = hvd.nccl_built()",
     f"hvd.nccl_built() has no NPU form (Ascend's API list has hvd.nccl_built under analysis): {OTHERWISE}"),
    ("n = hvd.size_op()",
     f"hvd.size_op() has no NPU form (Ascend's API list has hvd.size_op under analysis): {OTHERWISE}"),
    ("compression = hvd.Compression.fp16",
     f"hvd.Compression.fp16 has no NPU form (Ascend's API list has hvd.Compression under analysis): {OTHERWISE}"),
    ("state = hvd.elastic.TensorFlowKerasState(model)",
     "hvd.elastic.TensorFlowKerasState(...) has no NPU form (Ascend's API list has "
     f"hvd.elastic.TensorFlowKerasState under analysis): {OTHERWISE}"),
    ("hvd.join()",
     f"hvd.join() has no NPU form (hvd.join is not in Ascend's API list): {OTHERWISE}"),
    ("horovod_module = hvd",
     f"the Horovod module is used as a value (hvd): {OTHERWISE}"),
    # passed on: the code it goes to uses it, so "remove it" would drop what it does there
    ("train_op = optimization.create_optimizer(loss, 0.1, hvd=hvd)",
     f"the Horovod module (hvd) is passed to optimization.create_optimizer() as hvd=: {PASSED_ON}"),
    ("callbacks = build_callbacks(hvd)",
     f"the Horovod module (hvd) is passed to build_callbacks(): {PASSED_ON}"),
])
def test_every_other_use_is_reported_with_its_status(use: str, message: str) -> None:
    findings = assert_reports(RULES, HVD + use + "\n", facts=HOROVOD_REPO)
    assert [(f.line, f.status) for f in findings] == [(3, "unmigrated")]
    assert findings[0].message.startswith(message + " (guide: Migrating Horovod scripts, ")


def test_the_status_is_the_support_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """NPU025 keeps no table of its own: the audit's list is the one source of each status."""
    listed = SupportList({**support_list().statuses, "hvd.allreduce": ApiStatus.UNSUPPORTED,
                          "hvd.join": ApiStatus.UNDER_ANALYSIS})
    monkeypatch.setattr(npu025_horovod_other, "support_list", lambda: listed)
    findings = assert_reports(RULES, HVD + "loss = hvd.allreduce(loss)\nhvd.join()\nhvd.shutdown()\n",
                              facts=HOROVOD_REPO)
    assert [f.message.partition(" (guide:")[0] for f in findings] == [
        "hvd.allreduce(...) has no NPU form (Ascend's API list marks hvd.allreduce unsupported): "
        "use npu_bridge.hccl.hccl_ops.allreduce(tensor, 'sum') (divide by get_npu_rank_size() to average)",
        f"hvd.join() has no NPU form (Ascend's API list has hvd.join under analysis): {OTHERWISE}",
        f"hvd.shutdown() has no NPU form (Ascend's API list has hvd.shutdown under analysis): {OTHERWISE}"]


def test_every_horovod_api_the_list_has_and_no_rule_owns_is_reported_as_listed() -> None:
    for api, status in sorted(support_list().statuses.items()):
        name = api.removeprefix("hvd.")
        if not api.startswith("hvd.") or name in npu025_horovod_other.OWNED:
            continue
        findings = assert_reports(RULES, f"{HVD}value = hvd.{name}\n", facts=HOROVOD_REPO)
        assert f"(Ascend's API list has {api} under analysis)" in findings[0].message, api
        assert status == ApiStatus.UNDER_ANALYSIS


def test_keras_callbacks_other_than_the_broadcast_are_reported() -> None:
    source = ("import tensorflow as tf\nimport horovod.tensorflow.keras as hvd\n"
              "callbacks = [hvd.callbacks.MetricAverageCallback(),\n"
              "             hvd.callbacks.LearningRateWarmupCallback(warmup_epochs=5)]\n")
    assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[
        ("NPU025", 3, 13, "unmigrated"), ("NPU025", 4, 13, "unmigrated")])


def test_the_uses_other_rules_own_are_not_reported_twice() -> None:
    source = HVD + ("opt = hvd.DistributedOptimizer(opt, sparse_as_dense=True)\n"
                    "hook_class = hvd.BroadcastGlobalVariablesHook\nstart = hvd.init\n")
    assert_reports(DISTRIBUTED, source, facts=HOROVOD_REPO, findings=[
        ("NPU023", 3, 6, "unmigrated"), ("NPU024", 4, 13, "unmigrated"), ("NPU021", 5, 8, "unmigrated")])


def test_the_import_is_removed_once_no_horovod_use_is_left() -> None:
    before = '''\
import os

import tensorflow as tf
import horovod.tensorflow as hvd
from horovod.tensorflow import local_rank


def main():
    hvd.init()
    print(hvd.rank(), local_rank())
'''
    after = '''\
from npu_bridge.npu_init import *
import os

import tensorflow as tf


def main():
    print(get_npu_rank_id(), get_npu_local_rank_id())
'''
    removed = [("NPU021", 9, 4, "migrated"), ("NPU025", 4, 0, "migrated"), ("NPU025", 5, 0, "migrated")]
    findings = assert_migrates(DISTRIBUTED, before, after, facts=HOROVOD_REPO, removed=removed)
    assert message_of(findings, "NPU025", 4) == "removed the Horovod import: nothing uses it any more"


def test_an_import_still_used_stays_and_unused_ones_go() -> None:
    before = HVD + "from horovod.tensorflow import size\nx = hvd.allreduce(x) / size()\n"
    after = INIT + HVD + "x = hvd.allreduce(x) / get_npu_rank_size()\n"
    assert_migrates(DISTRIBUTED, before, after, facts=HOROVOD_REPO,
                    removed=[("NPU025", 3, 0, "migrated")])


def test_an_import_of_horovod_and_something_else_is_reported() -> None:
    before = "import tensorflow as tf\nimport os, horovod.tensorflow as hvd\nhvd.init()\n"
    after = "import tensorflow as tf\nimport os, horovod.tensorflow as hvd\n"
    findings = assert_migrates(DISTRIBUTED, before, after, facts=HOROVOD_REPO, findings=[
        ("NPU021", 3, 0, "migrated"), ("NPU025", 2, 0, "unmigrated")],
        removed=[("NPU021", 3, 0, "migrated")])
    assert message_of(findings, "NPU025", 2).startswith(
        "nothing uses Horovod's names of this import any more: remove them from it")


def test_an_import_in_a_function_goes_with_its_last_use() -> None:
    before = "import tensorflow as tf\n\n\ndef setup():\n    import horovod.tensorflow as hvd\n    hvd.init()\n"
    after = "import tensorflow as tf\n\n\ndef setup():\n    pass\n"
    assert_migrates(DISTRIBUTED, before, after, facts=HOROVOD_REPO,
                    removed=[("NPU021", 6, 4, "migrated"), ("NPU025", 5, 4, "migrated")])


def test_a_guarded_import_stays_while_the_module_is_tested() -> None:
    source = '''\
import tensorflow as tf
try:
    import horovod.tensorflow as hvd
except ImportError:
    hvd = None

if hvd is not None:
    print("distributed")
'''
    assert_reports(DISTRIBUTED, source, facts=HOROVOD_REPO, findings=[("NPU025", 7, 3, "unmigrated")])


def test_an_f_string_that_uses_horovod_keeps_the_import() -> None:
    source = HVD + 'print(f"{hvd.mpi_threads_supported()}")\n'
    assert_reports(DISTRIBUTED, source, facts=HOROVOD_REPO, findings=[])


@pytest.mark.parametrize("facts, path, source", [
    (BOTH_REPO, "train.py", HVD + "x = 1\n"),  # both modes: nothing is rewritten
    (HOROVOD_REPO, "hvd_utils.py", "import horovod.tensorflow as hvd\nx = 1\n"),  # not a TF file
])
def test_imports_stay_where_the_pack_does_not_rewrite(facts, path: str, source: str) -> None:
    assert_reports(DISTRIBUTED, source, facts=facts, path=path, findings=[])


def test_a_horovod_only_file_is_reported() -> None:
    source = "import horovod.tensorflow as hvd\n\ndef average(x):\n    return hvd.allreduce(x)\n"
    assert_reports(RULES, source, facts=HOROVOD_REPO, path="hvd_utils.py",
                   findings=[("NPU025", 4, 11, "unmigrated")])


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nimport horovod.torch as hvd\nhvd.init()\n",
    "import tensorflow as tf\nimport horovod.torch as hvd\n",  # unused, but not TensorFlow's
    "import tensorflow as tf\nimport horovod\nprint(horovod.__version__)\n",
])
def test_horovod_for_other_frameworks_is_left_alone(source: str) -> None:
    assert_reports(DISTRIBUTED, source, facts=HOROVOD_REPO, findings=[])


def test_an_import_nothing_ever_used_stays_for_what_importing_does() -> None:
    """An op-loading import: removing it leaves the graph's Horovod ops unknown (the loop that
    retries loading the graph after importing them would never end)."""
    source = '''\
import tensorflow as tf


def _import_external_ops(message):
    if "horovod" in message.lower():
        logger.info("Importing horovod ...")
        import horovod.tensorflow  # noqa
        return
    logger.error("Unhandled error: " + message)


while True:
    try:
        tf.train.import_meta_graph(meta, clear_devices=True)
    except KeyError as e:
        _import_external_ops(e.args[0])
    else:
        break
'''
    findings = assert_reports(DISTRIBUTED, source, facts=HOROVOD_REPO, findings=[("NPU025", 7, 8, "unmigrated")])
    assert findings[0].message.startswith(npu025_horovod_other.IMPORTED_FOR_EFFECT + " (guide: ")


def test_an_unused_horovod_import_of_a_tf_file_stays() -> None:
    assert_reports(RULES, HVD + "x = 1\n", facts=HOROVOD_REPO, findings=[("NPU025", 2, 0, "unmigrated")])


@pytest.mark.parametrize("path, exports, reason", [
    ("dist/__init__.py", "", "this is a package's __init__.py, whose imports are its API"),
    ("dist/comm.py", '__all__ = ["allreduce", "average"]\n', "the module's __all__ exports them"),
    ("dist/comm.py", '__all__ = ["average"]\n__all__ += mpi_ops_all\n', "the module's __all__ exports them"),
])
def test_an_import_that_is_a_modules_api_stays(path: str, exports: str, reason: str) -> None:
    source = ("import tensorflow as tf\nfrom horovod.tensorflow import allreduce\n" + exports
              + "\n\ndef average(x):\n    return tf.reduce_mean(x)\n")
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, path=path,
                              findings=[("NPU025", 2, 0, "unmigrated")])
    assert findings[0].message.startswith(f"nothing here uses allreduce any more, but {reason}: it "
                                          "stays; remove it once nothing imports them from this module")


def test_an_import_that_all_does_not_list_goes() -> None:
    source = ('import tensorflow as tf\nfrom horovod.tensorflow import allreduce\n__all__ = ["average"]\n'
              "\n\ndef average(x):\n    return tf.reduce_mean(x)\n")
    assert_migrates(RULES, source, source.replace("from horovod.tensorflow import allreduce\n", ""),
                    facts=HOROVOD_REPO, path="dist/comm.py", removed=[("NPU025", 2, 0, "migrated")])
