"""NPU053 nccl-collectives: NCCL's collectives have no NPU kernel.

Hand-written multi-GPU towers sum their gradients with NCCL (``tf.contrib.nccl.all_sum``,
``nccl_ops.all_sum``, ``tf.raw_ops.NcclAllReduce``: StyleGAN's ``optimizer.py``). Ascend's
support list does not name these ops (``unknown`` to the audit, so it says nothing), and the
NPU's collectives are HCCL's. Reported, never rewritten: the towers become the NPU's
collectives or one device per process with the distributed pack, a design choice.
"""

from __future__ import annotations

from npu_codemod.api import TF1_CODE, FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import TF2

#: NCCL's collectives, as TensorFlow 1.x exports them and through the module defining them.
NCCL_OPS = ("all_sum", "all_prod", "all_min", "all_max", "reduce_sum", "broadcast")
NCCL = tuple(f"{module}.{op}" for module in ("tensorflow.contrib.nccl", "tensorflow.python.ops.nccl_ops")
             for op in NCCL_OPS) + tuple(f"tensorflow.raw_ops.{op}" for op in (
                 "NcclAllReduce", "NcclReduce", "NcclBroadcast"))
MESSAGE = ("{spelled}(...): NCCL collectives have no NPU kernel: sum the towers' gradients with "
           "the NPU's collectives (HCCL: `from npu_bridge.hccl import hccl_ops`, "
           "`hccl_ops.allreduce(grad, \"sum\")`), or train with one device per process and the "
           "distributed pack")


class NcclCollectives(Rule):
    id = "NPU053"
    name = "nccl-collectives"
    pack = "xla-gpu"
    file_kinds = TF1_CODE | {TF2}
    description = "Report NCCL collectives, which have no NPU kernel."
    guide_section = "分布式训练脚本迁移"
    guide_section_en = "Migrating distributed training scripts"
    guide_url = Rule.catalog_url(id, name)
    reports = ("NCCL collectives (`tf.contrib.nccl.all_sum` and the other `nccl` ops, through "
               "`tensorflow.python.ops.nccl_ops` too, `tf.raw_ops.NcclAllReduce`): no NPU kernel; "
               "use HCCL's `hccl_ops.allreduce` or one device per process with the distributed pack.")
    example = """
        import tensorflow as tf
        from tensorflow.contrib import nccl


        def sum_towers(tower_grads):
            return [nccl.all_sum(grads) for grads in zip(*tower_grads)]
    """
    _tokens = ("nccl", "Nccl")
    calls = NCCL

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.call is not None:
            ctx.report(reference, "unmigrated", MESSAGE.format(spelled=reference.spelled))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [NcclCollectives()]
