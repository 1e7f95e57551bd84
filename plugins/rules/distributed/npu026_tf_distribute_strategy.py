"""NPU026 tf-distribute-strategy: mirrored strategies become ``npu_strategy.NPUStrategy()``.

The strategies the NPU has no counterpart of are reported, and so is TF 1.x's classic
between-graph replication, which is a parameter-server strategy spelled by hand:
``tf.train.ClusterSpec`` with ps and worker jobs, a ``tf.train.Server`` per task and the
variables placed on the ps by ``tf.train.replica_device_setter``. Left as it is, each NPU
worker trains alone (the device setter is harmless on the NPU, so nothing fails): each of those
sites is reported with the NPU's way, data-parallel with HCCL. So is the same set-up an
Estimator takes from ``TF_CONFIG`` (:mod:`._ps_config`): ps device filters in a session config,
the ``"ps"`` job of the cluster a file reads or writes there.
"""

from __future__ import annotations

import ast

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Node,
    Reference,
    arguments,
    hookimpl,
    replace_callee,
)
from npu_codemod.api._toolkit import (
    MIRRORED_STRATEGIES,
    NPU_INIT_IMPORT,
    NPU_STRATEGY,
    distribution,
    tree_text,
)

from ._ps_config import (
    DEVICE_FILTERS,
    DEVICE_FILTERS_PATTERN,
    PS_WORD,
    TF_CONFIG,
    names_ps_device,
    names_ps_job,
    ps_job_sites,
)
from .horovod import BOTH_MODES, GUIDE_DISTRIBUTED, DistributedRule, library, spelled

NEW = "npu_strategy.NPUStrategy"
#: The parameters of the strategies NPU026 rewrites, in order (to name positional arguments).
PARAMETERS = {"MirroredStrategy": ("devices", "cross_device_ops"),
              "MultiWorkerMirroredStrategy": ("communication", "cluster_resolver")}
#: Strategies the NPU has no counterpart of.
OTHERS = frozenset({
    f"tensorflow.{package}.{name}"
    for package in ("distribute", "distribute.experimental", "contrib.distribute")
    for name in ("ParameterServerStrategy", "TPUStrategy", "CentralStorageStrategy",
                 "OneDeviceStrategy")
})
#: TF 1.x's between-graph replication: the cluster, its servers, the ps device setter.
PARAMETER_SERVERS = frozenset({
    "tensorflow.train.ClusterSpec", "tensorflow.train.Server", "tensorflow.distribute.Server",
    "tensorflow.train.replica_device_setter",
})
#: What the NPU does instead of a parameter server (NPU024's broadcast, NPU023's and NPU027's
#: all-reduce), for :data:`PARAMETER_SERVERS` sites.
BETWEEN_GRAPH = ("{site} sets up between-graph parameter-server training, which has no NPU "
                 "counterpart: the NPU trains data-parallel with HCCL, one process per NPU and "
                 "each worker on its own device; drop the ps jobs, servers and device setter, "
                 "broadcast the variables from rank 0 (NPUBroadcastGlobalVariablesHook) and "
                 "all-reduce the gradients (npu_distributed_optimizer_wrapper(opt), or an "
                 "Estimator's hooks=npu_hooks_append()), or train on one device")
#: The same, set up through ``TF_CONFIG`` for an Estimator (:mod:`._ps_config`).
FROM_TF_CONFIG = ("{site} sets up parameter-server training (the ps job of the cluster in "
                  "TF_CONFIG, from which an Estimator starts its roles), which has no NPU "
                  "counterpart: the NPU trains data-parallel with HCCL, one process per NPU and "
                  "each worker on its own device; drop the ps job (from the cluster and from the "
                  "session config's device_filters) and train each worker with "
                  "npu_run_config_init() and hooks=npu_hooks_append(), or on one device")
PS_DEVICES = f"{DEVICE_FILTERS} with /job:ps"
PS_JOB = "the \"ps\" job of a cluster in a file that uses TF_CONFIG"


