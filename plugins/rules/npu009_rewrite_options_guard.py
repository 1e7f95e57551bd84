"""NPU009 rewrite-options-guard: graph rewrite options the NPU needs on, off or untouched.

Checks every setting of a session config's ``rewrite_options``: attribute assignments
(``config.graph_options.rewrite_options.X = v``, also through a name bound to the rewrite
options) and keywords of ``RewriterConfig(...)`` constructors.
"""

from __future__ import annotations

from typing import Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.rule import Capture, FileContext, Rule
from npu_codemod.codemods.session_config import (
    MUST_BE_OFF,
    argument_callee,
    callee_name,
    code,
    config_objects,
    ensure_rewriter_config,
)
from npu_codemod.codemods.snippets import parse_expression
from npu_codemod.codemods.statements import child_index
from npu_codemod.codemods.tfnames import dotted_name, is_call_trailer, prefix_name
from npu_codemod.codemods.walk import small_statements
from npu_codemod.plugins.hookspecs import hookimpl

MUST_STAY_ON = ("function_optimization", "constant_folding", "shape_optimization",
                "arithmetic_optimization", "loop_optimization", "dependency_optimization",
                "layout_optimizer")
PRUNING = "disable_model_pruning"
META = "disable_meta_optimizer"
OPTIONS = (*MUST_STAY_ON, *MUST_BE_OFF, PRUNING, META)
COPIES = ("CopyFrom", "MergeFrom", "MergeFromString", "ParseFromString")
_OPTIONS = "|".join(f"'{option}'" for option in OPTIONS)
_COPIES = "|".join(f"'{method}'" for method in COPIES)
OFF_VALUE = 2  # RewriterConfig.OFF as a number
NO_GUARANTEE = ("the NPU optimizer cannot be guaranteed: after this line make sure the NpuOptimizer "
                "custom optimizer is added, remapping and memory_optimization are RewriterConfig.OFF, "
                "disable_model_pruning is False and no optimizer of the guide is switched off")


class RewriteOptionsGuard(Rule):
    id = "NPU009"
    name = "rewrite-options-guard"
    description = "Keep the graph rewrite options the NPU needs: some on, remapping/memory_optimization off."
    guide_section = "创建session并初始化资源 (默认关闭/开启的配置)"
    guide_section_en = ("Creating the session and initializing resources: options off or on "
                        "by default")
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("In any session config: `disable_model_pruning` set to a true value becomes "
                "`False`; `function_optimization`, `constant_folding`, `shape_optimization`, "
                "`arithmetic_optimization`, `loop_optimization`, `dependency_optimization` or "
                "`layout_optimizer` set to `RewriterConfig.OFF` becomes `RewriterConfig.ON`; "
                "`remapping` or `memory_optimization` set to anything but `OFF` becomes "
                "`RewriterConfig.OFF`.")
    reports = ("`disable_meta_optimizer = True` (the NpuOptimizer would not run), options copied "
               "in from elsewhere (`rewrite_options.CopyFrom(...)`, `config.MergeFrom(...)`, "
               "...), and values of those options that are not literals.")
    example = """
        import tensorflow as tf
        from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

        config = tf.ConfigProto()
        rewrite_options = config.graph_options.rewrite_options
        rewrite_options.layout_optimizer = RewriterConfig.OFF
        rewrite_options.memory_optimization = RewriterConfig.ON
        rewrite_options.disable_meta_optimizer = True
    """
    tokens = (*OPTIONS, *COPIES)
    pattern = f"""(
        expr_stmt< power< any* trailer< '.' option=({_OPTIONS}) > > '=' value=any >
      | argument< option=({_OPTIONS}) '=' value=any >
      | trailer< '.' method=({_COPIES}) >
    )"""

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if "method" in capture:
            self._copy(node, ctx)
            return
        option = _leaf(capture["option"]).value
        value = capture["value"]
        if node.type == syms.argument:
            if argument_callee(node) != "RewriterConfig":
                return
        elif not _sets_rewrite_options(node.children[0], value, ctx):
            return
        if option in MUST_STAY_ON:
            _stay_on(node, option, value, ctx)
        elif option in MUST_BE_OFF:
            if not _in_npu_block(node):
                _must_be_off(node, option, value, ctx)
        elif option == PRUNING:
            _pruning(node, value, ctx)
        elif _truth(value) is not False:
            ctx.report(node, "unmigrated", f"remove {META}={code(value)}: with the meta optimizer "
                       "disabled the NpuOptimizer custom optimizer does not run")

    @staticmethod
    def _copy(node: pytree.Base, ctx: FileContext) -> None:
        power = node.parent
        if power is None or not is_call_trailer(node.next_sibling):
            return
        receiver = prefix_name(power, child_index(node))
        if receiver is None:
            return
        if receiver.endswith(("rewrite_options", "graph_options")) \
                or receiver in config_objects(ctx) | _rewrite_option_names(ctx):
            method = node.children[1].value
            ctx.report(power, "unmigrated", f"{receiver}.{method}(...) copies session options in "
                       f"from elsewhere, so {NO_GUARANTEE}")


