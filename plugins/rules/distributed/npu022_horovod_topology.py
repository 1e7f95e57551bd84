"""NPU022 horovod-topology: Horovod's rank and size calls become the NPU's; GPU pinning goes."""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Reference,
    hookimpl,
    replace_callee,
    symbols,
)
from npu_codemod.api._toolkit import (
    HOROVOD_CONVENTIONAL,
    NPU_INIT_IMPORT,
    StringReference,
    assignment,
    fstring_references,
    memo,
    prefix_name,
    remove_small_statement,
)

from .horovod import (
    MPI_OPS,
    NO_PINNING,
    DistributedRule,
    horovod_names,
    library,
    member,
    npu_name,
    report_blocked,
    spelled,
)

#: Horovod's topology functions and the NPU's.
TOPOLOGY = {"rank": "get_npu_rank_id", "local_rank": "get_npu_local_rank_id",
            "size": "get_npu_rank_size", "local_size": "get_npu_local_rank_size"}
HOROVOD = horovod_names(*TOPOLOGY) + tuple(f"{MPI_OPS}.{name}" for name in TOPOLOGY)
NPU = tuple(npu_name(name) for name in TOPOLOGY.values())
PINNING = "visible_device_list"
#: What each topology call numbers the processes by, for a GPU pinning's message.
NUMBERED_BY = {"rank": "rank", "local_rank": "local rank", "size": "world size", "local_size": "local size"}
#: How much of a pinning's value its message quotes.
QUOTED = 60


class HorovodTopology(DistributedRule):
    id = "NPU022"
    name = "horovod-topology"
    description = ("Replace hvd.rank()/local_rank()/size()/local_size() with the NPU's "
                   "get_npu_*() functions; remove GPU pinning to the local rank.")
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("`hvd.rank()` -> `get_npu_rank_id()`, `hvd.local_rank()` -> "
                "`get_npu_local_rank_id()`, `hvd.size()` -> `get_npu_rank_size()`, "
                "`hvd.local_size()` -> `get_npu_local_rank_size()`, wherever they appear "
                "(arguments, conditions, the expressions of f-strings, "
                "`dataset.shard(hvd.size(), hvd.rank())`; a name not called is respelled "
                "too). A GPU pinning line, `config.gpu_options.visible_device_list = "
                "str(hvd.local_rank())` (or by `hvd.rank()`), is removed: GPU pinning has no meaning "
                "on the NPU; the message quotes the line and what it pinned by.")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd

        config = tf.ConfigProto()
        config.gpu_options.visible_device_list = str(hvd.local_rank())
        dataset = dataset.shard(hvd.size(), hvd.rank())
        checkpoint_dir = f"./checkpoints-{hvd.rank()}"
    """
    modules = ("tensorflow", "horovod")
    _scope = "linked"
    #: A Horovod import (``hvd``: from a repository module), or the NPU names (a second run).
    _tokens = ("horovod", HOROVOD_CONVENTIONAL, "get_npu_")
    uses = HOROVOD + NPU
    pattern = "STRING"  # f-strings: fissix keeps ``f"{hvd.rank()}"`` as one leaf

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if library(ctx):
            return  # Horovod itself: NPU021 reports each file once
        if reference.name in NPU:
            ctx.report(reference, "migrated", f"uses {spelled(reference)}")
            return
        pinning = _pinning(reference.node)
        if pinning is not None:
            self._unpin(pinning, reference, ctx)
            return
        new = TOPOLOGY[member(reference.name)]
        wanted = f"{new}()" if reference.call is not None else new
        if report_blocked(ctx, reference, f"replace {spelled(reference)} with {wanted}"):
            return
        ctx.defer(lambda: replace_callee(reference, new))
        ctx.add_import(NPU_INIT_IMPORT)
        ctx.report(reference, "migrated", f"replaced {spelled(reference)} with {wanted}")

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if "rank" not in node.value and "size" not in node.value or node.value[:1] not in "fFrR" \
                or library(ctx):
            return  # neither an f-string nor one that names the topology, or Horovod itself
        respelled = []
        for found in fstring_references(node, [ctx.names("horovod"), ctx.names("npu_bridge")],
                                        frozenset(HOROVOD + NPU)):
            if found.name in NPU:
                ctx.report_at(found.line, found.column, "migrated", f"uses {spelled(found)}")
                continue
            new = TOPOLOGY[member(found.name)]
            if report_blocked(ctx, found, f"replace {spelled(found)} with {new}() in this f-string"):
                continue
            respelled.append((found, new))
            ctx.report_at(found.line, found.column, "migrated",
                          f"replaced {spelled(found)} with {new}() in an f-string")
        if respelled:
            ctx.defer(lambda: _respell(node, respelled))
            ctx.add_import(NPU_INIT_IMPORT)

    def _unpin(self, pinning: Base, reference: Reference, ctx: FileContext) -> None:
        handled = memo(ctx).setdefault("npu022.pinning", [])
        if any(statement is pinning for statement in handled):
            return  # ``str(hvd.local_rank() % hvd.local_size())``: one line, one finding
        handled.append(pinning)
        found = _pinned(pinning, reference)
        if report_blocked(ctx, reference, f"remove the GPU pinning {found}: {NO_PINNING}"):
            return
        ctx.defer(lambda: remove_small_statement(pinning, ctx.newline))
        ctx.report(pinning, "migrated", f"removed the GPU pinning {found}: {NO_PINNING}")


def _pinning(node: Base) -> Optional[Base]:
    """The statement ``<config>.gpu_options.visible_device_list = <... node ...>`` holding
    ``node`` in its value, or None."""
    while node.parent is not None and node.parent.type != symbols.simple_stmt:
        node = node.parent
    assigned = assignment(node)
    if assigned is None:
        return None
    target = assigned[0]
    if target.type != symbols.power:
        return None
    name = prefix_name(target, len(target.children))
    return node if name is not None and name.endswith(f".gpu_options.{PINNING}") else None


def _pinned(pinning: Base, reference: Reference) -> str:
    """What the pinning statement is, for its message: ``config.gpu_options.visible_device_list =
    str(hvd.rank()) (each process's GPU numbered by its Horovod rank, hvd.rank())``."""
    target, value = (" ".join(str(part)[len(part.prefix):].split())  # not the comment above it
                     for part in (pinning.children[0], pinning.children[-1]))
    if len(value) > QUOTED:
        value = value[:QUOTED - 3] + "..."
    what = NUMBERED_BY[member(reference.name)]
    return f"{target} = {value} (each process's GPU numbered by its Horovod {what}, {spelled(reference)})"


def _respell(leaf: Base, respelled: list[tuple[StringReference, str]]) -> None:
    """Each name of the f-string ``leaf`` by its new spelling, the last first (offsets hold)."""
    for found, new in reversed(respelled):
        leaf.value = leaf.value[:found.start] + new + leaf.value[found.end:]


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodTopology()]
