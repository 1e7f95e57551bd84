"""NPU051 xla-off: XLA is off; the NPU compiles graphs itself.

``global_jit_level`` set to anything but ``OFF`` (assigned on a config's optimizer options, or
the keyword of ``tf.OptimizerOptions(...)``) becomes ``OptimizerOptions.OFF`` in the file's
spelling; ``jit_scope(...)`` gets ``compile_ops=False``; ``xla.compile(...)`` is reported, and
so is ``TF_XLA_FLAGS`` set in the process environment to switch auto-clustering on
(:mod:`._xla_flags`).
"""

from __future__ import annotations

import re
from functools import partial

from npu_codemod.api import (
    TF1_CODE,
    Base,
    Capture,
    FileContext,
    Name,
    Node,
    Reference,
    Rule,
    dotted_name,
    find_argument,
    has_unpacking,
    hookimpl,
    parse_expression,
    set_positional,
    symbols,
)
from npu_codemod.api._toolkit import (
    ENVIRONMENT_NAMES,
    ENVIRONMENT_PATTERN,
    ENVIRONMENT_UPDATE_PATTERN,
    TF2,
    environment_setting,
    environment_updates,
    is_false,
    tree_text,
)

from ._xla_flags import VARIABLE, xla_flags

LEVEL = "global_jit_level"
OPTIMIZER_OPTIONS = "tensorflow.OptimizerOptions"
GRAPH_OPTIONS = "tensorflow.GraphOptions"
OFF = f"{OPTIMIZER_OPTIONS}.OFF"
#: ``OptimizerOptions.GlobalJitLevel`` values: a name ending so is respelled in place.
LEVELS = ("DEFAULT", "OFF", "ON_1", "ON_2")
JIT_SCOPES = ("tensorflow.xla.experimental.jit_scope",
              "tensorflow.contrib.compiler.jit.experimental_jit_scope",
              "tensorflow.python.compiler.xla.jit.experimental_jit_scope")
COMPILES = ("tensorflow.xla.experimental.compile", "tensorflow.contrib.compiler.xla.compile",
            "tensorflow.python.compiler.xla.xla.compile")

WHY = "the NPU compiles graphs itself"
LEVEL_OFF = f"{LEVEL} is OptimizerOptions.OFF"
#: An options message built without the field that could switch XLA on: checked, nothing to do.
LEFT_OFF = "XLA stays off: no {field} {verb} given"
LEVEL_SET = f"set {LEVEL} to {{new}} (was {{old}}): {WHY}"
SCOPE_OFF = "compile_ops=False is set"
SCOPE_SET = f"set compile_ops=False (was {{old}}) in {{spelled}}: {WHY}"
SCOPE_ADDED = f"added compile_ops=False to {{spelled}}: {WHY}"
SCOPE_UNPACKED = "compile_ops may come in the unpacked arguments: pass compile_ops=False explicitly"
COMPILE = ("{spelled}(...): XLA compile has no NPU equivalent: call the function directly "
           "(the NPU compiles the graph itself)")
AUTO_JIT_WHY = "the NPU compiles graphs itself, and XLA must be off"
AUTO_JIT = (f"{VARIABLE} = {{value}} {{verb}} XLA auto-clustering on: {AUTO_JIT_WHY}; remove "
            f"{{flags}} from {VARIABLE}")
AUTO_JIT_HIDDEN = (f"{VARIABLE} = {{value}} may switch XLA auto-clustering on: {AUTO_JIT_WHY}; make "
                   "sure it sets neither --tf_xla_auto_jit (but to 0 or -1) nor --tf_xla_cpu_global_jit")
AUTO_JIT_OFF = f"{VARIABLE} leaves XLA auto-clustering off"


