"""NPU009 rewrite-options-guard: graph rewrite options the NPU needs on, off or untouched.

Checks every setting of a session config's ``rewrite_options``: attribute assignments
(``config.graph_options.rewrite_options.X = v``, also through a name bound to the rewrite
options) and keywords of ``RewriterConfig(...)`` constructors, the value maybe in parentheses.
Options copied in from elsewhere (``rewrite_options.CopyFrom(...)``, ``config.MergeFrom(...)``)
are reported in ``finish``, after NPU007/NPU008 added their lines: the finding says which of
the NPU's settings follow the copy (and which of them npu-codemod wrote) and which are left.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import FrozenSet, Iterable, Iterator, Optional, Sequence

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Leaf,
    Node,
    Rule,
    dotted_name,
    hookimpl,
    parse_expression,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    assignment,
    child_index,
    enclosing_scope,
    fact_names,
    is_call_trailer,
    memo,
    prefix_name,
    scope_statements,
    small_statements,
    unparenthesised,
)

from ._session_config import (
    MUST_BE_OFF,
    REWRITE_OPTIONS,
    argument_callee,
    callee_last_name,
    code,
    config_objects,
    config_settings,
    deep_copied,
    ensure_rewriter_config,
)
from .npu008_soft_placement import FACT as USES_TF_DEVICE

MUST_STAY_ON = ("function_optimization", "constant_folding", "shape_optimization",
                "arithmetic_optimization", "loop_optimization", "dependency_optimization",
                "layout_optimizer")
PRUNING = "disable_model_pruning"
META = "disable_meta_optimizer"
OPTIONS = (*MUST_STAY_ON, *MUST_BE_OFF, PRUNING, META)
COPIES = ("CopyFrom", "MergeFrom", "MergeFromString", "ParseFromString")
_OPTIONS = "|".join(f"'{option}'" for option in OPTIONS)
_COPIES = "|".join(f"'{method}'" for method in COPIES)
OFF_VALUE = 2  # RewriterConfig.OFF as a number
#: What a copy may undo besides the rewrite options: the custom optimizer, soft placement.
NPU_OPTIMIZER = "NpuOptimizer"
SOFT_PLACEMENT = "allow_soft_placement"
#: Requirements only a line written after the copy meets (the others: the copied values).
WRITTEN_AFTER = (NPU_OPTIMIZER, *MUST_BE_OFF, SOFT_PLACEMENT)
_COPIES_KEY = "npu009.copies"


@dataclass
class _Copy:
    """A copy into a session's options, seen in ``visit`` and reported in ``finish``."""

    site: Node  # the ``receiver.CopyFrom(...)`` power
    statement: Base  # the small statement holding it
    text: str  # ``config.MergeFrom(...)``
    #: Expressions of the rewrite options it lands in (``config.graph_options.rewrite_options``
    #: and the names bound to them): where the settings after it are made.
    options: tuple[str, ...]
    config: Optional[str]  # the ConfigProto, when the whole of it is copied in
    before: frozenset[str] = frozenset()  # requirements met after it in the original code


