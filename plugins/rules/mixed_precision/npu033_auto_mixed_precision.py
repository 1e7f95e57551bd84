"""NPU033 auto-mixed-precision: TensorFlow's automatic mixed precision has no NPU form.

``tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)``, the
``tf.keras.mixed_precision`` policies, a session or RunConfig config's
``rewrite_options.auto_mixed_precision`` switched on (the graph rewrite's own option, an
assignment or a ``RewriterConfig(...)`` keyword) and TensorFlow's environment switch
(``os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"``, also through ``setdefault`` and
``os.putenv``, which NVIDIA's TF 1.x scripts use) are reported: on the NPU, mixed precision is
the session option ``precision_mode = "allow_mix_precision"``, which NPU007 writes (its
``precision_mode`` setting); the NPU ignores the variable, so an ``--amp`` run would silently
train at the NPU's default precision.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Reference,
    Rule,
    dotted_name,
    find_argument,
    hookimpl,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    ENVIRONMENT_NAMES,
    ENVIRONMENT_PATTERN,
    ENVIRONMENT_UPDATE_PATTERN,
    assigned_values,
    environment_setting,
    environment_updates,
    is_call_trailer,
    prefix_name,
    string_value,
    tree_text,
    unparenthesised,
)

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
OPTION = "auto_mixed_precision"
REWRITE_OPTION = ("rewrite_options.auto_mixed_precision = {value} is TensorFlow's automatic mixed "
                  "precision, which has no NPU equivalent: {npu}; remove the setting")
#: TensorFlow's environment variables that switch automatic mixed precision on.
ENV_SWITCHES = ("TF_ENABLE_AUTO_MIXED_PRECISION", "TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE")
ENV_SWITCH = ("the environment variable {name} = {value} switches on TensorFlow's automatic mixed "
              "precision, which the NPU ignores: {npu}; remove the setting")
#: Values of those variables that leave it off (TensorFlow reads them as booleans).
_ENV_OFF = ("0", "false")
#: ``RewriterConfig.Toggle`` values that leave the graph rewrite off: DEFAULT (0), OFF (2).
_OFF = ("DEFAULT", "OFF", "0", "2")


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
               "`disable_...`), every use of `tf.keras.mixed_precision` (`Policy`, "
               "`set_policy`, `LossScaleOptimizer`, ...), every "
               "`rewrite_options.auto_mixed_precision` of a session or RunConfig config set to "
               "anything but `OFF`/`DEFAULT` (an assignment, or a `RewriterConfig(...)` "
               "keyword) and every setting of TensorFlow's environment switch "
               "`TF_ENABLE_AUTO_MIXED_PRECISION` (or `..._GRAPH_REWRITE`) to anything but `0`/"
               "`false` (`os.environ[...] = ...`, `os.environ.setdefault(...)`, `os.putenv(...)`, "
               "`os.environ.update(...)` with a dict or keywords), "
               "which the NPU ignores: on the NPU, mixed precision is "
               "`precision_mode = \"allow_mix_precision\"`, NPU007's setting; remove the call and "
               "keep the optimizer (wrapped in `NPULossScaleOptimizer` when it needs loss scaling).")
    example = """
        import os

        import tensorflow as tf
        from tensorflow.keras.mixed_precision import experimental as mixed_precision

        optimizer = tf.train.AdamOptimizer(1e-3)
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
        mixed_precision.set_policy(mixed_precision.Policy("mixed_float16"))
        os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"
    """
    _scope = "linked"
    _tokens = ("mixed_precision", "AUTO_MIXED_PRECISION")
    calls = GRAPH_REWRITES
    uses = KERAS
    _site_names = (OPTION, *ENVIRONMENT_NAMES)
    pattern = f"""(
        expr_stmt< power< any* trailer< '.' '{OPTION}' > > '=' value=any >
      | argument< '{OPTION}' '=' value=any >
      | {ENVIRONMENT_PATTERN}
      | {ENVIRONMENT_UPDATE_PATTERN}
    )"""

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if "updated" in capture:
            for name, value in environment_updates(node, capture):
                _report_switch(node, name, value, ctx)
            return
        if "key" in capture:
            self._visit_environment(node, capture, ctx)
            return
        value = unparenthesised(capture["value"])
        if _switched_off(value) or not _of_rewrite_options(node, value):
            return
        message = REWRITE_OPTION.format(value=tree_text(value).strip(), npu=NPU_WAY)
        ctx.report(node, "unmigrated", message)

    def _visit_environment(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        """``os.environ[name] = value``, ``os.environ.setdefault(name, value)`` or
        ``os.putenv(name, value)`` with ``name`` TensorFlow's mixed-precision switch."""
        setting = environment_setting(node, capture)
        if setting is not None:
            _report_switch(node, *setting, ctx)

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


def _report_switch(node: Base, name: str, value: Base, ctx: FileContext) -> None:
    """Report the setting ``node`` of the variable ``name`` to ``value`` when it is TensorFlow's
    mixed-precision switch and ``value`` does not leave it off."""
    if name in ENV_SWITCHES and not _env_off(value):
        message = ENV_SWITCH.format(name=name, value=tree_text(value).strip(), npu=NPU_WAY)
        ctx.report(node, "unmigrated", message)


def _env_off(value: Base) -> bool:
    """Does ``value`` leave TensorFlow's switch off: ``"0"``, ``"false"``, ``0``, ``False``?"""
    text = string_value(value) if value.type == tokens.STRING else str(value).strip()
    return text is not None and text.strip().lower() in _ENV_OFF


def _switched_off(value: Base) -> bool:
    """Is ``value`` ``RewriterConfig.OFF``/``DEFAULT`` (any spelling) or their number?"""
    if value.type == tokens.NUMBER:
        return value.value in _OFF
    return (dotted_name(value) or "").rpartition(".")[2] in _OFF


def _of_rewrite_options(node: Base, value: Base) -> bool:
    """Is the setting ``node`` one of a session config's rewrite options: a keyword of
    ``RewriterConfig(...)``, or an assignment to ``<...>.rewrite_options.auto_mixed_precision``,
    to a name bound to such options, or of a ``RewriterConfig`` value?"""
    if node.type == symbols.argument:
        return _callee(node) == "RewriterConfig"
    target = node.children[0]
    receiver = prefix_name(target, len(target.children) - 1) or ""
    if receiver.endswith("rewrite_options") or "RewriterConfig" in tree_text(value):
        return True
    head = target.children[0]
    if len(target.children) != 2 or head.type != tokens.NAME:
        return False
    bound = assigned_values(head, head.value) or []
    return any(tree_text(one).strip().endswith("rewrite_options") or _called(one) == "RewriterConfig"
               for one in bound)


def _callee(argument: Base) -> Optional[str]:
    """The last name of the callee whose ``(...)`` holds the keyword ``argument``."""
    trailer = argument.parent
    if trailer is not None and trailer.type == symbols.arglist:
        trailer = trailer.parent
    power = trailer.parent if trailer is not None else None
    if power is None or power.type != symbols.power:
        return None
    return _called(power)


def _called(value: Base) -> Optional[str]:
    """The last name of the callee of the call ``value`` (``x.RewriterConfig(...)``), or None."""
    if value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return None
    callee = prefix_name(value, len(value.children) - 1)
    return callee.rpartition(".")[2] if callee else None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [AutoMixedPrecision()]