def _stay_on(node: pytree.Base, option: str, value: pytree.Base, ctx: FileContext) -> None:
    member = _member(value)
    if member == "OFF":
        _set_member(value, "ON", ctx)
        ctx.report(node, "migrated", f"switched {option} back to RewriterConfig.ON: it must stay on for the NPU")
    elif member is None:
        ctx.report(node, "unmigrated", f"{option} must stay on for the NPU: make sure "
                   f"{code(value)} is never RewriterConfig.OFF")
    else:
        ctx.report(node, "migrated", f"{option} is not switched off")


def _in_npu_block(node: pytree.Base) -> bool:
    """Is this assignment one of the guide's NpuOptimizer lines (NPU007's, reported there)?

    Leaving them to NPU007 keeps a second run's findings the same as the first run's.
    """
    statement = node.parent
    for _ in range(len(MUST_BE_OFF) + 1):
        statement = statement.prev_sibling if statement is not None else None
        if statement is None:
            return False
        if "".join(code(statement).split()).endswith('.name="NpuOptimizer"'):
            return True
    return False


def _must_be_off(node: pytree.Base, option: str, value: pytree.Base, ctx: FileContext) -> None:
    if _member(value) == "OFF":
        ctx.report(node, "migrated", f"{option} is RewriterConfig.OFF")
        return
    was = code(value)
    _set_member(value, "OFF", ctx)
    ctx.report(node, "migrated", f"set {option} to RewriterConfig.OFF (was {was}): it must be off for the NPU")


def _pruning(node: pytree.Base, value: pytree.Base, ctx: FileContext) -> None:
    truth = _truth(value)
    if truth is False:
        ctx.report(node, "migrated", f"{PRUNING} is off")
    elif truth:
        value.replace(pytree.Leaf(token.NAME, "False", prefix=value.prefix))
        ctx.report(node, "migrated", f"set {PRUNING} to False (was {code(value)}): it must stay off for the NPU")
    else:
        ctx.report(node, "unmigrated", f"{PRUNING} must stay off for the NPU: set it to False "
                   f"(now: {code(value)})")


def _member(value: pytree.Base) -> Optional[str]:
    """``OFF`` for ``RewriterConfig.OFF`` or ``2``; the member name of other enum values."""
    if value.type == token.NUMBER:
        return "OFF" if value.value == str(OFF_VALUE) else "number"
    dotted = dotted_name(value)
    if dotted is None or "." not in dotted or not dotted.rpartition(".")[2].isupper():
        return None
    return dotted.rpartition(".")[2]


def _set_member(value: pytree.Base, member: str, ctx: FileContext) -> None:
    """Make ``value`` say ``member``: the last name of a dotted enum, else ``RewriterConfig.X``."""
    if _member(value) not in (None, "number"):
        last = value.children[-1].children[1]
        last.value = member
        return
    new = parse_expression(f"RewriterConfig.{member}")
    new.prefix = value.prefix
    value.replace(new)
    ensure_rewriter_config(ctx)


def _truth(value: pytree.Base) -> Optional[bool]:
    """The truth of a literal ``True``/``False``/number, None for anything else."""
    if value.type == token.NAME and value.value in ("True", "False"):
        return value.value == "True"
    if value.type == token.NUMBER:
        return value.value.strip("0.") != ""
    return None


def _sets_rewrite_options(target: pytree.Base, value: pytree.Base, ctx: FileContext) -> bool:
    """Is ``target`` (``x.y.option``) an option of a session's rewrite options?"""
    receiver = prefix_name(target, len(target.children) - 1)
    if receiver is None:
        return False
    return (receiver.endswith("rewrite_options") or receiver in _rewrite_option_names(ctx)
            or "RewriterConfig" in code(value))


def _rewrite_option_names(ctx: FileContext) -> set[str]:
    """Names bound to rewrite options: ``ro = config.graph_options.rewrite_options``."""
    key = "npu009.rewrite_option_names"
    if key not in ctx.memo:
        ctx.memo[key] = {
            code(node.children[0]) for node in small_statements(ctx.tree)
            if node.type == syms.expr_stmt and len(node.children) == 3
            and (code(node.children[2]).endswith(".rewrite_options")
                 or callee_name(node.children[2]) == "RewriterConfig")
        }
    return ctx.memo[key]


def _leaf(captured) -> pytree.Leaf:
    return captured[0] if isinstance(captured, list) else captured


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [RewriteOptionsGuard()]
