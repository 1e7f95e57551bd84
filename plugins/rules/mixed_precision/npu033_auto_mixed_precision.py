"""NPU033 auto-mixed-precision: TensorFlow's automatic mixed precision has no NPU form.

``tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)`` and the
``tf.keras.mixed_precision`` policies are reported: on the NPU, mixed precision is the session
option ``precision_mode = "allow_mix_precision"``, which NPU007 writes (its ``precision_mode``
setting).
"""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, Rule, find_argument, hookimpl, tree_text

GRAPH_REWRITES = ("tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
                  "tensorflow.train.experimental.disable_mixed_precision_graph_rewrite")
#: ``tf.keras.mixed_precision``: TF 1.15's ``experimental`` names, and TF 2.4's.
KERAS = tuple(f"tensorflow.keras.mixed_precision.experimental.{name}" for name in (
    "Policy", "set_policy", "global_policy", "get_layer_policy", "LossScaleOptimizer")) + tuple(
    f"tensorflow.keras.mixed_precision.{name}" for name in (
        "Policy", "set_global_policy", "global_policy", "LossScaleOptimizer"))
NPU_WAY = ('on the NPU, mixed precision is precision_mode="allow_mix_precision" (NPU007\'s '
           'precision_mode setting: [tool.npu-codemod.rules.NPU007] precision_mode = '
           '"allow_mix_precision")')
GRAPH_REWRITE = ("{spelled} has no NPU equivalent: {npu}; remove the call and use {optimizer}, "
                 "wrapped in NPULossScaleOptimizer if it needs loss scaling")
DISABLE = "{spelled} has no NPU equivalent: {npu}; remove the call"
POLICY = "{spelled} has no NPU equivalent: {npu}; remove it"


class AutoMixedPrecision(Rule):
    id = "NPU033"
    name = "auto-mixed-precision"
    pack = "mixed-precision"
    description = ("Report TensorFlow's automatic mixed precision (the graph rewrite, Keras "
                   "policies): on the NPU it is precision_mode.")
    guide_section = "混合精度: 开启混合精度 (precision_mode)"
    guide_section_en = "Mixed precision: switching it on (precision_mode)"
    guide_url = Rule.catalog_url(id, name)
    reports = ("Every `tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)` (and "
               "`disable_...`) and every use of `tf.keras.mixed_precision` (`Policy`, "
               "`set_policy`, `LossScaleOptimizer`, ...): on the NPU, mixed precision is "
               "`precision_mode = \"allow_mix_precision\"`, NPU007's setting; remove the call and "
               "keep the optimizer (wrapped in `NPULossScaleOptimizer` when it needs loss scaling).")
    example = """
        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mixed_precision

        optimizer = tf.train.AdamOptimizer(1e-3)
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
        mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))
    """
    scope = "linked"
    tokens = ("mixed_precision",)
    calls = GRAPH_REWRITES
    uses = KERAS

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        spelled = reference.spelled
        if reference.name == GRAPH_REWRITES[0]:
            optimizer = find_argument(reference.call, "opt", 0)
            code = f"`{tree_text(optimizer.value).strip()}`" if optimizer else "the optimizer"
            message = GRAPH_REWRITE.format(spelled=spelled, npu=NPU_WAY, optimizer=code)
        elif reference.name == GRAPH_REWRITES[1]:
            message = DISABLE.format(spelled=spelled, npu=NPU_WAY)
        else:
            message = POLICY.format(spelled=spelled, npu=NPU_WAY)
        ctx.report(reference, "unmigrated", message)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [AutoMixedPrecision()]
