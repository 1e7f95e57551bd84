"""NPU007 session-config: every TF session runs with the NPU optimizer config of the guide."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, FrozenSet, Iterable, Literal, Optional

from npu_codemod.api import (
    Argument,
    Base,
    Capture,
    FileContext,
    Name,
    Node,
    Rule,
    Status,
    add_keyword,
    dotted_name,
    enclosing_statement,
    find_argument,
    has_unpacking,
    hookimpl,
    insert_after,
    is_none,
    name_reference,
    parse_expression,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    BLOCKS,
    assigned_values,
    assignment,
    block_child,
    bound_names,
    child_index,
    definition_name,
    enclosing_scope,
    fact_names,
    free_name,
    indentation,
    insert_above_comments,
    is_call_trailer,
    is_inside,
    last_leaf,
    memo,
    position,
    scope_statements,
    tree_text,
    uses,
    why_not,
)

from ._bound_attributes import bound_attribute_marks
from ._config_flow import PARAMETER, Flow, made_when_none, target_flow
from ._config_functions import (
    ConfigSource,
    config_function_facts,
    config_source,
    promised_functions,
    returned_value,
)
from ._estimator_configs import FROM_RUN_CONFIG, run_config_session_config
from ._free_names import claim, taken_names
from ._functions import defaults_to_none, function_returns, parameters
from ._session_config import (
    CUSTOM_OP,
    MONITORED_SESSION,
    NPU_PIECES,
    SESSION_NAMES,
    SLIM_NAMES,
    ConfigTarget,
    SessionCall,
    callee_last_name,
    code,
    config_module,
    custom_op_names,
    deep_copied,
    ensure_rewriter_config,
    npu_lines,
    session_call,
    targets,
)
from ._shared_parameters import configured_caller, configured_elsewhere

_NAMES = "|".join(f"'{name}'" for name in sorted(SESSION_NAMES | SLIM_NAMES))
NPU_CONFIG = "the NPU optimizer config (NpuOptimizer on; remapping, memory_optimization off)"
HELPER = "npu_config_proto"
#: The session creators whose config NPU007 configures (a MonitoredSession takes its from one).
CHIEF_CREATOR = "tensorflow.train.ChiefSessionCreator"
CREATORS = frozenset({CHIEF_CREATOR, "tensorflow.train.WorkerSessionCreator"})
PROMISED = " (the repository analysis counts on it: callers in other files add nothing)"


@dataclass
class Settings:
    """``[tool.npu-codemod.rules.NPU007]``."""

    #: NpuOptimizer precision mode written with the custom_op lines (e.g. "allow_mix_precision").
    precision_mode: Optional[str] = None
    #: "inline": the guide's statements before the session; "helper": config=npu_config_proto(...).
    style: Literal["inline", "helper"] = "inline"

    def __post_init__(self) -> None:
        if self.precision_mode is not None and self.style == "helper":
            raise ValueError('precision_mode needs style = "inline" (npu_config_proto() has no precision mode)')


class SessionConfig(Rule):
    id = "NPU007"
    name = "session-config"
    pack = "sess-run"
    description = "Run every TF session with the NpuOptimizer config of the guide."
    guide_section = "创建session并初始化资源"
    guide_section_en = "Creating the session and initializing resources"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("Every session (`tf.Session`, `tf.InteractiveSession`, "
                "`tf.train.MonitoredTrainingSession`, `MonitoredSession` and "
                "`SingularMonitoredSession` through `ChiefSessionCreator`; a `MonitoredSession` "
                "given no session creator, or None, is passed `session_creator=tf.train."
                "ChiefSessionCreator(config=...)`, the one it makes then; "
                "`Supervisor.managed_session`, `SessionManager.prepare_session`/"
                "`recover_session`/`wait_for_session` in a file that names `SessionManager`, TF-Slim's `learning.train`/`evaluation_loop`/"
                "`evaluate_once` through `session_config=`, ...) runs with the guide's config: the "
                "`NpuOptimizer` custom optimizer, `remapping` and `memory_optimization` off. "
                "Without `config=` a config is made before the statement and passed; a config "
                "given by name gets the lines before the statement unless it has them on every "
                "path to the session (here, or in the function of the repository that returns "
                "it); another expression is first put in a variable. An attribute config used "
                "in a method (`self._cfg`) gets the lines once, after the one statement of its "
                "class that builds it, never before a session opened at every call. A config "
                "that comes in as a parameter (also kept by `config = config or "
                "tf.ConfigProto()`) is the caller's object, which a caller may pass "
                "again or use elsewhere: lines for it would change the caller's config and add "
                "one more NpuOptimizer entry at every call. It is left as it is; right before "
                "the session NPU007 writes `npu_config = copy.deepcopy(config)` (`... if config "
                "is not None else tf.ConfigProto()` when the parameter defaults to None and the "
                "function does not make one then), the guide's lines for `npu_config`, and "
                "passes `config=npu_config` (`import copy` is added unless the module imports "
                "it). A later session of the same block takes the same copy when no statement "
                "in between uses `config`; after one that may change it, it gets its own copy. "
                "A function's own copy (`config = copy.deepcopy(config)`, `cfg = "
                "copy.copy(config)`, `cfg.CopyFrom(config)`) is configured in place, except one "
                "re-made from itself in a loop (each pass would copy the last pass's "
                "NpuOptimizer): the session takes a configured copy of it. Lines written before "
                "a session go above the comment lines right above it, which stay attached to it. "
                "`RewriterConfig` is imported where it is used.")
    reports = ("Sessions where no statement can be inserted (a lambda, a default argument, a "
               "comprehension), with the lines to add by hand; arguments unpacked with "
               "`*`/`**`; a `MonitoredSession` whose session creator's config is not visible, or "
               "without one in a file that uses the distribute coordinator (whose worker context "
               "then gives it its creator); "
               "an attribute or global config used in a function that no one statement of its "
               "class or module builds (handed in, another object's, `CONFIG = None` set by a "
               "function), to configure where it is built; a config parameter of a function "
               "(or the function's own copy of it) that a caller, in the file or in another file of the repository, passes "
               "configured already (its own session uses it, it has the lines, or a configured "
               "function made it): lines there would give that object, or a copy of it, a second "
               "NpuOptimizer.")
    example = """
        import tensorflow as tf

        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            for step in range(num_steps):
                sess.run(train_op)

        eval_sessions = [tf.Session(graph=graph) for graph in eval_graphs]
    """
    _scope = "linked"
    # TF-Slim's ``learning.train``: ``train`` spells every Estimator's and model's training
    # call, so it is a site name only as an attribute of a name the file binds (``@train``).
    _site_names = (*sorted(SESSION_NAMES | SLIM_NAMES - {"train"}), "ConfigProto")
    _ast_sites = bound_attribute_marks(("train",))
    _tokens = ("Session", "managed_session", "prepare_or_wait_for_session", "slim")
    pattern = f"""(
        trailer< '.' name=({_NAMES}) >
      | power< name=({_NAMES}) trailer< '(' [any] ')' > any* >
    )"""
    Settings = Settings

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # the functions of this repository that make or configure sessions, by name
        return (*super()._site_names_for(facts), *fact_names(facts, ("npu007-config:",)))

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        name = capture["name"]
        site = session_call(name[0] if isinstance(name, list) else name, ctx)
        if site is None:
            return
        line, column = position(site.power)
        if site.name == MONITORED_SESSION:
            self._monitored(site, line, column, ctx)
            return
        config = dotted_name(site.config.value) if site.config is not None else None
        if run_config_session_config(config, ctx):
            ctx.report(site.power, "migrated", FROM_RUN_CONFIG.format(config=config))
            return
        if self.settings.style == "helper" and not (site.config is None and has_unpacking(site.call)):
            ctx.defer(lambda: _wrap(site, line, column, ctx))
            return
        problem = why_not(site.power)
        if problem:
            ctx.report(site.power, "unmigrated", f"cannot add statements {problem}: before this "
                       f"code add by hand {_by_hand(site)}")
        elif site.config is None and has_unpacking(site.call):
            ctx.report(site.power, "unmigrated", f"the arguments are unpacked: make sure {site.keyword}= "
                       f"is given, with {NPU_CONFIG}: {_by_hand(site)}")
        else:
            ctx.defer(lambda: self._migrate(site, line, column, ctx))

    def _monitored(self, site: SessionCall, line: int, column: int, ctx: FileContext) -> None:
        """A ``MonitoredSession``: its config is its session creator's. Without one (or with
        ``None``) it makes ``ChiefSessionCreator()``, so passing ``ChiefSessionCreator(config=
        <NPU config>)`` changes nothing else; that creator's config is then made as for a
        session without ``config=``."""
        creator = find_argument(site.call, "session_creator", 0)
        if creator is not None and not is_none(creator.value):
            ctx.report(site.power, *_creator_finding(creator.value, ctx))
            return
        if has_unpacking(site.call):
            return
        problem = _coordinated(ctx) or (why_not(site.power) if self.settings.style == "inline" else "")
        if problem:
            ctx.report(site.power, "unmigrated", f"{problem}: pass session_creator="
                       f"{site.module}.train.ChiefSessionCreator(config=config) with {NPU_CONFIG}")
            return
        ctx.defer(lambda: self._give_creator(site, creator, line, column, ctx))

    def _give_creator(self, site: SessionCall, creator: Optional[Argument], line: int, column: int,
                      ctx: FileContext) -> None:
        spelled = f"{config_module(site.module, ctx)}.train.ChiefSessionCreator"
        made = parse_expression(spelled + "()")
        if creator is None:
            add_keyword(site.call, "session_creator", "None")
            creator = find_argument(site.call, "session_creator")
            assert creator is not None, "session_creator= was just added"
        made.prefix = creator.value.prefix
        creator.value.replace(made)
        inner = SessionCall(made, made.children[-1], CHIEF_CREATOR, site.module, None)
        ctx.report_at(line, column, "migrated", f"passed session_creator={spelled}(config=...), "
                      "the creator it makes when given none, to carry the session's config")
        if self.settings.style == "helper":
            _wrap(inner, line, column, ctx)
        else:
            self._migrate(inner, line, column, ctx)

    def _migrate(self, site: SessionCall, line: int, column: int, ctx: FileContext) -> None:
        statement = enclosing_statement(site.power)
        value = site.config.value if site.config is not None else None
        if value is None or is_none(value):
            earlier = _created_before(statement, ctx)
            name = earlier or _config_name(enclosing_scope(statement), ctx)
            if earlier is None:
                _hoist(parse_config(site, ctx), statement, name, line, column, ctx).fresh = True
            if value is None:
                add_keyword(site.call, site.keyword, name)
            else:
                value.replace(Name(name, prefix=value.prefix))
            how = "passed" if earlier else "created"
            ctx.report_at(line, column, "migrated", f"{how} '{name}' with {NPU_CONFIG}")
            return
        source = config_source(value, ctx)
        if source is not None:
            _report(_configure(source, line, column, ctx), line, column, ctx)
            return
        expression = dotted_name(value)
        if expression is not None and ctx.tf.qualify(expression) is None:
            done = _complete(ConfigTarget.at(expression, statement, line, column), ctx, site.module, value)
            _report(done, line, column, ctx)
            return
        name = _config_name(enclosing_scope(statement), ctx)
        value.replace(Name(name, prefix=value.prefix))
        value.prefix = ""
        _hoist(value, statement, name, line, column, ctx)
        ctx.report_at(line, column, "migrated", f"moved the config into '{name}' and gave it {NPU_CONFIG}")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        """Complete the functions that the repository facts promise return a configured config
        (callers in other files add nothing) that no session of this file led to."""
        for function in promised_functions(ctx):
            if id(function) in _configured(ctx):
                continue
            line, column = position(function)
            done = _configure(ConfigSource(definition_name(function), function), line, column, ctx)
            _report(done, line, column, ctx, why=PROMISED)


def _coordinated(ctx: FileContext) -> str:
    """Why ``MonitoredSession()`` may not make ``ChiefSessionCreator()``: run by TensorFlow's
    distribute coordinator, it takes the worker context's session creator instead."""
    if "distribute_coordinator" in ctx.original:
        return ("the file uses the distribute coordinator, whose worker context gives a "
                "MonitoredSession without a session creator its own")
    return ""


