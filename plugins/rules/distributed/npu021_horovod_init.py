"""NPU021 horovod-init: ``hvd.init()`` goes; the NPU starts its collective communication itself."""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, hookimpl, remove_small_statement, symbols

from .horovod import MPI_OPS, DistributedRule, horovod_names, report_blocked, spelled

STARTED = "the NPU starts its collective communication itself, from the job's rank table"


class HorovodInit(DistributedRule):
    id = "NPU021"
    name = "horovod-init"
    description = "Remove hvd.init(): the NPU initialises its collective communication itself."
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("`hvd.init()` as a statement (Horovod for TensorFlow or its Keras module, any "
                "spelling) is removed; a block it leaves empty gets `pass`.")
    reports = ("`hvd.init()` used as a value (`ok = hvd.init()`) or not called: remove it and "
               "what relies on its result.")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd


        def main(_):
            # Horovod: initialize Horovod.
            hvd.init()
            train()


        def initialized():
            return hvd.init()
    """
    modules = ("tensorflow", "horovod")
    scope = "linked"
    tokens = ("horovod",)
    uses = horovod_names("init") + (f"{MPI_OPS}.init",)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        site = spelled(reference)
        if not _is_statement(reference):
            ctx.report(reference, "unmigrated", f"{site} is used as a value: remove it ({STARTED}) "
                       "and what relies on its result")
            return
        if report_blocked(ctx, reference, f"remove {site}"):
            return
        ctx.defer(lambda: remove_small_statement(reference.node, ctx.newline))
        ctx.report(reference, "migrated", f"removed {site}: {STARTED}")


def _is_statement(reference: Reference) -> bool:
    """``hvd.init()`` on a line of its own (or between ``;``): its value is dropped."""
    node = reference.node
    return reference.call is not None and node.type == symbols.power \
        and len(node.children) == reference.end + 1 and node.parent.type == symbols.simple_stmt


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodInit()]
