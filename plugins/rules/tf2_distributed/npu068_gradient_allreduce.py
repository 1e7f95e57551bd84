"""NPU068 tf2-gradient-allreduce: a TF 2.x custom loop aggregates its gradients across NPUs.

When a script computes and applies gradients in separate steps, ``npu.distribute.all_reduce(
grads, "mean")`` goes between them (TF 2.6 guide, "Distributed training script adaptation");
it returns the gradients unchanged on one worker. Keras ``compile``'s optimizer goes through
``npu.distribute.npu_distributed_keras_optimizer_wrapper``: reported here, with the line to write.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    hookimpl,
    insert_after,
    symbols,
    tokens,
)
from npu_codemod.plugins.rules._toolkit import (
    TF2,
    attribute_name,
    pre_order,
    tree_text,
)

from ._device import device_name

ADDED = "added {name} = {npu}.distribute.all_reduce({name}, \"mean\") before the gradients are applied"
IN_PLACE = "the gradients are all-reduced"
NOT_A_NAME = ("the gradients go to a tuple: all-reduce them before they are applied "
              "(grads = npu.distribute.all_reduce(grads, \"mean\"))")
ELSEWHERE = ("{name} is applied in another block or function: add {name} = "
             "npu.distribute.all_reduce({name}, \"mean\") before apply_gradients")
HOROVOD = "the tape is Horovod's DistributedGradientTape: NPU070 reports it; not all-reduced twice"
KERAS = ("wrap the optimizer for distributed training: optimizer=npu.distribute."
         "npu_distributed_keras_optimizer_wrapper(<optimizer>)")


class GradientAllReduce(Rule):
    id = "NPU068"
    name = "tf2-gradient-allreduce"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2})
    description = "All-reduce a TF 2.x custom loop's gradients across NPUs before they are applied."
    guide_section = "分布式训练脚本适配: 梯度聚合"
    guide_section_en = "Distributed Training Script Adaptation: gradient aggregation"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`G = tape.gradient(...)` (G a name, `tape` a `tf.GradientTape`) followed in the "
                "same block by an `apply_gradients` that uses `G`: `G = npu.distribute.all_reduce("
                "G, \"mean\")` right after the gradient statement (before any clipping); already "
                "there: left alone.")
    reports = ("Gradients bound to a tuple or applied in another block or function (the line to "
               "add); a Keras `compile(optimizer=...)` (wrap it with "
               "`npu_distributed_keras_optimizer_wrapper`); a Horovod `DistributedGradientTape` "
               "(NPU070's).")
    example = """
        import tensorflow as tf


        @tf.function
        def train_step(model, optimizer, images, labels):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.mse(labels, model(images)))
            grads = tape.gradient(loss, model.trainable_variables)
            grads, _ = tf.clip_by_global_norm(grads, 5.0)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


        def build(model):
            model.compile(optimizer="adam", loss="mse")
    """
    _tokens = (".gradient(", ".compile(")
    after = ("NPU061",)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if "DistributedGradientTape" in ctx.original:
            return  # Horovod's tape aggregates already: NPU070 reports it
        tapes = _tapes(ctx.original)
        for node in list(pre_order(tree)):
            if node.type == symbols.expr_stmt and len(node.children) == 3:
                self._gradient_statement(node, tapes, ctx)
            elif node.type == symbols.trailer and _method(node) == "compile" and _has_keyword(node, "optimizer"):
                ctx.report(node, "unmigrated", KERAS)

    def _gradient_statement(self, statement: Node, tapes: set[str], ctx: FileContext) -> None:
        target, op, value = statement.children
        if op.type != tokens.EQUAL or not _is_tape_gradient(value, tapes):
            return
        if target.type != tokens.NAME:
            ctx.report(statement, "unmigrated", NOT_A_NAME)
            return
        name = target.value
        line = statement.parent
        later = _later_statements(line)
        if any("all_reduce(" in tree_text(s) and name in _names(s) for s in later):
            ctx.report(statement, "migrated", IN_PLACE)
        elif any(".apply_gradients(" in tree_text(s) and name in _names(s) for s in later):
            npu = device_name(ctx)
            insert_after(line, f"{name} = {npu}.distribute.all_reduce({name}, \"mean\")", ctx.newline)
            ctx.report(statement, "migrated", ADDED.format(name=name, npu=npu))
        else:
            ctx.report(statement, "unmigrated", ELSEWHERE.format(name=name))


def _tapes(text: str) -> set[str]:
    """The names the file binds a ``GradientTape`` to (``with tf.GradientTape() as tape``,
    ``tape = tf.GradientTape()``)."""
    return set(_WITH_TAPE.findall(text)) | set(_TAPE_ASSIGNED.findall(text))


_WITH_TAPE = re.compile(r"GradientTape\([^\n]*?\)\s+as\s+(\w+)")
_TAPE_ASSIGNED = re.compile(r"^\s*(\w+)\s*=\s*[\w.]*GradientTape\(", re.MULTILINE)


def _is_tape_gradient(value: Base, tapes: set[str]) -> bool:
    """``<tape>.gradient(...)``: a tape's name, ``.gradient``, a call, nothing after."""
    children = value.children if value.type == symbols.power else []
    return len(children) == 3 and children[0].type == tokens.NAME and children[0].value in tapes \
        and _method(children[1]) == "gradient" and children[2].type == symbols.trailer \
        and children[2].children[0].type == tokens.LPAR


def _method(trailer: Base) -> Optional[str]:
    name = attribute_name(trailer)
    if name is not None:
        return name
    next_one = trailer.prev_sibling
    if trailer.type == symbols.trailer and trailer.children[0].type == tokens.LPAR and next_one is not None:
        return _method(next_one)
    return None


def _has_keyword(call: Base, keyword: str) -> bool:
    return call.children[0].type == tokens.LPAR and f"{keyword}=" in tree_text(call).replace(" ", "")


def _later_statements(line: Optional[Base]) -> list[Base]:
    found: list[Base] = []
    sibling = line.next_sibling if line is not None else None
    while sibling is not None:
        found.append(sibling)
        sibling = sibling.next_sibling
    return found


def _names(node: Base) -> set[str]:
    return {leaf.value for leaf in node.leaves() if leaf.type == tokens.NAME}


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [GradientAllReduce()]