def _creator_finding(creator: Base, ctx: FileContext) -> tuple[Status, str]:
    """NPU007's finding at a ``MonitoredSession`` given the session creator ``creator``: its
    config is the creator's, which NPU007 configures at the creator's call (a call written
    here, or the one a name of the scope is bound to); any other creator is reported."""
    code = tree_text(creator).strip()
    calls = [creator] if creator.type != tokens.NAME else assigned_values(creator, creator.value) or []
    found = [name_reference(call, [ctx.tf], CREATORS) for call in calls]
    made = [reference for reference in found if reference is not None and reference.call is not None]
    if not made or len(made) < len(found):
        return "unmigrated", (f"the session creator {code} is not shown to be a ChiefSessionCreator "
                              f"or WorkerSessionCreator: make sure it creates the session with a "
                              f"config that has {NPU_CONFIG}")
    if creator.type != tokens.NAME:
        return "migrated", f"the session takes its config from its {made[0].spelled}, configured there"
    return "migrated", f"the session takes its config from {code}, configured where it is made"


@dataclass
class _Done:
    """What making sure of one config did."""

    label: str = ""  # the config, as findings name it
    added: bool = False  # lines were added
    problem: str = ""  # why the lines could not be added on every path (then this is reported)
    elsewhere: set[str] = field(default_factory=set)  # configured functions of other files it comes from
    local: bool = False  # some object reaching the session is configured in this file
    after: list[int] = field(default_factory=list)  # lines of bindings the lines were added after
    passed: bool = False  # the session was given a configured copy made for an earlier one

    def merge(self, other: "_Done") -> None:
        self.added |= other.added
        self.problem = self.problem or other.problem
        self.elsewhere |= other.elsewhere
        self.local |= other.local
        self.after += other.after


