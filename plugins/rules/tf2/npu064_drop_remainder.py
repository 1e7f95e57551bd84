"""NPU064 tf2-drop-remainder: static batch shapes for TF 2.x training datasets.

A ``dataset.batch(n)`` whose last batch is smaller starts the dynamic-shape compile path on the
NPU; the TF 2.6 guide ("Setting drop_remainder for static batching") advises
``drop_remainder=True``. Only datasets shown to be ``tf.data`` within the file are rewritten
(made by a ``tf.data`` constructor, or by dataset methods on one, in the same scope); a dataset
the file shows reaching only ``evaluate``/``predict``/``validation_data`` is reported (the last
samples would be dropped from the evaluation), as is a one-argument ``batch(n)`` of a receiver
not shown to be a dataset.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Leaf,
    Node,
    Rule,
    add_keyword,
    arguments,
    find_argument,
    has_unpacking,
    hookimpl,
    is_true,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    TF2,
    TF_NEUTRAL,
    assignment,
    child_index,
    enclosing_scope,
    is_call_trailer,
    is_inside,
    leading_name,
    per_node,
    prefix_name,
    scope_statements,
    tree_text,
    unparenthesised,
)

METHODS = {"batch": 1, "padded_batch": 3}  # drop_remainder's position among the arguments
#: Calls whose result feeds evaluation only (a dataset passed there is not trained on).
EVALUATION = frozenset({"evaluate", "predict", "predict_on_batch", "test_on_batch"})
TRAINING = frozenset({"fit", "train_on_batch", "experimental_distribute_dataset",
                      "distribute_datasets_from_function"})

#: Words of a name that make it an evaluation or inference pipeline (``val_ds``, ``eval_input_fn``).
EVALUATION_WORDS = frozenset("val valid validation eval evaluate evaluation test testing predict "
                             "prediction infer inference decode export serving".split())

ADDED = "added drop_remainder=True (static batch shape for the NPU)"
IN_PLACE = "drop_remainder=True is set"
KEPT = "drop_remainder is given as another value: kept; the NPU compiles a dynamic shape for the last batch"
EVALUATION_ONLY = ("evaluation pipeline ({where}): evaluation would silently drop the last "
                   "samples: pad the last batch instead, or accept the dynamic-shape compile")
UNKNOWN = ("if this is a tf.data.Dataset used for training: add drop_remainder=True (static "
           "batch shape for the NPU)")
UNPACKED = "drop_remainder may come in the unpacked arguments: pass drop_remainder=True explicitly"


class DropRemainder(Rule):
    id = "NPU064"
    name = "tf2-drop-remainder"
    pack = "tf2"
    file_kinds = frozenset({TF2, TF_NEUTRAL})
    description = "Add drop_remainder=True to the batch() of TF 2.x training datasets."
    guide_section = "设置drop_remainder静态化batch"
    guide_section_en = "Setting drop_remainder for Static Batching"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`batch(n)` and `padded_batch(...)` of a dataset shown to be `tf.data` in the "
                "file (a `tf.data` constructor chain, or a name assigned one in the same scope) "
                "get `drop_remainder=True`; one that passes `True` already is left alone.")
    reports = ("A dataset the file shows reaching only `evaluate`/`predict`/`validation_data=`, "
               "or named for evaluation or inference (`val_ds`, `eval_input_fn`): the evaluation "
               "would lose its last samples; `drop_remainder` given another "
               "value; a one-argument `batch(n)` of a receiver not shown to be a dataset; "
               "unpacked arguments.")
    example = """
        import tensorflow as tf


        def pipelines(x_train, y_train, x_val, y_val, batch_size):
            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1000)
            train = train.batch(batch_size)
            val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)
            return train, val


        def run(model, x_train, y_train, x_val, y_val):
            train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)
            val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)
            model.fit(train, epochs=3)
            model.evaluate(val)
    """
    _tokens = ("batch",)
    _site_names = (".batch", ".padded_batch")
    pattern = "trailer< '.' method=('batch' | 'padded_batch') >"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        call = node.next_sibling
        power = node.parent
        if not is_call_trailer(call) or power is None or power.type != symbols.power:
            return
        method = capture["method"]
        method = method[0] if isinstance(method, list) else method
        receiver = power.children[:child_index(node)]
        if _is_dataset(receiver, node, ctx):
            self._check(call, method, power, ctx)
        elif method.value == "batch" and len(arguments(call)) == 1:
            ctx.report(method, "unmigrated", UNKNOWN, level="note")

    def _check(self, call: Node, method: Leaf, power: Node, ctx: FileContext) -> None:
        given = find_argument(call, "drop_remainder", METHODS[method.value])
        if given is not None and is_true(unparenthesised(given.value)):
            ctx.report(method, "migrated", IN_PLACE)
            return
        where = _evaluation_only(power, ctx)
        if where:
            ctx.report(method, "unmigrated", EVALUATION_ONLY.format(where=where))
        elif given is not None:
            ctx.report(method, "unmigrated", KEPT + f" (now: drop_remainder={tree_text(given.value).strip()})")
        elif has_unpacking(call):
            ctx.report(method, "unmigrated", UNPACKED)
        else:
            add_keyword(call, "drop_remainder", "True")
            ctx.report(method, "migrated", ADDED)


def _is_dataset(receiver: Sequence[Base], site: Base, ctx: FileContext) -> bool:
    """Is the expression ``receiver`` (power children) a ``tf.data`` dataset: a chain that
    starts with a ``tensorflow.data`` name, or with a name the scope assigns one?"""
    if not receiver or receiver[0].type != tokens.NAME:
        return False
    head = receiver[0].value
    if _tf_data(leading_name(receiver), ctx):
        return True
    return head in _datasets_of(enclosing_scope(site), ctx)


def _tf_data(dotted: Optional[str], ctx: FileContext) -> bool:
    qualified = ctx.tf.qualify(dotted)
    return bool(qualified and (qualified == "tensorflow.data" or qualified.startswith("tensorflow.data.")))


def _datasets_of(scope: Node, ctx: FileContext) -> frozenset[str]:
    """The names ``scope`` assigns a ``tf.data`` dataset (in order: ``ds = ds.map(...)`` keeps
    ``ds`` one), computed once per scope."""
    return per_node(ctx, "npu064-datasets", scope, lambda node: _assigned_datasets(node, ctx))


def _assigned_datasets(scope: Node, ctx: FileContext) -> frozenset[str]:
    found: set[str] = set()
    for statement in scope_statements(scope):
        assigned = assignment(statement)
        if assigned is None:
            continue
        target, value = assigned
        if target.type != tokens.NAME or value.type != symbols.power:
            continue
        head = value.children[0]
        if head.type == tokens.NAME and (head.value in found or _tf_data(prefix_name(value, len(value.children))
                                                                         or leading_name(value.children), ctx)):
            found.add(target.value)
    return frozenset(found)


def _evaluation_only(power: Node, ctx: FileContext) -> str:
    """Where the batched dataset goes when the file shows it reaching evaluation only:
    ``evaluate(...)``, ``predict(...)`` or ``validation_data=`` (its call directly, or the
    name the statement assigns it to); "" otherwise."""
    direct = _consumer(power)
    if direct:
        return direct if direct in EVALUATION | {"validation_data="} else ""
    named = _evaluation_name(power)
    if named:
        return named
    statement = power.parent
    if statement is None or statement.type != symbols.expr_stmt or statement.children[0].type != tokens.NAME:
        return ""
    name = statement.children[0].value
    consumers = {_consumer(use) for use in _uses(enclosing_scope(power), name, statement)}
    consumers.discard("")
    if consumers and consumers <= (EVALUATION | {"validation_data="}):
        return " and ".join(sorted(consumers))
    return ""


def _consumer(node: Base) -> str:
    """What takes ``node``: the call it is an argument of (``evaluate``, ``fit``, ``other``),
    ``validation_data=``, or ``iter`` for a ``for`` loop over it; "" when it is not passed on
    there (assigned, returned...)."""
    parent = node.parent
    if parent is not None and parent.type == symbols.argument:
        keyword = parent.children[0]
        if keyword.type == tokens.NAME and keyword.value == "validation_data":
            return "validation_data="
        parent = parent.parent
    if parent is not None and parent.type == symbols.arglist:
        parent = parent.parent
    if parent is not None and is_call_trailer(parent) and parent.prev_sibling is not None:
        method = parent.prev_sibling
        name = method.children[1].value if method.type == symbols.trailer and len(method.children) == 2 \
            else getattr(method, "value", "")
        return name if name in EVALUATION | TRAINING else "other"
    if parent is not None and parent.type == symbols.for_stmt:
        return "iter"
    return ""


def _evaluation_name(power: Node) -> str:
    """``a pipeline named val_ds`` when the name the statement assigns, or the function it is
    in, says evaluation or inference; "" otherwise."""
    names = []
    statement = power.parent
    if statement is not None and statement.type == symbols.expr_stmt and statement.children[0].type == tokens.NAME:
        names.append(statement.children[0].value)
    scope = enclosing_scope(power)
    if scope.type == symbols.funcdef:
        names.append(scope.children[1].value)
    for name in names:
        if EVALUATION_WORDS.intersection(re.split(r"[^a-z]+", name.lower())):
            return f"a pipeline named {name}"
    return ""


def _uses(scope: Node, name: str, after: Base) -> list[Base]:
    """The NAME leaves reading ``name`` in ``scope`` (nested functions too) other than in
    ``after`` itself."""
    found = []
    for leaf in scope.leaves():
        if leaf.type == tokens.NAME and leaf.value == name and not is_inside(leaf, after):
            parent = leaf.parent
            if parent is not None and parent.type == symbols.expr_stmt and parent.children[0] is leaf:
                continue  # an assignment to it
            found.append(leaf)
    return found


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DropRemainder()]
