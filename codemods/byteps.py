"""BytePS (``import byteps.tensorflow as bps``): Horovod's API (``init``, ``rank``, ``size``,
``DistributedOptimizer``, ``BroadcastGlobalVariablesHook``, ``DistributedGradientTape``...) on
its own collective stack, which the NPU has no counterpart of.

No rule rewrites it (its calls are Horovod's names, but npu-codemod tests the NPU forms only
against Horovod's), and the specs do not name it; so that a BytePS script is never ``ready``
unported, the audits report each of its uses with what replaces it, as Horovod is ported
(NPU100 in TF 1.x code: ``npu_bridge``'s HCCL calls, as NPU021-NPU024 write them; NPU071 in
TF 2.x code: ``npu.distribute``), and the ``tf2-distributed`` rules add no NPU collective to a
file that imports it (it aggregates and broadcasts itself, as Horovod does).
"""

from __future__ import annotations

from typing import Sequence

from .ast_references import site_references
from .qualified import ReferenceSite
from .rule import FileContext
from .tf2_horovod import HOROVOD_TF2, HOROVOD_TF2_CALLBACKS

BYTEPS = "byteps"
#: The modules of BytePS for TensorFlow and Keras.
BYTEPS_MODULES = ("byteps.tensorflow", "byteps.keras")
#: What replaces a BytePS use in TF 1.x code: what the distributed pack writes for Horovod's.
TF1_INSTEAD = {
    "init": "nothing (the NPU starts its collective communication itself, from the rank table)",
    "rank": "get_npu_rank_id()",
    "local_rank": "get_npu_local_rank_id()",
    "size": "get_npu_rank_size()",
    "local_size": "get_npu_local_rank_size()",
    "DistributedOptimizer": "npu_distributed_optimizer_wrapper(optimizer)",
    "BroadcastGlobalVariablesHook": "NPUBroadcastGlobalVariablesHook(root_rank, RANK_ID)",
    "BroadcastGlobalVariablesCallback": "NPUBroadcastGlobalVariablesCallback(root_rank)",
}
SITE = ("BytePS ({spelled}) has no NPU counterpart: port it as Horovod is ported, to the NPU's "
        "HCCL collectives ({route}){instead}")
TF1_ROUTE = "npu_bridge, `from npu_bridge.npu_init import *`; see NPU021-NPU024"
TF2_ROUTE = "npu.distribute of TF Adapter 2.x; see NPU067-NPU070"


def is_byteps_name(name: str) -> bool:
    """Is the qualified ``name`` BytePS for TensorFlow (a module of it, or a name in one)?"""
    return any(name == module or name.startswith(module + ".") for module in BYTEPS_MODULES)


def byteps_sites(ctx: FileContext) -> Sequence[ReferenceSite]:
    """Every use of BytePS for TensorFlow in the file as written (none without an import that
    spells ``byteps``; ``ast`` reads non-ASCII names NFKC-normalized: no shortcut there)."""
    if BYTEPS not in ctx.original and ctx.original.isascii():
        return []
    return [site for site in site_references(ctx, [ctx.names(BYTEPS)]) if is_byteps_name(site.name)]


def byteps_advice(site: ReferenceSite, tf2: bool) -> str:
    """The finding for one BytePS use: no NPU counterpart, and what replaces it (Horovod's
    NPU form) in TF 2.x code when ``tf2``, else in TF 1.x code."""
    last = site.name.rpartition(".")[2]
    instead = (HOROVOD_TF2.get(last) or HOROVOD_TF2_CALLBACKS.get(last)) if tf2 else TF1_INSTEAD.get(last)
    return SITE.format(spelled=site.spelled, route=TF2_ROUTE if tf2 else TF1_ROUTE,
                       instead=f": replace it by {instead}" if instead else "")


def report_byteps(ctx: FileContext, tf2: bool) -> None:
    """One ``unmigrated`` finding of the current rule at each BytePS use of the file."""
    for site in byteps_sites(ctx):
        ctx.report_at(site.line, site.column, "unmigrated", byteps_advice(site, tf2))
