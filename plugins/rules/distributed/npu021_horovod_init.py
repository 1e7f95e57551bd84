"""NPU021 horovod-init: ``hvd.init()`` goes once nothing needs Horovod any more; the NPU starts
its collective communication itself.

Decided in ``finish``, after NPU022-NPU024 rewrote what they migrate: an init is removed only
when no Horovod use that needs it is left in the file, nor in a file of the repository that
runs in one program with it (imports from it or it from them, through any number of imports,
or a third file imports from both: ``horovod_graph``; kept too when that is not known; a
use there through the ``hvd`` of a repository module counts: ``horovod_facts``), and it does not
restart Horovod after a ``shutdown()`` (an elastic reset). Otherwise it stays, reported with
what still needs it.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import (
    FileContext,
    Node,
    Reference,
    hookimpl,
    references_under,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    HOROVOD_CONVENTIONAL,
    HOROVOD_PARAMETER_API,
    enclosing_scope,
    memo,
    parameter_uses,
    pre_order,
    remove_small_statement,
    small_statements,
)

from .horovod import (
    MPI_OPS,
    DistributedRule,
    for_tensorflow,
    horovod_names,
    library,
    member,
    needs_init,
    report_blocked,
    spelled,
)
from .horovod_facts import linked_keeping

STARTED = "the NPU starts its collective communication itself, from the job's rank table"
LIBRARY = "library code: the distributed pack migrates scripts that use Horovod, not Horovod"
INITS = "npu021.inits"
#: What keeps an init when used through a holder of Horovod no rule rewrites (``model.hvd``,
#: a parameter, a star import's names: ``parameter_uses``).
NEEDING_INIT = HOROVOD_PARAMETER_API - {"init"}
#: How many of the uses that keep an init a message names.
NAMED = 5


class HorovodInit(DistributedRule):
    id = "NPU021"
    name = "horovod-init"
    description = ("Remove hvd.init() once no Horovod use needs it: the NPU initialises its "
                   "collective communication itself.")
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("`hvd.init()` as a statement (Horovod for TensorFlow or its Keras modules, any "
                "spelling) is removed when, after this run, no Horovod use that needs it is left "
                "in the file nor in a file of the repository its program reaches (through any "
                "number of imports; kept when that is not known), a use through the `hvd` a "
                "repository module binds (`from common import hvd`, `common.hvd.allreduce`, "
                "`from common import *`) included, and one no rule rewrites (through a "
                "parameter, `model.hvd`, the names of `from horovod.tensorflow import *`); a "
                "block it leaves empty gets `pass`.")
    reports = ("`hvd.init()` kept because Horovod calls still need it (`hvd.allreduce`, "
               "`hvd.elastic.*`, `hvd.callbacks.*`, a `DistributedOptimizer` with arguments the "
               "NPU has no equivalent for...: the message names them), or because it follows "
               "`hvd.shutdown()` (an elastic reset); `hvd.init()` used as a value "
               "(`ok = hvd.init()`) or not called. In a repository that is Horovod itself (its "
               "package provides `init`, `rank` and `size`): one finding per file, no rewrite.")
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
    _scope = "linked"
    _site_names = ("horovod", HOROVOD_CONVENTIONAL)  # every Horovod use: what is left decides
    _tokens = ("horovod", HOROVOD_CONVENTIONAL)  # ``hvd``: imported from a repository module
    uses = horovod_names("init") + (f"{MPI_OPS}.init",)
    after = ("NPU022", "NPU023", "NPU024")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if library(ctx):
            return  # finish reports the file once
        site = spelled(reference)
        if not _is_statement(reference):
            ctx.report(reference, "unmigrated", f"{site} is used as a value: remove it ({STARTED}) "
                       "and what relies on its result")
            return
        if report_blocked(ctx, reference, f"remove {site}"):
            return
        memo(ctx).setdefault(INITS, []).append(reference)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if library(ctx):
            _report_library(tree, ctx)
            return
        inits: list[Reference] = memo(ctx).get(INITS, [])
        if not inits:
            return
        left = _horovod_left(tree, ctx)
        needing = _needing(tree, ctx, inits, left)
        for reference in inits:
            reason = _reset(reference, left) or needing
            if reason:
                ctx.report(reference, "unmigrated", f"kept: {reason}")
            else:
                remove_small_statement(reference.node, ctx.newline)
                ctx.report(reference, "migrated", f"removed {spelled(reference)}: {STARTED}")


def _is_statement(reference: Reference) -> bool:
    """``hvd.init()`` on a line of its own (or between ``;``): its value is dropped."""
    node = reference.node
    return reference.call is not None and node.type == symbols.power \
        and len(node.children) == reference.end + 1 and node.parent.type == symbols.simple_stmt


def _horovod_left(tree: Node, ctx: FileContext) -> list[Reference]:
    """The uses of Horovod for TensorFlow in the tree as the pack's rules left it."""
    return [reference for reference in references_under(tree, [ctx.names("horovod")])
            if for_tensorflow(reference.name)]


