"""NPU027 distributed-hooks: in a distributed repository, the NPU's hooks and callbacks run.

``Estimator.train``/``TrainSpec``/``EvalSpec`` get ``hooks=npu_hooks_append(...)``, Keras
``fit``/``fit_generator`` get ``callbacks=npu_callbacks_append(...)``; only for an Estimator or
a Keras model the repository is shown to build (``BuiltModels``): a ``.train(``/``.fit(`` of
anything else (a user class, a parameter) is left alone and reported once per file, one of an
object of a library that trains no TensorFlow model (PyTorch Lightning, scikit-learn), or a
call of a function of the repository (``train_lib.train(hparams)``: NPU027 acts inside it), is
left alone without a word. (A compiled model's optimizer, the spec's third bullet, is NPU023's: see there.)
"""

from __future__ import annotations

from typing import Optional, Union

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Node,
    Reference,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    name_reference,
    set_positional,
    symbols,
    tokens,
    wrap_argument,
)
from npu_codemod.api._toolkit import (
    ESTIMATOR,
    ESTIMATOR_MODULES,
    KERAS,
    NPU_INIT_IMPORT,
    BuiltModels,
    bound_values,
    called_method,
    distribution,
    is_call_trailer,
    memo,
    position,
    prefix_name,
    tree_text,
)

from ._broadcast_functions import HOROVOD_STATE, NPU_STATE, returned_broadcast
from ._hook_lists import copy_reason, holds
from .horovod import BOTH_MODES, GUIDE_DISTRIBUTED, DistributedRule, library, npu_name
from .npu024_horovod_broadcast import (
    NPU_CALLBACK_NAME,
    NPU_HOOK_NAME,
    HorovodBroadcast,
    broadcast_in_run,
    held_broadcast,
    held_broadcasts,
)
from .own_functions import is_own_function

HOOKS = ("npu_hooks_append", "hooks_list")
CALLBACKS = ("npu_callbacks_append", "callbacks_list")
#: Where each call takes its hooks or callbacks: (keyword, position, expected receiver kind).
METHODS = {"train": ("hooks", 1, ESTIMATOR), "fit": ("callbacks", 5, KERAS),
           "fit_generator": ("callbacks", 4, KERAS)}
SPECS = {"tensorflow.estimator.TrainSpec": 2, "tensorflow.estimator.EvalSpec": 3}
APPENDS = frozenset({npu_name(HOOKS[0]), npu_name(CALLBACKS[0])})
#: What each append function appends: the NPU's broadcast of the variables.
BROADCASTER = {"hooks": NPU_HOOK_NAME, "callbacks": NPU_CALLBACK_NAME}
UNKNOWN = "npu027.unknown"
#: What a function of another module returns: the NPU's broadcast after this run, or
#: Horovod's, which stays (``_returned``).
IN_RUN, KEPT = "in-run", "kept"
#: Libraries whose ``fit``/``train`` never train a TensorFlow model (PyTorch Lightning's
#: ``trainer.fit(model)``, scikit-learn's ``clf.fit(x, y)``...): their objects are left alone.
NOT_TENSORFLOW = ("torch", "pytorch_lightning", "lightning", "sklearn", "xgboost", "lightgbm",
                  "catboost", "mxnet", "jax", "flax", "paddle", "fastai", "statsmodels")


