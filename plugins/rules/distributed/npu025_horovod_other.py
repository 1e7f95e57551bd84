"""NPU025 horovod-other: every other Horovod use is reported; an import nothing uses goes.

Runs after NPU021-NPU024 (``finish``, on the tree their edits left): the Horovod names still
used then are the ones no rule of the pack migrates, and an import of Horovod names that
nothing uses any more is removed (all of them, once no Horovod use is left): a job on the NPU
has no Horovod. An ``import horovod.tensorflow`` whose names nothing in the file ever used (before
this run) is there for what importing does (it registers Horovod's ops, so that a graph with them
loads): it stays, reported. Never a package's public API: an import of an ``__init__.py``, of a module
whose ``__all__`` lists its names, or one whose names another module of the repository imports
from this one (``horovod_facts``) stays.
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
    HOROVOD_MODULES,
    HOROVOD_PARAMETER_API,
    HOROVOD_STAR_IMPORT,
    STAR,
    ApiStatus,
    horovod_star_imports,
    import_bindings,
    parameter_uses,
    pre_order,
    remove_small_statement,
    small_statements,
    support_list,
)

from .horovod import MPI_OPS, NO_PINNING, DistributedRule, blocked, for_tensorflow, library, member, spelled
from .horovod_facts import CALLBACK_CLASSES, imported_elsewhere

#: What the pack's other rules own, by name under a Horovod module: NPU025 leaves them to those.
OWNED = frozenset({
    "init", "rank", "local_rank", "size", "local_size", "DistributedOptimizer",
    "DistributedGradientTape", "BroadcastGlobalVariablesHook",
    "callbacks.BroadcastGlobalVariablesCallback", "broadcast_global_variables",
})
HCCL = "npu_bridge.hccl.hccl_ops"
#: What to write instead, for the collectives the NPU has.
ADVICE = {
    "allreduce": f"use {HCCL}.allreduce(tensor, 'sum') (divide by get_npu_rank_size() to average)",
    "allgather": f"use {HCCL}.allgather(tensor, get_npu_rank_size())",
    "broadcast": f"use {HCCL}.broadcast([tensor], root_rank)",
}
ADVICE.update({  # NPU021's, NPU022's and NPU024's, for a use they cannot rewrite
    "init": "remove it once no Horovod use needs it (the NPU starts its collective communication itself)",
    "rank": "use get_npu_rank_id()", "local_rank": "use get_npu_local_rank_id()",
    "size": "use get_npu_rank_size()", "local_size": "use get_npu_local_rank_size()",
    "BroadcastGlobalVariablesHook": "use NPUBroadcastGlobalVariablesHook(root_rank, "
                                    "int(os.getenv('RANK_ID', '0')))",
    "broadcast_global_variables": "pass NPUBroadcastGlobalVariablesHook(root_rank, "
                                  "int(os.getenv('RANK_ID', '0'))) to the session's hooks instead",
    "callbacks.BroadcastGlobalVariablesCallback": "use NPUBroadcastGlobalVariablesCallback(root_rank=root_rank)",
})
OTHERWISE = f"remove it, or use the NPU's collective communication ({HCCL})"
#: A GPU pinning line before a use (``config.gpu_options.visible_device_list = str(hvd.local_rank())``).
PINNING = re.compile(r"\.gpu_options\.visible_device_list[ \t]*=(?!=)")
#: What the code a caller passes the Horovod module to must do with it (a module passed on).
PASSED_ON = ("migrate the Horovod uses there (hvd.DistributedOptimizer -> "
             "npu_distributed_optimizer_wrapper(opt), NPU023; hvd.allreduce and the others as "
             "NPU025 reports them), then stop passing it: removing it here alone drops what they "
             "do there (the gradient all-reduce: each worker would train alone)")
#: What code that keeps the Horovod module in an attribute must do with it.
KEPT_IN = ("migrate the Horovod uses through {holder} (NPU025 and NPU023 report them), then "
           "remove it: removing it alone breaks them")
#: What NPU025 says of an import of Horovod names that nothing in the file ever used.
IMPORTED_FOR_EFFECT = ("nothing in this file uses the names this import binds, so it is here for "
                       "what importing Horovod does (it registers Horovod's TensorFlow ops, which a "
                       "graph with Horovod ops needs to load): it stays; remove it once nothing "
                       "needs them (a job on the NPU has no Horovod)")
#: ``__all__`` given as something other than a list or tuple of strings.
ALL_UNKNOWN = frozenset({"*"})


#: Horovod's Keras callbacks read through a name of its ``callbacks`` module (``cbs.X``).
CALLBACK_ATTRIBUTES = tuple(f".{name}" for name in sorted(CALLBACK_CLASSES))

class HorovodOther(DistributedRule):
    id = "NPU025"
    name = "horovod-other"
    description = ("Report every other Horovod use with its status in Ascend's API list; remove "
                   "the Horovod import once nothing uses it.")
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("An import of Horovod names that nothing uses once the other rules of the pack "
                "are done is removed: all of a TensorFlow file's Horovod imports when no Horovod "
                "use is left (an import that also imports something else is reported instead). "
                "Never from an `__init__.py`, from a module whose `__all__` lists the names, nor "
                "when another module of the repository imports them from this one: those "
                "imports are a package's public API (reported instead); nor an `import "
                "horovod.tensorflow` whose names the file never used: it is there for what "
                "importing does, registering Horovod's ops (reported instead).")
    reports = ("Every other `hvd.*` use: `allreduce`, `allgather`, `broadcast`, `join`, "
               "`elastic.*`, `Compression`, the `*_op` functions, `shutdown`, `mpi_*`/"
               "`nccl_built`, Horovod's other Keras callbacks, the module used as a value, with "
               "its status in Ascend's API list and what to write instead; Horovod's API used "
               "through a parameter that holds the module (as NPU023 finds them), a local `hvd`, "
               "an attribute of `self` a method sets to the module (`self.hvd.allreduce`), any "
               "attribute named `hvd` (`model.hvd.rank()`), a variable of a repository module "
               "that holds the module (`hvd.hvd_global_object.BroadcastGlobalVariablesHook(0)` "
               "after `from utils import hvd_wrapper as hvd`, or `hvd` after `from common import "
               "*`), a star import of a repository module that passes Horovod's names on (those "
               "it imports from Horovod, all of them when it star-imports Horovod, through "
               "further star imports too; as its `__all__` lists them), a module of the repository that star-imports Horovod (`from utils import "
               "hvd_utils as hvd`, then `hvd.init()`) or imports a name from it (then "
               "`hvd_utils.init()`, or `init()` imported from it; Horovod's Keras callbacks "
               "module under a name of its own, `cbs.MetricAverageCallback()` after `from utils "
               "import cbs`, `utils` holding `import horovod.keras.callbacks as cbs`), or `from horovod.tensorflow "
               "import *` (the import and each use of its names: never rewritten); Horovod's "
               "Keras callbacks too (`<holder>.callbacks.BroadcastGlobalVariablesCallback(0)`).")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd
        from horovod.tensorflow import nccl_built

        hvd.init()
        if nccl_built():
            print("NCCL")
    """
    example_with = ("NPU021",)
    modules = ("tensorflow", "horovod")
    _scope = "linked"
    _site_names = ("horovod", HOROVOD_CONVENTIONAL, *(f".{name}" for name in sorted(HOROVOD_PARAMETER_API)),
                   *CALLBACK_ATTRIBUTES)
    _tokens = ("horovod", HOROVOD_CONVENTIONAL, ".allreduce", ".allgather", ".broadcast", ".rank()",
               ".size()", ".local_rank()", ".local_size()", *CALLBACK_ATTRIBUTES,
               "import *")  # ``from common import *``: Horovod's names passed on (``horovod_stars``)
    after = ("NPU021", "NPU022", "NPU023", "NPU024")

    def start(self, tree: Node, ctx: FileContext) -> None:
        ctx.analysis(_used_before)  # the uses before any rule of the pack edits

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if library(ctx):
            return
        for line, column, module in horovod_star_imports(ctx):
            ctx.report_at(line, column, "unmigrated", HOROVOD_STAR_IMPORT.format(module=module))
        lines = ctx.original.splitlines()
        for use in parameter_uses(ctx, HOROVOD_PARAMETER_API - {"DistributedOptimizer"}):  # that one is NPU023's
            pins = PINNING.search(lines[use.line - 1][:use.column]) if use.line <= len(lines) else None
            advice = f"remove this GPU pinning line: {NO_PINNING}" if pins else ADVICE.get(use.member, OTHERWISE)
            ctx.report_at(use.line, use.column, "unmigrated", use.message(advice))
        names = ctx.names("horovod")
        if not names.bindings:
            return
        used = set()
        for reference in references_under(tree, [names]):
            used.add(_head(reference))  # any Horovod use keeps its import
            if for_tensorflow(reference.name) and not _owned(reference.name):
                ctx.report(reference, "unmigrated", _message(reference))
        used |= _in_fstrings(tree, names.bindings)
        if blocked(ctx) is None:
            self._remove_imports(tree, ctx, used)

    def _remove_imports(self, tree: Node, ctx: FileContext, used: set[str]) -> None:
        """Remove each import of Horovod names that nothing uses any more."""
        names = ctx.names("horovod")
        for statement in list(small_statements(tree)):
            if statement.type not in (symbols.import_name, symbols.import_from):
                continue
            bound = [name for name, _ in import_bindings(statement) if name != STAR]
            horovod = [name for name in bound if for_tensorflow(names.bindings.get(name, ""))
                       or names.bindings.get(name) == "horovod"]
            if not horovod or used.intersection(horovod):
                continue
            if statement.type == symbols.import_name \
                    and not ctx.analysis(_used_before).intersection(horovod):
                ctx.report(statement, "unmigrated", IMPORTED_FOR_EFFECT)
                continue
            if len(horovod) < len(bound):
                ctx.report(statement, "unmigrated", "nothing uses Horovod's names of this import "
                           "any more: remove them from it (a job on the NPU has no Horovod)")
                continue
            exported = _exported(tree, ctx, horovod)
            if exported:
                ctx.report(statement, "unmigrated", f"nothing here uses {', '.join(horovod)} any "
                           f"more, but {exported}: it stays; remove it once nothing imports them "
                           "from this module")
                continue
            ctx.report(statement, "migrated", "removed the Horovod import: nothing uses it any more")
            remove_small_statement(statement, ctx.newline)