def _report(done: _Done, line: int, column: int, ctx: FileContext, why: str = "") -> None:
    if done.problem:
        ctx.report_at(line, column, "unmigrated", done.problem)
    elif done.elsewhere and not done.local:
        names = " and ".join(sorted(done.elsewhere))
        ctx.report_at(line, column, "migrated", f"the config is configured in {names}, which "
                      f"returns it with {NPU_CONFIG}: nothing to add here")
    else:
        where = ", ".join(map(str, done.after))
        note = f" (after line {where}: that config had none on its way here)" if where else ""
        message = f"passed {done.label}, which has {NPU_CONFIG}" if done.passed \
            else _message(done.label, done.added)
        ctx.report_at(line, column, "migrated", message + note + why)


def _configured(ctx: FileContext) -> set[int]:
    """The functions (ids) this run made sure of."""
    return memo(ctx).setdefault("npu007.configured", set())


def _configure(source: ConfigSource, line: int, column: int, ctx: FileContext) -> _Done:
    """Make sure the config ``source`` returns has the NPU lines: in its function, once."""
    function = source.function
    if function is None:
        return _Done(source.name, elsewhere={source.name})
    label = f"the config returned by {source.name}()"
    busy = memo(ctx).setdefault("npu007.configuring", set())
    if id(function) in busy:  # a function that returns its own result (recursion)
        return _Done(label, local=True)
    busy.add(id(function))
    _configured(ctx).add(id(function))
    done = _Done(label)
    for returned in function_returns(function):
        done.merge(_complete_return(returned, function, line, column, ctx))
    busy.discard(id(function))
    return done


def _complete_return(returned: Node, function: Node, line: int, column: int,
                     ctx: FileContext) -> _Done:
    value, statement = returned.children[1], enclosing_statement(returned)
    inner = returned_value(value)
    if inner.type == tokens.NAME:
        return _complete(ConfigTarget.at(inner.value, statement, line, column), ctx, value=inner)
    source = config_source(inner, ctx)
    if source is not None:
        return _configure(source, line, column, ctx)
    name = _config_name(function, ctx)
    value.replace(Name(name, prefix=value.prefix))
    value.prefix = ""
    _hoist(value, statement, name, line, column, ctx)
    return _Done(added=True, local=True)


def _wrap(site: SessionCall, line: int, column: int, ctx: FileContext) -> None:
    """style = "helper": ``config=X`` becomes ``config=npu_config_proto(config_proto=X)``."""
    value = site.config.value if site.config is not None else None
    if value is not None and callee_last_name(value) == HELPER:
        ctx.report_at(line, column, "migrated", f"the config goes through {HELPER}()")
        return
    if value is None:
        add_keyword(site.call, site.keyword, "None")
        added = find_argument(site.call, site.keyword)
        assert added is not None, "config= was just added"
        value = added.value
    module = config_module(site.module, ctx) if is_none(value) else site.module  # for config=None only
    wrapped = parse_expression(f"{HELPER}(config_proto={module}.ConfigProto())")
    inner = wrapped.children[1].children[1].children[2]
    wrapped.prefix, value.prefix = value.prefix, ""
    value.replace(wrapped)
    if not is_none(value):
        inner.replace(value)
        inner = value
    _soft_placement_target(inner, site, line, column, ctx)
    ctx.report_at(line, column, "migrated", f"passed the config through {HELPER}() for {NPU_CONFIG}")


