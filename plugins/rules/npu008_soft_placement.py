"""NPU008 soft-placement: when the repository uses ``tf.device``, sessions allow soft placement.

``tf.device`` may sit in a model file while the session is created in the training script, so
the trigger is the repository-wide fact :data:`FACT` from :func:`npu_codemod_analyze_file`.
Explicit settings are checked where they are written (``visit``); the config objects NPU007
wrote or completed get the setting in ``finish``, which runs after NPU007's edits.
"""

from __future__ import annotations

import re
from typing import Optional

from fissix import pytree
from fissix.fixer_util import Name
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.calls import add_keyword, is_false, is_true
from npu_codemod.codemods.rule import Capture, FileContext, Rule
from npu_codemod.codemods.session_config import argument_callee, targets
from npu_codemod.codemods.statements import insert_before
from npu_codemod.plugins.hookspecs import hookimpl

FACT = "uses-tf-device"
SETTING = "allow_soft_placement"
WHY = "tf.device is used in this repository"
_ALIAS = re.compile(r"^[ \t]*import[ \t]+tensorflow(?:\.compat\.v1)?(?:[ \t]+as[ \t]+(\w+))?", re.M)
#: ``from tensorflow import device as d`` (also ``compat.v1``, several names, parentheses).
_FROM = re.compile(r"^[ \t]*from[ \t]+tensorflow(?:\.compat\.v1)?[ \t]+import[ \t]+(\([^)]*\)|[^#\n]*)", re.M)


def uses_tf_device(text: str) -> bool:
    """Does ``text`` call ``<tf alias>.device(``, or a name imported as ``device`` from
    TensorFlow, outside a comment? (text only, no parsing)"""
    aliases = {match.group(1) or "tensorflow" for match in _ALIAS.finditer(text)}
    calls = [rf"\b(?:{'|'.join(map(re.escape, sorted(aliases)))})(?:\.compat\.v1)?\.device"] if aliases else []
    imported = sorted(_device_names(text))
    if imported:
        calls.append(rf"(?<![\w.])(?:{'|'.join(map(re.escape, imported))})")
    if not calls:
        return False
    return re.search(rf"^[^#\n]*(?:{'|'.join(calls)})[ \t]*\(", text, re.M) is not None


def _device_names(text: str) -> set[str]:
    names = set()
    for match in _FROM.finditer(text):
        for item in re.sub(r"#[^\n]*|[()\\]", " ", match.group(1)).split(","):
            words = item.split()
            if words and words[0] == "device":
                names.add(words[2] if len(words) == 3 and words[1] == "as" else "device")
    return names


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    return {FACT} if uses_tf_device(text) else None


class SoftPlacement(Rule):
    id = "NPU008"
    name = "soft-placement"
    description = "When the repository uses tf.device, session configs set allow_soft_placement=True."
    guide_section = "创建session并初始化资源 (tf.device -> allow_soft_placement=True)"
    guide_section_en = ("Creating the session and initializing resources: tf.device -> "
                        "allow_soft_placement=True")
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("When the repository calls `tf.device(...)` anywhere (the model file may place "
                "ops while the training script makes the session), every session config NPU007 "
                "writes or completes sets `allow_soft_placement=True`, and an explicit "
                "`allow_soft_placement=False` becomes `True`: it lets TensorFlow assign devices "
                "itself.")
    reports = ("A value that is not a literal (`allow_soft_placement=FLAGS.soft_placement`): it "
               "must be `True` when `tf.device` is used.")
    example = """
        import tensorflow as tf

        with tf.device("/cpu:0"):
            images, labels = build_input(FLAGS.data_dir)
        train_config = tf.ConfigProto(allow_soft_placement=False)
        eval_config = tf.ConfigProto(allow_soft_placement=FLAGS.soft_placement)
    """
    tokens = ("Session", "managed_session", "prepare_or_wait_for_session", SETTING)
    pattern = f"""(
        argument< '{SETTING}' '=' value=any >
      | expr_stmt< power< any* trailer< '.' '{SETTING}' > > '=' value=any >
    )"""
    order = 60  # finish after NPU007 (50), whose edits record the config objects

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if FACT not in ctx.facts:
            return
        if node.type == syms.argument and argument_callee(node) != "ConfigProto":
            return
        value = capture["value"]
        if is_true(value):
            ctx.report(node, "migrated", f"{SETTING}=True is set ({WHY})")
        elif is_false(value):
            value.replace(Name("True", prefix=value.prefix))
            ctx.report(node, "migrated", f"flipped {SETTING}=False to True: {WHY}")
        else:
            ctx.report(node, "unmigrated", f"{SETTING} must be True when tf.device is used: "
                       f"set it to True (now: {str(value).strip()})")

    def finish(self, tree: pytree.Node, ctx: FileContext) -> None:
        if FACT not in ctx.facts:
            return
        for target in targets(ctx):
            if SETTING in target.settings():
                continue
            if target.constructor is not None:
                add_keyword(target.constructor, SETTING, "True")
            else:
                insert_before(target.anchor, f"{target.expression}.{SETTING} = True", ctx.newline)
            ctx.report_at(target.line, target.column, "migrated",
                          f"set {SETTING}=True on '{target.expression}': {WHY}")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SoftPlacement()]