class DistributedHooks(DistributedRule):
    id = "NPU027"
    name = "distributed-hooks"
    description = ("In a distributed repository, pass npu_hooks_append() to Estimator training "
                   "and npu_callbacks_append() to Keras fit.")
    guide_section, guide_section_en = GUIDE_DISTRIBUTED
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("In a distributed repository (Horovod, imported by any file, a launcher that "
                "imports no TensorFlow too; or a strategy): `estimator.train(...)`, "
                "`tf.estimator.TrainSpec(...)` and `EvalSpec(...)` get "
                "`hooks=npu_hooks_append(hooks_list=<hooks>)` (`hooks=npu_hooks_append()` when "
                "they have none); Keras `model.fit(...)`/`fit_generator(...)` get "
                "`callbacks=npu_callbacks_append(callbacks_list=<callbacks>)`. These append "
                "the NPU's hook to the list they are given and drop what is not a list, so a "
                "list read again after the call, an attribute, one handed over in a loop, and a "
                "tuple go in as a copy: `hooks_list=list(<hooks>)`. Hooks (callbacks) that already "
                "hold the NPU's broadcast hook (callback), or Horovod's that NPU024 replaces with "
                "it, are left as they are: the append would broadcast the variables twice. So are "
                "a list or tuple display holding one (`hooks=[hvd.BroadcastGlobalVariablesHook(0)]`, "
                "`[bcast_hook]`), a sum with such a part (`hooks + [bcast_hook]`), a name bound "
                "only to such values, a call of a function of the file that returns only such "
                "values (`training_hooks()`), a call of a function of another module of the "
                "repository that does (`utils.make_hooks()`, imported or star-imported: NPU024 "
                "replaces Horovod's broadcast there), and a name one is appended "
                "to before the call (`training_hooks.append(bcast_hook)`). A name counts by what "
                "reaches the call in source order: not a binding after it (but in a loop around "
                "both), nor one or an append that a binding in between replaces; one in a branch "
                "counts with the one before it. Only for an "
                "Estimator or Keras model the repository builds: a name or attribute bound in "
                "its scope to an Estimator class (or a subclass of the repository), "
                "`tf.keras.Model(...)`, `Sequential(...)`, `load_model(...)`, a Keras model "
                "class of the repository, or a function of the repository returning one. "
                "(The optimizer of `model.compile(...)`: NPU023.)")
    reports = ("Once per file, the first `.train(`/`.fit(`/`.fit_generator(` of anything not "
               "shown to be such a model (a user class, a parameter): it is left alone. Not an "
               "object shown to come from a library that trains no TensorFlow model (PyTorch "
               "Lightning's `trainer.fit(model)`, scikit-learn, XGBoost...), nor a call of a "
               "function of the repository (`train_lib.train(hparams)`: its Estimator is "
               "migrated inside it). A call whose hooks or callbacks may be in `**kwargs`. Hooks "
               "(callbacks) that hold Horovod's broadcast through a holder no rule rewrites "
               "(`[hvd_utils.hvd.BroadcastGlobalVariablesHook(0)]`: NPU025 reports it, to be "
               "replaced with the NPU's), or that a function of another module returns holding "
               "Horovod's broadcast which stays there (a file that imports no TensorFlow, a hook "
               "with `device=`...): left as they are, as the NPU's hook would then be there "
               "twice.")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd

        estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
        estimator.train(input_fn=train_input_fn, steps=1000)
        trainer.train(epochs=3)
    """
    modules = ESTIMATOR_MODULES  # a file importing only tensorflow_estimator trains too
    _scope = "linked"
    _site_names = (".train", ".fit", ".fit_generator")  # x.train(...): attributes
    _tokens = ("train", "fit", "Spec")
    calls = tuple(SPECS)
    pattern = "trailer< '.' ('train' | 'fit' | 'fit_generator') >"  # called: see visit

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        index = called_method(node)
        if index is None or not distribution(ctx).distributed or library(ctx):
            return
        power, method = node.parent, node.children[1].value
        keyword, place, kind = METHODS[method]
        receiver = power.children[:index]
        if ctx.analysis(BuiltModels).receiver_kind(receiver) != kind:
            if not _foreign(power, receiver, ctx) and not _own_function(power, receiver, method, ctx):
                memo(ctx).setdefault(UNKNOWN, []).append((position(power), power, method))
            return
        self._append(power, power.children[index + 1], keyword, place, ctx)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if distribution(ctx).distributed and not library(ctx):
            self._append(reference, reference.call, "hooks", SPECS[reference.name], ctx)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        unknown = memo(ctx).get(UNKNOWN)
        if unknown:
            _, node, method = min(unknown, key=lambda item: item[0])
            ctx.report(node, "unmigrated", f".{method}() is not shown to train an Estimator "
                       "or a Keras model this repository builds, so it is left alone: if it "
                       "does, pass callbacks=npu_callbacks_append(callbacks_list=...) (Keras) or "
                       "hooks=npu_hooks_append(hooks_list=...) (Estimator)")

    def _append(self, site: Union[Base, Reference], call: Node, keyword: str, place: int,
                ctx: FileContext) -> None:
        append, list_keyword = HOOKS if keyword == "hooks" else CALLBACKS
        given = find_argument(call, keyword, place)
        if given is not None and _appended(given.value, ctx):
            ctx.report(site, "migrated", f"{keyword} are {append}(...)")
            return
        if given is None and has_unpacking(call):
            ctx.report(site, "unmigrated", f"{keyword} may be in the unpacked arguments: pass "
                       f"{keyword}={append}({list_keyword}=<{keyword}>)")
            return
        if distribution(ctx).conflict:
            ctx.report(site, "unmigrated", f"{BOTH_MODES}, then pass {keyword}={append}(...)")
            return
        if given is not None and holds(given.value, lambda item: broadcast_in_run(item, ctx, keyword),
                                       returns=lambda call: _returned(call, keyword, ctx) == IN_RUN):
            ctx.report(site, "migrated", f"the {keyword} already hold {BROADCASTER[keyword]}(...) (or "
                       f"Horovod's, which NPU024 replaces with it): {append}(...) would add a second "
                       "broadcast of the variables, so they stay as they are")
            return
        kept = _kept_broadcast(given.value, keyword, ctx) if given is not None else None
        if kept is not None:
            ctx.report(site, "unmigrated", f"{kept} {BROADCASTER[keyword]}(...) and leave the {keyword} "
                       f"{'here ' if ' returns ' in kept else ''}as they are: {append}(...) would add a "
                       "second broadcast of the variables")
            return
        if given is None or is_none(given.value):
            code, message = f"{append}()", f"passed {keyword}={append}()"
        else:
            code, message = _wrapped(given.value, keyword, append, list_keyword)
        ctx.defer(lambda: _pass(call, keyword, place, code))
        ctx.add_import(NPU_INIT_IMPORT)
        ctx.report(site, "migrated", message)


def _foreign(power: Node, receiver: list[Base], ctx: FileContext) -> bool:
    """Is the receiver shown to be an object of a library that trains no TensorFlow model
    (:data:`NOT_TENSORFLOW`): a call of one of its names, or a name bound only to such calls
    (``trainer = pl.Trainer(...)``)?"""
    if len(receiver) > 1 and is_call_trailer(receiver[-1]):
        return _library_name(receiver[0], ctx)
    spelled = prefix_name(power, len(receiver))
    values = bound_values(receiver[0], spelled) if spelled is not None else None
    return bool(values) and all(
        value.type == symbols.power and is_call_trailer(value.children[-1])
        and _library_name(value.children[0], ctx) for value in values or ())


def _own_function(power: Node, receiver: list[Base], method: str, ctx: FileContext) -> bool:
    """Is the call one of a function of the repository (``train_lib.train(hparams)``, a module
    of the repository the file imports)? NPU027 acts inside it, where it trains its model."""
    spelled = prefix_name(power, len(receiver))
    return spelled is not None and is_own_function(spelled, method, ctx)


def _library_name(head: Base, ctx: FileContext) -> bool:
    """Is ``head`` a name the file imports from one of :data:`NOT_TENSORFLOW`?"""
    return head.type == tokens.NAME and any(
        head.value in ctx.names(library).bindings for library in NOT_TENSORFLOW)


def _wrapped(value: Base, keyword: str, append: str, list_keyword: str) -> tuple[str, str]:
    """The code that hands ``value`` (the call's hooks or callbacks) to ``append``, ``{}``
    standing for it, and the finding's message: a copy where the list is read again or is no
    list (:func:`copy_reason`)."""
    reason = copy_reason(value, keyword)
    if reason is None:
        return f"{append}({list_keyword}={{}})", f"wrapped the {keyword} in {append}({list_keyword}=...)"
    return (f"{append}({list_keyword}=list({{}}))",
            f"wrapped a copy of the {keyword} in {append}({list_keyword}=list(...)): {reason}")


def _pass(call: Node, keyword: str, place: int, code: str) -> None:
    """Give the call ``keyword=<code>``: ``code`` wraps the given value where it has ``{}``,
    else replaces it (``None``) or is added."""
    if "{}" in code:
        wrap_argument(call, keyword, code, place)
    else:
        set_positional(call, place, code, keyword=keyword)


def _held(value: Base, keyword: str, ctx: FileContext) -> Optional[str]:
    """How the hooks (callbacks) ``value`` spell Horovod's broadcast called through a holder no
    rule rewrites (``held_broadcasts``), when they hold one (``holds``); else None."""
    held = ctx.analysis(held_broadcasts)[keyword]
    found: list[str] = []
    if held and holds(value, lambda item: _spelled_in(item, held, found)):
        return found[0]
    return None


def _returned(call: Base, keyword: str, ctx: FileContext) -> Optional[str]:
    """:data:`IN_RUN` when ``call`` (of a function of another module) returns ``keyword`` that
    hold the NPU's broadcast after this run (NPU024 replaces Horovod's there), :data:`KEPT`
    when they hold Horovod's that stays, else None (``broadcast_function_facts``)."""
    state = returned_broadcast(call, ctx, keyword)
    if state == NPU_STATE or state == HOROVOD_STATE and HorovodBroadcast.id in ctx.enabled_rules:
        return IN_RUN
    return KEPT if state is not None else None