class RewriteOptionsGuard(Rule):
    id = "NPU009"
    name = "rewrite-options-guard"
    pack = "sess-run"
    description = "Keep the graph rewrite options the NPU needs: some on, remapping/memory_optimization off."
    guide_section = "创建session并初始化资源 (默认关闭/开启的配置)"
    guide_section_en = ("Creating the session and initializing resources: options off or on "
                        "by default")
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("In any session config: `disable_model_pruning` set to a true value becomes "
                "`False`; `function_optimization`, `constant_folding`, `shape_optimization`, "
                "`arithmetic_optimization`, `loop_optimization`, `dependency_optimization` or "
                "`layout_optimizer` set to `RewriterConfig.OFF` becomes `RewriterConfig.ON`; "
                "`remapping` or `memory_optimization` set to anything but `OFF` becomes "
                "`RewriterConfig.OFF`.")
    reports = ("`disable_meta_optimizer = True` (the NpuOptimizer would not run), options copied "
               "in from elsewhere (`rewrite_options.CopyFrom(...)`, `config.MergeFrom(...)`, "
               "...), and values of those options that are not literals.")
    example = """
        import tensorflow as tf
        from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

        config = tf.ConfigProto()
        rewrite_options = config.graph_options.rewrite_options
        rewrite_options.layout_optimizer = RewriterConfig.OFF
        rewrite_options.memory_optimization = RewriterConfig.ON
        rewrite_options.disable_meta_optimizer = True
    """
    _scope = "linked"
    _site_names = (*OPTIONS, *COPIES, "ConfigProto", "rewrite_options")
    _tokens = (*OPTIONS, *COPIES)
    pattern = f"""(
        expr_stmt< power< any* trailer< '.' option=({_OPTIONS}) > > '=' value=any >
      | argument< option=({_OPTIONS}) '=' value=any >
      | trailer< '.' method=({_COPIES}) >
    )"""
    after = ("NPU007", "NPU008")  # it finishes after them: copies are reported with their lines

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # the functions of this repository that make or configure sessions, by name
        return (*super()._site_names_for(facts), *fact_names(facts, ("npu007-config:",)))

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if "method" in capture:
            _record_copy(node, ctx)
            return
        option = _leaf(capture["option"]).value
        value = unparenthesised(capture["value"])
        if node.type == symbols.argument:
            if argument_callee(node) != "RewriterConfig":
                return
        elif not _sets_rewrite_options(node.children[0], value, ctx):
            return
        if option in MUST_STAY_ON:
            _stay_on(node, option, value, ctx)
        elif option in MUST_BE_OFF:
            if not _in_npu_block(node) and not (_member(value) == "OFF" and _in_npu_block(node, after_copy=True)):
                _must_be_off(node, option, value, ctx)
        elif option == PRUNING:
            _pruning(node, value, ctx)
        elif _truth(value) is not False:
            ctx.report(node, "unmigrated", f"remove {META}={code(value)}: with the meta optimizer "
                       "disabled the NpuOptimizer custom optimizer does not run")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        for copy in memo(ctx).get(_COPIES_KEY, ()):
            _report_copy(copy, ctx)
def _stay_on(node: Base, option: str, value: Base, ctx: FileContext) -> None:
    member = _member(value)
    if member == "OFF":
        _set_member(value, "ON", ctx)
        ctx.report(node, "migrated", f"switched {option} back to RewriterConfig.ON: it must stay on for the NPU")
    elif member is None:
        ctx.report(node, "unmigrated", f"{option} must stay on for the NPU: make sure "
                   f"{code(value)} is never RewriterConfig.OFF")
    else:
        ctx.report(node, "migrated", f"{option} is not switched off")


def _in_npu_block(node: Base, after_copy: bool = False) -> bool:
    """Is this assignment one of the guide's NpuOptimizer lines (NPU007's, reported there)?
    ``after_copy``: or one of the switches NPU007 sets again right after a copy into the
    config (a merge keeps the NpuOptimizer above it: only the switches follow; the copy's
    finding names them).

    Leaving them to NPU007 keeps a second run's findings the same as the first run's.
    """
    statement = node.parent
    for _ in range(len(MUST_BE_OFF) + 1):
        statement = statement.prev_sibling if statement is not None else None
        if statement is None:
            return False
        text = "".join(code(statement).split())
        if text.endswith('.name="NpuOptimizer"') or after_copy and any(f".{method}(" in text for method in COPIES):
            return True
    return False


def _must_be_off(node: Base, option: str, value: Base, ctx: FileContext) -> None:
    if _member(value) == "OFF":
        ctx.report(node, "migrated", f"{option} is RewriterConfig.OFF")
        return
    was = code(value)
    _set_member(value, "OFF", ctx)
    ctx.report(node, "migrated", f"set {option} to RewriterConfig.OFF (was {was}): it must be off for the NPU")