def _soft_placement_target(config: Base, site: SessionCall, line: int, column: int,
                           ctx: FileContext) -> None:
    """Let NPU008 complete the wrapped config: a ConfigProto(...) call, or a named object."""
    if callee_last_name(config) == "ConfigProto":
        if find_argument(config.children[-1], "allow_soft_placement") is None:
            targets(ctx).append(ConfigTarget(code(config), site.power, line, column,
                                             constructor=config.children[-1]))
        return
    expression = dotted_name(config)
    if expression is not None and not why_not(site.power):
        targets(ctx).append(ConfigTarget.at(expression, enclosing_statement(site.power), line, column))


def _insert_npu_lines(expression: str, missing: set[str], statement: Base, ctx: FileContext,
                      first: str = "", after: bool = False) -> list[Base]:
    """Insert ``first`` and the guide's lines before (``after``: after) ``statement``, plus the
    precision mode setting when the custom_op is written, under a name free in that scope."""
    custom_op = _custom_op_name(enclosing_scope(statement), ctx) if CUSTOM_OP in missing else ""
    lines = npu_lines(expression, missing, custom_op)
    mode = ctx.rule.settings.precision_mode if ctx.rule is not None else None
    if mode is not None and custom_op:
        lines.insert(2, f'{custom_op}.parameter_map["precision_mode"].s = '
                        f'{ctx.tf_module()}.compat.as_bytes({json.dumps(mode)})')
    code_lines = "\n".join([first, *lines] if first else lines)
    nodes = (insert_after if after else insert_above_comments)(statement, code_lines, ctx.newline)
    claim(nodes, ctx, unless={custom_op})  # guide lines only: later guide lines may reuse it
    return nodes


def _config_name(scope: Node, ctx: FileContext) -> str:
    return free_name(scope, "config", "npu_config", taken_names(scope, ctx))


def _custom_op_name(scope: Node, ctx: FileContext) -> str:
    """``custom_op`` unless ``scope`` uses it for something else than the guide's custom_op
    lines (which do not mind a rebinding), else ``npu_custom_op``, ``npu_custom_op_1``..."""
    taken = taken_names(scope, ctx)
    if "custom_op" in taken:
        taken = taken - custom_op_names(scope)
    return free_name(scope, "custom_op", "npu_custom_op", taken)


def parse_config(site: SessionCall, ctx: FileContext) -> Base:
    return parse_expression(f"{config_module(site.module, ctx)}.ConfigProto()")


def _created_before(statement: Base, ctx: FileContext) -> Optional[str]:
    """A config this rule created earlier in the same scope that surely ran before ``statement``."""
    scope = enclosing_scope(statement)
    for target in targets(ctx):
        block = target.anchor.parent
        if not target.fresh or enclosing_scope(target.anchor) is not scope:
            continue
        holder = block_child(statement, block)
        if holder is not None and child_index(target.anchor) < child_index(holder):
            return target.expression
    return None


def _hoist(value: Base, statement: Base, name: str, line: int, column: int,
           ctx: FileContext) -> ConfigTarget:
    """``name = <value>`` plus the NPU lines, before ``statement``; ``value`` is moved there."""
    nodes = _insert_npu_lines(name, set(NPU_PIECES), statement, ctx, first=f"{name} = None")
    placeholder = nodes[0].children[0].children[2]
    value.prefix = placeholder.prefix
    placeholder.replace(value)
    claim([value], ctx)
    ensure_rewriter_config(ctx)
    target = ConfigTarget.at(name, statement, line, column)
    if callee_last_name(value) == "ConfigProto":
        target.constructor = value.children[-1]
    targets(ctx).append(target)
    return target


def _complete_here(target: ConfigTarget, done: _Done, ctx: FileContext) -> _Done:
    """``target`` with no flow to follow (not a local name): the lines go before the session,
    unless the object outlives the call and no one statement builds it (then reported)."""
    targets(ctx).append(target)
    done.local = True
    missing = set(NPU_PIECES - target.settings().keys())
    if missing and _outlives_call(target) and _module_binding(target) is None \
            and _attribute_binding(target) is None:
        done.problem = OUTLIVES.format(config=target.expression, lines="; ".join(
            npu_lines(target.expression, missing)))
        target.built_elsewhere = True
        return done
    done.added = _insert_before(target, missing, ctx)
    return done


