"""What the distributed pack's rules share: Horovod's names, what Ascend's API list says of
each, how a rule spells a site in its messages, and when a rule may rewrite at all.

A rule of the pack rewrites a site only in a TensorFlow file of a repository that trains in
one distribution mode. In a repository that uses Horovod and a ``tf.distribute`` strategy
both, and in a file that imports Horovod but not TensorFlow (a helper module: npu-codemod
changes TensorFlow files only), it reports the site ``unmigrated`` with what to do instead.
A repository that is Horovod itself (:func:`library`) is neither rewritten nor reported by
the pack's rules, but for NPU021's one finding per file.
"""

from __future__ import annotations

from typing import Optional, Union

from npu_codemod.api import FileContext, Reference, Rule, has_unpacking
from npu_codemod.api._toolkit import HOROVOD_MODULES, StringReference, distribution

PACK = "distributed"
#: The sections of Ascend's TensorFlow 1.15 migration guide (the chapters next to the sess.run
#: one the seed guide is), as the guide and Ascend's convert_tf2npu name them, and in English.
GUIDE_HOROVOD = ("Horovod脚本迁移", "Migrating Horovod scripts")
GUIDE_DISTRIBUTED = ("分布式训练脚本迁移", "Migrating distributed training scripts")
#: Where Horovod defines the functions its modules export.
MPI_OPS = "horovod.tensorflow.mpi_ops"
BOTH_MODES = ("the repository trains with Horovod and with a tf.distribute strategy: pick one "
              "distribution mode")
#: Horovod's names (under its module) that work without ``hvd.init()``: its build and state
#: queries, the reduction ops and compressions passed as arguments, ``shutdown``.
NEEDS_NO_INIT = frozenset({
    "init", "shutdown", "is_initialized", "mpi_threads_supported", "mpi_enabled", "mpi_built",
    "gloo_enabled", "gloo_built", "nccl_built", "ddl_built", "ccl_built", "cuda_built",
    "rocm_built", "Compression", "Average", "Sum", "Adasum", "Min", "Max", "Product",
})
#: Why a GPU pinning to a Horovod rank goes (NPU022; NPU025 for one through a holder).
NO_PINNING = ("GPU pinning has no meaning on the NPU, where each process's device comes from how "
              "the job is launched (its rank table and device ID)")
NOT_TF = ("this file imports Horovod but not TensorFlow, so npu-codemod does not rewrite it "
          "(from npu_bridge.npu_init import * gives the NPU names)")


def horovod_names(*members: str) -> tuple[str, ...]:
    """``member`` of each Horovod module for TensorFlow (``horovod.tensorflow.rank``,
    ``horovod.tensorflow.keras.rank``)."""
    return tuple(f"{module}.{member}" for member in members for module in HOROVOD_MODULES)


def npu_name(name: str) -> str:
    """A name of ``from npu_bridge.npu_init import *``, qualified as the import binds it."""
    return f"npu_bridge.npu_init.{name}"


def member(qualified: str) -> str:
    """The name under its Horovod module: ``callbacks.BroadcastGlobalVariablesCallback``."""
    for module in sorted((*HOROVOD_MODULES, MPI_OPS), key=len, reverse=True):
        if qualified.startswith(module + "."):
            return qualified[len(module) + 1:]
    return qualified.rpartition(".")[2]


def spelled(reference: Union[Reference, StringReference]) -> str:
    """The site as the file spells it, for messages: ``hvd.rank()``, ``hvd.allreduce(...)``
    (a call with arguments), ``rank`` (not called)."""
    if isinstance(reference, StringReference):
        return reference.leaf.value[reference.start:reference.end] + "()"
    name = reference.spelled  # a decorator's ``@hvd.elastic.run`` too
    if reference.call is None:
        return str(name)
    return f"{name}()" if len(reference.call.children) == 2 else f"{name}(...)"


def for_tensorflow(qualified: str) -> bool:
    """Is ``qualified`` a name of Horovod for TensorFlow (not ``horovod.torch``)?"""
    return any(qualified == module or qualified.startswith(module + ".")
               for module in (*HOROVOD_MODULES, MPI_OPS))


def library(ctx: FileContext) -> bool:
    """Is the repository Horovod itself (library code: the pack's rules leave it to NPU021's
    one finding per file)?"""
    return distribution(ctx).library


def needs_init(qualified: str) -> bool:
    """Does a use of ``qualified`` (a Horovod name) need ``hvd.init()`` to have run? The module
    itself used as a value may be used any way: it does."""
    if qualified in (*HOROVOD_MODULES, MPI_OPS):
        return True
    return member(qualified).partition(".")[0] not in NEEDS_NO_INIT


def blocked(ctx: FileContext) -> Optional[str]:
    """Why the pack must not rewrite this file, or None."""
    if distribution(ctx).conflict:
        return BOTH_MODES
    if not ctx.tf.bindings:
        return NOT_TF
    return None


def call_problem(reference: Reference, not_called: str) -> str:
    """Why a call of ``reference`` cannot be rewritten from the arguments it is given:
    ``not_called`` when it is used as a value, unpacked arguments; '' when neither."""
    if reference.call is None:
        return not_called
    if has_unpacking(reference.call):
        return "its arguments are unpacked (*args/**kwargs), so which are given is unknown"
    return ""


def report_blocked(ctx: FileContext, site: Union[Reference, StringReference], by_hand: str) -> bool:
    """Report ``site`` ``unmigrated`` (the reason, then ``by_hand``: what to do) when the file
    must not be rewritten; True when it was."""
    reason = blocked(ctx)
    if reason is None:
        return False
    message = f"{reason}: {by_hand}" if reason is NOT_TF else f"{reason}, then {by_hand}"
    if isinstance(site, StringReference):
        ctx.report_at(site.line, site.column, "unmigrated", message)
    else:
        ctx.report(site, "unmigrated", message)
    return True


class DistributedRule(Rule):
    """The metadata every rule of the pack shares."""

    pack = PACK
    default_on = False
    guide_section, guide_section_en = GUIDE_HOROVOD
