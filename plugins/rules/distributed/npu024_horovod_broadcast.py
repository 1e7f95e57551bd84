"""NPU024 horovod-broadcast: Horovod's broadcast hook and callback become the NPU's."""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Argument,
    Base,
    FileContext,
    Leaf,
    Name,
    Node,
    Reference,
    find_argument,
    hookimpl,
    name_reference,
    replace_callee,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    NPU_INIT_IMPORT,
    add_argument,
    is_call_trailer,
    parameter_uses,
    position,
    remove_argument,
    tree_text,
)

from .horovod import (
    DistributedRule,
    blocked,
    call_problem,
    horovod_names,
    library,
    npu_name,
    report_blocked,
    spelled,
)

HOOK = horovod_names("BroadcastGlobalVariablesHook")
CALLBACK = horovod_names("callbacks.BroadcastGlobalVariablesCallback")
BROADCAST_ALL = horovod_names("broadcast_global_variables")
NPU_HOOK_NAME = "NPUBroadcastGlobalVariablesHook"
NPU_CALLBACK_NAME = "NPUBroadcastGlobalVariablesCallback"
NPU = (npu_name(NPU_HOOK_NAME), npu_name(NPU_CALLBACK_NAME))
#: Horovod's broadcast and the NPU's, by where a training call takes them.
BROADCASTS = {"hooks": (HOOK, NPU[0]), "callbacks": (CALLBACK, NPU[1])}
#: Horovod's broadcast by where a training call takes it, as ``parameter_uses`` names it.
HELD = {"hooks": "BroadcastGlobalVariablesHook", "callbacks": "callbacks.BroadcastGlobalVariablesCallback"}
#: The NPU hook's second argument: this process's rank, from the launcher's environment.
RANK_ID = "int(os.getenv('RANK_ID', '0'))"


