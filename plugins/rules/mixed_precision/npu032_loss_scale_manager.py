"""NPU032 loss-scale-manager: TensorFlow's loss scales become the NPU's loss-scale managers.

``FixedLossScale(s)`` -> ``FixedLossScaleManager(loss_scale=s)``; ``DynamicLossScale(...)`` ->
``ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...)``,
each argument renamed where it is (its code kept) and TensorFlow's defaults written for those
not given.
"""

from __future__ import annotations

from typing import Callable, Optional

from npu_codemod.api import (
    NPU_INIT_IMPORT,
    FileContext,
    Reference,
    Rule,
    Status,
    arguments,
    find_argument,
    has_unpacking,
    hookimpl,
    is_call_trailer,
    name_reference,
    rename_argument,
    replace_callee,
    set_keyword,
    symbols,
)

FIXED = ("tensorflow.train.experimental.FixedLossScale",
         "tensorflow.mixed_precision.experimental.FixedLossScale")
DYNAMIC = ("tensorflow.train.experimental.DynamicLossScale",
           "tensorflow.mixed_precision.experimental.DynamicLossScale")
LOSS_SCALES = frozenset({*FIXED, *DYNAMIC})
NPU_MANAGERS = frozenset(f"{module}.{name}" for module in (
    "npu_bridge.npu_init", "npu_bridge.estimator.npu.npu_loss_scale_manager")
    for name in ("FixedLossScaleManager", "ExponentialUpdateLossScaleManager"))
#: The NPU manager of each loss scale: its name, and (TF parameter, NPU keyword, TF default)
#: for each parameter in TensorFlow's order.
MANAGERS = {
    **dict.fromkeys(FIXED, ("FixedLossScaleManager", (("loss_scale_value", "loss_scale", None),))),
    **dict.fromkeys(DYNAMIC, ("ExponentialUpdateLossScaleManager", (
        ("initial_loss_scale", "init_loss_scale", "2**15"),
        ("increment_period", "incr_every_n_steps", "2000"),
        ("multiplier", "incr_ratio", "2")))),
}
#: The loss-scale optimizers whose loss scale NPU031 migrates with them.
OPTIMIZERS = frozenset({"tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer",
                        "npu_bridge.npu_init.NPULossScaleOptimizer",
                        "npu_bridge.estimator.npu.npu_loss_scale_optimizer.NPULossScaleOptimizer"})
#: What TensorFlow's ``"dynamic"`` loss scale is, as an NPU manager.
DYNAMIC_DEFAULT = "ExponentialUpdateLossScaleManager(init_loss_scale=2**15, incr_every_n_steps=2000, incr_ratio=2)"

REPLACED = "replaced {spelled} with {manager}{defaults}"
DEFAULTS = " (TensorFlow's defaults for {names})"
USES = "uses {manager}"
UNPACKED = "the arguments are unpacked: replace {spelled} with {manager}({keywords}) by hand"
UNKNOWN = "{spelled} takes no {argument}: replace it with {manager}({keywords}) by hand"


class LossScaleManager(Rule):
    id = "NPU032"
    name = "loss-scale-manager"
    pack = "mixed-precision"
    description = ("Replace tf.train.experimental.FixedLossScale / DynamicLossScale with "
                   "FixedLossScaleManager / ExponentialUpdateLossScaleManager.")
    guide_section = "混合精度: Loss Scale管理 (LossScaleManager)"
    guide_section_en = "Mixed precision: loss-scale managers (LossScaleManager)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.train.experimental.FixedLossScale(s)` becomes "
                "`FixedLossScaleManager(loss_scale=s)`; `tf.train.experimental.DynamicLossScale("
                "initial_loss_scale, increment_period, multiplier)` becomes "
                "`ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., "
                "incr_ratio=...)`, positional or keyword, with TensorFlow's own defaults (`2**15`, "
                "`2000`, `2`) for the ones not given. Each argument's code stays as written.")
    reports = "Loss scales built from unpacked arguments (`**kwargs`), or with arguments TensorFlow does not take."
    example = """
        import tensorflow as tf

        fixed = tf.train.experimental.FixedLossScale(128)
        dynamic = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 16, multiplier=4)
        tuned = tf.train.experimental.DynamicLossScale(**FLAGS.loss_scale_args)
    """
    scope = "linked"
    tokens = ("LossScale",)
    calls = (*LOSS_SCALES, *NPU_MANAGERS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if optimizer_argument(reference, ctx):
            return  # NPU031's, with the optimizer that takes it
        if reference.name in NPU_MANAGERS:
            ctx.report(reference, "migrated", USES.format(manager=reference.name.rpartition(".")[2]))
            return
        status, message, edit = manager_plan(reference)
        if edit is not None:
            ctx.defer(edit)
            ctx.add_import(NPU_INIT_IMPORT)  # binds the managers
        ctx.report(reference, status, message)


def manager_plan(reference: Reference) -> tuple[Status, str, Optional[Callable[[], None]]]:
    """What becomes of one ``FixedLossScale``/``DynamicLossScale`` call: the finding's status
    and message, and the edit that makes it the NPU manager (None: it is reported)."""
    manager, parameters = MANAGERS[reference.name]
    spelled = reference.spelled
    keywords = ", ".join(f"{npu}=..." for _, npu, _ in parameters)
    call = reference.call
    if has_unpacking(call):
        return "unmigrated", UNPACKED.format(spelled=spelled, manager=manager, keywords=keywords), None
    names = [tf for tf, _, _ in parameters]
    by_name = {}
    for index, argument in enumerate(arguments(call)):
        name = argument.keyword if argument.keyword is not None else \
            (names[index] if index < len(names) else None)
        if name not in names:
            argument_name = argument.keyword or f"argument {index + 1}"
            return "unmigrated", UNKNOWN.format(spelled=spelled, argument=argument_name,
                                                manager=manager, keywords=keywords), None
        by_name[name] = argument
    missing = [(npu, default) for tf, npu, default in parameters if tf not in by_name and default]

    def rewrite() -> None:
        replace_callee(reference, manager)
        for tf, npu, _ in parameters:
            if tf in by_name:
                rename_argument(by_name[tf], npu)
        for npu, default in missing:
            set_keyword(call, npu, default)

    defaults = DEFAULTS.format(names=", ".join(npu for npu, _ in missing)) if missing else ""
    return "migrated", REPLACED.format(spelled=spelled, manager=manager, defaults=defaults), rewrite


def optimizer_argument(reference: Reference, ctx: FileContext) -> bool:
    """Is the loss scale of ``reference`` the ``loss_scale`` argument of a loss-scale optimizer
    (TensorFlow's or the NPU's), which NPU031 migrates with it?"""
    node = reference.node
    argument = node.parent if node.parent is not None and node.parent.type == symbols.argument else node
    holder = argument.parent
    if holder is not None and holder.type == symbols.arglist:
        holder = holder.parent
    if holder is None or not is_call_trailer(holder) or holder.parent is None:
        return False
    optimizer = name_reference(holder.parent, [ctx.tf, ctx.names("npu_bridge")], OPTIMIZERS)
    if optimizer is None or optimizer.call is not holder:
        return False
    given = find_argument(holder, "loss_scale", 1) or find_argument(holder, "loss_scale_manager", 1)
    return given is not None and given.value is node


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LossScaleManager()]
