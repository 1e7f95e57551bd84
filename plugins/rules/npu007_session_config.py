"""NPU007 session-config: every TF session runs with the NPU optimizer config of the guide."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, Optional

from fissix import pytree
from fissix.fixer_util import Name
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.calls import add_keyword, find_argument, has_unpacking, is_none
from npu_codemod.codemods.free_names import claim, taken_names
from npu_codemod.codemods.rule import Capture, FileContext, Rule, position
from npu_codemod.codemods.session_config import (
    CUSTOM_OP,
    MONITORED_SESSION,
    NPU_PIECES,
    SESSION_NAMES,
    ConfigTarget,
    SessionCall,
    callee_name,
    code,
    custom_op_names,
    ensure_rewriter_config,
    npu_lines,
    session_call,
    targets,
)
from npu_codemod.codemods.scopes import insert_after
from npu_codemod.codemods.snippets import parse_expression
from npu_codemod.codemods.statements import (
    BLOCKS,
    block_child,
    child_index,
    enclosing_scope,
    enclosing_statement,
    free_name,
    insert_before,
    scope_nodes,
    why_not,
)
from npu_codemod.codemods.tfnames import dotted_name, is_attribute_trailer, prefix_name
from npu_codemod.codemods.walk import scope_statements
from npu_codemod.plugins.hookspecs import hookimpl

_NAMES = "|".join(f"'{name}'" for name in sorted(SESSION_NAMES))
NPU_CONFIG = "the NPU optimizer config (NpuOptimizer on; remapping, memory_optimization off)"
HELPER = "npu_config_proto"


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
    description = "Run every TF session with the NpuOptimizer config of the guide."
    guide_section = "创建session并初始化资源"
    guide_section_en = "Creating the session and initializing resources"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("Every session (`tf.Session`, `tf.InteractiveSession`, "
                "`tf.train.MonitoredTrainingSession`, `MonitoredSession` and "
                "`SingularMonitoredSession` through `ChiefSessionCreator`, "
                "`Supervisor.managed_session`, ...) runs with the guide's config: the "
                "`NpuOptimizer` custom optimizer, `remapping` and `memory_optimization` off. "
                "Without `config=` a config is made before the statement and passed; a config "
                "given by name gets the lines before the statement unless it has them on every "
                "path to the session (here, or in the function of the repository that returns "
                "it); another expression is first put in a variable. `RewriterConfig` is "
                "imported where it is used.")
    reports = ("Sessions where no statement can be inserted (a lambda, a default argument, a "
               "comprehension), with the lines to add by hand; arguments unpacked with "
               "`*`/`**`; a `MonitoredSession` whose session creator's config is not visible.")
    example = """
        import tensorflow as tf

        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            for step in range(num_steps):
                sess.run(train_op)

        eval_sessions = [tf.Session(graph=graph) for graph in eval_graphs]
    """
    tokens = ("Session", "managed_session", "prepare_or_wait_for_session")
    pattern = f"""(
        trailer< '.' name=({_NAMES}) >
      | power< name=({_NAMES}) trailer< '(' [any] ')' > any* >
    )"""
    Settings = Settings

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        name = capture["name"]
        site = session_call(name[0] if isinstance(name, list) else name, ctx)
        if site is None:
            return
        line, column = position(site.power)
        if site.name == MONITORED_SESSION:
            if find_argument(site.call, "session_creator", 0) is None and not has_unpacking(site.call):
                ctx.report(site.power, "unmigrated", "pass session_creator="
                           f"{site.module}.train.ChiefSessionCreator(config=config) with {NPU_CONFIG}")
            return
        if self.settings.style == "helper" and not (site.config is None and has_unpacking(site.call)):
            ctx.defer(lambda: _wrap(site, line, column, ctx))
            return
        problem = why_not(site.power)
        if problem:
            ctx.report(site.power, "unmigrated", f"cannot add statements {problem}: before this "
                       f"code add by hand {_by_hand(site)}")
        elif site.config is None and has_unpacking(site.call):
            ctx.report(site.power, "unmigrated", f"the arguments are unpacked: make sure config= "
                       f"is given, with {NPU_CONFIG}: {_by_hand(site)}")
        else:
            ctx.defer(lambda: self._migrate(site, line, column, ctx))

    def _migrate(self, site: SessionCall, line: int, column: int, ctx: FileContext) -> None:
        statement = enclosing_statement(site.power)
        value = site.config.value if site.config is not None else None
        if value is None or is_none(value):
            earlier = _created_before(statement, ctx)
            name = earlier or _config_name(enclosing_scope(statement), ctx)
            if earlier is None:
                _hoist(parse_config(site), statement, name, line, column, ctx).fresh = True
            if value is None:
                add_keyword(site.call, "config", name)
            else:
                value.replace(Name(name, prefix=value.prefix))
            done = "passed" if earlier else "created"
            ctx.report_at(line, column, "migrated", f"{done} '{name}' with {NPU_CONFIG}")
            return
        helper = _helper_of(value, statement, ctx)
        if helper is not None:
            self._complete_helper(helper, line, column, ctx)
            return
        expression = dotted_name(value)
        if expression is not None and ctx.tf.qualify(expression) is None:
            added = _complete(ConfigTarget.at(expression, statement, line, column), ctx)
            ctx.report_at(line, column, "migrated", _message(expression, added))
            return
        name = _config_name(enclosing_scope(statement), ctx)
        value.replace(Name(name, prefix=value.prefix))
        value.prefix = ""
        _hoist(value, statement, name, line, column, ctx)
        ctx.report_at(line, column, "migrated", f"moved the config into '{name}' and gave it {NPU_CONFIG}")

    @staticmethod
    def _complete_helper(helper: pytree.Node, line: int, column: int, ctx: FileContext) -> None:
        added = False
        for returned in _returns(helper):
            value, statement = returned.children[1], enclosing_statement(returned)
            if value.type == token.NAME:
                added |= _complete(ConfigTarget.at(value.value, statement, line, column), ctx)
            else:
                name = _config_name(helper, ctx)
                value.replace(Name(name, prefix=value.prefix))
                value.prefix = ""
                _hoist(value, statement, name, line, column, ctx)
                added = True
        function = helper.children[1].value
        ctx.report_at(line, column, "migrated", _message(f"the config returned by {function}()", added))


def _wrap(site: SessionCall, line: int, column: int, ctx: FileContext) -> None:
    """style = "helper": ``config=X`` becomes ``config=npu_config_proto(config_proto=X)``."""
    value = site.config.value if site.config is not None else None
    if value is not None and callee_name(value) == HELPER:
        ctx.report_at(line, column, "migrated", f"the config goes through {HELPER}()")
        return
    if value is None:
        add_keyword(site.call, "config", "None")
        value = find_argument(site.call, "config").value
    wrapped = parse_expression(f"{HELPER}(config_proto={site.module}.ConfigProto())")
    inner = wrapped.children[1].children[1].children[2]
    wrapped.prefix, value.prefix = value.prefix, ""
    value.replace(wrapped)
    if not is_none(value):
        inner.replace(value)
        inner = value
    _soft_placement_target(inner, site, line, column, ctx)
    ctx.report_at(line, column, "migrated", f"passed the config through {HELPER}() for {NPU_CONFIG}")


def _soft_placement_target(config: pytree.Base, site: SessionCall, line: int, column: int,
                           ctx: FileContext) -> None:
    """Let NPU008 complete the wrapped config: a ConfigProto(...) call, or a named object."""
    if callee_name(config) == "ConfigProto":
        if find_argument(config.children[-1], "allow_soft_placement") is None:
            targets(ctx).append(ConfigTarget(code(config), site.power, line, column,
                                             constructor=config.children[-1]))
        return
    expression = dotted_name(config)
    if expression is not None and not why_not(site.power):
        targets(ctx).append(ConfigTarget.at(expression, enclosing_statement(site.power), line, column))


def _insert_npu_lines(expression: str, missing: set[str], statement: pytree.Base, ctx: FileContext,
                      first: str = "", after: bool = False) -> list[pytree.Base]:
    """Insert ``first`` and the guide's lines before (``after``: after) ``statement``, plus the
    precision mode setting when the custom_op is written, under a name free in that scope."""
    custom_op = _custom_op_name(enclosing_scope(statement), ctx) if CUSTOM_OP in missing else ""
    lines = npu_lines(expression, missing, custom_op)
    mode = ctx.rule.settings.precision_mode if ctx.rule is not None else None
    if mode is not None and custom_op:
        lines.insert(2, f'{custom_op}.parameter_map["precision_mode"].s = '
                        f'{ctx.tf.alias}.compat.as_bytes({json.dumps(mode)})')
    code_lines = "\n".join([first, *lines] if first else lines)
    nodes = (insert_after if after else insert_before)(statement, code_lines, ctx.newline)
    claim(nodes, ctx, unless={custom_op})  # guide lines only: later guide lines may reuse it
    return nodes


def _config_name(scope: pytree.Node, ctx: FileContext) -> str:
    return free_name(scope, "config", "npu_config", taken_names(scope, ctx))


def _custom_op_name(scope: pytree.Node, ctx: FileContext) -> str:
    """``custom_op`` unless ``scope`` uses it for something else than the guide's custom_op
    lines (which do not mind a rebinding), else ``npu_custom_op``, ``npu_custom_op_1``..."""
    taken = taken_names(scope, ctx)
    if "custom_op" in taken:
        taken = taken - custom_op_names(scope)
    return free_name(scope, "custom_op", "npu_custom_op", taken)


def parse_config(site: SessionCall) -> pytree.Base:
    return parse_expression(f"{site.module}.ConfigProto()")


def _created_before(statement: pytree.Base, ctx: FileContext) -> Optional[str]:
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


def _hoist(value: pytree.Base, statement: pytree.Base, name: str, line: int, column: int,
           ctx: FileContext) -> ConfigTarget:
    """``name = <value>`` plus the NPU lines, before ``statement``; ``value`` is moved there."""
    nodes = _insert_npu_lines(name, set(NPU_PIECES), statement, ctx, first=f"{name} = None")
    placeholder = nodes[0].children[0].children[2]
    value.prefix = placeholder.prefix
    placeholder.replace(value)
    claim([value], ctx)
    ensure_rewriter_config(ctx)
    target = ConfigTarget.at(name, statement, line, column)
    if callee_name(value) == "ConfigProto":
        target.constructor = value.children[-1]
    targets(ctx).append(target)
    return target


def _complete(target: ConfigTarget, ctx: FileContext) -> bool:
    """Add the NPU lines ``target`` lacks, once per object; True when any were added."""
    missing = set(NPU_PIECES - target.settings().keys())
    targets(ctx).append(target)
    if not missing:
        return False
    binding = _module_binding(target)
    target.anchor = _outside_loops(target.anchor, target.expression)
    if binding is not None:
        _insert_npu_lines(target.expression, missing, binding, ctx, after=True)
    else:
        _insert_npu_lines(target.expression, missing, target.anchor, ctx)
    if missing - {"custom_optimizers.NpuOptimizer"}:
        ensure_rewriter_config(ctx)
    return True


def _module_binding(target: ConfigTarget) -> Optional[pytree.Base]:
    """The one module-level ``name = ...`` of a global config that a function uses.

    Its NPU lines go right after it: before the session they would configure the object only
    when that function runs (not for other functions sharing it), and again on every call.
    """
    scope = enclosing_scope(target.anchor)
    if scope.type != syms.funcdef or len(target.regions) < 2:
        return None
    found = _bindings(target.regions[-1][0], target.expression)
    return found[0] if len(found) == 1 and found[0].parent.type in BLOCKS else None


def _outside_loops(statement: pytree.Base, expression: str) -> pytree.Base:
    """The outermost loop of the scope around ``statement`` that does not (re)bind the config,
    else ``statement``: custom_optimizers.add() in a loop would add NpuOptimizer on every pass."""
    scope = enclosing_scope(statement)
    anchor, node = statement, statement.parent
    while expression.isidentifier() and node is not scope:
        if node.type in (syms.for_stmt, syms.while_stmt) and node.parent.type in BLOCKS \
                and not _may_bind(node, expression):
            anchor = node
        node = node.parent
    return anchor


def _may_bind(root: pytree.Node, name: str) -> bool:
    """Could ``root`` rebind ``name``? Any bare use but in ``f(k=name)`` counts (conservative)."""
    for node in scope_nodes(root):
        following = node.next_sibling
        if node.type == token.NAME and node.value == name \
                and not (following is not None and is_attribute_trailer(following)) \
                and node.parent.type != syms.argument:
            return True
    return False


def _bindings(root: pytree.Node, expression: str) -> list[pytree.Base]:
    """Statements ``expression = ...`` in ``root``'s scope (not in nested functions)."""
    return [node.parent for node in scope_statements(root)
            if node.type == syms.expr_stmt and len(node.children) == 3
            and node.children[1].type == token.EQUAL and code(node.children[0]) == expression]