def _pruning(node: Base, value: Base, ctx: FileContext) -> None:
    truth = _truth(value)
    if truth is False:
        ctx.report(node, "migrated", f"{PRUNING} is off")
    elif truth:
        value.replace(Leaf(tokens.NAME, "False", prefix=value.prefix))
        ctx.report(node, "migrated", f"set {PRUNING} to False (was {code(value)}): it must stay off for the NPU")
    else:
        ctx.report(node, "unmigrated", f"{PRUNING} must stay off for the NPU: set it to False "
                   f"(now: {code(value)})")


def _member(value: Base) -> Optional[str]:
    """``OFF`` for ``RewriterConfig.OFF`` or ``2``; the member name of other enum values."""
    if value.type == tokens.NUMBER:
        return "OFF" if value.value == str(OFF_VALUE) else "number"
    dotted = dotted_name(value)
    if dotted is None or "." not in dotted or not dotted.rpartition(".")[2].isupper():
        return None
    return dotted.rpartition(".")[2]


def _set_member(value: Base, member: str, ctx: FileContext) -> None:
    """Make ``value`` say ``member``: the last name of a dotted enum, else ``RewriterConfig.X``."""
    if value.type == symbols.power and _member(value) is not None:
        last = value.children[-1].children[1]
        last.value = member
        return
    new = parse_expression(f"RewriterConfig.{member}")
    new.prefix = value.prefix
    value.replace(new)
    ensure_rewriter_config(ctx)


def _truth(value: Base) -> Optional[bool]:
    """The truth of a literal ``True``/``False``/number, None for anything else."""
    if value.type == tokens.NAME and value.value in ("True", "False"):
        return value.value == "True"
    if value.type == tokens.NUMBER:
        return value.value.strip("0.") != ""
    return None


def _sets_rewrite_options(target: Base, value: Base, ctx: FileContext) -> bool:
    """Is ``target`` (``x.y.option``) an option of a session's rewrite options?"""
    receiver = prefix_name(target, len(target.children) - 1)
    if receiver is None:
        return False
    return (receiver.endswith("rewrite_options") or receiver in _rewrite_option_names(ctx)
            or "RewriterConfig" in code(value))


def _rewrite_option_names(ctx: FileContext) -> dict[str, Optional[str]]:
    """Names bound to rewrite options -> the config they belong to: ``ro =
    config.graph_options.rewrite_options`` gives ``{"ro": "config"}``; ``ro = RewriterConfig()``
    gives ``{"ro": None}``."""
    key = "npu009.rewrite_option_names"
    if key not in memo(ctx):
        names: dict[str, Optional[str]] = {}
        for node in small_statements(ctx.tree):
            if node.type != symbols.expr_stmt or len(node.children) != 3:
                continue
            value = code(node.children[2])
            if value.endswith(f".{REWRITE_OPTIONS}"):
                names[code(node.children[0])] = value[: -len(REWRITE_OPTIONS) - 1]
            elif value.endswith(".rewrite_options") or callee_last_name(node.children[2]) == "RewriterConfig":
                names[code(node.children[0])] = None
        memo(ctx)[key] = names
    return memo(ctx)[key]


def _record_copy(trailer: Node, ctx: FileContext) -> None:
    """``<options>.CopyFrom(...)`` on a session's options: kept for :meth:`finish`."""
    power = trailer.parent
    if power is None or not is_call_trailer(trailer.next_sibling):
        return
    receiver = prefix_name(power, child_index(trailer))
    if receiver is None:
        return
    options = _options_of(receiver, ctx)
    if not options:
        return
    statement = power
    while statement.parent is not None and statement.parent.type != symbols.simple_stmt:
        statement = statement.parent
    text = f"{receiver}.{trailer.children[1].value}(...)"
    whole = receiver in config_objects(ctx) and receiver not in _rewrite_option_names(ctx)
    copy = _Copy(power, statement, text, options, receiver if whole else None)
    copy.before = _met(_split(copy)[1], copy)
    memo(ctx).setdefault(_COPIES_KEY, []).append(copy)