class HorovodBroadcast(DistributedRule):
    id = "NPU024"
    name = "horovod-broadcast"
    description = ("Replace Horovod's BroadcastGlobalVariablesHook/Callback with the NPU's "
                   "NPUBroadcastGlobalVariablesHook/Callback.")
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = (f"`hvd.BroadcastGlobalVariablesHook(root)` -> `{NPU_HOOK_NAME}(root, {RANK_ID})` "
                "(and `import os` when the file does not import it itself); "
                "`hvd.callbacks.BroadcastGlobalVariablesCallback(root)` (Horovod's Keras module) "
                f"-> `{NPU_CALLBACK_NAME}(root_rank=root)`. `device=''` (the default) is dropped.")
    reports = ("`hvd.broadcast_global_variables(root)` (broadcast through the NPU hook instead), "
               "a hook or callback with another `device=`, `*args`/`**kwargs`, no root rank, or "
               "used as a value.")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd

        hooks = [hvd.BroadcastGlobalVariablesHook(0),
                 tf.train.StopAtStepHook(last_step=20000 // hvd.size())]
        bcast = hvd.broadcast_global_variables(0)
    """
    modules = ("tensorflow", "horovod")
    _scope = "linked"
    _tokens = ("roadcast",)
    uses = HOOK + CALLBACK + BROADCAST_ALL + NPU

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if library(ctx):
            return  # Horovod itself: NPU021 reports each file once
        site = spelled(reference)
        if reference.name in NPU:
            ctx.report(reference, "migrated", f"uses {site}")
            return
        if reference.name in BROADCAST_ALL:
            ctx.report(reference, "unmigrated", f"{site} broadcasts through Horovod: pass "
                       f"{NPU_HOOK_NAME}(0, {RANK_ID}) to the session's hooks instead")
            return
        new = NPU_HOOK_NAME if reference.name in HOOK else NPU_CALLBACK_NAME
        problem = broadcast_problem(reference)
        by_hand = f"replace {site} with {new}(<root rank>{', ' + RANK_ID if new == NPU_HOOK_NAME else ''})"
        if problem:
            ctx.report(reference, "unmigrated", f"{site}: {problem}; {by_hand}")
            return
        if report_blocked(ctx, reference, by_hand):
            return
        if new == NPU_HOOK_NAME:
            ctx.defer(lambda: _hook(reference))
            if ctx.names("os").bindings.get("os") != "os":
                ctx.add_import("import os")
        else:
            ctx.defer(lambda: _callback(reference))
        ctx.add_import(NPU_INIT_IMPORT)
        ctx.report(reference, "migrated", f"replaced {site} with {new}(...)")


def broadcast_problem(reference: Reference) -> str:
    """Why the hook or callback cannot be rewritten, or ''."""
    call = reference.call
    problem = call_problem(reference, "used as a value, not called")
    if problem or call is None:
        return problem
    if _root(call) is None:
        return "no root rank is passed"
    device = find_argument(call, "device", 1)
    if device is not None and tree_text(device.value).strip() not in ("''", '""'):
        return f"no NPU equivalent for device={tree_text(device.value).strip()}"
    return ""


def broadcast_in_run(node: Base, ctx: FileContext, keyword: str) -> bool:
    """Is ``node`` a call of the NPU's broadcast hook (``keyword`` ``"hooks"``) or callback
    (``"callbacks"``), or of Horovod's that NPU024 turns into it in this run (NPU027:
    npu_hooks_append would add a second)?"""
    horovod, npu = BROADCASTS[keyword]
    found = name_reference(node, [ctx.names("horovod"), ctx.names("npu_bridge")], frozenset((*horovod, npu)))
    if found is None or found.call is None or node.type != symbols.power or node.children[-1] is not found.call:
        return False
    return found.name == npu or _rewritten(found, ctx)


def _rewritten(reference: Reference, ctx: FileContext) -> bool:
    """Does NPU024 replace ``reference`` (Horovod's hook or callback) in this run?"""
    return HorovodBroadcast.id in ctx.enabled_rules and not library(ctx) and blocked(ctx) is None \
        and not broadcast_problem(reference)


def held_broadcasts(ctx: FileContext) -> dict[str, dict[tuple[int, int], str]]:
    """Each call of Horovod's broadcast hook (``"hooks"``) and callback (``"callbacks"``) the
    file makes through a holder no rule rewrites (``hvd_utils.hvd.BroadcastGlobalVariablesHook(0)``:
    NPU025 reports them, to be replaced by the NPU's), as spelled, by position."""
    members = {member: keyword for keyword, member in HELD.items()}
    found: dict[str, dict[tuple[int, int], str]] = {keyword: {} for keyword in HELD}
    for use in parameter_uses(ctx, frozenset(members)):
        if use.call:
            found[members[use.member]][(use.line, use.column)] = use.spelled
    return found


def held_broadcast(node: Base, held: dict[tuple[int, int], str]) -> Optional[str]:
    """How ``node`` is spelled when it is one of ``held`` (:func:`held_broadcasts`'s of one
    keyword), called: its whole value, not a part of it."""
    if node.type != symbols.power or not is_call_trailer(node.children[-1]):
        return None
    called = node.children[-2]
    name = called.value if called.type == tokens.NAME else called.children[-1].value
    spelled = held.get(position(node))
    return spelled if spelled is not None and spelled.partition("(")[0].endswith(str(name)) else None


def _root(call: Node) -> Optional[Argument]:
    return find_argument(call, "root_rank", 0)


def _hook(reference: Reference) -> None:
    """``(root_rank=0, device='')`` -> ``(0, int(os.getenv('RANK_ID', '0')))``."""
    call, root = _call_and_root(reference)
    if root.keyword is not None:
        value = root.value
        value.remove()
        value.prefix = root.node.prefix
        root.node.replace(value)
    add_argument(call, RANK_ID)
    replace_callee(reference, NPU_HOOK_NAME)


def _callback(reference: Reference) -> None:
    """``(0, device='')`` -> ``(root_rank=0)``."""
    call, root = _call_and_root(reference)
    if root.keyword is None:  # the value moves under the keyword, so edits inside it land
        value, hole = root.value, Name("root")
        named = Node(symbols.argument, [Name("root_rank"), Leaf(tokens.EQUAL, "="), hole])
        value.replace(named)
        named.prefix, value.prefix = value.prefix, ""
        hole.replace(value)
    replace_callee(reference, NPU_CALLBACK_NAME)


def _call_and_root(reference: Reference) -> tuple[Node, Argument]:
    """The call (its ``device=`` dropped) and its root rank: both there, as ``_problem`` said."""
    call = reference.call
    assert call is not None
    _drop_device(call)
    root = _root(call)
    assert root is not None
    return call, root


def _drop_device(call: Node) -> None:
    device = find_argument(call, "device", 1)
    if device is not None:
        remove_argument(call, device)


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodBroadcast()]
