"""NPU032 loss-scale-manager: TensorFlow's loss scales become the NPU's loss-scale managers.

``FixedLossScale(s)`` -> ``FixedLossScaleManager(loss_scale=s)``; ``DynamicLossScale(...)`` ->
``ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...)``,
each argument renamed where it is (its code kept) and TensorFlow's defaults written for those
not given. Only a loss scale whose value goes to loss-scale optimizers alone (in their call, or
through the name bound to it or the file's function returning it) is rewritten, and one that
``MixedPrecisionLossScaleOptimizer`` takes only when NPU031 makes that optimizer the NPU's (see
``_loss_scales``): TensorFlow's optimizer cannot take an NPU manager, and a manager is no
``LossScale`` (``scale()``, ``enable_mixed_precision_graph_rewrite(opt, scale)`` would fail).
TF 1.x's ``tf.contrib.mixed_precision`` managers become npu_bridge's of the same name (a rename:
the parameters are the same), paired with contrib's ``LossScaleOptimizer`` the same way.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import NPU_INIT_IMPORT

from ._loss_scales import (
    CONTRIB_MANAGERS,
    LOSS_SCALES,
    MANAGERS,
    NPU_MANAGERS,
    NPU_OPTIMIZER,
    NPU_OPTIMIZERS,
    fed_optimizers,
    inline_optimizer,
    keywords_of,
    manager_plan,
    optimizer_plan,
    other_uses,
)

USES = "uses {manager}"
BY_HAND = (f"replace both by hand: {{manager}}({{keywords}}) for the loss scale and "
           f"{NPU_OPTIMIZER}(opt, loss_scale_manager) for the optimizer")
WITHOUT_NPU031 = ("{spelled} is the loss scale of {optimizer}{where}, which NPU031 migrates with "
                  f"it, but NPU031 is disabled: enable NPU031 (pack mixed-precision), or {BY_HAND}")
KEPT_BY_NPU031 = ("{spelled} is the loss scale of {optimizer}{where}, which NPU031 leaves as it "
                  "is (see its finding there): an NPU manager would break it; " + BY_HAND)
OTHER_USES = ("{spelled} stays TensorFlow's: its value is {uses} (not only the loss scale of a "
              "loss-scale optimizer), and an NPU loss-scale manager is no LossScale (it cannot be "
              "called, nor given to TensorFlow's mixed-precision APIs); where it scales the loss, "
              f"use {NPU_OPTIMIZER}(opt, loss_scale_manager={{manager}}({{keywords}})) instead")
#: A contrib manager is one already, but not the NPU's: where else it goes may want contrib's.
CONTRIB_OTHER_USES = ("{spelled} stays TensorFlow's: its value is {uses} (not only the "
                      "loss_scale_manager of a loss-scale optimizer that becomes "
                      f"{NPU_OPTIMIZER}): check that those uses take an NPU manager, then replace it "
                      "with {manager} (same arguments) by hand")


class LossScaleManager(Rule):
    id = "NPU032"
    name = "loss-scale-manager"
    pack = "mixed-precision"
    description = ("Replace tf.train.experimental.FixedLossScale / DynamicLossScale and "
                   "tf.contrib.mixed_precision's managers with FixedLossScaleManager / "
                   "ExponentialUpdateLossScaleManager.")
    guide_section = "混合精度: Loss Scale管理 (LossScaleManager)"
    guide_section_en = "Mixed precision: loss-scale managers (LossScaleManager)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("A loss scale that goes only to loss-scale optimizers "
                "(`MixedPrecisionLossScaleOptimizer` that NPU031 makes the NPU's, "
                "`NPULossScaleOptimizer`): `tf.train.experimental.FixedLossScale(s)` becomes "
                "`FixedLossScaleManager(loss_scale=s)`; `tf.train.experimental.DynamicLossScale("
                "initial_loss_scale, increment_period, multiplier)` becomes "
                "`ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., "
                "incr_ratio=...)`, positional or keyword, with TensorFlow's own defaults (`2**15`, "
                "`2000`, `2`) for the ones not given. Each argument's code stays as written. TF "
                "1.x's `tf.contrib.mixed_precision.FixedLossScaleManager(...)` / "
                "`ExponentialUpdateLossScaleManager(...)` (going to a contrib `LossScaleOptimizer` "
                "that NPU031 makes the NPU's) become npu_bridge's of the same name, the arguments "
                "as written: npu_bridge's take contrib's parameters.")
    reports = ("Loss scales built from unpacked arguments (`**kwargs`), or with arguments TensorFlow "
               "does not take; a loss scale whose value is used other than as the loss scale of "
               "a loss-scale optimizer (called as `scale()`, passed to "
               "`enable_mixed_precision_graph_rewrite` or anything else, never used): a manager "
               "is no `LossScale` (a contrib manager used so: those uses may want contrib's); a "
               "loss scale that goes (in the call, through a name bound to it, or "
               "returned by a function of the file) "
               "to a `MixedPrecisionLossScaleOptimizer` (or contrib `LossScaleOptimizer`) that "
               "stays TensorFlow's (NPU031 disabled, "
               "or reporting it): an NPU manager would break it.")
    example = """
        import tensorflow as tf

        fixed = tf.train.experimental.FixedLossScale(128)
        dynamic = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 16, multiplier=4)
        tuned = tf.train.experimental.DynamicLossScale(**FLAGS.loss_scale_args)
        logged = tf.train.experimental.DynamicLossScale()
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, fixed)
        opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale=dynamic)
        tuned_opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, tuned)
        tf.summary.scalar("loss_scale", logged())
    """
    example_with = ("NPU031",)
    _scope = "linked"
    _tokens = ("LossScale",)
    calls = (*LOSS_SCALES, *NPU_MANAGERS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        optimizer = inline_optimizer(reference, ctx)
        if optimizer is not None and "NPU031" in ctx.enabled_rules:
            return  # NPU031's, with the optimizer that takes it
        if reference.name in NPU_MANAGERS:
            ctx.report(reference, "migrated", USES.format(manager=reference.name.rpartition(".")[2]))
            return
        status, message, edit = manager_plan(reference)
        other = other_uses(reference, ctx) if optimizer is None and edit is not None else []
        if other:
            manager = MANAGERS[reference.name][0]
            template = CONTRIB_OTHER_USES if reference.name in CONTRIB_MANAGERS else OTHER_USES
            status, message, edit = "unmigrated", template.format(
                spelled=reference.spelled, uses=", ".join(other), manager=manager,
                keywords=keywords_of(manager)), None
        kept = _kept_optimizer(reference, optimizer, ctx) if edit is not None else None
        if kept is not None:
            status, message, edit = "unmigrated", kept, None
        if edit is not None:
            ctx.defer(edit)
            ctx.add_import(NPU_INIT_IMPORT)  # binds the managers
        ctx.report(reference, status, message)


def _kept_optimizer(reference: Reference, inline: Optional[Reference], ctx: FileContext) -> Optional[str]:
    """The message when the loss scale ``reference`` goes to a ``MixedPrecisionLossScaleOptimizer``
    that stays TensorFlow's (NPU031 disabled, or reporting it), which an NPU manager would
    break: written in its call (``inline``), or through a name bound to it; None otherwise."""
    if inline is not None:
        kept, where = ([inline] if inline.name not in NPU_OPTIMIZERS else []), ""
    else:
        kept = [optimizer for optimizer in fed_optimizers(ctx, reference)
                if "NPU031" not in ctx.enabled_rules or isinstance(optimizer_plan(optimizer, ctx), str)]
        where = f" at line {kept[0].line}" if kept else ""
    if not kept:
        return None
    manager = MANAGERS[reference.name][0]
    template = WITHOUT_NPU031 if "NPU031" not in ctx.enabled_rules else KEPT_BY_NPU031
    return template.format(spelled=reference.spelled, optimizer=kept[0].spelled, where=where,
                           manager=manager, keywords=keywords_of(manager))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleManager()]
