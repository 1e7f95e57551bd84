"""NPU069 tf2-dataset-shard: each NPU worker trains on its own part of the data (report only).

For ``tf.data`` pipelines ``dataset, batch_size = npu.distribute.shard_and_rebatch_dataset(
dataset, global_batch_size)`` shards the dataset and returns the per-worker batch size (TF 2.6
guide, "Distributed training script adaptation"); Ascend's tool restrictions say sharding is
added by hand. Whether a script's batch size is global or already per replica cannot be seen
locally, so nothing is rewritten: the ``batch`` of each training dataset (NPU064's analysis:
``tf.data`` chains, ``tfds.load``, functions of the file or the repository that return a
dataset, names assigned one) is reported when its scope neither shards nor calls
``shard_and_rebatch_dataset``; an existing ``.shard(n, i)`` is reported with the NPU call that
replaces it. A dataset the file shows only being looked at (``next(iter(ds))``, a loop, a
reduction) in a file that trains nothing is no training dataset (spec rules-tf2.md, NPU069:
"the ``.batch(...)`` of each training dataset ... reaching ``fit`` or a training loop"): no
worker trains on it, so there is nothing to shard.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import Base, Capture, FileContext, Rule, find_argument, hookimpl, symbols
from npu_codemod.api._toolkit import (
    TF2,
    TF_NEUTRAL,
    dataset_uses,
    enclosing_scope,
    is_call_trailer,
    tree_text,
)

SHARD_PER_WORKER = ("shard per NPU worker before batching: {ds}, {bs} = npu.distribute."
                    "shard_and_rebatch_dataset({ds}, {global_batch})")
SHARDED = "shard by the NPU worker count and id: use npu.distribute.shard_and_rebatch_dataset"
IN_PLACE = "the pipeline is sharded per NPU worker (shard_and_rebatch_dataset)"
REBATCH = "shard_and_rebatch_dataset"

class DatasetShard(Rule):
    id = "NPU069"
    name = "tf2-dataset-shard"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2, TF_NEUTRAL})  # tf-neutral: only in a TF 2.x repository
    description = "Report TF 2.x training datasets that every NPU worker would read whole."
    guide_section = "分布式训练脚本适配: 数据集切分"
    guide_section_en = "Distributed Training Script Adaptation: dataset sharding"
    guide_url = Rule.catalog_url(id, name)
    reports = ("The `batch(...)`/`padded_batch(...)` of each training `tf.data` pipeline whose "
               "scope has no `shard_and_rebatch_dataset` and no `.shard(` (with the line to "
               "write); an existing `.shard(n, i)` (shard by the NPU worker count and id with "
               "`npu.distribute.shard_and_rebatch_dataset`). Evaluation pipelines (named for "
               "evaluation, or passed to `evaluate`/`predict`/`validation_data=`) are left out, "
               "and so is a pipeline only looked at (`next(iter(ds))`, a loop) in a file that "
               "trains nothing (no `fit`, `GradientTape`, `apply_gradients`, `minimize`, no call "
               "named for training).")
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
        uses = dataset_uses(ctx)
        site = uses.datasets.dataset_call_at(method.lineno, method.column, method.value) if uses else None
        if uses is None or site is None or uses.window_function(site):
            return  # a batch of one window or group (group_by_window's reduce_func): not sharded
        if method.value == "shard":
            ctx.report(method, "unmigrated", SHARDED)
            return
        scope_text = tree_text(enclosing_scope(node))
        if REBATCH in scope_text:
            ctx.report(method, "migrated", IN_PLACE)
        elif ".shard(" not in scope_text and not uses.evaluation_only(site) and not uses.looked_at_only(site):
            ds = uses.dataset_name(site)
            given = find_argument(call, "batch_size", 0)
            size = tree_text(given.value).strip() if given is not None else "batch_size"
            ctx.report(method, "unmigrated", SHARD_PER_WORKER.format(ds=ds, bs=_per_worker(size),
                                                                     global_batch=size or "global_batch"))


def _per_worker(size: Optional[str]) -> str:
    """The name to give the per-worker batch size: the global one's when it is a variable
    (``bs``), else ``batch_size`` (for ``BATCH_SIZE``, ``args.batch_size``, ``64``)."""
    return size if size and re.fullmatch(r"[a-z_][a-z0-9_]*", size) else "batch_size"


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [DatasetShard()]
