"""NPU023 horovod-optimizer: every distributed optimizer is the NPU's, wrapped once.

``hvd.DistributedOptimizer(opt)`` becomes ``npu_distributed_optimizer_wrapper(opt)``, and in a
distributed repository the optimizer a Keras model of the repository compiles with is wrapped
too (the spec's NPU027 bullet, kept here so that one rule owns every wrapper it writes or finds:
a second run then reports each of them once, under this rule, whoever wrapped it).
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Argument,
    Base,
    Capture,
    FileContext,
    Node,
    Reference,
    arguments,
    dotted_name,
    find_argument,
    has_unpacking,
    hookimpl,
    name_reference,
    replace_callee,
    symbols,
    tokens,
    wrap_argument,
)
from npu_codemod.api._toolkit import (
    KERAS,
    NPU_INIT_IMPORT,
    BuiltModels,
    bound_values,
    called_method,
    distribution,
    parameter_uses,
    remove_argument,
    tree_text,
)

from .horovod import (
    BOTH_MODES,
    DistributedRule,
    call_problem,
    horovod_names,
    library,
    npu_name,
    report_blocked,
    spelled,
)

OPTIMIZER = horovod_names("DistributedOptimizer")
TAPE = horovod_names("DistributedGradientTape")
WRAPPER_NAME = "npu_distributed_optimizer_wrapper"
WRAPPER = npu_name(WRAPPER_NAME)
#: The parameters of ``DistributedOptimizer`` after the optimizer, in order, per module.
PARAMETERS = {
    "horovod.tensorflow": ("name", "use_locking", "device_dense", "device_sparse", "compression",
                           "sparse_as_dense", "backward_passes_per_step", "op",
                           "gradient_predivide_factor", "average_aggregated_gradients",
                           "num_groups", "groups", "process_set"),
    "horovod.tensorflow.keras": ("name", "device_dense", "device_sparse", "compression",
                                 "sparse_as_dense", "gradient_predivide_factor", "op",
                                 "backward_passes_per_step", "average_aggregated_gradients",
                                 "num_groups", "groups", "process_set", "scale_local_gradients"),
    "horovod.keras": ("name", "device_dense", "device_sparse", "compression", "sparse_as_dense",
                      "gradient_predivide_factor", "op", "num_groups", "groups"),
}
#: The defaults written as literals, and those that are Horovod names (by their ending).
LITERAL_DEFAULTS = {
    "name": ("None",), "use_locking": ("False",), "device_dense": ("''", '""'),
    "device_sparse": ("''", '""'), "sparse_as_dense": ("False",),
    "backward_passes_per_step": ("1",), "gradient_predivide_factor": ("1.0", "1"),
    "average_aggregated_gradients": ("False",), "num_groups": ("0",), "groups": ("None",),
    "scale_local_gradients": ("True",),
}
NAMED_DEFAULTS = {"compression": "Compression.none", "op": "Average",
                  "process_set": "global_process_set"}
COMPILE = "compile"


class HorovodOptimizer(DistributedRule):
    id = "NPU023"
    name = "horovod-optimizer"
    description = ("Replace hvd.DistributedOptimizer(opt) with npu_distributed_optimizer_wrapper(opt); "
                   "wrap a distributed Keras model's compile() optimizer once.")
    guide_url = DistributedRule.catalog_url(id, name)
    rewrites = ("`hvd.DistributedOptimizer(opt, ...)` (Horovod for TensorFlow or Keras) becomes "
                "`npu_distributed_optimizer_wrapper(opt)`; the other arguments are dropped when "
                "they are Horovod's defaults (`compression=hvd.Compression.none`, `op=hvd.Average`, "
                "`sparse_as_dense=False`...). In a distributed repository, "
                "`model.compile(optimizer=<opt>)` of a Keras model the repository builds gets "
                "`optimizer=npu_distributed_optimizer_wrapper(<opt>)`, unless `<opt>` is already "
                "wrapped (here, or in a name bound to the wrapper in the same scope).")
    reports = ("`DistributedOptimizer` of a parameter that holds the Horovod module (a caller "
               "passes it, or it is named `hvd`), of a local `hvd`, or of an attribute of `self` "
               "a method sets to the module; `DistributedOptimizer` with an argument that is not the default (no NPU "
               "equivalent: the call stays), with `*args`/`**kwargs` or used as a value; "
               "`hvd.DistributedGradientTape` (eager code); a compiled Keras model whose "
               "optimizer is a name such as `'adam'`, or not given.")
    example = """
        import tensorflow as tf
        import horovod.tensorflow as hvd

        opt = tf.train.RMSPropOptimizer(0.001)
        opt = hvd.DistributedOptimizer(opt, compression=hvd.Compression.none)
        fp16 = hvd.DistributedOptimizer(opt, compression=hvd.Compression.fp16)
    """
    modules = ("tensorflow", "horovod")
    _scope = "linked"
    _site_names = (f".{COMPILE}",)  # model.compile(...): an attribute
    _tokens = ("Distributed", WRAPPER_NAME, f".{COMPILE}")
    uses = OPTIMIZER + TAPE + (WRAPPER,)
    pattern = f"trailer< '.' '{COMPILE}' >"  # ``<receiver>.compile``: called, see visit

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if library(ctx):
            return  # Horovod itself: NPU021 reports each file once
        if reference.name == WRAPPER:
            ctx.report(reference, "migrated", f"uses {WRAPPER_NAME}()")
        elif reference.name in TAPE:
            ctx.report(reference, "unmigrated", f"{spelled(reference)} wraps an eager gradient "
                       f"tape: compute the gradients in graph mode with an optimizer wrapped in "
                       f"{WRAPPER_NAME}(opt)")
        else:
            self._optimizer(reference, ctx)

    def _optimizer(self, reference: Reference, ctx: FileContext) -> None:
        site = spelled(reference)
        by_hand = f"replace {site} with {WRAPPER_NAME}(<the optimizer>)"
        problem = _problem(reference, ctx)
        if problem:
            ctx.report(reference, "unmigrated", f"{site}: {problem}; {by_hand}")
            return
        if report_blocked(ctx, reference, by_hand):
            return
        dropped = _named_arguments(reference)
        ctx.defer(lambda: _rewrite(reference))
        ctx.add_import(NPU_INIT_IMPORT)
        note = f" (dropped {', '.join(dropped)}: Horovod's defaults)" if dropped else ""
        ctx.report(reference, "migrated", f"replaced {site} with {WRAPPER_NAME}(...){note}")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        """The optimizers of Horovod passed as a parameter (``horovod_params``): reported."""
        if library(ctx):
            return
        for use in parameter_uses(ctx, {"DistributedOptimizer"}):
            ctx.report_at(use.line, use.column, "unmigrated", use.message(
                f"replace it with {WRAPPER_NAME}(<the optimizer>) (from npu_bridge.npu_init "
                "import *)"))

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        index = called_method(node)
        if index is None or not distribution(ctx).distributed or library(ctx):
            return
        power = node.parent
        if ctx.analysis(BuiltModels).receiver_kind(power.children[:index]) != KERAS:
            return
        call = power.children[index + 1]
        optimizer = find_argument(call, "optimizer", 0)
        if optimizer is None:
            if not has_unpacking(call):
                ctx.report(power, "unmigrated", f"compile() without an optimizer uses 'rmsprop': "
                           f"pass optimizer={WRAPPER_NAME}(tf.keras.optimizers.RMSprop())")
            return
        wrapped = _wrapped(optimizer.value, ctx) if _is_object(optimizer.value) else False
        if wrapped is None:
            ctx.report(optimizer.value, "unmigrated", f"{_code(optimizer)}: where this optimizer "
                       f"comes from is not known here: make sure it is wrapped once, in "
                       f"{WRAPPER_NAME}(), where it is built")
        elif not wrapped:
            self._wrap(call, optimizer, ctx)
        # else the wrapper's own site reports it

    def _wrap(self, call: Base, optimizer: Argument, ctx: FileContext) -> None:
        value = optimizer.value
        if not _is_object(value):
            ctx.report(value, "unmigrated", f"{_code(optimizer)} is no "
                       f"optimizer object: build one (tf.keras.optimizers...) and pass "
                       f"optimizer={WRAPPER_NAME}(<it>)")
            return
        if distribution(ctx).conflict:
            ctx.report(value, "unmigrated", f"{BOTH_MODES}, then wrap this optimizer in {WRAPPER_NAME}()")
            return
        ctx.defer(lambda: _wrap_optimizer(call))
        ctx.add_import(NPU_INIT_IMPORT)
        ctx.report(value, "migrated", f"wrapped the optimizer the Keras model compiles with in "
                   f"{WRAPPER_NAME}()")


def _wrap_optimizer(call: Base) -> None:
    wrap_argument(call, "optimizer", f"{WRAPPER_NAME}({{}})", 0)


def _problem(reference: Reference, ctx: FileContext) -> str:
    """Why the DistributedOptimizer call cannot become the wrapper, or ''."""
    call = reference.call
    problem = call_problem(reference, "used as a value, not called: wrap the optimizer where it is built")
    if problem or call is None:
        return problem
    if _optimizer_of(call) is None:
        return "no optimizer is passed"
    others = _non_defaults(reference, ctx)
    return f"no NPU equivalent for {', '.join(others)}" if others else ""


def _is_object(value: Base) -> bool:
    """Not a literal (``'adam'``, a number, ``None``): an expression that may give an
    optimizer object."""
    if value.type == tokens.NAME:
        return value.value not in ("None", "True", "False")
    return value.type not in (tokens.STRING, tokens.NUMBER) and not (
        value.type == symbols.atom and value.children[0].type == tokens.STRING)


def _optimizer_of(call: Base) -> Optional[Argument]:
    return find_argument(call, "optimizer", 0)


def _non_defaults(reference: Reference, ctx: FileContext) -> list[str]:
    """The arguments after the optimizer that are not Horovod's defaults, as ``name=value``."""
    return [named for named, (parameter, value) in zip(_named_arguments(reference),
                                                        _parameters(reference))
            if not _is_default(parameter, value, ctx)]