def _complete(target: ConfigTarget, ctx: FileContext, module: Optional[str] = None,
              value: Optional[Base] = None) -> _Done:
    """Add the NPU lines the object ``target`` names lacks, once per object (``module``: how
    the session spells TensorFlow's module, for a ``ConfigProto()`` written here; ``value``:
    the target's name where the session takes it, or the ``return`` gives it back).

    A parameter's object is the caller's: it outlives the call, as an attribute does, and a
    caller may pass it again or use it elsewhere. It is not given the lines: a copy made
    before the session is, and the session takes the copy (:func:`_configure_copy`).

    A local name is followed along every path to the session (``_config_flow``): objects
    returned by a configured function count as configured (a function of this file is
    completed first). When only some paths have the NpuOptimizer line, it goes right after
    each binding that has none on its way, if no path from that binding adds one; else the
    site is reported. The other lines are assignments: before the session is always safe.
    """
    done = _Done(target.expression)
    flow = _flow(target, ctx)
    if flow is None:
        return _complete_here(target, done, ctx)
    done.problem = _configured_by_caller(target, flow, ctx)
    if done.problem:
        return done
    _configure_sources(target, flow, done, ctx)
    if flow.doubled:
        done.problem = _twice(target, flow)
        return done
    lacking = flow.lacking(CUSTOM_OP)
    if not any(CUSTOM_OP in pieces for _, pieces in flow.reaching):
        missing = set().union(*(NPU_PIECES - pieces for _, pieces in flow.reaching))
        if value is not None and (any(_callers_object(flow, index, target) for index, _ in flow.reaching)
                                  or _copied_in_loop(flow, target)):
            _configure_copy(target, value, missing, flow, module, done, ctx)
            return done
        done.added |= _insert_before(target, missing, ctx, _none_guard(target, flow, module, ctx))
        return done
    unsafe = [index for index in sorted(lacking) if _after_binding(flow, index) is None]
    if unsafe:
        done.problem = _partly_configured(target, flow, unsafe[0])
        return done
    for index in sorted(lacking):
        _insert_after_binding(target.expression, NPU_PIECES - flow.common(index), flow, index, ctx)
        done.after.append(position(flow.bindings[index])[0])
    rest = set().union(*(NPU_PIECES - pieces for index, pieces in flow.reaching
                         if index not in lacking))
    done.added |= bool(lacking) | _insert_before(target, rest, ctx)
    return done


def _configure_sources(target: ConfigTarget, flow: Flow, done: _Done, ctx: FileContext) -> None:
    """Configure the functions of the repository whose results reach the session along
    ``flow`` (into ``done``), each once: a function bound on two paths (``config =
    make_config(8)`` / ``make_config(1)``) gave NPU008 its returned config twice for this
    session, and two findings where one was due. A target some object of this scope reaches
    is NPU008's."""
    here = False  # some object reaching the session is configured in this scope
    configured: set[tuple[str, int]] = set()  # the functions: name, id of the def
    for index in sorted({index for index, _ in flow.reaching}):
        source = _binding_source(flow, index, ctx)
        if source is None:
            here = True
        elif (source.name, id(source.function)) not in configured:
            configured.add((source.name, id(source.function)))
            done.merge(_configure(source, target.line, target.column, ctx))
    if here:
        done.local = True
        targets(ctx).append(target)  # NPU008 completes it here


def _configure_copy(target: ConfigTarget, value: Base, missing: set[str], flow: Flow,
                    module: Optional[str], done: _Done, ctx: FileContext) -> None:
    """Give a copy of the parameter ``target`` names the ``missing`` lines right before its
    statement, and the copy to the session (``value``: the name there): ``npu_config =
    copy.deepcopy(config)``, or a new ``ConfigProto()`` when it may be None. The caller's
    object stays as it was, for its other uses, and every call makes its own copy, with one
    NpuOptimizer. In a loop too: each pass copies the object as that pass left it (settings
    made in the loop before the session reach it) and configures its own copy once. A copy
    made for an earlier session of the function that surely ran before this one, with nothing
    in between using the parameter, serves this session too (:func:`_earlier_copy`). The copy
    is NPU008's target. ``done`` says what findings call it and what was done."""
    earlier = _earlier_copy(target, ctx)
    if earlier is not None:
        name, done.passed = earlier.name, True
        done.label = (f"the copy '{name}' of the parameter '{target.expression}' made for the "
                      f"session at line {earlier.line} (nothing uses '{target.expression}' in between)")
    else:
        name, done.added = _new_copy(target, missing, flow, module, ctx), True
        done.label = f"a copy of the parameter '{target.expression}' ('{name}': the caller's object stays as it was)"
    value.replace(Name(name, prefix=value.prefix))
    copy = ConfigTarget.at(name, target.anchor, target.line, target.column)
    found = targets(ctx)
    found[:] = [copy if known is target else known for known in found]


@dataclass
class _Copy:
    """A configured copy of a config parameter that NPU007 wrote before a session."""

    parameter: str
    name: str
    binding: Base  # the line ``name = copy.deepcopy(parameter)``
    line: int  # of the session it was made for


def _new_copy(target: ConfigTarget, missing: set[str], flow: Flow, module: Optional[str],
              ctx: FileContext) -> str:
    """Write ``npu_config = copy.deepcopy(config)`` and the ``missing`` lines for it before the
    target's statement (remembered for later sessions); the copy's name."""
    scope = enclosing_scope(target.anchor)
    name = free_name(scope, f"npu_{target.expression}", f"npu_{target.expression}", taken_names(scope, ctx))
    copied = f"{_copy_module(scope, ctx)}.deepcopy({target.expression})"
    if _none_guard(target, flow, module, ctx) is not None:
        copied += f" if {target.expression} is not None else {config_module(module, ctx)}.ConfigProto()"
    nodes = _insert_npu_lines(name, missing, target.anchor, ctx, first=f"{name} = {copied}")
    if missing - {CUSTOM_OP}:
        ensure_rewriter_config(ctx)
    memo(ctx).setdefault("npu007.copies", []).append(_Copy(target.expression, name, nodes[0], target.line))
    return name


def _earlier_copy(target: ConfigTarget, ctx: FileContext) -> Optional[_Copy]:
    """The copy of the target's parameter written for an earlier session of its scope that
    surely ran before the target's statement (its block holds that statement, after it), when
    no statement in between uses the parameter (a use may change the object: the later session
    must see that change, so it gets its own copy)."""
    for copy in memo(ctx).get("npu007.copies", ()):
        holder = block_child(target.anchor, copy.binding.parent)
        if copy.parameter != target.expression or holder is None \
                or child_index(holder) <= child_index(copy.binding):
            continue
        scope = enclosing_scope(target.anchor)
        order = {id(leaf): index for index, leaf in enumerate(scope.leaves())}
        start, end = order[id(last_leaf(copy.binding))], order[id(next(target.anchor.leaves()))]
        if not any(start < order[id(use.leaf)] < end for use in uses(scope, target.expression)
                   if use.kind != "harmless"):
            return copy
    return None


