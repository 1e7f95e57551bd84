"""Names for generated code: each scope's names kept per file, and the guide's custom_op names."""

from __future__ import annotations

from fissix import pytree
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.edits import insert_before
from npu_codemod.codemods.nodes import used_names
from npu_codemod.codemods.rule import FileContext
from npu_codemod.plugins.rules.sess_run._free_names import claim, taken_names
from npu_codemod.plugins.rules.sess_run._session_config import custom_op_names

from support.trees import parse

SOURCE = """\
import tensorflow as tf
def train(steps):
    sess = tf.Session()
def evaluate():
    pass
"""


def functions(tree: pytree.Node) -> list[pytree.Node]:
    return [node for node in tree.pre_order() if node.type == syms.funcdef]


def test_taken_names_are_used_names_walked_once_per_file() -> None:
    tree = parse(SOURCE)
    ctx = FileContext(repo="repo", path="train.py", original=SOURCE, newline="\n", tree=tree)
    train, _ = functions(tree)
    assert taken_names(train, ctx) == used_names(train)
    assert taken_names(train, ctx) is taken_names(train, ctx)


def test_claim_adds_inserted_names_to_the_scopes_around_them_only() -> None:
    tree = parse(SOURCE)
    ctx = FileContext(repo="repo", path="train.py", original=SOURCE, newline="\n", tree=tree)
    train, evaluate = functions(tree)
    for scope in (tree, train, evaluate):
        taken_names(scope, ctx)
    statement = train.children[-1].children[-2]
    claim(insert_before(statement, "config = tf.ConfigProto()\nop = config.add()", "\n"), ctx, unless={"op"})
    assert taken_names(train, ctx) == used_names(train) - {"op"}
    assert taken_names(tree, ctx) == used_names(tree) - {"op"}
    assert taken_names(evaluate, ctx) == used_names(evaluate) == {"def", "evaluate", "pass"}


def test_custom_op_names_are_those_spelled_only_in_the_guide_lines() -> None:
    tree = parse("""\
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
op = config.graph_options.rewrite_options.custom_optimizers.add()
print(op)
mine = cfg.graph_options.rewrite_options.custom_optimizers.add()
run(x.mine, mine=1)
def f(npu_custom_op):
    npu_custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
""")
    assert custom_op_names(tree) == {"custom_op", "mine"}
