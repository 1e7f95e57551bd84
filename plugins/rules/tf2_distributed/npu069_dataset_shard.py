"""NPU069 tf2-dataset-shard: each NPU worker trains on its own part of the data (report only).

For ``tf.data`` pipelines ``dataset, batch_size = npu.distribute.shard_and_rebatch_dataset(
dataset, global_batch_size)`` shards the dataset and returns the per-worker batch size (TF 2.6
guide, "Distributed training script adaptation"); Ascend's tool restrictions say sharding is
added by hand. Whether a script's batch size is global or already per replica cannot be seen
locally, so nothing is rewritten: the ``batch`` of each training dataset the file shows (a chain
from a ``tf.data`` constructor, or a name the scope assigns one) is reported when its scope neither
shards nor calls ``shard_and_rebatch_dataset``; an existing ``.shard(n, i)`` is reported with the
NPU call that replaces it.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import Base, Capture, FileContext, Node, Rule, hookimpl, symbols, tokens
from npu_codemod.api._toolkit import (
    TF2,
    child_index,
    enclosing_scope,
    is_call_trailer,
    leading_name,
    per_node,
    scope_statements,
    tree_text,
)

SHARD_PER_WORKER = ("shard per NPU worker before batching: {ds}, {bs} = npu.distribute."
                    "shard_and_rebatch_dataset({ds}, {global_batch})")
SHARDED = "shard by the NPU worker count and id: use npu.distribute.shard_and_rebatch_dataset"
IN_PLACE = "the pipeline is sharded per NPU worker (shard_and_rebatch_dataset)"
REBATCH = "shard_and_rebatch_dataset"
#: Words of a name that make it an evaluation or inference pipeline (``val_ds``, ``eval_input_fn``).
EVALUATION_WORDS = frozenset("val valid validation eval evaluate evaluation test testing predict "
                             "prediction infer inference decode export serving".split())
EVALUATION = frozenset({"evaluate", "predict", "validation_data"})


class DatasetShard(Rule):
    id = "NPU069"
    name = "tf2-dataset-shard"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2})
    description = "Report TF 2.x training datasets that every NPU worker would read whole."
    guide_section = "分布式训练脚本适配: 数据集切分"
    guide_section_en = "Distributed Training Script Adaptation: dataset sharding"
    guide_url = Rule.catalog_url(id, name)
    reports = ("The `batch(...)`/`padded_batch(...)` of each training `tf.data` pipeline whose "
               "scope has no `shard_and_rebatch_dataset` and no `.shard(` (with the line to "
               "write); an existing `.shard(n, i)` (shard by the NPU worker count and id with "
               "`npu.distribute.shard_and_rebatch_dataset`). Evaluation pipelines (named for "
               "evaluation, or passed to `evaluate`/`predict`/`validation_data=`) are left out.")
    example = """
        import tensorflow as tf


        def input_fn(files, batch_size, ctx=None):
            ds = tf.data.TFRecordDataset(files)
            if ctx is not None:
                ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
            return ds.batch(batch_size)


        def train(model, x, y, batch_size, seed):
            tf.random.set_seed(seed)
            train_ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(batch_size)
            model.fit(train_ds, epochs=3)
    """
    _tokens = ("batch", ".shard(")
    _site_names = (".batch", ".padded_batch", ".shard")
    pattern = "trailer< '.' method=('batch' | 'padded_batch' | 'shard') >"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        call = node.next_sibling
        power = node.parent
        if not is_call_trailer(call) or power is None or power.type != symbols.power:
            return
        method = node.children[1]
        receiver = list(power.children[:child_index(node)])
        if not _is_dataset(receiver, node, ctx):
            return
        if method.value == "shard":
            ctx.report(method, "unmigrated", SHARDED)
            return
        scope_text = tree_text(enclosing_scope(node))
        if REBATCH in scope_text:
            ctx.report(method, "migrated", IN_PLACE)
        elif ".shard(" not in scope_text and not _evaluation(power, node):
            ds = _dataset_name(power, receiver, ctx)
            size = tree_text(call.children[1]).split(",")[0].strip() if len(call.children) > 2 else "batch_size"
            ctx.report(method, "unmigrated", SHARD_PER_WORKER.format(ds=ds, bs=_per_worker(size),
                                                                     global_batch=size or "global_batch"))


def _is_dataset(receiver: list[Base], site: Base, ctx: FileContext) -> bool:
    """A chain from a ``tensorflow.data`` name, or from a name the scope assigns one."""
    if not receiver or receiver[0].type != tokens.NAME:
        return False
    if _tf_data(leading_name(receiver), ctx):
        return True
    return receiver[0].value in _datasets_of(enclosing_scope(site), ctx)


def _tf_data(dotted: Optional[str], ctx: FileContext) -> bool:
    qualified = ctx.tf.qualify(dotted) or ""
    return qualified == "tensorflow.data" or qualified.startswith("tensorflow.data.")


def _datasets_of(scope: Node, ctx: FileContext) -> frozenset[str]:
    return per_node(ctx, "npu069-datasets", scope, lambda node: _assigned_datasets(node, ctx))


def _assigned_datasets(scope: Node, ctx: FileContext) -> frozenset[str]:
    found: set[str] = set()
    for statement in scope_statements(scope):
        if statement.type != symbols.expr_stmt or len(statement.children) != 3:
            continue
        target, op, value = statement.children
        if target.type != tokens.NAME or op.type != tokens.EQUAL or value.type != symbols.power:
            continue
        head = value.children[0]
        if head.type == tokens.NAME and (head.value in found or _tf_data(leading_name(value.children), ctx)):
            found.add(target.value)
    return frozenset(found)


def _evaluation(power: Node, site: Base) -> bool:
    """Is the pipeline named for evaluation (its target or function), or passed straight to
    ``evaluate``/``predict``/``validation_data=``?"""
    names = []
    statement = power.parent
    if statement is not None and statement.type == symbols.expr_stmt and statement.children[0].type == tokens.NAME:
        names.append(statement.children[0].value)
    scope = enclosing_scope(site)
    if scope.type == symbols.funcdef:
        names.append(scope.children[1].value)
    if any(EVALUATION_WORDS.intersection(re.split(r"[^a-z]+", name.lower())) for name in names):
        return True
    parent = power.parent
    if parent is not None and parent.type == symbols.argument and parent.children[0].type == tokens.NAME:
        return parent.children[0].value == "validation_data"
    while parent is not None and parent.type in (symbols.arglist, symbols.argument):
        parent = parent.parent
    method = parent.prev_sibling if parent is not None and is_call_trailer(parent) else None
    return method is not None and method.type == symbols.trailer and len(method.children) == 2 \
        and method.children[1].value in EVALUATION


def _dataset_name(power: Node, receiver: list[Base], ctx: FileContext) -> str:
    """The pipeline's name: the receiver's when it is a dataset variable, else the target's."""
    if not _tf_data(leading_name(receiver), ctx):
        return str(receiver[0].value)
    statement = power.parent
    if statement is not None and statement.type == symbols.expr_stmt and statement.children[0].type == tokens.NAME:
        return str(statement.children[0].value)
    return "dataset"


def _per_worker(size: Optional[str]) -> str:
    return size if size and re.fullmatch(r"[A-Za-z_]\w*", size) else "batch_size"


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DatasetShard()]