def _message(what: str, added: bool) -> str:
    if added:
        return f"added the lines that give {what} {NPU_CONFIG}"
    return f"{what} already has {NPU_CONFIG}"


def _helper_of(value: pytree.Base, statement: pytree.Base, ctx: FileContext) -> Optional[pytree.Node]:
    """The same-file function whose return value ``value`` is (directly or through a local name)."""
    if value.type == token.NAME:
        assigned = None
        for node in scope_statements(enclosing_scope(statement)):
            if node is statement:
                break
            if node.type == syms.expr_stmt and len(node.children) == 3 \
                    and code(node.children[0]) == value.value:
                assigned = node.children[2]
        value = assigned
    if value is None or value.type != syms.power or len(value.children) < 2:
        return None
    callee = prefix_name(value, len(value.children) - 1)
    if callee is None or callee_name(value) is None or callee.count(".") > 1 \
            or (callee.count(".") == 1 and callee.split(".")[0] not in ("self", "cls")):
        return None
    function = callee.rpartition(".")[2]
    found = [node for node in scope_statements(ctx.tree, nested=True)
             if node.type == syms.funcdef and node.children[1].value == function]
    if len(found) != 1:
        return None
    returns = _returns(found[0])
    if not returns or any(why_not(r) or not _returns_config(r) for r in returns):
        return None
    return found[0]


def _returns(function: pytree.Node) -> list[pytree.Node]:
    """The ``return`` statements of ``function`` itself (``return_stmt`` nodes)."""
    return [node for node in scope_statements(function) if node.type == syms.return_stmt]


def _returns_config(statement: pytree.Node) -> bool:
    if len(statement.children) != 2:
        return False
    value = statement.children[1]
    return value.type == token.NAME or callee_name(value) == "ConfigProto"


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
        f"import RewriterConfig), then pass config={expression}"


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SessionConfig()]