class TfDistributeStrategy(DistributedRule):
    id = "NPU026"
    name = "tf-distribute-strategy"
    description = ("Replace tf.distribute MirroredStrategy/MultiWorkerMirroredStrategy with "
                   "npu_strategy.NPUStrategy(); report the other strategies.")
    guide_section, guide_section_en = GUIDE_DISTRIBUTED
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("`tf.distribute.MirroredStrategy(...)` and `MultiWorkerMirroredStrategy(...)` "
                "(also `tf.distribute.experimental.*`, `tf.contrib.distribute.*`) become "
                f"`{NEW}()`; their arguments (`devices=`, `cross_device_ops=`, "
                "`communication=`...) are dropped and named in the message.")
    reports = ("`ParameterServerStrategy`, `TPUStrategy`, `CentralStorageStrategy` and "
               "`OneDeviceStrategy` (no NPU counterpart), and a strategy class used as a value. "
               "TF 1.x between-graph parameter-server training: each `tf.train.ClusterSpec`, "
               "`tf.train.Server` and `tf.train.replica_device_setter` site, with the NPU's "
               "data-parallel way (one device per worker, variables broadcast, gradients "
               "all-reduced); the same set-up an Estimator takes from `TF_CONFIG`: a session "
               "config's `device_filters` naming `/job:ps`, and in a file that uses `TF_CONFIG` "
               "the `\"ps\"` job of a cluster (`cluster[\"ps\"]`, `.get(\"ps\")`, "
               "`{\"ps\": hosts}`).")
    example = """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy(
            devices=["/gpu:0", "/gpu:1"],
            cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
        config = tf.estimator.RunConfig(train_distribute=strategy)
        eval_strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
    """
    _scope = "linked"
    _tokens = ("Strategy", "ClusterSpec", "Server", "replica_device_setter", DEVICE_FILTERS, TF_CONFIG)
    _site_names = (DEVICE_FILTERS, PS_WORD)
    _ast_sites = tuple((kind, PS_WORD, names_ps_job) for kind in (ast.Subscript, ast.Call, ast.Dict))
    pattern = DEVICE_FILTERS_PATTERN
    uses = tuple(sorted(MIRRORED_STRATEGIES | OTHERS | PARAMETER_SERVERS)) + (NPU_STRATEGY,)

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if not library(ctx) and names_ps_device(capture["value"]):
            ctx.report(node, "unmigrated", FROM_TF_CONFIG.format(site=PS_DEVICES))

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if TF_CONFIG in ctx.original and not library(ctx):
            for site in ps_job_sites(tree):
                ctx.report(site, "unmigrated", FROM_TF_CONFIG.format(site=PS_JOB))

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if library(ctx):
            return  # Horovod itself: NPU021 reports each file once
        site = spelled(reference)
        if reference.name == NPU_STRATEGY:
            ctx.report(reference, "migrated", f"uses {site}")
        elif reference.name in PARAMETER_SERVERS:
            if reference.call is not None:  # not a type test, nor Server.create_local_server()
                ctx.report(reference, "unmigrated", BETWEEN_GRAPH.format(site=site))
        elif reference.name in OTHERS:
            ctx.report(reference, "unmigrated", f"{site} has no NPU counterpart: train with "
                       f"{NEW}() (one process per NPU) or on one device")
        elif reference.call is None:
            ctx.report(reference, "unmigrated", f"{site} is used as a value, not called: build "
                       f"{NEW}() where the strategy is made")
        elif distribution(ctx).conflict:
            ctx.report(reference, "unmigrated", f"{BOTH_MODES}, then replace {site} with {NEW}()")
        else:
            dropped = _named(reference)
            ctx.defer(lambda: _rewrite(reference))
            ctx.add_import(NPU_INIT_IMPORT)
            note = f"; dropped {', '.join(dropped)}: the NPU strategy takes none" if dropped else ""
            ctx.report(reference, "migrated", f"replaced {site} with {NEW}(){note}")


def _named(reference: Reference) -> list[str]:
    """The arguments of the call as ``name=value`` (positional ones named by the signature)."""
    parameters = PARAMETERS.get(reference.name.rpartition(".")[2], ())
    named, position = [], 0
    for argument in arguments(reference.call) if reference.call is not None else []:
        value = tree_text(argument.value).strip()
        if argument.star:
            named.append(f"{argument.star}{value}")
        elif argument.keyword is None:
            name = parameters[position] if position < len(parameters) else f"argument {position + 1}"
            named.append(f"{name}={value}")
            position += 1
        else:
            named.append(f"{argument.keyword}={value}")
    return named


def _rewrite(reference: Reference) -> None:
    call = reference.call
    if call is not None and len(call.children) == 3:  # (arguments) -> ()
        call.children[1].remove()
    replace_callee(reference, NEW)


@hookimpl
def npu_codemod_rules() -> list:
    return [TfDistributeStrategy()]