def _kept_broadcast(value: Base, keyword: str, ctx: FileContext) -> Optional[str]:
    """What the hooks ``value`` hold of Horovod's broadcast that stays after this run, and
    where to replace it (the message's start), or None."""
    kept = _kept_elsewhere(value, keyword, ctx)
    if kept is not None:
        return (f"the {keyword} {kept} returns hold Horovod's broadcast, which stays in its module: "
                "replace it there with")
    held = _held(value, keyword, ctx)
    if held is not None:
        return f"the {keyword} hold {held}, Horovod's broadcast, which NPU025 reports: replace it with"
    return None


def _kept_elsewhere(value: Base, keyword: str, ctx: FileContext) -> Optional[str]:
    """How the hooks ``value`` spell a call of another module's function returning Horovod's
    broadcast that stays there (``utils.make_hooks()``), when they hold one; else None."""
    found: list[str] = []

    def kept(call: Base) -> bool:
        if _returned(call, keyword, ctx) != KEPT:
            return False
        found.append(tree_text(call.children[0]).strip() + "".join(
            tree_text(part) for part in call.children[1:-1]) + "()")
        return True

    return found[0] if holds(value, lambda item: False, returns=kept) else None


def _spelled_in(item: Base, held: dict[tuple[int, int], str], found: list[str]) -> bool:
    spelled = held_broadcast(item, held)
    if spelled is not None:
        found.append(spelled)
    return spelled is not None


def _appended(value: Base, ctx: FileContext) -> bool:
    """``npu_hooks_append(...)``, or a name bound to it in its scope."""
    if value.type == tokens.NAME:
        bound = bound_values(value, str(value.value))
        return bool(bound) and all(_append_call(item, ctx) for item in bound or ())
    return _append_call(value, ctx)


def _append_call(value: Base, ctx: FileContext) -> bool:
    found = name_reference(value, [ctx.names("npu_bridge")], APPENDS)
    return found is not None and found.call is not None


@hookimpl
def npu_codemod_rules() -> list:
    return [DistributedHooks()]