def _used_before(ctx: FileContext) -> frozenset[str]:
    """The Horovod names the file uses (calls, values, f-strings) as it is read: computed at
    :meth:`HorovodOther.start`, before the pack's rules remove any use."""
    names = ctx.names("horovod")
    if not names.bindings:
        return frozenset()
    used = {_head(reference) for reference in references_under(ctx.tree, [names])}
    return frozenset(used | _in_fstrings(ctx.tree, names.bindings))


def _exported(tree: Node, ctx: FileContext, names: list[str]) -> str:
    """Why the import of ``names`` is the module's public API ('' when it is not): the file is
    a package's ``__init__.py``, its ``__all__`` lists one of them (or is not a plain list
    of strings), another module of the repository imports one from here."""
    if ctx.path.replace("\\", "/").rpartition("/")[2] == "__init__.py":
        return "this is a package's __init__.py, whose imports are its API"
    exports = _all(tree)
    if exports is not None and (exports == ALL_UNKNOWN or exports.intersection(names)):
        return "the module's __all__ exports them"
    imported = [name for name in names if imported_elsewhere(ctx, name)]
    if imported:
        return f"another module of the repository imports {', '.join(imported)} from this one"
    return ""


def _all(tree: Node) -> Optional[frozenset[str]]:
    """The names a module-level ``__all__ = [...]`` lists; :data:`ALL_UNKNOWN` when it is not
    a plain list or tuple of strings (or is extended); None without ``__all__``."""
    found: Optional[frozenset[str]] = None
    for statement in small_statements(tree):
        if statement.type != symbols.expr_stmt \
                or statement.children[0].type != tokens.NAME \
                or statement.children[0].value != "__all__":
            continue
        value = statement.children[-1]
        strings = [leaf for leaf in pre_order(value) if leaf.type == tokens.STRING]
        others = [leaf for leaf in pre_order(value) if leaf.type == tokens.NAME]
        if len(statement.children) != 3 or statement.children[1].type != tokens.EQUAL \
                or others or not strings:
            return ALL_UNKNOWN  # ``__all__ += ...``, names, a comprehension...
        found = frozenset(leaf.value.strip("'\"") for leaf in strings)
    return found