def _callers_object(flow: Flow, index: int, target: ConfigTarget) -> bool:
    """May binding ``index`` of ``flow`` give the target's name the object a caller passed:
    the parameter itself, or a value that may be it (``config = config or tf.ConfigProto()``,
    ``config if config is not None else ...``; a local of that name counts too, whose copy
    costs nothing)?"""
    if index == PARAMETER:
        return True
    binding = flow.bindings[index] if index >= 0 else None
    if binding is None or binding.type != symbols.expr_stmt or binding.children[1].type != tokens.EQUAL:
        return False
    value = binding.children[-1]
    if value.type == symbols.or_test:
        operands = value.children[::2]
    elif value.type == symbols.test and len(value.children) == 5:  # a if test else b
        operands = [value.children[0], value.children[4]]
    else:
        return False
    scope = enclosing_scope(binding)
    return scope.type == symbols.funcdef and target.expression in _parameter_names(scope) \
        and any(operand.type == tokens.NAME and operand.value == target.expression for operand in operands)


def _parameter_names(function: Node) -> set[str]:
    return {leaf.value for _, leaf in parameters(function)}


def _copy_module(scope: Node, ctx: FileContext) -> str:
    """How the file spells the ``copy`` module in ``scope``: its own import, else one asked
    for (``import copy``, or ``import copy as npu_copy`` when the file uses the name)."""
    if _module_imports_copy(ctx) and not _bound_in_functions(scope, "copy"):
        return "copy"
    if "npu007.copy" not in memo(ctx):  # once per file: the copies' own lines spell it after
        taken = taken_names(ctx.tree, ctx)
        alias = "copy" if "copy" not in taken else free_name(ctx.tree, "npu_copy", "npu_copy", taken)
        ctx.add_import("import copy" if alias == "copy" else f"import copy as {alias}")
        memo(ctx)["npu007.copy"] = alias
    return str(memo(ctx)["npu007.copy"])


def _module_imports_copy(ctx: FileContext) -> bool:
    """Does the module's own code bind ``copy``, and only by ``import copy``? (An import in a
    function binds it there only; ``copy = None`` or ``from x import copy`` is another object.)"""
    found = [use.leaf for use in uses(ctx.tree, "copy")
             if use.kind == "bind" and enclosing_scope(use.leaf) is ctx.tree]
    return bool(found) and all(leaf.parent.type in (symbols.import_name, symbols.dotted_as_names)
                               for leaf in found)


def _bound_in_functions(scope: Node, name: str) -> bool:
    """Does ``scope`` or a function around it bind ``name`` (hiding the module's)?"""
    while scope.type != symbols.file_input:
        if scope.type == symbols.funcdef and name in bound_names(scope):
            return True
        scope = enclosing_scope(scope)
    return False


def _insert_after_binding(expression: str, missing: frozenset[str], flow: Flow, index: int,
                          ctx: FileContext) -> None:
    _insert_npu_lines(expression, set(missing), _after_binding(flow, index), ctx, after=True)
    if missing - {CUSTOM_OP}:
        ensure_rewriter_config(ctx)


def _flow(target: ConfigTarget, ctx: FileContext) -> Optional[Flow]:
    return target_flow(target, lambda value: NPU_PIECES if config_source(value, ctx) else frozenset())


def _binding_source(flow: Flow, index: int, ctx: FileContext) -> Optional[ConfigSource]:
    binding = flow.bindings[index] if index >= 0 else None
    if binding is None or binding.type != symbols.expr_stmt or binding.children[1].type != tokens.EQUAL:
        return None
    return config_source(binding.children[-1], ctx)


def _after_binding(flow: Flow, index: int) -> Optional[Base]:
    """The line of binding ``index`` when the NpuOptimizer lines can go right after it: an
    assignment alone on its line in a block, of a value that may be an object (not ``None``),
    and no path from it adds them."""
    binding = flow.bindings[index] if index >= 0 else None
    line = binding.parent if binding is not None else None
    if binding is None or line is None or binding.type != symbols.expr_stmt or line.type != symbols.simple_stmt \
            or len(line.children) != 2 or line.parent.type not in BLOCKS or _binds_none(binding):
        return None
    return None if flow.ever_set(index, CUSTOM_OP) else line


def _partly_configured(target: ConfigTarget, flow: Flow, index: int) -> str:
    binding = flow.bindings[index] if index >= 0 else None
    lines = "; ".join(npu_lines(target.expression, set(NPU_PIECES)))
    if binding is not None and _binds_none(binding):
        target.may_be_none = True
        return (f"'{target.expression}' may be None at this session (bound at line "
                f"{position(binding)[0]}), and other paths give it the NpuOptimizer lines: "
                f"lines for the object would raise AttributeError on None. Give every path "
                f"a config object with the lines exactly once, e.g. "
                f"{target.expression} = tf.ConfigProto(); {lines}")
    where = f"the config bound at line {position(binding)[0]}" if binding is not None \
        else f"the parameter '{target.expression}'"
    return (f"'{target.expression}' has the NpuOptimizer lines on some paths to this session "
            f"only: {where} reaches it without them, and adding them there would add a second "
            f"NpuOptimizer on another path. Give each config object the lines exactly once, "
            f"right after it is made: {lines}")


