"""NPU031 loss-scale-optimizer: ``MixedPrecisionLossScaleOptimizer`` becomes ``NPULossScaleOptimizer``.

The loss scale it takes must then be an NPU loss-scale manager: a ``FixedLossScale`` /
``DynamicLossScale`` call (NPU032 rewrites it, here or where a name of the scope is bound to
it), a number or ``"dynamic"`` (rewritten here into the manager TensorFlow makes of them).
Anything else (a loss scale made in another module) is reported and the call left as it is.
"""

from __future__ import annotations

from typing import Callable, Optional

from npu_codemod.api import (
    NPU_INIT_IMPORT,
    Base,
    FileContext,
    Reference,
    Rule,
    assigned_values,
    distribution,
    distribution_facts,
    find_argument,
    has_unpacking,
    hookimpl,
    name_reference,
    parse_expression,
    rename_argument,
    replace_callee,
    set_keyword,
    tokens,
    tree_text,
)

from .npu032_loss_scale_manager import (
    DYNAMIC_DEFAULT,
    LOSS_SCALES,
    MANAGERS,
    NPU_MANAGERS,
    OPTIMIZERS,
    manager_plan,
)

OPTIMIZER = "tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer"
NPU_OPTIMIZER = "NPULossScaleOptimizer"
NPU_OPTIMIZERS = tuple(sorted(OPTIMIZERS - {OPTIMIZER}))
DISTRIBUTED = "is_distributed=True: the repository trains distributed"
REPLACED = f"replaced {{spelled}} with {NPU_OPTIMIZER}{{extra}}"
USES = f"uses {NPU_OPTIMIZER}"
ADDED_DISTRIBUTED = f"added {DISTRIBUTED}"
UNKNOWN = ("the loss scale {code} is not shown to be an NPU loss-scale manager: make it "
           "FixedLossScaleManager(loss_scale=...) or ExponentialUpdateLossScaleManager(...), then "
           f"replace {{spelled}} with {NPU_OPTIMIZER}(opt, loss_scale_manager)")
UNPACKED = (f"the loss scale may come in the unpacked arguments: replace {{spelled}} with "
            f"{NPU_OPTIMIZER}(opt, loss_scale_manager) by hand")


class LossScaleOptimizer(Rule):
    id = "NPU031"
    name = "loss-scale-optimizer"
    pack = "mixed-precision"
    description = ("Replace tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale) "
                   "with NPULossScaleOptimizer(opt, loss_scale_manager).")
    guide_section = "混合精度: Loss Scaling (NPULossScaleOptimizer)"
    guide_section_en = "Mixed precision: loss scaling (NPULossScaleOptimizer)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.train.experimental.MixedPrecisionLossScaleOptimizer(opt, loss_scale)` becomes "
                "`NPULossScaleOptimizer(opt, loss_scale_manager)`: the keyword `loss_scale=` "
                "becomes `loss_scale_manager=`, a number `n` becomes "
                "`FixedLossScaleManager(loss_scale=n)`, `\"dynamic\"` becomes "
                f"`{DYNAMIC_DEFAULT}` (TensorFlow's dynamic defaults), and a "
                "`FixedLossScale`/`DynamicLossScale` is NPU032's; in a distributed repository "
                "(Horovod or a `tf.distribute` strategy, in any file) it also gets "
                "`is_distributed=True`.")
    reports = ("A loss scale not shown to be one of those (a name bound elsewhere, a parameter, "
               "another string): make it an NPU loss-scale manager first; arguments unpacked "
               "with `*`/`**`.")
    example = """
        import tensorflow as tf


        def build_train_op(loss, learning_rate, loss_scale):
            optimizer = tf.train.AdamOptimizer(learning_rate)
            optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, "dynamic")
            fine_tune = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
                tf.train.GradientDescentOptimizer(1e-5), loss_scale=loss_scale)
            return optimizer.minimize(loss), fine_tune.minimize(loss)
    """
    scope = "linked"
    site_names = ("LossScaleOptimizer",)
    tokens = ("LossScaleOptimizer",)
    calls = (OPTIMIZER, *NPU_OPTIMIZERS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        call = reference.call
        distributed = distribution(ctx).distributed
        if reference.name in NPU_OPTIMIZERS:
            if distributed and find_argument(call, "is_distributed", 2) is None:
                ctx.defer(lambda: set_keyword(call, "is_distributed", "True"))
                ctx.report(reference, "migrated", ADDED_DISTRIBUTED)
            else:
                ctx.report(reference, "migrated", USES)
            return
        spelled = reference.spelled
        scale = find_argument(call, "loss_scale", 1)
        if scale is None:
            ctx.report(reference, "unmigrated", UNPACKED.format(spelled=spelled) if has_unpacking(call)
                       else UNKNOWN.format(code="(none given)", spelled=spelled))
            return
        plan = _loss_scale_plan(scale.value, ctx)
        if isinstance(plan, str):
            ctx.report(reference, "unmigrated", plan.format(spelled=spelled))
            return
        edit, done = plan

        def rewrite() -> None:
            replace_callee(reference, NPU_OPTIMIZER)
            if scale.keyword is not None:
                rename_argument(scale, "loss_scale_manager")
            if edit is not None:
                edit()
            if distributed:
                set_keyword(call, "is_distributed", "True")

        ctx.defer(rewrite)
        ctx.add_import(NPU_INIT_IMPORT)  # binds NPULossScaleOptimizer and the managers
        ctx.report(reference, "migrated", REPLACED.format(
            spelled=spelled, extra=done + (f" ({DISTRIBUTED})" if distributed else "")))


def _loss_scale_plan(value: Base, ctx: FileContext) -> "tuple[Optional[Callable[[], None]], str] | str":
    """What becomes of the loss scale ``value`` given to the optimizer: (the edit that makes it
    an NPU manager or None when it is one, or NPU032 makes the one a name is bound to; what
    the message adds), or the message of an ``unmigrated`` finding."""
    code = tree_text(value).strip()
    made = None
    if value.type == tokens.NUMBER:
        made = f"FixedLossScaleManager(loss_scale={value.value})"
    elif value.type == tokens.STRING and value.value.strip("\"'") == "dynamic":
        made = DYNAMIC_DEFAULT
    if made is not None:
        return (lambda: _replace(value, made)), f" and its loss scale {code} with {made.partition('(')[0]}"
    if value.type == tokens.NAME:
        values = assigned_values(value, value.value)
        if values and all(_loss_scale(bound, ctx) is not None for bound in values):
            return None, ""
    found = _loss_scale(value, ctx)
    if found is None:
        return UNKNOWN.replace("{code}", code)
    if found.name in NPU_MANAGERS:
        return None, ""
    status, message, edit = manager_plan(found)
    if edit is None:
        return message
    return edit, f" and its loss scale with {MANAGERS[found.name][0]}"


def _loss_scale(value: Base, ctx: FileContext) -> Optional[Reference]:
    """The call of ``FixedLossScale``/``DynamicLossScale`` or of an NPU manager ``value`` is."""
    found = name_reference(value, [ctx.tf, ctx.names("npu_bridge")], LOSS_SCALES | NPU_MANAGERS)
    if found is None or found.call is None or found.end + 1 != len(value.children):
        return None
    return found


def _replace(value: Base, code: str) -> None:
    new = parse_expression(code)
    new.prefix = value.prefix
    value.replace(new)


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    """Whether the repository trains distributed (Horovod, a tf.distribute strategy)."""
    return distribution_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleOptimizer()]
