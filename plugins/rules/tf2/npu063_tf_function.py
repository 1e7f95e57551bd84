"""NPU063 tf2-function: TF 2.x training steps run as graph functions (report only).

The TF 2.6 guide's device step presupposes training and evaluation functions decorated with
``@tf.function`` that work on CPU/GPU: function ops are where the adapter hands the graph to
CANN. Keras ``fit`` traces its own step. The rule never adds the decorator (tracing changes
Python semantics: side effects, retracing); it reports the gaps. A training loop written in one
function (``main()`` with its ``for``, ``.numpy()`` and checkpoints) is not to be traced whole:
its report says to move the step into a function of its own and decorate that.
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

FUNCTION = "tensorflow.function"
EAGER_SWITCHES = ("tensorflow.config.run_functions_eagerly",
                  "tensorflow.config.experimental_run_functions_eagerly")
APPLY = frozenset({"apply_gradients", "minimize"})

NOT_TRACED = ("training step {name}() is not a tf.function: wrap this training step in "
              "@tf.function and check it still runs on CPU/GPU before porting")
STEP_IN_LOOP = ("training step in a loop of {name}(), which is not a tf.function: move the step "
                "(the GradientTape block and the {apply} call) into a function of its own, decorate "
                "that with @tf.function and call it from the loop (tracing {name}() whole would run "
                "its loop, .numpy() calls and I/O once, at trace time); check it still runs on "
                "CPU/GPU before porting")
RUN_EAGERLY = "run_eagerly=True skips tf.function: remove it for the NPU"
EAGER_SWITCH = "{spelled}(True): not supported on Ascend, no migration path: remove it"
MAY_RUN_EAGERLY = ("run_eagerly={code} skips tf.function when it is true: make it False (or "
                   "remove it) for the NPU")
MAY_SWITCH = ("{spelled}({code}): running functions eagerly is not supported on Ascend, no "
              "migration path: make it False (or remove the call) for the NPU")

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class TfFunction(Rule):
    id = "NPU063"
    name = "tf2-function"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Report TF 2.x training steps that are not traced with tf.function."
    guide_section = "添加@tf.function装饰器"
    guide_section_en = "Adding @tf.function Decorator"
    guide_url = Rule.catalog_url(id, name)
    reports = ("A function with a `tf.GradientTape` block and an `apply_gradients`/`minimize` "
               "call that is not decorated with `tf.function` in any spelling, not wrapped "
               "(`step = tf.function(step)`) and not called from a traced function (Keras "
               "`train_step` overrides are traced by `fit`; the `train_step` of a class with no "
               "base but `object` is a trainer's own step, no override): when its `GradientTape` block sits "
               "in a loop of the function (a training loop written in `main()`), the advice is to "
               "move the step into a function of its own and decorate that; "
               "`compile(..., run_eagerly=True)`; "
               "`tf.config.run_functions_eagerly(True)` (not supported on Ascend); either "
               "switch given a flag or an expression that may be true.")
    example = """
        import tensorflow as tf


        def train_step(model, optimizer, images, labels):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.mse(labels, model(images)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
    """
    _tokens = ("GradientTape", "run_eagerly", "functions_eagerly")
    _scope = "site"
    _site_names = ("GradientTape", "run_eagerly", "run_functions_eagerly",
                  "experimental_run_functions_eagerly")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        module = module_ast(ctx.original)
        if module is None:
            return
        index = module_index(module)
        functions: list[_Function] = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
        traced = _traced_names(index, functions, ctx)
        for function in functions:
            if _is_step(function, index, ctx) and function.name not in traced and not _keras_step(function, index):
                ctx.report_at(function.lineno, function.col_offset, "unmigrated", _advice(function, index, ctx))
        calls: list[ast.Call] = index.nodes(ast.Call)
        for call in calls:
            self._eager_call(call, ctx)

    @staticmethod
    def _eager_call(call: ast.Call, ctx: FileContext) -> None:
        """An eager switch (``run_functions_eagerly(x)``, ``compile(..., run_eagerly=x)``)
        whose value is True or may be (a flag, an expression); False and None need nothing."""
        spelled = ast_dotted_name(call.func)
        if ctx.tf.qualify(spelled) in EAGER_SWITCHES:
            value = _switch_value(call)
            if value is not None and not _is_false(value):
                message = EAGER_SWITCH.format(spelled=spelled) if _is_true(value) \
                    else MAY_SWITCH.format(spelled=spelled, code=ast.unparse(value))
                ctx.report_at(call.lineno, call.col_offset, "unmigrated", message)
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "compile":
            for keyword in call.keywords:
                if keyword.arg == "run_eagerly" and not _is_false(keyword.value):
                    message = RUN_EAGERLY if _is_true(keyword.value) \
                        else MAY_RUN_EAGERLY.format(code=ast.unparse(keyword.value))
                    ctx.report_at(keyword.value.lineno, keyword.value.col_offset, "unmigrated", message)


def _is_function(node: ast.expr, ctx: FileContext) -> bool:
    """``tf.function`` or ``tf.function(...)`` in any spelling."""
    target = node.func if isinstance(node, ast.Call) else node
    return ctx.tf.qualify(ast_dotted_name(target)) == FUNCTION


def _traced_names(index: ModuleIndex, functions: list[_Function], ctx: FileContext) -> set[str]:
    """Names of the file's functions that run traced: decorated, wrapped anywhere
    (``tf.function(step)``, ``tf.function(self.train_step)``), or called (directly or through
    ``strategy.run(step, ...)``) from a traced function."""
    traced = {f.name for f in functions if any(_is_function(d, ctx) for d in f.decorator_list)}
    calls: list[ast.Call] = index.nodes(ast.Call)
    for call in calls:
        if _is_function(call, ctx) and call.args:
            wrapped = ast_dotted_name(call.args[0])
            if wrapped:
                traced.add(wrapped.rpartition(".")[2])
    changed = True
    while changed:  # what a traced function calls runs traced too
        changed = False
        for function in functions:
            if function.name not in traced:
                continue
            for name in _called_names(function):
                if name not in traced:
                    traced.add(name)
                    changed = True
    return traced


def _called_names(function: _Function) -> set[str]:
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            for target in (node.func, *node.args[:1]):
                spelled = ast_dotted_name(target)
                if spelled:
                    names.add(spelled.rpartition(".")[2])
    return names


def _is_step(function: _Function, index: ModuleIndex, ctx: FileContext) -> bool:
    """A ``with tf.GradientTape()`` block and an ``apply_gradients``/``minimize`` call, in the
    function's own body (not in a function defined in it)."""
    tape = applies = False
    for node in index.own_nodes(function):
        if isinstance(node, ast.withitem):
            tape = tape or _is_tape(node, ctx)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            applies = applies or node.func.attr in APPLY
    return tape and applies


def _is_tape(item: ast.withitem, ctx: FileContext) -> bool:
    expr = item.context_expr
    target = expr.func if isinstance(expr, ast.Call) else expr
    return ctx.tf.qualify(ast_dotted_name(target)) == "tensorflow.GradientTape"


def _advice(function: _Function, index: ModuleIndex, ctx: FileContext) -> str:
    """What to decorate: the function, a step; or, when its tape block runs in a loop of
    the function (the training loop itself, with its ``.numpy()``, checkpoints and prints),
    a function of its own made of the step, which the loop calls."""
    own = index.own_nodes(function)
    loops = [node for node in own if isinstance(node, _LOOPS)]
    if not any(isinstance(node, ast.withitem) and _is_tape(node, ctx) for loop in loops for node in _walk_own(loop)):
        return NOT_TRACED.format(name=function.name)
    applied = {node.func.attr for node in own if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    return STEP_IN_LOOP.format(name=function.name, apply="apply_gradients" if "apply_gradients" in applied else "minimize")


def _walk_own(node: ast.AST) -> list[ast.AST]:
    """The nodes under ``node``, not those of the functions, lambdas and classes in it."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(child for child in ast.iter_child_nodes(current) if not isinstance(child, _SCOPES))
    return found


def _keras_step(function: _Function, index: ModuleIndex) -> bool:
    """A Keras ``train_step`` override (a method named so, of a class with a base that may be a
    Keras model): ``fit`` traces it. A trainer's own ``train_step`` (``class Trainer(object)``,
    Time-series-prediction's custom loop) is called eagerly."""
    return function.name == "train_step" and any(
        _may_be_a_model(cls) for cls in _classes_of(function, index))


def _classes_of(function: _Function, index: ModuleIndex) -> list[ast.ClassDef]:
    classes: list[ast.ClassDef] = index.nodes(ast.ClassDef)
    return [cls for cls in classes if function in cls.body]


def _may_be_a_model(cls: ast.ClassDef) -> bool:
    """Has ``cls`` a base other than ``object`` (a Keras model, or a class that may derive from
    one), or a metaclass?"""
    bases = [base for base in cls.bases if not (isinstance(base, ast.Name) and base.id == "object")]
    return bool(bases or cls.keywords)


def _switch_value(call: ast.Call) -> Optional[ast.expr]:
    """The ``run_eagerly`` argument of ``run_functions_eagerly``, positional or keyword."""
    if call.args:
        return call.args[0]
    return next((keyword.value for keyword in call.keywords if keyword.arg == "run_eagerly"), None)


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_false(node: ast.expr) -> bool:
    """A value that never runs eagerly: ``False``, ``None`` (Keras's default), ``0``."""
    return isinstance(node, ast.Constant) and not node.value


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [TfFunction()]
