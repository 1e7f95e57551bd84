"""A rule on npu_codemod.api alone: calls matched by qualified name for every spelling."""

from npu_codemod.api import FileContext, Reference, Rule, replace_callee
from npu_codemod.testing import assert_migrates, assert_reports


class NpuRunConfig(Rule):
    id = "ACME001"
    name = "npu-run-config"
    description = "tf.estimator.RunConfig(...) -> NPURunConfig(...)"
    calls = ("tensorflow.estimator.RunConfig", "npu_bridge.estimator.npu.npu_config.NPURunConfig")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.name.startswith("npu_bridge."):
            return ctx.report(reference, "migrated", "uses NPURunConfig")
        replace_callee(reference, "NPURunConfig")
        ctx.add_import("from npu_bridge.estimator.npu.npu_config import NPURunConfig")
        ctx.report(reference, "migrated", "RunConfig -> NPURunConfig")


class HvdInit(Rule):
    id = "ACME002"
    name = "hvd-init"
    description = "report hvd.init()"
    modules = ("horovod",)
    calls = ("horovod.tensorflow.init",)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        ctx.report(reference, "unmigrated", "replace hvd.init() with the NPU collective setup")


IMP = "from npu_bridge.estimator.npu.npu_config import NPURunConfig\n"

def test_run_config_becomes_npu_run_config_for_every_tf_spelling():
    for header, spelled in [("import tensorflow as tf\n", "tf.estimator.RunConfig"),
                            ("import tensorflow.compat.v1 as tf\n", "tf.estimator.RunConfig"),
                            ("import tensorflow as tf\n", "tf.compat.v1.estimator.RunConfig"),
                            ("from tensorflow.estimator import RunConfig as RC\n", "RC"),
                            ("from tensorflow import estimator\n", "estimator.RunConfig")]:
        before = header + f"cfg = {spelled}(model_dir=d,\n    save_checkpoints_steps=10)  # keep\n"
        after = IMP + header + "cfg = NPURunConfig(model_dir=d,\n    save_checkpoints_steps=10)  # keep\n"
        assert_migrates(NpuRunConfig(), before, after, findings=[("ACME001", 2, 6, "migrated")])

def test_hvd_init_is_reported_in_files_that_import_only_horovod():
    src = "import horovod.tensorflow as hvd\n\nhvd.init()\nx = hvd.rank()\n"
    assert_reports(HvdInit, src, findings=[("ACME002", 3, 0, "unmigrated")])
    assert_reports(HvdInit, "from horovod.tensorflow import init\ninit()\n", findings=[("ACME002", 2, 0, "unmigrated")])


class ReportsName(Rule):
    id = "X001"
    name = "reports-name"
    description = "Reports the qualified name of each call."
    calls = ("tensorflow.estimator.RunConfig", "tensorflow.nn.dropout", "tensorflow.Session")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        ctx.report(reference, "unmigrated", reference.name)

def test_internal_tensorflow_modules_resolve_to_their_public_names():
    for src in ["from tensorflow.python.estimator.run_config import RunConfig\nRunConfig()\n",
                "from tensorflow.python.ops import nn_ops\nnn_ops.dropout(x, 0.5)\n",
                "from tensorflow.python.client import session as tf_session\ntf_session.Session()\n"]:
        assert_reports(ReportsName(), src, findings=[("X001", 2, 0, "unmigrated")])
