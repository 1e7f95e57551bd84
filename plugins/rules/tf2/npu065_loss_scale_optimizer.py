"""NPU065 tf2-loss-scale-optimizer: Keras' LossScaleOptimizer becomes npu_device's.

In saturation mode an NPU overflow sets a global flag instead of producing Inf/NaN, so a TF 2.x
script's ``tf.keras.mixed_precision.LossScaleOptimizer`` must be
``npu.train.optimizer.NpuLossScaleOptimizer``, same arguments (TF 2.6 guide, "Replacing
LossScaleOptimizer"). The NPU class falls back to the base behaviour where no NPU context
exists, so the rewrite is safe on every device. The experimental class
(``tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, loss_scale)``) is, from TF 2.4,
TensorFlow's own thin subclass that passes ``'dynamic'`` as the Keras class's defaults and a
number as ``dynamic=False, initial_scale=n``: it is rewritten the same way when ``loss_scale``
is one of those literals, and reported otherwise.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Reference,
    Rule,
    add_keyword,
    find_argument,
    has_unpacking,
    hookimpl,
    replace_callee,
    tokens,
)
from npu_codemod.api._toolkit import (
    TF2,
    TF_NEUTRAL,
    device_name_at,
    remove_argument,
    tree_text,
    unparenthesised,
)

KERAS_CLASS = "tensorflow.keras.mixed_precision.LossScaleOptimizer"
#: Every spelling of the Keras class (``tensorflow.python.keras`` internals resolve to
#: ``tensorflow.keras``; the class's own module is named too), and standalone Keras 2's.
KERAS_CLASSES = tuple(f"{keras}.mixed_precision.{module}LossScaleOptimizer"
                      for keras in ("tensorflow.keras", "keras") for module in ("", "loss_scale_optimizer."))
#: The experimental class (TF 2.1-2.3; from TF 2.4 ``LossScaleOptimizerV1``, a subclass that
#: turns ``loss_scale`` into the Keras class's arguments): rewritten as TensorFlow turns it.
EXPERIMENTAL = tuple(f"{keras}.mixed_precision.{module}"
                     for keras in ("tensorflow.keras", "keras")
                     for module in ("experimental.LossScaleOptimizer",
                                    "experimental.loss_scale_optimizer.LossScaleOptimizer",
                                    "loss_scale_optimizer.LossScaleOptimizerV1"))
NPU_CLASSES = ("npu_device.train.optimizer.NpuLossScaleOptimizer",
               "npu_device.train.optimizer.npu_loss_scale_optimizer.NpuLossScaleOptimizer",
               "npu_device.train.optimizer.npu_loss_scale_optimizer.NpuExperimentalLossScaleOptimizer")
#: Other loss scaling: reported, as the guide says (validate with the Keras class first).
OTHER_SCALING = ("tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer",
                 "tensorflow.mixed_precision.MixedPrecisionLossScaleOptimizer")
GRAPH_REWRITE = ("tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
                 "tensorflow.mixed_precision.enable_mixed_precision_graph_rewrite")

REPLACED = ("replaced {spelled} by {npu}.train.optimizer.NpuLossScaleOptimizer (saturation-mode "
            "overflow detection on the NPU)")
IN_PLACE = "NpuLossScaleOptimizer is used"
DYNAMIC = " (loss_scale='dynamic' is the class's default dynamic scaling)"
FIXED = (" (loss_scale={value}: dynamic=False, initial_scale={value}, as TensorFlow's experimental "
         "class passes it)")
EXPERIMENTAL_KEPT = ("{spelled} with loss_scale={value}: write npu.train.optimizer."
                     "NpuLossScaleOptimizer(opt) for dynamic scaling, or (opt, dynamic=False, "
                     "initial_scale=<n>) for a fixed scale (the arguments TensorFlow turns it into)")
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
                "keras` internals, standalone Keras 2's `keras.mixed_precision`) becomes "
                "`npu.train.optimizer.NpuLossScaleOptimizer(...)` with the arguments as written; "
                "the experimental class with `loss_scale='dynamic'` or a number becomes it with "
                "the arguments TensorFlow gives it (none; `dynamic=False, initial_scale=n`); "
                "`import npu_device as npu` is added when the file does "
                "not bind it (`import npu_device` when `npu` is taken). A name that does not "
                "resolve to TensorFlow is untouched; `isinstance` and other non-call uses stay.")
    reports = ("A class deriving from the Keras class (derive from the NPU class); the experimental "
               "Keras class with another `loss_scale` (a variable, a `LossScale` object: the two "
               "forms to write); `MixedPrecisionLossScaleOptimizer` (switch to the "
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


        def configure(optimizer, loss_scale):
            return tf.keras.mixed_precision.experimental.LossScaleOptimizer(optimizer, loss_scale)
    """
    modules = ("tensorflow", "npu_device", "keras")
    calls = (*NPU_CLASSES, *OTHER_SCALING, *GRAPH_REWRITE)
    # calls are replaced; a subclass is reported, other uses (isinstance) left alone
    uses = (*KERAS_CLASSES, *EXPERIMENTAL)
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
        elif name in EXPERIMENTAL:
            self._experimental(reference, ctx)
        else:
            spelled, npu = reference.spelled, device_name_at(ctx, reference.node)
            replace_callee(reference, f"{npu}.train.optimizer.NpuLossScaleOptimizer")
            ctx.report(reference, "migrated", REPLACED.format(spelled=spelled, npu=npu))


    @staticmethod
    def _experimental(reference: Reference, ctx: FileContext) -> None:
        """``LossScaleOptimizer(opt, loss_scale)``: ``'dynamic'`` is the Keras class's default,
        a number a fixed scale (``dynamic=False, initial_scale=n``); other values (a
        ``LossScale`` object, a variable) are reported."""
        call = reference.call
        assert call is not None  # EXPERIMENTAL names are calls
        given = find_argument(call, "loss_scale", 1)
        value = unparenthesised(given.value) if given is not None else None
        kind = _loss_scale_kind(value) if value is not None and not has_unpacking(call) else None
        spelled = reference.spelled
        if given is None or kind is None:
            text = tree_text(given.value).strip() if given is not None else "?"
            ctx.report(reference, "unmigrated", EXPERIMENTAL_KEPT.format(spelled=spelled, value=text))
            return
        text = tree_text(given.value).strip()
        remove_argument(call, given)
        if kind == "fixed":
            add_keyword(call, "dynamic", "False")
            add_keyword(call, "initial_scale", text)
        npu = device_name_at(ctx, reference.node)
        replace_callee(reference, f"{npu}.train.optimizer.NpuLossScaleOptimizer")
        why = DYNAMIC if kind == "dynamic" else FIXED.format(value=text)
        ctx.report(reference, "migrated", REPLACED.format(spelled=spelled, npu=npu) + why)


def _loss_scale_kind(value: Base) -> Optional[str]:
    """``"dynamic"`` for the string ``'dynamic'``, ``"fixed"`` for a number (``2 ** 15``),
    else None."""
    if value.type == tokens.STRING and tree_text(value).strip()[1:-1] == "dynamic":
        return "dynamic"
    leaves = list(value.leaves()) if isinstance(value, Node) else [value]
    if any(leaf.type == tokens.NUMBER for leaf in leaves) \
            and all(leaf.type in _ARITHMETIC for leaf in leaves):
        return "fixed"
    return None


_ARITHMETIC = frozenset({tokens.NUMBER, tokens.DOUBLESTAR, tokens.STAR, tokens.PLUS, tokens.MINUS,
                         tokens.LPAR, tokens.RPAR})


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleOptimizer()]