def _configured_by_caller(target: ConfigTarget, flow: Flow, ctx: FileContext) -> str:
    """Why the lines may not go in for a config that comes in as a parameter lacking them, or
    as the function's own copy of one (``config = copy.deepcopy(config)``: the copy has what
    the caller's object had): a caller in the file, or in another file of the repository,
    passes a config it configures itself (:mod:`_shared_parameters`); else ""."""
    scope = enclosing_scope(target.anchor)
    if scope.type != symbols.funcdef:
        return ""
    names = {target.expression if _callers_object(flow, index, target) else _copied_parameter(flow, index, scope)
             for index, pieces in flow.reaching if CUSTOM_OP not in pieces}
    for name in sorted(name for name in names if name is not None):
        function, line = scope.children[1].value, configured_caller(scope, name)
        if line is not None:
            return SHARED.format(config=name, function=function, line=line)
        passed = configured_elsewhere(scope, name, ctx)
        if passed is not None:
            why = _WHY_CONFIGURED.get(passed.why) or f"it comes from {passed.why[1:]}(), which returns it configured"
            return SHARED_ELSEWHERE.format(config=name, function=function, path=passed.path, why=why)
    return ""


def _copied_parameter(flow: Flow, index: int, scope: Node) -> Optional[str]:
    """The parameter of the function ``scope`` that binding ``index`` of ``flow`` copies
    (``cfg = copy.deepcopy(config)``, ``copy.copy(config)``), else None."""
    copied = _copy_of(flow.bindings[index]) if index >= 0 else None
    return copied if copied is not None and copied in _parameter_names(scope) else None


def _copy_of(binding: Base) -> Optional[str]:
    """The name ``x = copy.deepcopy(<name>)`` or ``x = copy.copy(<name>)`` copies (a protobuf
    message's ``copy.copy`` is a whole copy too: it pickles the message)."""
    if binding.type != symbols.expr_stmt or binding.children[1].type != tokens.EQUAL:
        return None
    value = binding.children[-1]
    copied = deep_copied(value)
    if copied is None and callee_last_name(value) == "copy" and dotted_name(value.children[0]) == "copy":
        argument = find_argument(value.children[-1], "x", 0)
        copied = dotted_name(argument.value) if argument is not None else None
    return copied if copied is not None and copied.isidentifier() else None


def _copied_in_loop(flow: Flow, target: ConfigTarget) -> bool:
    """Does the target's name reach its session from ``name = copy.deepcopy(name)`` in a loop
    around the session? Each pass copies the object the last pass configured: lines for it
    would give the second pass's object a second NpuOptimizer."""
    for index, _ in flow.reaching:
        binding = flow.bindings[index] if index >= 0 else None
        if binding is None or _copy_of(binding) != target.expression:
            continue
        node = binding.parent
        while node is not None and node.type not in (symbols.funcdef, symbols.file_input):
            if node.type in (symbols.for_stmt, symbols.while_stmt) and is_inside(target.anchor, node):
                return True
            node = node.parent
    return False


def _twice(target: ConfigTarget, flow: Flow) -> str:
    line = position(flow.doubled[0])[0]
    return (f"'{target.expression}' gets a second NpuOptimizer at line {line}: on some path it "
            f"has one there already (from earlier lines, an earlier pass of a loop, or the "
            f"function that made it); keep exactly one custom_optimizers.add() per config object")


def _insert_before(target: ConfigTarget, missing: set[str], ctx: FileContext,
                   guard: Optional[Callable[[Base], str]] = None) -> bool:
    """Insert the ``missing`` lines before the target's statement (outside loops that keep
    the object), or after the module-level binding of a global; True when any. ``guard``:
    the code that goes first, given the statement the lines go before."""
    if not missing:
        return False
    binding = _module_binding(target) or _attribute_binding(target)
    target.anchor = _outside_loops(target.anchor, target.expression)
    if binding is not None:
        _insert_npu_lines(target.expression, missing, binding, ctx, after=True)
    else:
        first = guard(target.anchor) if guard is not None and CUSTOM_OP in missing else ""
        _insert_npu_lines(target.expression, missing, target.anchor, ctx, first=first)
    if missing - {CUSTOM_OP}:
        ensure_rewriter_config(ctx)
    return True


def _none_guard(target: ConfigTarget, flow: Flow, module: Optional[str],
                ctx: FileContext) -> Optional[Callable[[Base], str]]:
    """``if config is None: config = tf.ConfigProto()`` (on two lines) for a name that may be
    None at the session: a parameter that defaults to None and reaches the session as passed
    (``def __init__(self, tf_config=None)``), or a local bound to None on some path (``else:
    config = None``, a cluster script's local run): the lines for the object would raise on None, and ``Session(config=None)`` runs with a
    default ``ConfigProto``, which the guard makes explicit (then configured for the NPU).
    ``ConfigProto`` is spelled as a config created for the session is (:func:`config_module`:
    ``tf.compat.v1`` in a ``tf2-compat`` file that imports ``tensorflow as tf``)."""
    scope = enclosing_scope(target.anchor)
    name = target.expression
    if not any(_may_be_none(flow, index, scope, target) for index, _ in flow.reaching):
        return None

    def guard(anchor: Base) -> str:
        indent = indentation(anchor)
        inner = indent + ("\t" if "\t" in indent else "    ")
        return f"if {name} is None:\n{inner}{name} = {config_module(module, ctx)}.ConfigProto()"
    return guard


def _may_be_none(flow: Flow, index: int, scope: Node, target: ConfigTarget) -> bool:
    """Can the object binding ``index`` gives the target's name be None: a parameter that
    defaults to None and that the function does not replace when None before the session (``if
    config is None: config = tf.ConfigProto()``), or a local bound to None on some branch
    (``else: config = None``, the local run of a cluster script)?"""
    if index == PARAMETER:
        name = target.expression
        return scope.type == symbols.funcdef and defaults_to_none(scope, name) \
            and not made_when_none(scope, name, target.anchor)
    return index >= 0 and _binds_none(flow.bindings[index])


