"""NPU066 tf2-loop-size: iteration offload needs the NPU loop size (report only).

A ``tf.function`` that loops over training steps with ``tf.range`` (``for _ in tf.range(steps):
train_step(next(iterator))``) runs several steps per call; the NPU must be told how many:
``NPU_LOOP_SIZE=<n>`` before ``import npu_device``, or ``npu.set_npu_loop_size(<n>)`` (TF 2.6
guide, "Setting the number of iterations offloaded to NPU"; the porting tool cannot do it).
"""

from __future__ import annotations

import ast
from typing import Optional, Union

from npu_codemod.api import FileContext, Node, Rule, hookimpl
from npu_codemod.api._toolkit import (
    TF2,
    TF_NEUTRAL,
    ModuleIndex,
    ast_dotted_name,
    module_ast,
    module_index,
)

LOOP = ("iteration offload: set the NPU loop size to the steps per call of {function}() "
        "(NPU_LOOP_SIZE={steps} before importing npu_device, or npu.set_npu_loop_size({steps}) "
        "before calling it){flags}")
FLAGS = "; with use_tf_while_loop on, it must equal steps_per_loop"
SET = "the NPU loop size is set ({how})"

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class LoopSize(Rule):
    id = "NPU066"
    name = "tf2-loop-size"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Report tf.function loops over training steps: the NPU loop size must match."
    guide_section = "设置NPU上循环下沉的迭代次数"
    guide_section_en = "Setting the Number of Iterations Offloaded to NPU"
    guide_url = Rule.catalog_url(id, name)
    reports = ("Each `for ... in tf.range(<n>)` inside a `tf.function` whose body draws from an "
               "iterator (`next(...)`): set `NPU_LOOP_SIZE=<n>` before `import npu_device`, or "
               "call `npu.set_npu_loop_size(<n>)` (`<n>` named when it is a literal or a flag; "
               "Model Garden's `steps_per_loop` named). Where the file sets either, the loop is "
               "`migrated`.")
    example = """
        import tensorflow as tf


        @tf.function
        def train_loop(iterator, steps):
            for _ in tf.range(steps):
                train_step(next(iterator))
    """
    _tokens = ("range",)
    _scope = "site"
    _site_names = ("range",)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        module = module_ast(ctx.original)
        if module is None:
            return
        index = module_index(module)
        functions: list[_Function] = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
        done = _loop_size_set(ctx.original)
        for function in functions:
            if not any(_is_function(decorator, ctx) for decorator in function.decorator_list):
                continue
            for loop in _offload_loops(function, index, ctx):
                if done:
                    ctx.report_at(loop.lineno, loop.col_offset, "migrated", SET.format(how=done))
                    continue
                flags = FLAGS if "steps_per_loop" in ctx.original else ""
                ctx.report_at(loop.lineno, loop.col_offset, "unmigrated", LOOP.format(
                    function=function.name, steps=_steps(loop) or "<steps>", flags=flags))


def _is_function(node: ast.expr, ctx: FileContext) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return ctx.tf.qualify(ast_dotted_name(target)) == "tensorflow.function"


def _offload_loops(function: _Function, index: ModuleIndex, ctx: FileContext) -> list[ast.For]:
    """The function's own ``for ... in tf.range(...)`` loops whose body calls ``next(...)``."""
    loops = []
    for node in index.own_nodes(function):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                and ctx.tf.qualify(ast_dotted_name(node.iter.func)) == "tensorflow.range" \
                and any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                        and inner.func.id == "next" for stmt in node.body for inner in ast.walk(stmt)):
            loops.append(node)
    return loops


def _steps(loop: ast.For) -> Optional[str]:
    """The loop's count when it is a literal or a name/flag (``FLAGS.steps_per_loop``)."""
    call = loop.iter
    if not isinstance(call, ast.Call) or not call.args:
        return None
    count = call.args[-1] if len(call.args) == 1 else call.args[1]
    if isinstance(count, ast.Constant) and isinstance(count.value, int):
        return str(count.value)
    return ast_dotted_name(count)


def _loop_size_set(text: str) -> str:
    if "set_npu_loop_size(" in text:
        return "set_npu_loop_size"
    return "NPU_LOOP_SIZE" if "NPU_LOOP_SIZE" in text else ""


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LoopSize()]