def _head(reference: Reference) -> str:
    node = reference.node
    return node.value if node.type == tokens.NAME else node.children[0].value


def _owned(qualified: str) -> bool:
    return member(qualified) in OWNED


def _message(reference: Reference) -> str:
    name = member(reference.name)
    site = spelled(reference)
    if reference.name in (*HOROVOD_MODULES, MPI_OPS):
        callee = _passed_to(reference)
        if callee:
            return f"the Horovod module ({site}) is passed to {callee}: {PASSED_ON}"
        holder = _stored_in(reference)
        if holder:
            return f"the Horovod module ({site}) is kept in {holder}: {KEPT_IN.format(holder=holder)}"
        return f"the Horovod module is used as a value ({site}): {OTHERWISE}"
    return f"{site} has no NPU form ({_listed(f'hvd.{name}')}): {ADVICE.get(name, OTHERWISE)}"


def _stored_in(reference: Reference) -> str:
    """``self.hvd`` when the module ``reference`` is the value of ``self.hvd = hvd``, else ''."""
    node = reference.node
    statement = node.parent
    if statement is None or statement.type != symbols.expr_stmt or statement.children[-1] is not node \
            or len(statement.children) != 3 or statement.children[1].type != tokens.EQUAL:
        return ""
    target = statement.children[0]
    return str(target).strip() if target.type == symbols.power else ""


