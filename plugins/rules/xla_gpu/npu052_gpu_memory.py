"""NPU052 gpu-memory: GPU memory settings have no meaning on the NPU.

``tf.config.experimental.set_memory_growth(...)`` and ``set_virtual_device_configuration(...)``
statements are removed, with the ``for``/``try``/``if`` around them that the removal leaves
empty when removing it is clearly safe (``_emptied``: TensorFlow's guide wraps the loop in ``if
gpus:`` and ``try:``); a function body left empty gets ``pass``; a setting whose removal would
leave another statement empty is kept and reported. A ``VirtualDeviceConfiguration`` built
elsewhere gets ``memory_limit=None``. ``gpu_options`` of a ``ConfigProto`` are harmless on the NPU
and left alone.
"""

from __future__ import annotations

from functools import partial
from typing import Optional

from npu_codemod.api import (
    TF1_CODE,
    TF2_NATIVE,
    Base,
    FileContext,
    Node,
    Reference,
    Rule,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    name_reference,
    remove_statement,
    set_positional,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import memo, tree_text

from ._emptied import removal

SETTERS = ("tensorflow.config.experimental.set_memory_growth",
           "tensorflow.config.experimental.set_virtual_device_configuration",
           "tensorflow.config.set_logical_device_configuration")
DEVICE_CONFIGS = ("tensorflow.config.experimental.VirtualDeviceConfiguration",
                  "tensorflow.config.LogicalDeviceConfiguration")

WHY = "the NPU has no GPU memory settings"
REMOVED = f"removed {{spelled}}(...): {WHY}"
NOT_A_STATEMENT = f"{{spelled}}(...) is used as a value: remove it, {WHY}"
LIMIT_NONE = "memory_limit=None is set"
LIMIT_SET = "set memory_limit=None (was {old}): the NPU manages its memory itself"
UNPACKED = "memory_limit may come in the unpacked arguments: pass memory_limit=None explicitly"
KEPT = ("remove {spelled}(...) by hand with the statement around it, which it would leave empty "
        f"({{why}}): {WHY}")
_SETTINGS = "npu052-settings"


class GpuMemory(Rule):
    id = "NPU052"
    name = "gpu-memory"
    pack = "xla-gpu"
    file_kinds = TF1_CODE | TF2_NATIVE
    description = "Remove GPU memory growth and virtual device settings; memory_limit=None."
    guide_section = "迁移工具 (convert_tf2npu): GPU显存相关接口"
    guide_section_en = "Migration tool (convert_tf2npu): GPU memory APIs"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.config.experimental.set_memory_growth(...)` and "
                "`tf.config.experimental.set_virtual_device_configuration(...)` (also "
                "`tf.config.set_logical_device_configuration`) as statements are removed, with the "
                "`for` loop, `try` and `if` they leave empty when that is clearly safe (a `for` "
                "with no `else` over a name, a device list or a `range` of them (`range(len(gpus))`) "
                "whose variable is used nowhere else, a "
                "`try` with no `else`/`finally`, an `if` with one branch and a test without "
                "calls), as in TensorFlow's `if gpus:` / `try:` / `for gpu in gpus:` recipe; a "
                "function body left empty gets `pass`; `tf.config.experimental.VirtualDeviceConfiguration("
                "memory_limit=X)` built elsewhere gets `memory_limit=None`. `gpu_options.*` "
                "settings of a `ConfigProto` are harmless on the NPU and left alone.")
    reports = ("Those setters used as a value rather than a statement, and those whose removal "
               "would leave another statement empty (a `while` or `with` body, an `if` with other "
               "branches, a loop whose variable is used later): remove them by hand.")
    example = """
        import tensorflow as tf

        gpus = tf.config.experimental.list_physical_devices("GPU")
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
        limits = [tf.config.experimental.VirtualDeviceConfiguration(memory_limit=4096)]
        print("growth:", tf.config.experimental.set_memory_growth(gpus[0], True))
    """
    _scope = "linked"
    _tokens = ("set_memory_growth", "set_virtual_device_configuration", "VirtualDeviceConfiguration",
              "set_logical_device_configuration", "LogicalDeviceConfiguration")
    calls = (*SETTERS, *DEVICE_CONFIGS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        spelled = reference.spelled
        if reference.name in SETTERS:
            line = _statement_line(reference)
            if line is None:
                ctx.report(reference, "unmigrated", NOT_A_STATEMENT.format(spelled=spelled))
            else:  # decided once every setting of the file is known (``finish``)
                memo(ctx).setdefault(_SETTINGS, []).append((reference, line))
        elif not _in_removed_setter(reference.node, ctx):
            call = reference.call
            given = find_argument(call, "memory_limit", 0)
            if (given is not None and is_none(given.value)) or (given is None and not has_unpacking(call)):
                ctx.report(reference, "migrated", LIMIT_NONE)
            elif given is None:
                ctx.report(reference, "unmigrated", UNPACKED)
            else:
                old = tree_text(given.value).strip()
                ctx.defer(partial(_no_memory_limit, call))
                ctx.report(reference, "migrated", LIMIT_SET.format(old=old))


    def finish(self, tree: Node, ctx: FileContext) -> None:
        settings: list[tuple[Reference, Base]] = memo(ctx).get(_SETTINGS, [])
        gone = {id(line) for _, line in settings}
        statements: dict[int, Base] = {}
        for reference, line in settings:
            found = removal(line, gone)
            if found.statement is None:
                ctx.report(reference, "unmigrated", KEPT.format(spelled=reference.spelled, why=found.why))
            else:
                statements[id(found.statement)] = found.statement
                ctx.report(reference, "migrated", REMOVED.format(spelled=reference.spelled))
        for statement in statements.values():
            remove_statement(statement, ctx.newline)


def _no_memory_limit(call: Node) -> None:
    set_positional(call, 0, "None", keyword="memory_limit")


def _statement_line(reference: Reference) -> Optional[Base]:
    """The line that is nothing but this call (``tf.config.experimental.set_memory_growth(gpu,
    True)``), or None when the call's value is used or shares its line after a ``;``."""
    node = reference.node
    if node.type != symbols.power or reference.end + 1 != len(node.children):
        return None
    line = node.parent
    if line is None or line.type != symbols.simple_stmt or len(line.children) != 2 \
            or line.children[1].type != tokens.NEWLINE:
        return None
    return line


def _in_removed_setter(node: Base, ctx: FileContext) -> bool:
    """Is ``node`` inside the arguments of a setter whose statement is removed?"""
    parent = node.parent
    while parent is not None and parent.type != symbols.simple_stmt:
        if parent.type == symbols.power:
            setter = name_reference(parent, [ctx.tf], frozenset(SETTERS))
            if setter is not None and setter.call is not None and _statement_line(setter) is not None:
                return True
        parent = parent.parent
    return False


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [GpuMemory()]
