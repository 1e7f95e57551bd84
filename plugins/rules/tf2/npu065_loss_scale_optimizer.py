"""NPU065 tf2-loss-scale-optimizer: Keras' LossScaleOptimizer becomes npu_device's.

In saturation mode an NPU overflow sets a global flag instead of producing Inf/NaN, so a TF 2.x
script's ``tf.keras.mixed_precision.LossScaleOptimizer`` must be
``npu.train.optimizer.NpuLossScaleOptimizer``, same arguments (TF 2.6 guide, "Replacing
LossScaleOptimizer"). The NPU class falls back to the base behaviour where no NPU context
exists, so the rewrite is safe on every device.
"""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, Rule, hookimpl, replace_callee
from npu_codemod.api._toolkit import TF2, TF_NEUTRAL, device_binding, device_import, device_name

KERAS_CLASS = "tensorflow.keras.mixed_precision.LossScaleOptimizer"
#: Every spelling of the Keras class (``tensorflow.python.keras`` internals resolve to
#: ``tensorflow.keras``; the class's own module is named too).
KERAS_CLASSES = (KERAS_CLASS,
                 "tensorflow.keras.mixed_precision.loss_scale_optimizer.LossScaleOptimizer")
NPU_CLASSES = ("npu_device.train.optimizer.NpuLossScaleOptimizer",
               "npu_device.train.optimizer.npu_loss_scale_optimizer.NpuLossScaleOptimizer",
               "npu_device.train.optimizer.npu_loss_scale_optimizer.NpuExperimentalLossScaleOptimizer")
#: Other loss scaling: reported, as the guide says (validate with the Keras class first).
OTHER_SCALING = ("tensorflow.keras.mixed_precision.experimental.LossScaleOptimizer",
                 "tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer",
                 "tensorflow.mixed_precision.MixedPrecisionLossScaleOptimizer")
GRAPH_REWRITE = ("tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
                 "tensorflow.mixed_precision.enable_mixed_precision_graph_rewrite")

REPLACED = ("replaced {spelled} by {npu}.train.optimizer.NpuLossScaleOptimizer (saturation-mode "
            "overflow detection on the NPU)")
IN_PLACE = "NpuLossScaleOptimizer is used"
OTHER = ("{spelled}: switch to tf.keras.mixed_precision.LossScaleOptimizer and validate on "
         "CPU/GPU first; then this rule replaces it")
SUBCLASS = ("class deriving from {spelled}: derive from npu.train.optimizer.NpuLossScaleOptimizer "
            "(import npu_device as npu)")
NO_PATH = "{spelled}: not supported on Ascend, no migration path: remove it"


class LossScaleOptimizer(Rule):
    id = "NPU065"
    name = "tf2-loss-scale-optimizer"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Replace Keras' LossScaleOptimizer by npu_device's NpuLossScaleOptimizer in TF 2.x code."
    guide_section = "替换LossScaleOptimizer"
    guide_section_en = "Replacing LossScaleOptimizer"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("Each call of `tf.keras.mixed_precision.LossScaleOptimizer` in any spelling "
                "(`keras.mixed_precision.…` after `from tensorflow import keras`, "
                "`mixed_precision.…`, a bare imported `LossScaleOptimizer`, `tensorflow.python."
                "keras` internals) becomes `npu.train.optimizer.NpuLossScaleOptimizer(...)` with "
                "the arguments as written; `import npu_device as npu` is added when the file does "
                "not bind it (`import npu_device` when `npu` is taken). A name that does not "
                "resolve to TensorFlow is untouched; `isinstance` and other non-call uses stay.")
    reports = ("A class deriving from the Keras class (derive from the NPU class); the experimental Keras class and `MixedPrecisionLossScaleOptimizer` (switch to the "
               "Keras class and validate on CPU/GPU first); "
               "`enable_mixed_precision_graph_rewrite` (not supported on Ascend).")
    example = """
        import tensorflow as tf
        from tensorflow.keras import mixed_precision

        mixed_precision.set_global_policy("mixed_float16")
        optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1),
                                                       dynamic_growth_steps=1000)
        legacy = tf.keras.mixed_precision.experimental.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.1), "dynamic")
    """
    modules = ("tensorflow", "npu_device")
    calls = (*NPU_CLASSES, *OTHER_SCALING, *GRAPH_REWRITE)
    uses = KERAS_CLASSES  # calls are replaced; a subclass is reported, other uses left alone
    _scope = "site"

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        name = reference.name
        if name in NPU_CLASSES:
            ctx.report(reference, "migrated", IN_PLACE)
        elif name in OTHER_SCALING:
            ctx.report(reference, "unmigrated", OTHER.format(spelled=reference.spelled))
        elif name in GRAPH_REWRITE:
            ctx.report(reference, "unmigrated", NO_PATH.format(spelled=reference.spelled))
        elif reference.call is None:
            if reference.site.base_class:
                ctx.report(reference, "unmigrated", SUBCLASS.format(spelled=reference.spelled))
        else:
            spelled, npu = reference.spelled, _device_name(ctx)
            replace_callee(reference, f"{npu}.train.optimizer.NpuLossScaleOptimizer")
            ctx.report(reference, "migrated", REPLACED.format(spelled=spelled, npu=npu))


def _device_name(ctx: FileContext) -> str:
    """The file's name for ``npu_device``, imported when the file does not bind it."""
    name = device_name(ctx)
    if device_binding(ctx) is None:
        ctx.add_import(device_import(name))
    return name


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleOptimizer()]