def _needing(tree: Node, ctx: FileContext, inits: list[Reference], left: list[Reference]) -> str:
    """What still needs Horovod initialised after this run ('' for nothing): the Horovod uses
    ``left`` in this file, its f-strings' and those of the files linked to it by an import."""
    ours = {id(init.node) for init in inits}
    here = [f"{spelled(reference)} (line {reference.line})" for reference in left
            if id(reference.node) not in ours and needs_init(reference.name)]
    here += [f"an f-string's Horovod call (line {line})" for line in _fstring_lines(tree, ctx)]
    here += [f"{use.spelled} (line {use.line})" for use in parameter_uses(ctx, NEEDING_INIT)]
    elsewhere = [f"{apis} in {module} ({link})"
                 for module, apis, link in linked_keeping(ctx)]
    uses = here + elsewhere
    if not uses:
        return ""
    named = ", ".join(uses[:NAMED]) + (f" and {len(uses) - NAMED} more" if len(uses) > NAMED else "")
    return f"{named} still need Horovod initialised; migrate or remove them first"


def _fstring_lines(tree: Node, ctx: FileContext) -> list[int]:
    """The lines of f-strings that spell a name bound to Horovod for TensorFlow."""
    bound = [name for name, qualified in ctx.names("horovod").bindings.items()
             if for_tensorflow(qualified)]
    lines = []
    for node in pre_order(tree):
        if node.type == tokens.STRING and _fstring_uses(node.value, bound):
            lines.append(node.lineno)
    return lines


def _fstring_uses(value: str, bound: list[str]) -> bool:
    """Does the f-string ``value`` spell one of the names ``bound`` (as a name, not a part of
    one)? Text that reads so outside its fields counts too: the init stays."""
    opening = next((index for index, char in enumerate(value) if char in "'\""), 0)
    if not bound or "f" not in value[:opening].lower():
        return False
    return re.search(r"\b(?:%s)\b" % "|".join(map(re.escape, bound)), value[opening:]) is not None


def _reset(init: Reference, left: list[Reference]) -> Optional[str]:
    """Why ``init`` restarts Horovod (it follows a ``shutdown()`` of the Horovod uses ``left``
    in its scope), or None."""
    scope = enclosing_scope(init.node)
    for reference in left:
        if member(reference.name) == "shutdown" and (reference.line, reference.column) < (
                init.line, init.column) and enclosing_scope(reference.node) is scope:
            return (f"{spelled(init)} follows {spelled(reference)} (a reset that restarts "
                    "Horovod): remove both once nothing uses Horovod")
    return None


def _report_library(tree: Node, ctx: FileContext) -> None:
    """One finding for a file of a repository that is Horovod: at its first Horovod import."""
    names = ctx.names("horovod")
    if not any(for_tensorflow(qualified) for qualified in names.bindings.values()):
        return
    for statement in small_statements(tree):
        if statement.type in (symbols.import_name, symbols.import_from) \
                and "horovod" in str(statement):
            ctx.report(statement, "unmigrated", LIBRARY)
            return
    ctx.report_at(1, 0, "unmigrated", LIBRARY)


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodInit()]