def _options_of(receiver: str, ctx: FileContext) -> tuple[str, ...]:
    """The rewrite options that a copy into ``receiver`` sets, as spelled in the file: the
    config's ``X.graph_options.rewrite_options`` and the names bound to it (``ro``); none
    when ``receiver`` is no session's options."""
    names = _rewrite_option_names(ctx)
    config = None
    if receiver.endswith(f".{REWRITE_OPTIONS}"):
        config = receiver[: -len(REWRITE_OPTIONS) - 1]
    elif receiver.endswith(".graph_options"):
        config = receiver[: -len(".graph_options")]
    elif receiver in names:
        config = names[receiver]
    elif receiver in config_objects(ctx):
        config = receiver
    elif receiver.endswith(("rewrite_options", "graph_options")):  # ``graph_options = config...``
        return (receiver if receiver.endswith("rewrite_options") else f"{receiver}.rewrite_options",)
    else:
        return ()
    if config is None:  # ``ro = RewriterConfig()``: its own settings only
        return (receiver,)
    return (f"{config}.{REWRITE_OPTIONS}", *(name for name, of in names.items() if of == config))


def _split(copy: _Copy) -> tuple[list[Base], list[Base]]:
    """The statements of the copy's scope before it and after it, in source order."""
    before: list[Base] = []
    after: list[Base] = []
    found = False
    for node in scope_statements(enclosing_scope(copy.statement)):
        if node is copy.statement:
            found = True
        else:
            (after if found else before).append(node)
    return before, after


def _met(statements: Sequence[Base], copy: _Copy) -> frozenset[str]:
    """The NPU requirements that the settings among ``statements`` meet for the copy's options,
    or for a deep copy of its config made among them (NPU007 configures such a copy of a
    config parameter, ``npu_config = copy.deepcopy(config)``, for the session)."""
    met = set()
    for landing in (copy, *_deep_copies(statements, copy)):
        for options in landing.options:
            if _adds_npu_optimizer(statements, options):
                met.add(NPU_OPTIMIZER)
            settings = config_settings(iter(statements), options)
            met.update(option for option in OPTIONS
                       if option in settings and _meets(option, unparenthesised(settings[option])))
        if landing.config is not None:
            soft = config_settings(iter(statements), landing.config).get(SOFT_PLACEMENT)
            if soft is not None and _truth(unparenthesised(soft)):
                met.add(SOFT_PLACEMENT)
    return frozenset(met)


def _deep_copies(statements: Sequence[Base], copy: _Copy) -> Iterator[_Copy]:
    """The copy's options as they land in each ``name = <copy module>.deepcopy(<config>)``
    (maybe ``... if <config> is not None else ...``) among ``statements`` of a config whose
    rewrite options they are."""
    configs = {options[: -len(REWRITE_OPTIONS) - 1] for options in copy.options
               if options.endswith(f".{REWRITE_OPTIONS}")}
    for node in statements:
        assigned = assignment(node) if configs else None
        if assigned is not None and deep_copied(assigned[1]) in configs:
            name = code(assigned[0])
            whole = name if copy.config is not None else None
            yield replace(copy, options=(f"{name}.{REWRITE_OPTIONS}",), config=whole)


