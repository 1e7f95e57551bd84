"""TF session constructors and their ``ConfigProto`` objects, shared by NPU007/008/009.

NPU007 makes every session config carry the NPU optimizer and records each config object it
wrote or completed as a :class:`ConfigTarget` in ``memo(ctx)``; NPU008 (which runs after it)
completes those same objects with ``allow_soft_placement``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional

from npu_codemod.api import (
    Argument,
    Base,
    FileContext,
    Leaf,
    Node,
    arguments,
    find_argument,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    TF2_COMPAT,
    assignment,
    ast_dotted_name,
    attribute_name,
    bound_names,
    call_of,
    classify,
    enclosing_scope,
    is_attribute_trailer,
    is_call_trailer,
    memo,
    module_ast,
    node_pre_order,
    pre_order,
    prefix_name,
    scope_statements,
    small_statements,
)

#: What the file's alias may be bound to for ``<alias>.compat.v1`` to name TF 1.x's API on
#: TF 2.x (``tf.compat.v2.compat.v1`` exists too).
_TF2_NAMESPACES = ("tensorflow", "tensorflow.compat.v2")

#: Canonical constructor -> 0-based position of ``config`` when given positionally.
CONFIG_POSITION = {
    "tensorflow.Session": 2,
    "tensorflow.InteractiveSession": 2,
    "tensorflow.train.MonitoredTrainingSession": 9,
    "tensorflow.train.SingularMonitoredSession": 3,
    "tensorflow.train.ChiefSessionCreator": 2,
    "tensorflow.train.WorkerSessionCreator": 2,
}
#: ``tf.train.Supervisor`` methods that create the session -> position of ``config``.
SUPERVISOR_METHODS = {"managed_session": 1, "prepare_or_wait_for_session": 1}
#: ``tf.train.SessionManager`` methods that create the session -> position of ``config``, taken
#: only in a file that names ``SessionManager`` (``prepare_session`` is a common method name):
#: prettytensor's ``Runner.session`` makes its session with ``SESSION_MANAGER_FACTORY()``,
#: bound to ``tf.train.SessionManager`` at module level.
SESSION_MANAGER_METHODS = {"prepare_session": 7, "recover_session": 6, "wait_for_session": 1}
SESSION_MANAGER = "tensorflow.train.SessionManager"
MONITORED_SESSION = "tensorflow.train.MonitoredSession"
#: TF-Slim's loops, which make their session themselves (through a Supervisor) from the config
#: given as ``session_config=``: canonical name -> 0-based position of ``session_config``.
SLIM_LOOPS = {
    "tensorflow.contrib.slim.learning.train": 22,
    "tensorflow.contrib.slim.evaluation.evaluation_loop": 16,
    "tensorflow.contrib.slim.evaluation.evaluate_once": 13,
}
#: The internal module each slim loop is defined in, as files may import it.
_SLIM_INTERNAL = {"tensorflow.contrib.slim.python.slim." + name[len("tensorflow.contrib.slim."):]: name
                  for name in SLIM_LOOPS}
SLIM_KEYWORD = "session_config"
SLIM_NAMES = frozenset(name.rpartition(".")[2] for name in SLIM_LOOPS)
SESSION_NAMES = frozenset(
    {name.rpartition(".")[2] for name in (*CONFIG_POSITION, MONITORED_SESSION)} | set(SUPERVISOR_METHODS)
    | set(SESSION_MANAGER_METHODS)
)

REWRITER_CONFIG_IMPORT = "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig"
REWRITE_OPTIONS = "graph_options.rewrite_options"
#: Rewrite options the NPU needs switched off, set by NPU007 and guarded by NPU009.
MUST_BE_OFF = ("remapping", "memory_optimization")
CUSTOM_OP = "custom_optimizers.NpuOptimizer"  # settings() key of the custom_op lines
TARGETS = "session_config.targets"


@dataclass
class SessionCall:
    """One call that creates a TF session (or a session creator) and may take ``config=``."""

    power: Node
    call: Node  # the ``(...)`` trailer
    name: str  # canonical name, or the Supervisor method name
    module: str  # how to spell the TF module in generated code (``tf``, ``tf.compat.v1``)
    config: Optional[Argument]
    keyword: str = "config"  # the parameter the config is passed as (a slim loop's ``session_config``)


def session_call(name: Leaf, ctx: FileContext) -> Optional[SessionCall]:
    """The session call whose callee ends with the NAME leaf ``name``, if it is one."""
    found = call_of(name)
    if found is None:
        return None
    power, end = found
    call = power.children[end]
    if end > 1 and name.value in SUPERVISOR_METHODS:
        position = SUPERVISOR_METHODS[name.value]
        return SessionCall(power, call, name.value, v1_spelling(ctx.tf.alias, ctx),
                           find_argument(call, "config", position))
    if end > 1 and name.value in SESSION_MANAGER_METHODS and names_session_manager(ctx):
        position = SESSION_MANAGER_METHODS[name.value]
        return SessionCall(power, call, name.value, v1_spelling(ctx.tf.alias, ctx),
                           find_argument(call, "config", position))
    qualified = ctx.tf.qualify(prefix_name(power, end))
    qualified = _SLIM_INTERNAL.get(qualified or "", qualified)
    if qualified in SLIM_LOOPS:  # the session slim makes takes this config (``module``: ConfigProto's)
        config = find_argument(call, SLIM_KEYWORD, SLIM_LOOPS[qualified])
        return SessionCall(power, call, qualified, v1_spelling(ctx.tf.alias, ctx), config, SLIM_KEYWORD)
    if qualified not in CONFIG_POSITION and qualified != MONITORED_SESSION:
        return None
    config = find_argument(call, "config", CONFIG_POSITION.get(qualified))
    spelled = prefix_name(power, end - 1) if end > 1 else _spelling(ctx.tf.resolve(name.value), ctx)
    return SessionCall(power, call, qualified, v1_spelling(_module(spelled, ctx), ctx), config)


def names_session_manager(ctx: FileContext) -> bool:
    """Does the file name ``tf.train.SessionManager`` (any spelling), anywhere in it?"""
    key = "session_config.session_manager"
    if key not in memo(ctx):
        found = False
        if "SessionManager" in ctx.original:
            tree = module_ast(ctx.original)
            if tree is None:  # Python 2 code: not read by ``ast``, nor its names resolved
                found = True
            else:
                found = any(ctx.tf.qualify(ast_dotted_name(node)) == SESSION_MANAGER for node in ast.walk(tree)
                            if getattr(node, "attr", getattr(node, "id", None)) == "SessionManager")
        memo(ctx)[key] = found
    return bool(memo(ctx)[key])


def v1_spelling(module: str, ctx: FileContext) -> str:
    """``module`` (a spelling of TensorFlow's module in the file), or ``module.compat.v1`` in a
    ``tf2-compat`` file whose ``module`` is the TF 2.x namespace (``import tensorflow as tf``):
    TF 2.x has no ``tf.ConfigProto``, ``tf.train.ChiefSessionCreator``; code written for the
    compat.v1 session must name them as the file's compat.v1 code does."""
    if ctx.file_kind == TF2_COMPAT and ctx.tf.resolve(module) in _TF2_NAMESPACES:
        return module + ".compat.v1"
    return module


def config_module(spelled: Optional[str], ctx: FileContext) -> str:
    """How a ``ConfigProto()`` NPU007 writes spells its module: ``spelled`` (the session's
    module, :attr:`SessionCall.module`) or the file's alias, as :func:`v1_spelling` says; a
    file that binds no public alias gets ``import tensorflow as tf``
    (:meth:`FileContext.tf_module`), the TF 2.x namespace in a ``tf2-compat`` file."""
    module = ctx.tf_module(spelled)
    if ctx.file_kind == TF2_COMPAT and ctx.tf.public_alias is None:
        return module + ".compat.v1"
    return v1_spelling(module, ctx)


def _spelling(resolved: Optional[str], ctx: FileContext) -> Optional[str]:
    """How the file can spell the module a bare imported ``Session`` came from, if it can
    (``from tensorflow.compat.v1 import Session`` next to ``import tensorflow as tf``:
    ``tf.compat.v1``)."""
    module = (resolved or "").rpartition(".")[0]
    for name, target in ctx.tf.bindings.items():
        if module == target or module.startswith(target + "."):
            return name + module[len(target):]
    return None


def _module(spelled: Optional[str], ctx: FileContext) -> str:
    if ctx.tf.is_internal(spelled):  # ``tf_session.Session``: tf_session has no ConfigProto
        return ctx.tf.alias
    qualified = ctx.tf.qualify(spelled)
    if spelled and qualified == "tensorflow":
        return spelled
    if spelled and qualified == "tensorflow.train" and spelled.endswith(".train"):
        return spelled[: -len(".train")]
    return ctx.tf.alias


def code(node: Base) -> str:
    """``node``'s tokens without whitespace or comments, for comparing expressions.

    One iterator per level, not fissix's ``leaves()``, which passes each leaf up a generator
    per level of the tree: this is asked of every assignment near a session config."""
    if node.type < 256:
        return node.value
    values: list[str] = []
    add = values.append
    stack = [iter(node.children)]
    while stack:
        for child in stack[-1]:
            if child.type < 256:
                add(child.value)
            else:
                stack.append(iter(child.children))
                break
        else:
            stack.pop()
    return "".join(values)


def callee_last_name(node: Base) -> Optional[str]:
    """Last name of the function called by ``node`` (``ConfigProto`` for ``tf.ConfigProto(...)``)."""
    if node.type != symbols.power or not is_call_trailer(node.children[-1]) or len(node.children) < 2:
        return None
    return _last_name(node.children[-2])


def argument_callee(argument: Base) -> Optional[str]:
    """Last name of the function that the call argument ``argument`` is passed to."""
    trailer = argument.parent
    if trailer is not None and trailer.type == symbols.arglist:
        trailer = trailer.parent
    return _last_name(trailer.prev_sibling) if trailer is not None else None


def _last_name(callee: Optional[Base]) -> Optional[str]:
    """``f`` for the NAME ``f`` or the trailer ``.f`` in front of a call's ``(...)``."""
    if callee is None:
        return None
    if callee.type == tokens.NAME:
        return callee.value
    return attribute_name(callee)


def npu_lines(expression: str, missing: set[str], custom_op: str = "custom_op") -> list[str]:
    """The guide's lines that configure ``expression`` for the NPU, those ``missing`` only;
    ``custom_op`` names the optimizer they add (see :func:`custom_op_names`)."""
    lines = []
    if CUSTOM_OP in missing:
        lines.append(f"{custom_op} = {expression}{_ADD_CUSTOM_OP}")
        lines.append(f'{custom_op}.name = "NpuOptimizer"')
    for option in MUST_BE_OFF:
        if f"{REWRITE_OPTIONS}.{option}" in missing:
            lines.append(f"{expression}.{REWRITE_OPTIONS}.{option} = RewriterConfig.OFF")
    return lines


NPU_PIECES = frozenset({CUSTOM_OP, *(f"{REWRITE_OPTIONS}.{option}" for option in MUST_BE_OFF)})
_ADD_CUSTOM_OP = f".{REWRITE_OPTIONS}.custom_optimizers.add()"


def custom_op_names(scope: Node) -> set[str]:
    """Names that ``scope`` (nested code included) spells only in the guide's custom_op lines:
    ``x = <config>.graph_options.rewrite_options.custom_optimizers.add()`` and ``x.<...> = v``.

    The lines for another config may bind such a name again, as the guide's own lines do; any
    other use (a parameter, an import, a read) makes the name the user's.
    """
    names = {node.children[0].value for node in scope_statements(scope, nested=True)
             if _binds_custom_op(node)}
    if not names:
        return names
    for node in node_pre_order(scope):
        for index, leaf in enumerate(node.children):
            if leaf.type == tokens.NAME and leaf.value in names and not _in_custom_op_line(node, index):
                names.discard(leaf.value)
    return names


def _binds_custom_op(node: Base) -> bool:
    children = node.children
    return node.type == symbols.expr_stmt and len(children) == 3 and children[0].type == tokens.NAME \
        and children[1].type == tokens.EQUAL and code(children[2]).endswith(_ADD_CUSTOM_OP)


def _in_custom_op_line(parent: Node, index: int) -> bool:
    """Is ``parent.children[index]`` (a NAME) no variable, or the ``x`` of a custom_op line?"""
    children = parent.children
    if index and children[index - 1].type == tokens.DOT:
        return True  # an attribute
    if index == 0 and parent.type == symbols.argument and len(children) == 3 \
            and children[1].type == tokens.EQUAL:
        return True  # a keyword
    if index == 0 and _binds_custom_op(parent):
        return True
    statement = parent.parent
    return index == 0 and parent.type == symbols.power and is_attribute_trailer(children[1]) \
        and statement is not None and statement.type == symbols.expr_stmt \
        and statement.children[0] is parent and statement.children[1].type == tokens.EQUAL


@dataclass
class ConfigTarget:
    """A config object NPU007 made sure of; NPU008 completes it with soft placement."""

    expression: str  # "config", "self.config"
    anchor: Base  # statement before which its settings must be done
    line: int  # original position of the session call (where findings go)
    column: int
    constructor: Optional[Node] = None  # ``(...)`` of a ConfigProto call NPU007 wrote/hoisted
    fresh: bool = False  # NPU007 created it as ``ConfigProto()``: later sessions may share it
    regions: list[tuple[Node, bool]] = field(default_factory=list)  # (root, ordered)
    #: None on some path to the session, and left so by NPU007 (reported): a line for the
    #: object there would raise AttributeError.
    may_be_none: bool = False
    #: Outlives the call and is built elsewhere, so NPU007 left it (reported): a line for the
    #: object before the session would change a shared config, which may be None.
    built_elsewhere: bool = False

    @classmethod
    def at(cls, expression: str, anchor: Base, line: int, column: int) -> "ConfigTarget":
        """Where settings of ``expression`` used at ``anchor`` may be: its scope, maybe more."""
        scope = enclosing_scope(anchor)
        target = cls(expression, anchor, line, column)
        head = expression.split(".")[0]
        if head in ("self", "cls") and "." in expression:
            target.regions.append((_class_of(scope) or scope, False))
        else:
            target.regions.append((scope, True))
            if scope.type == symbols.funcdef and "." not in expression \
                    and head not in bound_names(scope):
                target.regions.append((_module_of(scope), False))  # a global configured at module level
        return target

    def statements(self) -> Iterator[Base]:
        for root, ordered in self.regions:
            nested = not ordered
            for node in scope_statements(root, nested=nested):
                if ordered and node is self.anchor:
                    break
                yield node

    def settings(self) -> dict[str, Base]:
        """Attribute path -> value node of every setting made on the object before ``anchor``."""
        return config_settings(self.statements(), self.expression)


def config_settings(nodes: Iterator[Base], expression: str) -> dict[str, Base]:
    """Settings of ``expression`` among ``nodes`` (statements): ``expr.a.b = v``,
    ``expr = ConfigProto(a=v)`` and the NpuOptimizer custom_op lines (key :data:`CUSTOM_OP`)."""
    found: dict[str, Base] = {}
    custom_ops: set[str] = set()
    for node in nodes:
        key = setting_key(node, expression, custom_ops)
        if key is not None:
            found[key] = node.children[2]
        elif _is_assignment(node) and code(node.children[0]) == expression \
                and callee_last_name(node.children[2]) == "ConfigProto":
            for argument in arguments(node.children[2].children[-1]):
                if argument.keyword:
                    found[argument.keyword] = argument.value
    return found


def setting_key(node: Base, expression: str, custom_ops: set[str]) -> Optional[str]:
    """What the statement ``node`` sets on the config ``expression``: ``a.b`` for
    ``expression.a.b = v``, :data:`CUSTOM_OP` for ``x.name = "NpuOptimizer"`` when ``x`` is
    in ``custom_ops``; None else. ``x = expression...custom_optimizers.add()`` puts ``x`` in
    ``custom_ops``, any other ``x = ...`` takes it out (give the statements in order)."""
    if not _is_assignment(node):
        return None
    target, value = code(node.children[0]), node.children[2]
    if code(value) == f"{expression}{_ADD_CUSTOM_OP}":
        custom_ops.add(target)
    elif target in custom_ops:
        custom_ops.discard(target)  # now another object (another config's optimizer)
    elif target.startswith(expression + "."):
        return target[len(expression) + 1:]
    elif target.endswith(".name") and target[: -len(".name")] in custom_ops \
            and _string_value(value) == "NpuOptimizer":
        return CUSTOM_OP
    return None


def _is_assignment(node: Base) -> bool:
    return assignment(node) is not None


def _string_value(node: Base) -> Optional[str]:
    if node.type != tokens.STRING:
        return None
    try:
        return ast.literal_eval(node.value)
    except (ValueError, SyntaxError):
        return None


def _module_of(node: Base) -> Node:
    while node.parent is not None:
        node = node.parent
    return node


def _class_of(scope: Node) -> Optional[Node]:
    node = scope
    while node is not None and node.type != symbols.classdef:
        node = node.parent
    return node


def targets(ctx: FileContext) -> list[ConfigTarget]:
    """The config objects NPU007 wrote or completed in this file, in order."""
    return memo(ctx).setdefault(TARGETS, [])


def ensure_rewriter_config(ctx: FileContext) -> None:
    """Ask for the RewriterConfig import unless the file already binds the name."""
    key = "session_config.binds_rewriter_config"
    if key not in memo(ctx):
        memo(ctx)[key] = any(
            leaf.type == tokens.NAME and leaf.value == "RewriterConfig" and classify(leaf).kind == "bind"
            for leaf in _binding_candidates(ctx.tree)
        )
    if not memo(ctx)[key]:
        ctx.add_import(REWRITER_CONFIG_IMPORT)


def _binding_candidates(tree: Node) -> Iterator[Base]:
    """The leaves that can bind a module name: assignment targets and imported names."""
    for statement in small_statements(tree):
        if statement.type == symbols.expr_stmt:
            yield statement.children[0]
        elif statement.type == symbols.import_from:
            yield from statement.leaves()


def config_objects(ctx: FileContext) -> set[str]:
    """Code of every expression known to hold a session config in the file, and of those a
    deep copy of one is made of (NPU007's copy of a config parameter goes to the session)."""
    key = "session_config.objects"
    if key not in memo(ctx):
        found = set()
        copies: list[tuple[str, str]] = []  # (copy, what it copies)
        for node in pre_order(ctx.tree):
            if node.type == symbols.expr_stmt and len(node.children) == 3:
                if callee_last_name(node.children[2]) == "ConfigProto":
                    found.add(code(node.children[0]))
                copied = deep_copied(node.children[2])
                if copied is not None:
                    copies.append((code(node.children[0]), copied))
            elif node.type == tokens.NAME and node.value in SESSION_NAMES:
                site = session_call(node, ctx)
                if site is not None and site.config is not None:
                    found.add(code(site.config.value))
        found.update(copied for copy, copied in copies if copy in found)
        memo(ctx)[key] = found
    return memo(ctx)[key]


def deep_copied(value: Base) -> Optional[str]:
    """The expression ``value`` deep-copies: ``copy.deepcopy(<it>)`` or ``deepcopy(<it>)``,
    maybe followed by `` if ... else ...`` (NPU007's copy of a config parameter)."""
    found = _DEEP_COPY.match(code(value))
    return found.group(1) if found is not None else None


#: ``copy.deepcopy(<config>)``, ``deepcopy(<config>)``, then maybe `` if ... else ...``.
_DEEP_COPY = re.compile(r"(?:\w+\.)?deepcopy\(([\w.]+)\)(?: if .*)?$")