def _passed_to(reference: Reference) -> str:
    """``create_optimizer()``, ``create_optimizer() as hvd=`` when the module ``reference`` is an
    argument of a call (it goes to code that uses it), else ''."""
    node, keyword = reference.node, ""
    if node.parent.type == symbols.argument and node.parent.children[-1] is node:
        keyword, node = f" as {node.parent.children[0].value}=", node.parent
    holder = node.parent.parent if node.parent.type == symbols.arglist else node.parent
    if holder.type != symbols.trailer or holder.children[0].type != tokens.LPAR:
        return ""
    callee = holder.prev_sibling
    parts: list[str] = []
    while callee is not None:
        parts.insert(0, str(callee).strip())
        callee = callee.prev_sibling
    return f"{''.join(parts)}(){keyword}" if parts else ""


def _listed(api: str) -> str:
    """What Ascend's support list says of ``api`` (``hvd.allreduce``): its status there, as
    the longest listed prefix has it."""
    listed, status = support_list().lookup(api)
    if not listed:
        return f"{api} is not in Ascend's API list"
    if status == ApiStatus.UNDER_ANALYSIS:
        return f"Ascend's API list has {listed} under analysis"
    return f"Ascend's API list marks {listed} {status}"


def _in_fstrings(tree: Node, bindings: dict) -> set[str]:
    """The Horovod names f-strings of the file spell (``f"{hvd.allreduce(x)}"``)."""
    spelled_names = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, bindings)))
    found = set()
    for node in pre_order(tree):
        if node.type == tokens.STRING:
            quote = min(node.value.find(q) for q in "'\"" if q in node.value)
            if "f" in node.value[:quote].lower():
                found.update(spelled_names.findall(node.value))
    return found


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodOther()]