def _adds_npu_optimizer(statements: Sequence[Base], options: str) -> bool:
    """Do ``statements`` add the NpuOptimizer to the rewrite options ``options`` (``x =
    options.custom_optimizers.add()`` then ``x.name = "NpuOptimizer"``)?"""
    added: set[str] = set()
    for node in statements:
        assigned = assignment(node)
        if assigned is None:
            continue
        target, value = code(assigned[0]), assigned[1]
        if code(value) == f"{options}.custom_optimizers.add()":
            added.add(target)
        elif target.endswith(".name") and target[: -len(".name")] in added \
                and code(value) in (f'"{NPU_OPTIMIZER}"', f"'{NPU_OPTIMIZER}'"):
            return True
    return False


def _meets(option: str, value: Base) -> bool:
    if option in MUST_BE_OFF:
        return _member(value) == "OFF"
    if option in MUST_STAY_ON:
        return _member(value) not in (None, "OFF")
    return _truth(value) is False


def _requirements(copy: _Copy, ctx: FileContext) -> tuple[str, ...]:
    """What the NPU needs of the options a copy lands in (soft placement: a whole config,
    in a repository that uses tf.device)."""
    soft = (SOFT_PLACEMENT,) if copy.config is not None and USES_TF_DEVICE in ctx.facts else ()
    return (NPU_OPTIMIZER, *MUST_BE_OFF, *soft, *MUST_STAY_ON, PRUNING, META)


def _report_copy(copy: _Copy, ctx: FileContext) -> None:
    """What the settings after the copy (npu-codemod's lines included) do, and what is left."""
    before, after = _split(copy)
    now = _met(after, copy)
    required = _requirements(copy, ctx)
    parts = [f"{copy.text} copies session options in from elsewhere"]
    stays = ".Merge" in copy.text and NPU_OPTIMIZER in required and NPU_OPTIMIZER in _met(before, copy) - now
    if stays:  # a merge appends to the custom optimizers: the one above stays
        now |= {NPU_OPTIMIZER}
        parts.append("the NpuOptimizer custom optimizer set above it stays (a merge appends to the "
                     "custom optimizers: make sure the merged options bring no second one)")
    added = [need for need in required if need in now and need not in copy.before
             and not (stays and need == NPU_OPTIMIZER)]
    kept = [need for need in required if need in now and need in copy.before]
    if added:
        parts.append(f"done after it by npu-codemod: {_describe(added)}")
    if kept:
        parts.append(f"already set after it: {_describe(kept)}")
    left = _left([need for need in required if need not in now], _met(before, copy))
    if left:
        parts.append(f"left for you: {left}")
    ctx.report(copy.site, "unmigrated" if left else "migrated", "; ".join(parts))


def _left(missing: Sequence[str], above: frozenset[str]) -> str:
    """The instruction for the requirements ``missing`` after a copy (``above``: those met
    before it, which the copy may undo)."""
    write = [need for need in missing if need in WRITTEN_AFTER]
    on = [need for need in missing if need in MUST_STAY_ON]
    off = [need for need in missing if need not in WRITTEN_AFTER and need not in MUST_STAY_ON]
    steps = []
    if write:
        undone = [need for need in write if need in above]
        steps.append(f"after this line add {_describe(write)}" + (
            f" (it may undo {_describe(undone)} set above it)" if undone else ""))
    keep = [f"{', '.join(on)} on (not RewriterConfig.OFF)" if on else "",
            f"{', '.join(off)} False" if off else ""]
    if on or off:
        steps.append(f"make sure the copied options keep {' and '.join(filter(None, keep))}")
    return "; ".join(steps)


def _describe(needs: Sequence[str]) -> str:
    words = {NPU_OPTIMIZER: "the NpuOptimizer custom optimizer",
             SOFT_PLACEMENT: f"{SOFT_PLACEMENT} = True",
             PRUNING: f"{PRUNING} = False", META: f"{META} = False",
             **{option: f"{option} = RewriterConfig.OFF" for option in MUST_BE_OFF}}
    return ", ".join(words.get(need, f"{need} on") for need in needs)


def _leaf(captured) -> Leaf:
    return captured[0] if isinstance(captured, list) else captured


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [RewriteOptionsGuard()]
