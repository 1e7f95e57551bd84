"""NPU054 custom-op-library: a custom operator library's CUDA kernels do not run on the NPU.

``tf.load_op_library(path)`` loads a ``.so`` built with ``nvcc`` (StyleGAN2's
``fused_bias_act``, ``upfirdn_2d``), which registers CUDA kernels. Ascend's list marks
``tf.load_op_library`` supported, and loading works: the ops it registers have no NPU kernel
unless the library was built for the NPU, so the audit says nothing. Reported, never rewritten:
the op's reference implementation, or the op ported to the NPU, is the user's choice.
"""

from __future__ import annotations

from npu_codemod.api import TF1_CODE, FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import TF2

LOAD_OP_LIBRARY = ("tensorflow.load_op_library", "tensorflow.python.framework.load_library.load_op_library")
MESSAGE = ("{spelled}(...) loads a custom operator library: CUDA kernels it registers do not run "
           "on the NPU: use the op's reference (TensorFlow) implementation, or port the op to the "
           "NPU (a TBE/AscendC custom operator)")


class CustomOpLibrary(Rule):
    id = "NPU054"
    name = "custom-op-library"
    pack = "xla-gpu"
    file_kinds = TF1_CODE | {TF2}
    description = "Report custom operator libraries, whose CUDA kernels do not run on the NPU."
    guide_section = "自定义算子开发"
    guide_section_en = "Custom operator development"
    guide_url = Rule.catalog_url(id, name)
    reports = ("`tf.load_op_library(...)`: a custom operator library's CUDA kernels do not run on "
               "the NPU; use the op's reference implementation or port the op.")
    example = """
        import os

        import tensorflow as tf

        fused = tf.load_op_library(os.path.join(os.path.dirname(__file__), "fused_bias_act.so"))
    """
    _tokens = ("load_op_library",)
    calls = LOAD_OP_LIBRARY

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.call is not None:
            ctx.report(reference, "unmigrated", MESSAGE.format(spelled=reference.spelled))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [CustomOpLibrary()]
