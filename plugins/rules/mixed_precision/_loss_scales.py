"""What NPU031 and NPU032 decide together: the loss scale each loss-scale optimizer takes.

The loss scale written in an optimizer's call is NPU031's (it is migrated with the optimizer);
every other ``FixedLossScale``/``DynamicLossScale`` is NPU032's. TF 1.x's
``tf.contrib.mixed_precision`` is the same pair one API earlier: its ``LossScaleOptimizer(opt,
loss_scale_manager)`` and its managers take what npu_bridge's take (a rename), and they are
paired the same way: a contrib manager is a loss scale here. A loss scale bound to a name
that ``MixedPrecisionLossScaleOptimizer`` takes is the pair's to agree on, so that neither rule
alone leaves TensorFlow's optimizer with an NPU manager, nor ``NPULossScaleOptimizer`` with a
TensorFlow loss scale: NPU032 makes it a manager only when NPU031 makes that optimizer the
NPU's (:func:`optimizer_plan`), and NPU031 trusts the name to NPU032 only when NPU032 is
enabled and makes every loss scale bound to it a manager. NPU032 makes a loss scale a manager
only when its value goes to loss-scale optimizers alone (:func:`other_uses`): a manager is no
``LossScale``, and ``scale()`` or ``enable_mixed_precision_graph_rewrite(opt, scale)`` would
break. Where the other rule is disabled, the site is reported with what to do.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

from npu_codemod.api import (
    Base,
    FileContext,
    Reference,
    Status,
    arguments,
    find_argument,
    has_unpacking,
    name_reference,
    parse_expression,
    references_under,
    rename_argument,
    replace_callee,
    set_keyword,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    assigned_values,
    called_function,
    child_index,
    definition_name,
    enclosing_scope,
    is_call_trailer,
    returned_values,
    tree_text,
    uses,
)

FIXED = ("tensorflow.train.experimental.FixedLossScale",
         "tensorflow.mixed_precision.experimental.FixedLossScale")
DYNAMIC = ("tensorflow.train.experimental.DynamicLossScale",
           "tensorflow.mixed_precision.experimental.DynamicLossScale")
#: TF 1.x's contrib loss scaling, whose classes npu_bridge's have the names and parameters of.
CONTRIB = "tensorflow.contrib.mixed_precision"
CONTRIB_MANAGERS = frozenset(f"{CONTRIB}.{name}" for name in
                             ("FixedLossScaleManager", "ExponentialUpdateLossScaleManager"))
#: The loss scales NPU032 makes NPU managers.
LOSS_SCALES = frozenset({*FIXED, *DYNAMIC, *CONTRIB_MANAGERS})
NPU_MANAGERS = frozenset(f"{module}.{name}" for module in (
    "npu_bridge.npu_init", "npu_bridge.estimator.npu.npu_loss_scale_manager")
    for name in ("FixedLossScaleManager", "ExponentialUpdateLossScaleManager"))
#: The NPU manager of each loss scale: its name, and (TF parameter, NPU keyword, TF default)
#: for each parameter in TensorFlow's order.
MANAGERS = {
    **dict.fromkeys(FIXED, ("FixedLossScaleManager", (("loss_scale_value", "loss_scale", None),))),
    **dict.fromkeys(DYNAMIC, ("ExponentialUpdateLossScaleManager", (
        ("initial_loss_scale", "init_loss_scale", "2**15"),
        ("increment_period", "incr_every_n_steps", "2000"),
        ("multiplier", "incr_ratio", "2")))),
    **{name: (name.rpartition(".")[2], ()) for name in CONTRIB_MANAGERS},  # renamed as written
}
#: TensorFlow's loss-scale optimizer, which NPU031 replaces.
OPTIMIZER = "tensorflow.train.experimental.MixedPrecisionLossScaleOptimizer"
#: contrib's, which NPU031 replaces too: it takes a manager (``loss_scale_manager``) already.
CONTRIB_OPTIMIZER = f"{CONTRIB}.LossScaleOptimizer"
#: The optimizers NPU031 replaces.
TENSORFLOW_OPTIMIZERS = frozenset({OPTIMIZER, CONTRIB_OPTIMIZER})
NPU_OPTIMIZER = "NPULossScaleOptimizer"
NPU_OPTIMIZERS = ("npu_bridge.estimator.npu.npu_loss_scale_optimizer.NPULossScaleOptimizer",
                  "npu_bridge.npu_init.NPULossScaleOptimizer")
#: The loss-scale optimizers whose loss scale NPU031 migrates with them.
OPTIMIZERS = frozenset({*TENSORFLOW_OPTIMIZERS, *NPU_OPTIMIZERS})
#: What TensorFlow's ``"dynamic"`` loss scale is, as an NPU manager.
DYNAMIC_DEFAULT = "ExponentialUpdateLossScaleManager(init_loss_scale=2**15, incr_every_n_steps=2000, incr_ratio=2)"

REPLACED = "replaced {spelled} with {manager}{defaults}"
DEFAULTS = " (TensorFlow's defaults for {names})"
UNPACKED = "the arguments are unpacked: replace {spelled} with {manager}({keywords}) by hand"
TAKES_NO = "{spelled} takes no {argument}: replace it with {manager}({keywords}) by hand"
UNKNOWN = ("the loss scale {code} is not shown to be an NPU loss-scale manager: make it "
           "FixedLossScaleManager(loss_scale=...) or ExponentialUpdateLossScaleManager(...), then "
           f"replace {{spelled}} with {NPU_OPTIMIZER}(opt, loss_scale_manager)")
UNPACKED_OPTIMIZER = (f"the loss scale may come in the unpacked arguments: replace {{spelled}} with "
                      f"{NPU_OPTIMIZER}(opt, loss_scale_manager) by hand")
WITHOUT_NPU032 = ("the loss scale {code} is bound to {scale} (line {line}), which NPU032 makes an "
                  "NPU loss-scale manager, but NPU032 is disabled: enable NPU032 (pack "
                  "mixed-precision), or make it {manager}({keywords}) by hand{then}")
STAYS = ("the loss scale {code} is bound to {scale} (line {line}), which stays TensorFlow's (see "
         "NPU032's finding there){why}; give the optimizer its own {manager}({keywords}){then}")
THEN = f" and replace {{spelled}} with {NPU_OPTIMIZER}(opt, loss_scale_manager)"
#: The plan of a loss-scale optimizer call: (the edit that makes its loss scale an NPU
#: manager, None when nothing is to change there; what the message adds), or the message of
#: an ``unmigrated`` finding.
Plan = Union[tuple[Optional[Callable[[], None]], str], str]


def keywords_of(manager: str) -> str:
    """``init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...`` for an NPU manager."""
    parameters = next(parameters for name, parameters in MANAGERS.values() if name == manager and parameters)
    return ", ".join(f"{npu}=..." for _, npu, _ in parameters)


def manager_plan(reference: Reference) -> tuple[Status, str, Optional[Callable[[], None]]]:
    """What becomes of one ``FixedLossScale``/``DynamicLossScale`` call (or contrib manager's,
    renamed as written): the finding's status and message, and the edit that makes it the NPU
    manager (None: it is reported)."""
    manager, parameters = MANAGERS[reference.name]
    spelled, call, keywords = reference.spelled, reference.call, keywords_of(manager)
    if reference.name in CONTRIB_MANAGERS:  # npu_bridge's takes what contrib's takes
        return "migrated", REPLACED.format(spelled=spelled, manager=manager, defaults=""), \
            lambda: replace_callee(reference, manager)
    if has_unpacking(call):
        return "unmigrated", UNPACKED.format(spelled=spelled, manager=manager, keywords=keywords), None
    names = [tf for tf, _, _ in parameters]
    by_name = {}
    for index, argument in enumerate(arguments(call)):
        name = argument.keyword if argument.keyword is not None else \
            (names[index] if index < len(names) else None)
        if name not in names:
            argument_name = argument.keyword or f"argument {index + 1}"
            return "unmigrated", TAKES_NO.format(spelled=spelled, argument=argument_name,
                                                 manager=manager, keywords=keywords), None
        by_name[name] = argument
    missing = [(npu, default) for tf, npu, default in parameters if tf not in by_name and default]

    def rewrite() -> None:
        replace_callee(reference, manager)
        for tf, npu, _ in parameters:
            if tf in by_name:
                rename_argument(by_name[tf], npu)
        for npu, default in missing:
            set_keyword(call, npu, default)

    defaults = DEFAULTS.format(names=", ".join(npu for npu, _ in missing)) if missing else ""
    return "migrated", REPLACED.format(spelled=spelled, manager=manager, defaults=defaults), rewrite


def optimizer_plan(reference: Reference, ctx: FileContext) -> Plan:
    """What NPU031 makes of the loss-scale optimizer call ``reference`` (TensorFlow's,
    contrib's or the NPU's): the loss scale (contrib's: manager) written in the call becomes an
    NPU manager with it (a number or ``"dynamic"`` only for TensorFlow's, which takes those); a name bound to
    loss scales only is trusted to NPU032 when NPU032 is enabled and makes each of them a
    manager (used nowhere else, arguments it can rename), else reported."""
    npu = reference.name in NPU_OPTIMIZERS
    spelled, call = reference.spelled, reference.call
    scale = find_argument(call, "loss_scale" if reference.name == OPTIMIZER else "loss_scale_manager", 1)
    if scale is None:
        if npu:
            return None, ""
        return UNPACKED_OPTIMIZER.format(spelled=spelled) if has_unpacking(call) \
            else UNKNOWN.format(code="(none given)", spelled=spelled)
    value = scale.value
    code = tree_text(value).strip()
    made = _literal_manager(value) if reference.name == OPTIMIZER else None
    if made is not None:
        return (lambda: _replace(value, made)), f" and its loss scale {code} with {made.partition('(')[0]}"
    found = loss_scale_call(value, ctx)
    if found is not None:
        if found.name in NPU_MANAGERS:
            return None, ""
        _, message, edit = manager_plan(found)
        return message if edit is None else (edit, f" and its loss scale with {MANAGERS[found.name][0]}")
    bound = bound_loss_scales(value, ctx)
    if bound is None:
        return (None, "") if npu else UNKNOWN.format(code=code, spelled=spelled)
    tensorflows = [found for found in bound if found.name in LOSS_SCALES]
    if tensorflows and "NPU032" not in ctx.enabled_rules:
        manager = MANAGERS[tensorflows[0].name][0]
        return WITHOUT_NPU032.format(code=code, scale=tensorflows[0].spelled, line=tensorflows[0].line,
                                     manager=manager, keywords=keywords_of(manager),
                                     then="" if npu else THEN.format(spelled=spelled))
    for found in tensorflows:
        other = other_uses(found, ctx)
        if other or manager_plan(found)[2] is None:
            manager = MANAGERS[found.name][0]
            why = f": its value is also {', '.join(other)}" if other else ""
            return STAYS.format(code=code, scale=found.spelled, line=found.line, why=why,
                                manager=manager, keywords=keywords_of(manager),
                                then="" if npu else THEN.format(spelled=spelled))
    return None, ""


def _literal_manager(value: Base) -> Optional[str]:
    """The manager TensorFlow makes of a number or ``"dynamic"`` given as the loss scale."""
    if value.type == tokens.NUMBER:
        return f"FixedLossScaleManager(loss_scale={value.value})"
    if value.type == tokens.STRING and value.value.strip("\"'") == "dynamic":
        return DYNAMIC_DEFAULT
    return None


def loss_scale_call(value: Base, ctx: FileContext) -> Optional[Reference]:
    """The call of ``FixedLossScale``/``DynamicLossScale`` or of an NPU manager ``value`` is."""
    found = name_reference(value, [ctx.tf, ctx.names("npu_bridge")], LOSS_SCALES | NPU_MANAGERS)
    if found is None or found.call is None or found.end + 1 != len(value.children):
        return None
    return found


def bound_loss_scales(value: Base, ctx: FileContext) -> Optional[list[Reference]]:
    """The loss-scale (or NPU manager) calls a NAME ``value`` is bound to in its scope, or
    that the file's own function ``value`` calls returns (``loss_scale()``); None when they
    are not such calls only."""
    found = [loss_scale_call(bound, ctx) for bound in scale_sources(value) or ()]
    return [call for call in found if call is not None] if found and None not in found else None


def scale_sources(value: Base) -> Optional[list[Base]]:
    """Where the loss scale ``value`` comes from: what a NAME is bound to in its scope, or
    what the file's function it calls returns (a returned NAME: what it is bound to there);
    None when that is not known."""
    if value.type == tokens.NAME:
        return assigned_values(value, value.value)
    function = called_function(value)
    returned = returned_values(function) if function is not None else None
    if returned is None:
        return None
    sources: list[Base] = []
    for item in returned:
        bound = assigned_values(item, item.value) if item.type == tokens.NAME else [item]
        if bound is None:
            return None
        sources += bound
    return sources


def inline_optimizer(reference: Reference, ctx: FileContext) -> Optional[Reference]:
    """The loss-scale optimizer (TensorFlow's or the NPU's) whose loss-scale argument is the
    loss scale ``reference`` itself, written in the optimizer's call."""
    return taking_optimizer(reference.node, ctx)


def taking_optimizer(node: Base, ctx: FileContext) -> Optional[Reference]:
    """The loss-scale optimizer (TensorFlow's or the NPU's) whose loss-scale argument is the
    expression ``node``, as written in the optimizer's call."""
    argument = node.parent if node.parent is not None and node.parent.type == symbols.argument else node
    holder = argument.parent
    if holder is not None and holder.type == symbols.arglist:
        holder = holder.parent
    if holder is None or not is_call_trailer(holder) or holder.parent is None:
        return None
    optimizer = name_reference(holder.parent, [ctx.tf, ctx.names("npu_bridge")], OPTIMIZERS)
    if optimizer is None or optimizer.call is not holder:
        return None
    given = find_argument(holder, "loss_scale", 1) or find_argument(holder, "loss_scale_manager", 1)
    return optimizer if given is not None and given.value is node else None


def other_uses(scale: Reference, ctx: FileContext) -> list[str]:
    """How the value of the loss-scale call ``scale`` is used other than as the loss-scale
    argument of a loss-scale optimizer (TensorFlow's or the NPU's), each as "called at line
    8"; empty when every use is one. An NPU manager is no ``LossScale``: it cannot be called
    (``loss_scale()``) nor given to TensorFlow's mixed-precision APIs
    (``enable_mixed_precision_graph_rewrite(opt, loss_scale)``), so only a loss scale shown to
    go to such optimizers alone may become one. Followed: the name it is bound to in its scope,
    and the file's function returning it (``return scale``) where that function is called."""
    if scale.call is None or scale.end + 1 != len(scale.node.children):
        return [f"used at line {scale.line}"]
    return _other_uses(scale.node, ctx, 0)


#: How many names and functions :func:`other_uses` follows a loss scale through.
_DEPTH = 4


def _other_uses(value: Base, ctx: FileContext, depth: int) -> list[str]:
    """:func:`other_uses` of the expression ``value``, ``depth`` steps from the loss scale."""
    if taking_optimizer(value, ctx) is not None:
        return []
    parent = value.parent
    line = value.get_lineno()
    if depth >= _DEPTH or parent is None:
        return [f"used at line {line}"]
    if parent.type == symbols.expr_stmt and len(parent.children) == 3 and parent.children[2] is value \
            and parent.children[1].type == tokens.EQUAL and parent.children[0].type == tokens.NAME:
        target = parent.children[0]
        read = [use.leaf for use in uses(enclosing_scope(target), target.value) if use.kind != "bind"]
        if not read:
            return [f"never used (bound to {target.value} at line {line})"]
        return [found for leaf in read for found in _other_uses(leaf, ctx, depth + 1)]
    if parent.type == symbols.return_stmt:
        return _returned_uses(value, ctx, depth)
    return [_use_of(value)]


def _returned_uses(value: Base, ctx: FileContext, depth: int) -> list[str]:
    """:func:`other_uses` of the ``value`` a function returns: the uses of each call of it in
    the file (:func:`called_function`); any other use of the function is one of the value's."""
    function = enclosing_scope(value)
    line = value.get_lineno()
    if function.type != symbols.funcdef or function.parent is None \
            or function.parent.type != symbols.file_input:
        return [f"returned at line {line}"]
    name = definition_name(function)
    found: list[str] = []
    called = [use for use in uses(function.parent, name) if use.leaf is not function.children[1]]
    for use in called:
        call = use.leaf.parent
        if use.kind == "bind" or call is None or call.type != symbols.power or len(call.children) != 2 \
                or call.children[0] is not use.leaf or called_function(call) is not function:
            found.append(f"returned by {name}(), used at line {use.leaf.get_lineno()}")
        else:
            found += _other_uses(call, ctx, depth + 1)
    return found if called else [f"returned by {name}(), which the file never calls"]


def _use_of(value: Base) -> str:
    """How the expression ``value`` is used: "called at line 8", "passed to f at line 7"."""
    line = value.get_lineno()
    following = value.next_sibling
    if following is not None and is_call_trailer(following):
        return f"called at line {line}"
    holder = value.parent.parent if value.parent is not None and value.parent.type == symbols.argument \
        else value.parent
    if holder is not None and holder.type == symbols.arglist:
        holder = holder.parent
    if holder is not None and is_call_trailer(holder) and holder.parent is not None:
        callee = "".join(str(child) for child in holder.parent.children[:child_index(holder)]).strip()
        return f"passed to {callee} at line {line}"
    return f"used at line {line}"


def fed_optimizers(ctx: FileContext, scale: Reference) -> list[Reference]:
    """The ``MixedPrecisionLossScaleOptimizer`` (or contrib ``LossScaleOptimizer``) calls of the
    file that take, through a name bound to it or a function of the file returning it, the
    loss-scale call ``scale``."""
    return ctx.analysis(_fed_optimizers).get(id(scale.node), [])


def _fed_optimizers(ctx: FileContext) -> dict[int, list[Reference]]:
    """TensorFlow's (and contrib's) optimizer calls by the id of each value their loss scale comes from (a
    name's values, a function's returns: :func:`scale_sources`; and every loss scale made
    in a function of the file that gives it); the tree is not edited before
    every rule has visited it."""
    fed: dict[int, list[Reference]] = {}
    for reference in references_under(ctx.tree, [ctx.tf]):
        if reference.name not in TENSORFLOW_OPTIMIZERS or reference.call is None:
            continue
        keyword = "loss_scale" if reference.name == OPTIMIZER else "loss_scale_manager"
        scale = find_argument(reference.call, keyword, 1)
        if scale is None:
            continue
        sources = scale_sources(scale.value) or []
        function = called_function(scale.value)
        if function is not None:  # any loss scale it makes may be what it returns
            sources += [found.node for found in references_under(function, [ctx.tf])
                        if found.name in LOSS_SCALES]
        for value in sources:
            fed.setdefault(id(value), []).append(reference)
    return fed


def _replace(value: Base, code: str) -> None:
    new = parse_expression(code)
    new.prefix = value.prefix
    value.replace(new)