def _named_arguments(reference: Reference) -> list[str]:
    """The arguments after the optimizer as ``name=value`` (positional ones named)."""
    return [f"{parameter}={tree_text(value).strip()}" for parameter, value in _parameters(reference)]


def _parameters(reference: Reference) -> list[tuple[str, Base]]:
    """(parameter, value) of each argument after the optimizer, by keyword or position."""
    module = reference.name.rpartition(".")[0]
    parameters = PARAMETERS.get(module, PARAMETERS["horovod.tensorflow"])
    found: list[tuple[str, Base]] = []
    position = 0
    call = reference.call
    optimizer = _optimizer_of(call) if call is not None else None
    for argument in arguments(call) if call is not None else []:
        if optimizer is not None and argument.node is optimizer.node:
            continue
        name = argument.keyword
        if name is None:
            name = parameters[position] if position < len(parameters) else f"argument {position + 2}"
            position += 1
        found.append((name, argument.value))
    return found


def _is_default(parameter: str, value: Base, ctx: FileContext) -> bool:
    if parameter in LITERAL_DEFAULTS:
        return tree_text(value).strip() in LITERAL_DEFAULTS[parameter]
    ending = NAMED_DEFAULTS.get(parameter)
    if ending is None:
        return False
    qualified = ctx.names("horovod").qualify(dotted_name(value))
    return qualified is not None and qualified.endswith("." + ending)