class XlaOff(Rule):
    id = "NPU051"
    name = "xla-off"
    pack = "xla-gpu"
    file_kinds = TF1_CODE | {TF2}  # jit_scope: TF 2.6 lists it
    description = "Switch XLA off: global_jit_level OFF, jit_scope(compile_ops=False); report xla.compile."
    guide_section = "迁移工具 (convert_tf2npu): XLA相关接口"
    guide_section_en = "Migration tool (convert_tf2npu): XLA APIs"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`global_jit_level` set to anything but `OFF` "
                "(`config.graph_options.optimizer_options.global_jit_level = "
                "tf.OptimizerOptions.ON_1`, or the keyword of `tf.OptimizerOptions(...)`) becomes "
                "`OptimizerOptions.OFF`, spelled as the file spells it (`tf.OptimizerOptions.OFF`, "
                "`config_pb2.OptimizerOptions.OFF`); `tf.xla.experimental.jit_scope(...)` and "
                "`tf.contrib.compiler.jit.experimental_jit_scope(...)` get `compile_ops=False`. A "
                "`tf.GraphOptions(...)` without `optimizer_options`, or a `tf.OptimizerOptions(...)` "
                "without `global_jit_level`, leaves XLA off: checked, nothing to do.")
    reports = ("`tf.xla.experimental.compile(...)` / `tf.contrib.compiler.xla.compile(...)`: XLA "
               "compile has no NPU equivalent, call the function directly; a `jit_scope` whose "
               "arguments are unpacked with `**`; `TF_XLA_FLAGS` set in the process environment "
               "(`os.environ[...] = ...`, `os.environ.setdefault(...)`, `os.putenv(...)`, "
               "`os.environ.update({...})` or `os.environ.update(TF_XLA_FLAGS=...)`) to "
               "switch XLA auto-clustering on (`--tf_xla_auto_jit=1`/`2`/`fusible`, "
               "`--tf_xla_cpu_global_jit`), or to a value the code does not show: remove those "
               "flags (`--tf_xla_auto_jit=0` or `-1` leaves it off: checked, nothing to do). npu-codemod "
               "reads Python files only: a shell launch script that exports `TF_XLA_FLAGS` "
               "(`export TF_XLA_FLAGS=--tf_xla_auto_jit=2`, `TF_XLA_FLAGS=... python train.py`) is "
               "not seen; remove the flags there by hand.")
    example = """
        import os

        import tensorflow as tf

        os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2"
        config = tf.ConfigProto()
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
        with tf.xla.experimental.jit_scope():
            logits = model(features)
        (loss,) = tf.xla.experimental.compile(compute_loss, inputs=[logits, labels])
    """
    _scope = "linked"
    _site_names = (LEVEL, *ENVIRONMENT_NAMES)
    _tokens = ("jit", "xla", "GraphOptions", "OptimizerOptions", VARIABLE)
    pattern = f"""(
        expr_stmt< power< any* trailer< '.' '{LEVEL}' > > '=' value=any >
      | {ENVIRONMENT_PATTERN}
      | {ENVIRONMENT_UPDATE_PATTERN}
    )"""
    calls = (OPTIMIZER_OPTIONS, GRAPH_OPTIONS, *JIT_SCOPES, *COMPILES)

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if "updated" in capture:
            for name, value in environment_updates(node, capture):
                if name == VARIABLE:
                    _auto_jit(node, value, ctx)
            return
        if "key" not in capture:
            self._level(node, capture["value"], ctx)
            return
        setting = environment_setting(node, capture)
        if setting is not None and setting[0] == VARIABLE:
            _auto_jit(node, setting[1], ctx)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        call, spelled = reference.call, reference.spelled
        if reference.name == OPTIMIZER_OPTIONS:
            given = find_argument(call, LEVEL)
            if given is not None:
                self._level(reference, given.value, ctx)
            elif not has_unpacking(call):
                ctx.report(reference, "migrated", LEFT_OFF.format(field=LEVEL, verb="is"))
        elif reference.name == GRAPH_OPTIONS:
            # given optimizer_options, the OptimizerOptions(...) there is the site that says
            if find_argument(call, "optimizer_options") is None and not has_unpacking(call):
                ctx.report(reference, "migrated", LEFT_OFF.format(field="optimizer_options", verb="are"))
        elif reference.name in COMPILES:
            ctx.report(reference, "unmigrated", COMPILE.format(spelled=spelled))
        else:
            given = find_argument(call, "compile_ops", 0)
            if given is not None and is_false(given.value):
                ctx.report(reference, "migrated", SCOPE_OFF)
            elif given is None and has_unpacking(call):
                ctx.report(reference, "unmigrated", SCOPE_UNPACKED)
            else:
                old = _one_line(given.value) if given is not None else None
                ctx.defer(partial(_no_compile, call))
                ctx.report(reference, "migrated", SCOPE_SET.format(old=old, spelled=spelled)
                           if old else SCOPE_ADDED.format(spelled=spelled))

    @staticmethod
    def _level(site: "Base | Reference", value: Base, ctx: FileContext) -> None:
        """``value``, a ``global_jit_level``, becomes ``OptimizerOptions.OFF``."""
        spelled = dotted_name(value)
        level = ctx.tf.qualify(spelled)
        if level == OFF:
            ctx.report(site, "migrated", LEVEL_OFF)
            return
        old = _one_line(value)
        if value.type == symbols.power and spelled is not None and level is not None \
                and level.rpartition(".")[0] == OPTIMIZER_OPTIONS and level.rpartition(".")[2] in LEVELS:
            new = f"{spelled.rpartition('.')[0]}.OFF"  # the file's own spelling of the enum
            ctx.defer(lambda: value.children[-1].children[1].replace(Name("OFF")))
        else:
            new = f"{ctx.tf_module()}.OptimizerOptions.OFF"
            ctx.defer(lambda: _replace(value, new))
        ctx.report(site, "migrated", LEVEL_SET.format(new=new, old=old))


def _one_line(value: Base) -> str:
    """``value`` as a message quotes it: on one line, without the white space a line break
    leaves inside its parentheses (``(\n    tf.OptimizerOptions.ON_1)``)."""
    return _PAREN_SPACE.sub(lambda space: space.group().strip(), " ".join(tree_text(value).split()))


_PAREN_SPACE = re.compile(r"[(\[{]\s+|\s+[)\]}]")


def _auto_jit(node: Base, value: Base, ctx: FileContext) -> None:
    """``TF_XLA_FLAGS`` set to ``value``: reported when it may switch auto-clustering on."""
    flags = xla_flags(value)
    shown = _one_line(value)
    if flags.on:
        verb = "switches" if flags.sure else "may switch"
        ctx.report(node, "unmigrated", AUTO_JIT.format(value=shown, verb=verb, flags=" and ".join(flags.on)))
    elif not flags.shown:
        ctx.report(node, "unmigrated", AUTO_JIT_HIDDEN.format(value=shown))
    elif flags.off:
        ctx.report(node, "migrated", AUTO_JIT_OFF)


def _no_compile(call: Node) -> None:
    set_positional(call, 0, "False", keyword="compile_ops")


def _replace(value: Base, code: str) -> None:
    new = parse_expression(code)
    new.prefix = value.prefix
    value.replace(new)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [XlaOff()]
