"""NPU004 nn-dropout: ``tf.nn.dropout`` becomes the CANN implementation ``npu_ops.dropout``."""

from __future__ import annotations

from fissix import pytree
from fissix.fixer_util import Name
from fissix.pgen2 import token

from npu_codemod.codemods.calls import find_argument, needs_parentheses
from npu_codemod.codemods.rule import Capture, FileContext, Rule, position
from npu_codemod.codemods.snippets import parse_expression
from npu_codemod.codemods.tfnames import is_call_trailer, prefix_name
from npu_codemod.plugins.hookspecs import hookimpl

ACCURACY = "check the model's accuracy: the guide notes the NPU dropout may affect it"


class NnDropout(Rule):
    id = "NPU004"
    name = "nn-dropout"
    description = "Replace tf.nn.dropout with npu_ops.dropout (rate= becomes keep_prob=1 - rate)."
    guide_section = "模型搭建/计算Loss/梯度更新: tf.nn.dropout"
    tokens = ("dropout",)
    pattern = "trailer< '.' 'dropout' >"

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        power = node.parent
        call = node.next_sibling
        if power is None or not is_call_trailer(call):
            return
        index = power.children.index(node)
        spelled = prefix_name(power, index)
        if spelled == "npu_ops":
            ctx.report(power, "migrated", f"uses npu_ops.dropout; {ACCURACY}")
            return
        if ctx.tf.qualify(spelled) != "tensorflow.nn":
            return
        if find_argument(call, "noise_shape", 2) is not None:
            ctx.report(power, "unmigrated", "noise_shape= is given: check that npu_ops.dropout "
                       "supports it, then replace tf.nn.dropout with npu_ops.dropout by hand")
            return
        line, column = position(power)
        rate = find_argument(call, "rate")
        if rate is not None:
            value = str(rate.value).strip()
            if needs_parentheses(rate.value):
                value = f"({value})"
            rate.node.children[0].value = "keep_prob"
            rate.value.replace(parse_expression(f"1 - {value}"))
        head = power.children[0]
        for prefix_part in power.children[1:index]:
            prefix_part.remove()
        head.replace(Name("npu_ops", prefix=head.prefix))
        ctx.report_at(line, column, "migrated", f"replaced {spelled}.dropout with npu_ops.dropout; {ACCURACY}")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [NnDropout()]