def _rewrite(reference: Reference) -> None:
    call = reference.call
    optimizer = _optimizer_of(call) if call is not None else None
    if call is None or optimizer is None:
        return  # not reached: _problem() reported such a call
    for argument in arguments(call):
        if argument.node is not optimizer.node:
            remove_argument(call, argument)
    if optimizer.keyword is not None:  # optimizer=opt -> opt
        value = optimizer.value
        value.remove()
        value.prefix = optimizer.node.prefix
        optimizer.node.replace(value)
    replace_callee(reference, WRAPPER_NAME)


def _wrapped(value: Base, ctx: FileContext) -> Optional[bool]:
    """Is the optimizer ``value`` a wrapper call (Horovod's or the NPU's), or a name or
    attribute one of whose assignments is one (``opt = hvd.DistributedOptimizer(opt)``)?
    None when it is a name whose values are not known here (a parameter: the caller may have
    wrapped it), so wrapping it could wrap it twice."""
    spelled = dotted_name(value)
    if spelled is None or value.type != tokens.NAME and "." not in spelled:
        return _wrapping(value, ctx)
    bound = bound_values(value, spelled)
    if bound is None:
        return None
    return any(_wrapping(item, ctx) for item in bound)


def _wrapping(value: Base, ctx: FileContext) -> bool:
    found = name_reference(value, [ctx.names("horovod"), ctx.names("npu_bridge")],
                           frozenset(OPTIMIZER + (WRAPPER,)))
    return found is not None and found.call is not None


def _code(argument: Argument) -> str:
    return tree_text(argument.node).strip()


@hookimpl
def npu_codemod_rules() -> list:
    return [HorovodOptimizer()]
