"""NPU031 loss-scale-optimizer: ``MixedPrecisionLossScaleOptimizer`` becomes ``NPULossScaleOptimizer``.

So does TF 1.x's ``tf.contrib.mixed_precision.LossScaleOptimizer(opt, loss_scale_manager)``,
which takes what the NPU's takes, when its manager is contrib's (becoming npu_bridge's with it,
or through NPU032) or the NPU's already.

The loss scale it takes must then be an NPU loss-scale manager: a ``FixedLossScale`` /
``DynamicLossScale`` call or a number or ``"dynamic"`` written in the call (rewritten here,
with the optimizer), or a name of the scope bound to such calls only, or a call of a function
of the file that returns only such calls (NPU032 rewrites those; with NPU032 disabled the
optimizer is reported). Anything else (a loss scale made in another module) is reported and
the call left as it is; see ``_loss_scales``.
"""

from __future__ import annotations

from typing import Callable, Optional

from npu_codemod.api import (
    FileContext,
    Reference,
    Rule,
    find_argument,
    hookimpl,
    rename_argument,
    replace_callee,
    set_keyword,
)
from npu_codemod.api._toolkit import NPU_INIT_IMPORT, distribution, distribution_facts

from ._loss_scales import (
    CONTRIB_OPTIMIZER,
    DYNAMIC_DEFAULT,
    NPU_OPTIMIZER,
    NPU_OPTIMIZERS,
    OPTIMIZER,
    optimizer_plan,
)

DISTRIBUTED = "is_distributed=True: the repository trains distributed"
REPLACED = f"replaced {{spelled}} with {NPU_OPTIMIZER}{{extra}}"
USES = f"uses {NPU_OPTIMIZER}"
ADDED_DISTRIBUTED = f"added {DISTRIBUTED}"


class LossScaleOptimizer(Rule):
    id = "NPU031"
    name = "loss-scale-optimizer"
    pack = "mixed-precision"
    description = ("Replace tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale) "
                   "and tf.contrib.mixed_precision.LossScaleOptimizer(opt, loss_scale_manager) "
                   "with NPULossScaleOptimizer(opt, loss_scale_manager).")
    guide_section = "混合精度: Loss Scaling (NPULossScaleOptimizer)"
    guide_section_en = "Mixed precision: loss scaling (NPULossScaleOptimizer)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale)` becomes "
                "`NPULossScaleOptimizer(opt, loss_scale_manager)`: the keyword `loss_scale=` "
                "becomes `loss_scale_manager=`, a number `n` becomes "
                "`FixedLossScaleManager(loss_scale=n)`, `\"dynamic\"` becomes "
                f"`{DYNAMIC_DEFAULT}` (TensorFlow's dynamic defaults), a "
                "`FixedLossScale`/`DynamicLossScale` written in the call becomes its manager as "
                "NPU032 writes it, and a name bound to one, or a call of a function of the file "
                "that returns one (`loss_scale()`), is left to NPU032; in a distributed "
                "repository (Horovod or a `tf.distribute` strategy, in any file) it also gets "
                "`is_distributed=True`. An `NPULossScaleOptimizer` given a TensorFlow loss scale "
                "in its call gets the manager too. TF 1.x's "
                "`tf.contrib.mixed_precision.LossScaleOptimizer(opt, loss_scale_manager)` becomes "
                "`NPULossScaleOptimizer(opt, loss_scale_manager)` (arguments kept, "
                "`is_distributed=True` as above) when its manager is contrib's "
                "`FixedLossScaleManager`/`ExponentialUpdateLossScaleManager`, written in the call "
                "(renamed here to npu_bridge's, which takes the same arguments) or left to NPU032 "
                "as above, or npu_bridge's already.")
    reports = ("A loss scale (or contrib manager) not shown to be one of those (a name bound "
               "elsewhere, a parameter, "
               "another string): make it an NPU loss-scale manager first; a name bound to a "
               "TensorFlow loss scale while NPU032 is disabled (enable NPU032 or make it a "
               "manager by hand); arguments unpacked with `*`/`**`.")
    example = """
        import tensorflow as tf


        def build_train_op(loss, learning_rate, loss_scale):
            optimizer = tf.train.AdamOptimizer(learning_rate)
            optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, "dynamic")
            fine_tune = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
                tf.train.GradientDescentOptimizer(1e-5), loss_scale=loss_scale)
            return optimizer.minimize(loss), fine_tune.minimize(loss)
    """
    _scope = "linked"
    _site_names = ("LossScaleOptimizer",)
    _tokens = ("LossScaleOptimizer",)
    calls = (OPTIMIZER, CONTRIB_OPTIMIZER, *NPU_OPTIMIZERS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        plan = optimizer_plan(reference, ctx)
        if isinstance(plan, str):
            ctx.report(reference, "unmigrated", plan)
            return
        edit, done = plan
        call = reference.call
        distributed = distribution(ctx).distributed
        if reference.name in NPU_OPTIMIZERS:
            self._npu_optimizer(reference, ctx, edit, done,
                                distributed and find_argument(call, "is_distributed", 2) is None)
            return
        scale = find_argument(call, "loss_scale", 1) if reference.name == OPTIMIZER else None  # contrib's: a manager

        def rewrite() -> None:
            replace_callee(reference, NPU_OPTIMIZER)
            if scale is not None and scale.keyword is not None:
                rename_argument(scale, "loss_scale_manager")
            if edit is not None:
                edit()
            if distributed:
                set_keyword(call, "is_distributed", "True")

        ctx.defer(rewrite)
        ctx.add_import(NPU_INIT_IMPORT)  # binds NPULossScaleOptimizer and the managers
        ctx.report(reference, "migrated", REPLACED.format(
            spelled=reference.spelled, extra=done + (f" ({DISTRIBUTED})" if distributed else "")))

    @staticmethod
    def _npu_optimizer(reference: Reference, ctx: FileContext, edit: Optional[Callable[[], None]],
                       done: str, distributed: bool) -> None:
        """An ``NPULossScaleOptimizer`` already: its loss scale written in the call becomes a
        manager (``edit``), and it gets ``is_distributed=True`` when it lacks it in a
        distributed repository."""
        if edit is None and not distributed:
            ctx.report(reference, "migrated", USES)
            return

        def rewrite() -> None:
            if edit is not None:
                edit()
            if distributed:
                set_keyword(reference.call, "is_distributed", "True")

        ctx.defer(rewrite)
        ctx.add_import(NPU_INIT_IMPORT)  # binds the managers
        replaced = f"replaced the loss scale of {reference.spelled}{done.partition(' loss scale')[2]}" \
            if edit is not None else ""
        ctx.report(reference, "migrated", " and ".join(
            part for part in (replaced, ADDED_DISTRIBUTED if distributed else "") if part))


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    """Whether the repository trains distributed (Horovod, a tf.distribute strategy)."""
    return distribution_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleOptimizer()]