def _binds_none(binding: Base) -> bool:
    """``name = None`` or ``name = <object> if <test> else None`` (either arm)."""
    if binding.type != symbols.expr_stmt or binding.children[1].type != tokens.EQUAL:
        return False
    value = binding.children[-1]
    arms = [value.children[0], value.children[-1]] if value.type == symbols.test else [value]
    return any(is_none(arm) for arm in arms)


def _module_binding(target: ConfigTarget) -> Optional[Base]:
    """The one module-level ``name = ...`` of a global config that a function uses.

    Its NPU lines go right after it: before the session they would configure the object only
    when that function runs (not for other functions sharing it), and again on every call.
    """
    scope = enclosing_scope(target.anchor)
    if scope.type != symbols.funcdef or len(target.regions) < 2:
        return None
    module = target.regions[-1][0]
    found = _bindings(module, target.expression)
    if len(found) != 1 or found[0].parent.type not in BLOCKS or not _built_by_call(found[0]) \
            or _declared_global(module, target.expression):
        return None  # ``CONFIG = None``, then set by a function: not built there
    return found[0]


def _built_by_call(line: Base) -> bool:
    """Does the assignment line ``line`` bind the result of a call (``tf.ConfigProto(...)``)?"""
    value = line.children[0].children[2]
    return bool(value.type == symbols.power and is_call_trailer(value.children[-1]))


def _declared_global(module: Node, name: str) -> bool:
    """Does a function of ``module`` declare ``global name`` (and may rebind it)?"""
    return any(node.type == symbols.global_stmt and name in [leaf.value for leaf in node.leaves()][1:]
               for node in module.pre_order())


def _outlives_call(target: ConfigTarget) -> bool:
    """Is the config an attribute (``self._cfg``, ``FLAGS.config``) or a global used in a
    function? It outlives the call: lines before the session would add one more NpuOptimizer
    entry to the same object at every call."""
    return ("." in target.expression or len(target.regions) > 1) \
        and enclosing_scope(target.anchor).type == symbols.funcdef


def _attribute_binding(target: ConfigTarget) -> Optional[Base]:
    """The one statement of the class that builds the attribute config ``self.X`` of a method
    (``self.X = tf.ConfigProto(...)``, in a block, by a call): its NPU lines go right after it,
    once per object. None when it is bound several times, handed in (``self.X = config``),
    or not an attribute of the method's own object."""
    if not _outlives_call(target) or target.expression.split(".")[0] not in ("self", "cls"):
        return None
    found = [node.parent for root, _ in target.regions
             for node in scope_statements(root, nested=True)
             if assignment(node) and code(node.children[0]) == target.expression]
    return found[0] if len(found) == 1 and found[0].parent.type in BLOCKS and _built_by_call(found[0]) \
        else None


def _outside_loops(statement: Base, expression: str) -> Base:
    """The outermost loop of the scope around ``statement`` that does not (re)bind the config,
    else ``statement``: custom_optimizers.add() in a loop would add NpuOptimizer on every pass."""
    scope = enclosing_scope(statement)
    anchor, node = statement, statement.parent
    while expression.isidentifier() and node is not scope:
        if node.type in (symbols.for_stmt, symbols.while_stmt) and node.parent.type in BLOCKS \
                and not _may_bind(node, expression):
            anchor = node
        node = node.parent
    return anchor


def _may_bind(loop: Node, name: str) -> bool:
    """Could ``loop`` bind ``name`` to another object? A binding counts, and so does an escape
    (:func:`uses`): the analysis does not follow it, and a ``:=`` target is one."""
    return any(use.kind in ("bind", "escape") for use in uses(loop, name))


def _bindings(root: Node, expression: str) -> list[Base]:
    """Statements ``expression = ...`` in ``root``'s scope (not in nested functions)."""
    return [node.parent for node in scope_statements(root)
            if assignment(node) and code(node.children[0]) == expression]


SHARED = ("'{config}' is a parameter of {function}, and line {line} passes it a config that is "
          "configured there (its own session uses it): NpuOptimizer lines here would give that "
          "object, or a copy of it, a second one; configure the config once where each caller makes it, and pass it")
SHARED_ELSEWHERE = ("'{config}' is a parameter of {function}, and a call in {path} passes it a config "
                    "that is configured there ({why}): NpuOptimizer lines here would give that "
                    "object, or a copy of it, a second one; configure the config once where each caller makes it, "
                    "and pass it")
_WHY_CONFIGURED = {"session": "a session there uses it", "lines": "it has the NpuOptimizer lines"}
OUTLIVES = ("{config} outlives this function: NpuOptimizer lines here would add one more "
            "NpuOptimizer entry to it at every call, and no one statement of its class or module "
            "builds it; give it the lines once where it is built: {lines}")


def _message(what: str, added: bool) -> str:
    if added:
        return f"added the lines that give {what} {NPU_CONFIG}"
    return f"{what} already has {NPU_CONFIG}"


def _by_hand(site: SessionCall) -> str:
    value = site.config.value if site.config is not None else None
    expression = dotted_name(value) if value is not None else None
    if expression is None:
        start = f"config = {code(value) if value is not None else site.module + '.ConfigProto()'}"
        lines, expression = [start], "config"
    else:
        lines = []
    lines += npu_lines(expression, set(NPU_PIECES))
    return "; ".join(lines) + f" (RewriterConfig: from tensorflow.core.protobuf.rewriter_config_pb2 " \
        f"import RewriterConfig), then pass {site.keyword}={expression}"


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    """Which functions of the file return a configured config (``_config_functions``)."""
    return config_function_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SessionConfig()]
